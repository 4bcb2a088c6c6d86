//! report.html's temperature and throttling timeline per target (phases marked) and the
//! environment block: the machine, the software, the database server and every disk's facts.
//! Facts the run did not record are shown as "not recorded", never guessed.

use super::page::{esc, or_unrecorded, table};
use super::svg::{self, fmt_num, Band, LineChart, Scale, Series};
use crate::model::TestOptions;
use crate::model::{SuiteResult, TargetKind, TargetResult};
use crate::units::human_size;
use std::fmt::Write as _;

pub(super) fn render_timelines(out: &mut String, s: &SuiteResult) {
    out.push_str("<section id=\"temperature\"><h2>Temperature and throttling</h2>\n");
    for (i, t) in s.targets.iter().enumerate() {
        timeline(out, i, t);
    }
    if s.targets.is_empty() {
        out.push_str("<p>No target has started yet.</p>\n");
    }
    out.push_str("</section>\n");
}

/// Bands for the measurement phases (alternating shades, labelled) and for samples that saw
/// throttling or under-voltage (red).
fn timeline_bands(t: &TargetResult) -> Vec<Band> {
    let starts = t.phase_starts();
    let mut bands: Vec<Band> = t
        .phases
        .iter()
        .zip(&starts)
        .filter(|(p, _)| p.result.is_some())
        .enumerate()
        .map(|(k, (p, st))| Band {
            from: *st,
            to: st + p.seconds,
            label: p
                .name
                .trim_start_matches("fileio-")
                .trim_start_matches("oltp-")
                .to_string(),
            fill: if k % 2 == 0 { "#0072b2" } else { "#56b4e9" },
            opacity: 0.12,
        })
        .collect();
    for w in t.samples.windows(2) {
        let bad = w[0].throttled.unwrap_or(0) & 0xf != 0 || w[0].undervoltage == Some(true);
        if bad {
            bands.push(Band {
                from: w[0].t_s,
                to: w[1].t_s,
                label: String::new(),
                fill: "#d1242f",
                opacity: 0.35,
            });
        }
    }
    bands
}

fn timeline(out: &mut String, i: usize, t: &TargetResult) {
    let _ = write!(out, "<h3>{}</h3>", esc(&t.name));
    let temps: Vec<(f64, f64)> = t
        .samples
        .iter()
        .filter_map(|x| Some((x.t_s, x.temp_c?)))
        .collect();
    let h = crate::report::health::of(t);
    let throttling = format!(
        "under-voltage: {}; throttling: {}",
        h.undervoltage(),
        h.throttling()
    );
    let throttling = if h.throttled_bits != 0 || h.undervoltage_seen {
        format!("<b>{}</b>", esc(&throttling))
    } else {
        esc(&throttling)
    };
    if temps.is_empty() {
        let _ = writeln!(
            out,
            "<p>SoC temperature: <span class=\"meta\">{}</span>; {throttling}.</p>",
            esc(&h.temperature())
        );
        return;
    }
    let max = temps.iter().map(|p| p.1).fold(f64::MIN, f64::max);
    let series = vec![Series {
        label: format!("{} SoC °C", t.name),
        color: svg::color(i),
        dashed: false,
        points: temps,
    }];
    let chart = LineChart {
        title: format!("{} SoC temperature over the run", t.name),
        x_label: "seconds since the target's first phase (shaded: measurements; red: throttled or under-voltage)".into(),
        y_label: "°C".into(),
        x_ticks: None,
        y_scale: Scale::Linear,
        series,
        bands: timeline_bands(t),
        x_from_zero: true,
    };
    let _ = writeln!(
        out,
        "<figure>{}<figcaption>SoC temperature, sampled every few seconds; max {max:.1} °C; {throttling}.</figcaption></figure>",
        svg::line_chart(&chart)
    );
}

pub(super) fn render_environment(out: &mut String, s: &SuiteResult) {
    out.push_str("<section id=\"environment\"><h2>Environment</h2>\n");
    machine(out, s);
    if !s.targets.is_empty() {
        disks(out, s);
        servers(out, s);
    }
    if !s.skipped.is_empty() {
        out.push_str("<h3>Disks not benchmarked</h3>");
        let rows: Vec<Vec<String>> = s
            .skipped
            .iter()
            .map(|k| vec![esc(&k.device), esc(&k.id), esc(&k.reason)])
            .collect();
        table(out, &["Device", "Id", "Reason"], &rows);
    }
    let _ = writeln!(
        out,
        "<details><summary>The profile as it was run</summary><pre>{}</pre></details>",
        esc(&serde_json::to_string_pretty(&s.profile).unwrap_or_default())
    );
    out.push_str("</section>\n");
}

fn machine(out: &mut String, s: &SuiteResult) {
    let h = &s.host;
    let before = s.targets.iter().find_map(|t| t.state_before.as_ref());
    let kernel = before
        .and_then(|b| b.kernel.clone())
        .or_else(|| (!h.kernel.is_empty()).then(|| h.kernel.clone()));
    let rows = vec![
        vec!["Machine".into(), or_unrecorded(h.board_model.clone())],
        vec![
            "CPU".into(),
            esc(&format!("{} ({} cores, {})", h.cpu_model, h.cpus, h.arch)),
        ],
        vec!["RAM".into(), esc(&human_size(h.ram_bytes))],
        vec!["Kernel".into(), or_unrecorded(kernel)],
        vec!["Host name".into(), esc(&h.hostname)],
        vec![
            "spindle".into(),
            esc(&format!("{} {}", s.tool.name, s.tool.version)),
        ],
        vec![
            "Profile".into(),
            esc(&format!("{} — {}", s.profile.name, s.profile.description)),
        ],
    ];
    out.push_str("<h3>Machine and software</h3>");
    table(out, &["", ""], &rows);
}

/// Data set sizes against RAM and the buffer pool, from the results' options.
fn data_set_ratios(s: &SuiteResult, t: &TargetResult) -> (Option<String>, Option<String>) {
    let ram = s.host.ram_bytes as f64;
    let mut fileio: Vec<u64> = Vec::new();
    // (engine, bytes, buffer pool): the database data sets as the runs measured them (the
    // first run of each engine on each buffer pool: two with `[oltp.regimes]`), else
    // estimated from the rows
    let mut db: Vec<(&str, u64, Option<u64>)> = Vec::new();
    for p in &t.phases {
        let Some(r) = &p.result else { continue };
        let engine = match &r.options {
            TestOptions::Fileio(c) => {
                if !fileio.contains(&c.total_size) {
                    fileio.push(c.total_size);
                }
                continue;
            }
            TestOptions::Oltp(_) => "OLTP",
            TestOptions::Tpcc(_) => "TPC-C",
        };
        let pool = p.data_set.map(|f| f.buffer_pool_bytes);
        if db.iter().any(|(e, _, b)| *e == engine && *b == pool) {
            continue;
        }
        let set = match p.data_set {
            Some(f) => (engine, f.data_bytes, Some(f.buffer_pool_bytes)),
            None => (
                engine,
                crate::model::estimated_data_bytes(&r.options).unwrap_or(0),
                None,
            ),
        };
        db.push(set);
    }
    let mut ram_parts: Vec<String> = fileio
        .iter()
        .map(|b| {
            format!(
                "fileio {} = {}× RAM",
                human_size(*b),
                fmt_num(*b as f64 / ram)
            )
        })
        .collect();
    for (engine, d, _) in &db {
        let part = format!(
            "{engine} ≈ {} = {:.2}× RAM",
            human_size(*d),
            *d as f64 / ram
        );
        if !ram_parts.contains(&part) {
            ram_parts.push(part);
        }
    }
    let recorded = t.buffer_pool_bytes();
    let parts: Vec<String> = db
        .iter()
        .filter_map(|(engine, d, pool)| {
            let bp = pool.or(recorded)?;
            Some(format!(
                "{engine} ≈ {} = {}× the {} buffer pool",
                human_size(*d),
                fmt_num(*d as f64 / bp as f64),
                human_size(bp)
            ))
        })
        .collect();
    let bp = match parts.is_empty() {
        _ if db.is_empty() => None,
        false => Some(parts.join("; ")),
        true => Some("buffer pool size not recorded (spindle's default: 3/8 of RAM)".into()),
    };
    let ram_text = (!ram_parts.is_empty() && ram > 0.0).then(|| ram_parts.join("; "));
    (ram_text, bp)
}

/// The rows of the disks table for target `t`: (fact, cell), in display order.
fn disk_cells(s: &SuiteResult, t: &TargetResult) -> Vec<(&'static str, String)> {
    let f = t.disk_facts(s.environment.as_ref());
    let n = |v: Option<String>| or_unrecorded(v);
    let mut cells = vec![
        ("Kind", esc(t.kind.as_str())),
        ("Path", esc(&t.path)),
        ("Model", n(f.model)),
        ("Serial", n(f.serial)),
        ("Size", n(f.size_bytes.map(human_size))),
        (
            "Rotational",
            n(f.rotational.map(|r| if r { "yes" } else { "no" }.into())),
        ),
        (
            "USB bridge",
            n(f.bridge.map(|b| match &f.bridge_name {
                Some(name) => format!("{b} ({name})"),
                None => b,
            })),
        ),
        ("Driver", n(f.driver)),
        ("Link speed", n(f.link_speed.map(|l| l.name().to_string()))),
        ("usb-storage quirks", n(f.quirks)),
        (
            "UAS aborts during the run",
            n(f.uas_aborts.map(|x| x.to_string())),
        ),
        (
            "USB resets during the run",
            n(f.usb_resets.map(|x| x.to_string())),
        ),
        ("Filesystem", n(f.filesystem)),
        (
            "mkfs command",
            match f.mkfs {
                Some(m) => format!("<code>{}</code>", esc(&m)),
                None => n(None),
            },
        ),
    ];
    if t.kind == TargetKind::Directory {
        // Disk facts of a directory target do not apply, rather than "not recorded".
        for c in cells.iter_mut().skip(2).filter(|c| c.0 != "Filesystem") {
            c.1 = "<span class=\"meta\">n/a (a directory)</span>".into();
        }
    }
    // What the work ran on, as statfs saw it (a directory's only fact; RAM said in bold).
    if let Some(fs) = &t.filesystem {
        let cell = cells.iter_mut().find(|c| c.0 == "Filesystem");
        if let Some(c) =
            cell.filter(|c| c.1.contains("n/a") || c.1.contains("not recorded") || fs.in_ram)
        {
            c.1 = if fs.in_ram {
                format!("<b>{}</b>", esc(&fs.describe()))
            } else {
                esc(&fs.describe())
            };
        }
    }
    let q = crate::report::queueing::pairs(t);
    cells.push((
        "Queue gain (async, deep ÷ QD1)",
        n((!q.is_empty()).then(|| {
            let best = q.iter().map(|p| p.ratio).fold(0.0, f64::max);
            format!(
                "up to {best:.2}×: {}",
                crate::report::queueing::verdict(t, &q)
            )
        })),
    ));
    let (ram, bp) = data_set_ratios(s, t);
    cells.push(("Data set / RAM", n(ram)));
    cells.push(("Data set / buffer pool", n(bp)));
    cells
}

fn disks(out: &mut String, s: &SuiteResult) {
    let per: Vec<Vec<(&str, String)>> = s.targets.iter().map(|t| disk_cells(s, t)).collect();
    let mut header = vec!["".to_string()];
    header.extend(s.targets.iter().map(|t| esc(&t.name)));
    let rows: Vec<Vec<String>> = (0..per[0].len())
        .map(|k| {
            let mut r = vec![per[0][k].0.to_string()];
            r.extend(per.iter().map(|cells| cells[k].1.clone()));
            r
        })
        .collect();
    out.push_str("<h3>Disks</h3>");
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    table(out, &h, &rows);
    for t in s.targets.iter().filter(|t| !t.preparation.is_empty()) {
        let _ = writeln!(
            out,
            "<details><summary>How {} was prepared (exact commands)</summary><pre>{}</pre></details>",
            esc(&t.name),
            esc(&t.preparation.join("\n"))
        );
    }
}

fn servers(out: &mut String, s: &SuiteResult) {
    let with = crate::report::server::server_columns(s);
    if with.is_empty() {
        return;
    }
    out.push_str("<h3>Database server</h3>");
    let mut header = vec!["".to_string()];
    header.extend(with.iter().map(|(h, _, _)| esc(h)));
    let mut rows = vec![{
        let mut r = vec!["Server".to_string()];
        r.extend(
            with.iter()
                .map(|(_, _, f)| esc(&format!("{} {}", f.flavor, f.version))),
        );
        r
    }];
    if with.iter().any(|(_, _, f)| f.peak_rss_bytes.is_some()) {
        let mut r = vec!["Peak memory (VmHWM)".to_string()];
        r.extend(
            with.iter()
                .map(|(_, _, f)| or_unrecorded(f.peak_rss_bytes.map(crate::units::human_size))),
        );
        rows.push(r);
    }
    let keys: Vec<&String> = with[0].2.settings.keys().collect();
    for k in keys {
        let mut r = vec![format!("<code>{}</code>", esc(k))];
        r.extend(
            with.iter()
                .map(|(_, _, f)| or_unrecorded(f.settings.get(k).cloned())),
        );
        rows.push(r);
    }
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    table(out, &h, &rows);
    server_effective(out, s);
    server_io(out, s);
}

/// The servers' own values of the variables that shape I/O, side by side.
fn server_effective(out: &mut String, s: &SuiteResult) {
    let Some(t) = crate::report::server::effective_table(s) else {
        return;
    };
    out.push_str(
        "<h4>What each server ran with (<code>SHOW GLOBAL VARIABLES</code> after start)</h4>",
    );
    let mut header = vec!["".to_string()];
    header.extend(t.columns.iter().map(|(h, _)| esc(h)));
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|(name, cells)| {
            let mut r = vec![format!("<code>{name}</code>")];
            r.extend(cells.iter().map(|c| match c {
                Some(v) => esc(v),
                None => "<span class=\"meta\">no such variable</span>".into(),
            }));
            r
        })
        .collect();
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    table(out, &h, &rows);
}

/// How the server's InnoDB counters moved in each database phase.
fn server_io(out: &mut String, s: &SuiteResult) {
    let io = crate::report::server::io_rows(s);
    if io.is_empty() {
        return;
    }
    out.push_str("<h4>Server I/O per phase (InnoDB counters, after − before)</h4>");
    let cols: Vec<String> = crate::report::server::io_columns()
        .map(|c| format!("\u{1}{}", esc(c)))
        .collect();
    let mut header = vec!["Target", "Phase"];
    header.extend(cols.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = io
        .iter()
        .map(|r| {
            let mut row = vec![esc(r.target), esc(r.phase)];
            row.extend(r.cells.iter().map(|c| {
                c.as_deref()
                    .map_or_else(|| "-".to_string(), |v| super::page::num(esc(v)))
            }));
            row
        })
        .collect();
    table(out, &header, &rows);
}
