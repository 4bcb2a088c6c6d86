//! The all-at-once phase (`[together]`) judged and rendered: each disk's figure together ÷ the
//! same run alone, the load each shared bus carried against its ceiling, and the outlier of a
//! group of disks of one model and firmware.
//!
//! - The figure is MiB/s read and written (for one run, req/s gives the same ratios).
//! - The outlier rule: within a group of at least [`MIN_GROUP`] disks, a disk whose figure is
//!   below the group's median by more than 3 × the median absolute deviation (MAD). A MAD under
//!   [`MAD_FLOOR`] of the median counts as that floor — identical disks often measure within a
//!   percent, and a MAD of 0 (two of three disks equal) would make any small dip an outlier —
//!   so an outlier is always at least 15 % below the median. With two disks no median says
//!   which one is the bad one: no outlier is named.
//! - The group: the disk's vendor, model and firmware (SMART's firmware when smartctl read it);
//!   a disk that reports no model is grouped by what it is (loop devices with loop devices,
//!   directories with directories).
//! - The bus: the USB host controller every disk hangs from (the Pi 4's one VL805 for all four
//!   ports, each of the Pi 5's two RP1 controllers); its ceiling is one link's worth, that of
//!   its fastest disk's negotiated link (`report::validity`'s table): the VL805 reaches the SoC
//!   over one PCIe 2.0 lane (500 MB/s each way, the same as a 5 Gb/s USB 3 link), and each RP1
//!   controller has one USB 3 port. Disks with no USB controller known share no ceiling.

use crate::engine::Counters;
use crate::model::together::{BusCeiling, BusLoad, Outlier, TogetherDisk, TogetherRun};
use crate::model::{BenchResult, PhaseStatus, SuiteResult, TargetResult};
use crate::stats::repeat::median;
use std::fmt::Write as _;

/// A MAD below this share of the median counts as this share.
pub const MAD_FLOOR: f64 = 0.05;
/// The fewest disks of one group among which an outlier can be named.
pub const MIN_GROUP: usize = 3;
/// How many MADs below the median an outlier is.
pub const MADS: f64 = 3.0;

/// Per value, `Some` when it is a low outlier of `values` (see the module's rule).
pub fn low_outliers(values: &[f64]) -> Vec<Option<Outlier>> {
    if values.len() < MIN_GROUP {
        return vec![None; values.len()];
    }
    let m = median(values);
    let mad = median(&values.iter().map(|v| (v - m).abs()).collect::<Vec<_>>());
    let limit = m - MADS * mad.max(MAD_FLOOR * m);
    values
        .iter()
        .map(|&v| {
            (v < limit).then_some(Outlier {
                median_mib_s: m,
                mad_mib_s: mad,
                limit_mib_s: limit,
                group_size: values.len(),
            })
        })
        .collect()
}

/// Together ÷ alone, when both were measured and alone moved anything.
pub fn ratio(together: Option<f64>, alone: Option<f64>) -> Option<f64> {
    match (together, alone) {
        (Some(t), Some(a)) if a > 0.0 && t.is_finite() => Some(t / a),
        _ => None,
    }
}

/// MiB/s read and written by a fileio result that ran to its end.
fn mib_s(r: &BenchResult) -> Option<f64> {
    match &r.counters {
        Counters::Fileio(c) if r.error.is_none() => Some(c.read_mib_per_s + c.written_mib_per_s),
        _ => None,
    }
}

/// The group a target's figure is compared within: vendor, model and firmware.
pub fn group_of(t: &TargetResult) -> String {
    let smart = t.smart.as_ref().and_then(|s| s.before.data());
    let Some(d) = &t.disk else {
        return "directory".into();
    };
    let model = d
        .model
        .clone()
        .or_else(|| smart.and_then(|s| s.model.clone()));
    let Some(model) = model else {
        return match d.transport {
            Some(crate::disk::Transport::Loop) => "loop device".into(),
            Some(tr) => format!("{} disk, model unknown", tr.describe()),
            None => "model unknown".into(),
        };
    };
    let mut g = d
        .vendor
        .as_deref()
        .map_or(model.clone(), |v| format!("{v} {model}"));
    if let Some(fw) = smart.and_then(|s| s.firmware.as_deref()) {
        let _ = write!(g, ", firmware {fw}");
    }
    g
}

/// The figure of solo phase `phase` on target `t`.
fn alone(t: &TargetResult, phase: &crate::model::Phase) -> Option<f64> {
    let p = t.phases.iter().find(|p| p.phase.as_ref() == Some(phase))?;
    (p.status == PhaseStatus::Ok).then_some(())?;
    mib_s(p.result.as_ref()?)
}

/// Fills in every run's figures, ratios, groups, outliers and bus loads from its results.
pub fn analyse(s: &mut SuiteResult) {
    let Some(mut rec) = s.together.take() else {
        return;
    };
    for run in &mut rec.runs {
        let targets: Vec<Option<&TargetResult>> = run
            .disks
            .iter()
            .map(|d| s.targets.iter().find(|t| t.name == d.target))
            .collect();
        for (d, t) in run.disks.iter_mut().zip(&targets) {
            d.mib_s = d.result.as_ref().and_then(mib_s);
            d.alone_mib_s = t.and_then(|t| alone(t, &run.phase));
            d.ratio = ratio(d.mib_s, d.alone_mib_s);
            d.group = t.map(group_of);
            d.outlier = None;
        }
        mark_outliers(&mut run.disks);
        run.buses = buses(&run.disks, &targets);
    }
    s.together = Some(rec);
}

fn mark_outliers(disks: &mut [TogetherDisk]) {
    let mut groups: Vec<&str> = disks.iter().filter_map(|d| d.group.as_deref()).collect();
    groups.sort_unstable();
    groups.dedup();
    let groups: Vec<String> = groups.into_iter().map(String::from).collect();
    for g in groups {
        let members: Vec<usize> = (0..disks.len())
            .filter(|&i| disks[i].group.as_deref() == Some(&g) && disks[i].mib_s.is_some())
            .collect();
        let values: Vec<f64> = members.iter().filter_map(|&i| disks[i].mib_s).collect();
        for (i, o) in members.into_iter().zip(low_outliers(&values)) {
            disks[i].outlier = o;
        }
    }
}

/// The disks grouped by the USB host controller they share, with what they moved.
fn buses(disks: &[TogetherDisk], targets: &[Option<&TargetResult>]) -> Vec<BusLoad> {
    let mut out: Vec<(String, BusLoad, f64)> = Vec::new();
    for (d, t) in disks.iter().zip(targets) {
        let usb = t.and_then(|t| t.disk.as_ref()).and_then(|d| d.usb.as_ref());
        let (key, name) = match usb.and_then(|u| u.controller.as_ref()) {
            Some(c) => (c.sysfs_path.display().to_string(), c.name.clone()),
            None => (
                String::new(),
                "not USB (no shared-bus ceiling known)".into(),
            ),
        };
        let speed = usb.and_then(|u| u.link_speed).map_or(0.0, |s| s.0);
        let i = match out.iter().position(|(k, _, _)| *k == key) {
            Some(i) => i,
            None => {
                out.push((
                    key,
                    BusLoad {
                        bus: name,
                        ..BusLoad::default()
                    },
                    0.0,
                ));
                out.len() - 1
            }
        };
        let (_, b, fastest) = &mut out[i];
        b.targets.push(d.target.clone());
        if let Some(Counters::Fileio(c)) = d.result.as_ref().map(|r| &r.counters) {
            b.read_mb_s += c.read_mib_per_s * 1.048_576;
            b.written_mb_s += c.written_mib_per_s * 1.048_576;
        }
        if usb.is_some() && speed > *fastest {
            *fastest = speed;
            let c = super::validity::usb_ceiling(usb.and_then(|u| u.link_speed).expect("a speed"));
            b.ceiling = Some(BusCeiling {
                link: c.link.to_string(),
                mb_s: c.red_mb_s,
                half_duplex: c.half_duplex,
            });
        }
    }
    out.into_iter().map(|(_, b, _)| b).collect()
}

fn fmt(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

/// "0.49×", or why there is no ratio.
fn ratio_text(d: &TogetherDisk) -> String {
    match (d.ratio, &d.error) {
        (Some(r), _) => format!("{r:.2}×"),
        (None, Some(_)) => d.status.to_string(),
        (None, None) => "-".into(),
    }
}

/// The sentence naming an outlier.
fn outlier_sentence(run: &str, d: &TogetherDisk, o: &Outlier) -> String {
    format!(
        "OUTLIER: {} in {run}: {:.1} MiB/s, below the median of its {} disks ({}) {:.1} MiB/s by more than {MADS} MADs (limit {:.1}; MAD {:.1}, at least {:.0} % of the median)",
        d.target,
        d.mib_s.unwrap_or(0.0),
        o.group_size,
        d.group.as_deref().unwrap_or("?"),
        o.median_mib_s,
        o.limit_mib_s,
        o.mad_mib_s,
        MAD_FLOOR * 100.0
    )
}

/// Every outlier named, in run order.
pub fn outliers(s: &SuiteResult) -> Vec<String> {
    let Some(rec) = &s.together else {
        return vec![];
    };
    let runs = rec.runs.iter();
    runs.flat_map(|r| {
        let named = r
            .disks
            .iter()
            .filter_map(|d| Some((d, d.outlier.as_ref()?)));
        named.map(|(d, o)| outlier_sentence(&r.name, d, o))
    })
    .collect()
}

/// "VIA VL805 (sda, sdb): 412.0 MB/s read, 0.0 MB/s written, 82 % of one USB 3 Gen 1 (5 Gb/s)
/// link's 500 MB/s (the busier direction)".
pub fn bus_line(b: &BusLoad) -> String {
    let mut l = format!(
        "{} ({}): {:.1} MB/s read, {:.1} MB/s written",
        b.bus,
        b.targets.join(", "),
        b.read_mb_s,
        b.written_mb_s
    );
    if b.ceiling.is_none() {
        l.push_str("; no ceiling known");
    }
    if let (Some(c), Some(share)) = (&b.ceiling, b.share()) {
        let _ = write!(
            l,
            ", {:.0} % of one {} link's {:.0} MB/s{}",
            share * 100.0,
            c.link,
            c.mb_s,
            if c.half_duplex {
                " (both directions)"
            } else {
                " (the busier direction)"
            }
        );
    }
    l
}

/// What target `name` did with the others running: its ratios, and `OUTLIER` where it was one;
/// the line under it in the first table of summary.txt and `report show`.
pub fn target_line(s: &SuiteResult, name: &str) -> Option<String> {
    let rec = s.together.as_ref()?;
    let mine: Vec<(&str, &TogetherDisk)> = rec
        .runs
        .iter()
        .filter_map(|r| Some((r.name.as_str(), r.disks.iter().find(|d| d.target == name)?)))
        .collect();
    if mine.is_empty() {
        return None;
    }
    let ratios: Vec<f64> = mine.iter().filter_map(|(_, d)| d.ratio).collect();
    let mut l = if ratios.is_empty() {
        "all disks at once: no ratio (see below)".to_string()
    } else {
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        format!("all disks at once: {lo:.2}× to {hi:.2}× its figure alone")
    };
    let out: Vec<&str> = mine
        .iter()
        .filter(|(_, d)| d.outlier.is_some())
        .map(|(r, _)| *r)
        .collect();
    if !out.is_empty() {
        let _ = write!(l, "; OUTLIER of its model in {}", out.join(", "));
    }
    Some(l)
}

/// The verdict word of disk `d`'s figure in run `r` (`report::validity::of_together`), or
/// `-` when it has none (no figure).
fn verdict_word(s: &SuiteResult, r: &TogetherRun, d: &TogetherDisk) -> &'static str {
    super::validity::of_together(s, r, d).map_or("-", |v| v.verdict.word())
}

/// The validity lines of run `r`, each once with the disks it applies to (`a, b` and
/// `validity: amber — …`).
pub fn validity_lines(s: &SuiteResult, r: &TogetherRun) -> Vec<(String, String)> {
    let lines = r.disks.iter().filter_map(|d| {
        super::validity::of_together(s, r, d).map(|v| (v.line(), d.target.as_str()))
    });
    super::group::grouped(lines)
        .into_iter()
        .map(|(l, who)| (who.join(", "), l))
        .collect()
}

/// One row per run and disk: run, target, together, alone, ratio, validity, outlier.
pub fn rows(s: &SuiteResult) -> Vec<[String; 7]> {
    let Some(rec) = &s.together else {
        return vec![];
    };
    let mut v = Vec::new();
    for r in &rec.runs {
        for d in &r.disks {
            v.push([
                r.name.clone(),
                d.target.clone(),
                fmt(d.mib_s),
                fmt(d.alone_mib_s),
                ratio_text(d),
                verdict_word(s, r, d).into(),
                if d.outlier.is_some() {
                    "OUTLIER".into()
                } else {
                    String::new()
                },
            ]);
        }
    }
    v
}

/// results.csv's rows of the all-at-once runs, one per disk and run, in its `columns`
/// (`csv_field` quotes a text field): the engine's figures and the verdict; `vs_best` is left
/// empty (the ratio to alone is in the other renderings).
pub fn csv_rows(s: &SuiteResult, columns: usize, csv_field: fn(&str) -> String) -> Vec<String> {
    let Some(rec) = &s.together else {
        return vec![];
    };
    let mut out = Vec::new();
    for run in &rec.runs {
        for d in &run.disks {
            let path = s
                .targets
                .iter()
                .find(|t| t.name == d.target)
                .map_or("", |t| &t.path);
            let mut row = vec![
                csv_field(&s.run_id),
                csv_field(&d.target),
                csv_field(path),
                run.name.clone(),
                d.status.to_string(),
            ];
            match (&d.result, d.result.as_ref().map(|r| &r.counters)) {
                (Some(r), Some(Counters::Fileio(c))) => {
                    row.extend([r.threads.to_string(), r.events.to_string()]);
                    row.push(format!("{:.4}", r.total_time_s));
                    let rates = [c.reads_per_s, c.writes_per_s, c.fsyncs_per_s];
                    let rates = rates
                        .into_iter()
                        .chain([c.read_mib_per_s, c.written_mib_per_s]);
                    row.extend(rates.chain([0.0; 3]).map(|v| format!("{v:.2}")));
                    row.extend(["0".to_string(), "0".to_string()]);
                    let l = &r.latency;
                    let lat = [l.min_us, l.avg_us, l.p95_us, l.p99_us, l.max_us];
                    row.extend(lat.map(|us| format!("{:.3}", us / 1e3)));
                    row.push(String::new());
                }
                _ => row.resize(columns - 2, String::new()),
            }
            row.push(csv_field(d.error.as_deref().unwrap_or("")));
            let verdict = super::validity::of_together(s, run, d);
            row.push(verdict.map_or(String::new(), |v| v.verdict.word().into()));
            out.push(row.join(","));
        }
    }
    out
}

/// The heading every rendering gives the section.
pub const HEADING: &str = "All disks at once (each run started on every disk together; MiB/s together and alone, their ratio, the together figure's validity; an outlier is below its model's median by more than 3 MADs)";

/// summary.txt's (and `report show`'s) section.
pub fn summary_section(s: &SuiteResult) -> String {
    let Some(rec) = &s.together else {
        return String::new();
    };
    let mut w = format!("\n{HEADING}:\n");
    for n in &rec.notes {
        let _ = writeln!(w, "  {n}");
    }
    for r in &rec.runs {
        let _ = writeln!(w, "  {}", r.name);
        for d in &r.disks {
            let _ = write!(
                w,
                "    {:<10} {:>9} MiB/s  alone {:>9}  {:>6}  {:<5}",
                d.target,
                fmt(d.mib_s),
                fmt(d.alone_mib_s),
                ratio_text(d),
                verdict_word(s, r, d)
            );
            if d.outlier.is_some() {
                w.push_str("  OUTLIER");
            }
            if let Some(e) = &d.error {
                let _ = write!(w, "  {e}");
            }
            w.push('\n');
        }
        for (who, line) in validity_lines(s, r) {
            let _ = writeln!(w, "    {who}: {line}");
        }
        for b in &r.buses {
            let _ = writeln!(w, "    bus {}", bus_line(b));
        }
    }
    for o in outliers(s) {
        let _ = writeln!(w, "  {o}");
    }
    w
}

/// The section of `report show --markdown`.
pub fn markdown(s: &SuiteResult, cell: impl Fn(&str) -> String) -> String {
    let Some(rec) = &s.together else {
        return String::new();
    };
    let mut w = format!("\n{HEADING}:\n\n");
    w.push_str(
        "| run | target | together MiB/s | alone MiB/s | ratio | validity | |\n|---|---|--:|--:|--:|---|---|\n",
    );
    for row in rows(s) {
        let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
        let _ = writeln!(w, "| {} |", cells.join(" | "));
    }
    for b in rec
        .runs
        .iter()
        .flat_map(|r| r.buses.iter().map(move |b| (r, b)))
    {
        let _ = writeln!(w, "\nBus in {}: {}", cell(&b.0.name), cell(&bus_line(b.1)));
    }
    for r in &rec.runs {
        for (who, line) in validity_lines(s, r) {
            let _ = writeln!(w, "\n{} {}: {}", cell(&r.name), cell(&who), cell(&line));
        }
    }
    for o in outliers(s) {
        let _ = writeln!(w, "\n**{}**", cell(&o));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::together::{TogetherRecord, TogetherRun};
    use crate::model::{Phase, PhaseResult};

    #[test]
    fn the_disk_below_the_median_by_more_than_three_mads_is_the_outlier() {
        // median 400, MAD 10 (floor 20): the limit is 340.
        let o = low_outliers(&[400.0, 410.0, 390.0, 120.0]);
        let o: Vec<bool> = o.iter().map(Option::is_some).collect();
        assert_eq!(o, [false, false, false, true]);
        let found = low_outliers(&[400.0, 410.0, 390.0, 120.0])[3]
            .clone()
            .unwrap();
        assert_eq!((found.median_mib_s, found.group_size), (395.0, 4));
        assert_eq!(found.mad_mib_s, 10.0);
        assert_eq!(found.limit_mib_s, 395.0 - 3.0 * 19.75);
        // wide spread: MAD 100 around 500, so 250 is within 3 MADs
        assert!(low_outliers(&[500.0, 600.0, 400.0, 250.0, 500.0])
            .iter()
            .all(Option::is_none));
        // faster than the rest is never the bad one
        assert!(low_outliers(&[400.0, 400.0, 900.0])
            .iter()
            .all(Option::is_none));
    }

    #[test]
    fn a_mad_of_zero_counts_as_five_percent_of_the_median() {
        // Two of three equal: MAD 0; a 10 % dip is not an outlier, a 20 % one is.
        assert!(low_outliers(&[400.0, 400.0, 360.0])
            .iter()
            .all(Option::is_none));
        let o = low_outliers(&[400.0, 400.0, 320.0]);
        assert!(o[2].is_some() && o[0].is_none());
        assert_eq!(o[2].as_ref().unwrap().limit_mib_s, 340.0);
        // two disks: no median says which one is bad
        assert!(low_outliers(&[400.0, 10.0]).iter().all(Option::is_none));
    }

    #[test]
    fn the_ratio_is_together_over_alone_when_both_were_measured() {
        assert_eq!(ratio(Some(200.0), Some(400.0)), Some(0.5));
        assert_eq!(ratio(Some(200.0), None), None);
        assert_eq!(ratio(None, Some(400.0)), None);
        assert_eq!(ratio(Some(200.0), Some(0.0)), None);
    }

    fn fileio_result(read_mib_s: f64) -> BenchResult {
        let mut r = crate::model::bench::tests_support::sample_fileio_result();
        if let Counters::Fileio(c) = &mut r.counters {
            (c.read_mib_per_s, c.written_mib_per_s) = (read_mib_s, 0.0);
        }
        r
    }

    #[test]
    fn analyse_fills_ratios_groups_outliers_and_the_bus_and_every_rendering_names_them() {
        let phase = Phase::FileioRun {
            set: 0,
            mode: crate::fileio::TestMode::Seqrd,
            threads: 1,
            queue: None,
        };
        let mut s = crate::model::suite::tests_support::two_disk_suite();
        s.targets.clear();
        let mut disks = vec![];
        for (name, alone, together) in [("a", 800.0, 400.0), ("b", 780.0, 410.0), ("c", 30.0, 29.0)]
        {
            let mut t = TargetResult::new(name, "/x", crate::model::TargetKind::Directory, "d");
            let mut p = PhaseResult::new(phase.name(), Some(phase), PhaseStatus::Ok);
            p.result = Some(fileio_result(alone));
            t.phases.push(p);
            s.targets.push(t);
            disks.push(TogetherDisk {
                target: name.into(),
                status: PhaseStatus::Ok,
                error: None,
                result: Some(fileio_result(together)),
                mib_s: None,
                alone_mib_s: None,
                ratio: None,
                group: None,
                outlier: None,
                device_io: None,
                validity: None,
            });
        }
        s.together = Some(TogetherRecord {
            runs: vec![TogetherRun {
                name: format!("together-{}", phase.name()),
                phase,
                disks,
                buses: vec![],
            }],
            notes: vec![],
        });
        analyse(&mut s);
        let run = &s.together.as_ref().unwrap().runs[0];
        let r: Vec<Option<f64>> = run.disks.iter().map(|d| d.ratio).collect();
        assert_eq!(r, [Some(0.5), Some(410.0 / 780.0), Some(29.0 / 30.0)]);
        assert!(run
            .disks
            .iter()
            .all(|d| d.group.as_deref() == Some("directory")));
        let named: Vec<&str> = run
            .disks
            .iter()
            .filter(|d| d.outlier.is_some())
            .map(|d| d.target.as_str())
            .collect();
        assert_eq!(named, ["c"]);
        assert_eq!(run.buses.len(), 1);
        assert!((run.buses[0].read_mb_s - 839.0 * 1.048_576).abs() < 1e-6);
        assert_eq!(run.buses[0].ceiling, None);
        assert_eq!(
            target_line(&s, "c").unwrap(),
            "all disks at once: 0.97× to 0.97× its figure alone; OUTLIER of its model in together-fileio-seqrd-t1"
        );
        let text = summary_section(&s);
        assert!(
            text.contains("OUTLIER: c in together-fileio-seqrd-t1: 29.0 MiB/s"),
            "{text}"
        );
        let header_columns = 26; // results.csv's
        let rows = csv_rows(&s, header_columns, |f| f.to_string());
        assert_eq!(rows.len(), 3);
        assert!(
            rows.iter().all(|r| r.split(',').count() == header_columns),
            "{rows:?}"
        );
        assert!(
            rows[2].contains(",c,/x,together-fileio-seqrd-t1,ok,"),
            "{}",
            rows[2]
        );
        assert!(markdown(&s, |c| c.to_string())
            .contains("| together-fileio-seqrd-t1 | c | 29.0 | 30.0 | 0.97× | amber | OUTLIER |"));
    }
}

#[cfg(test)]
mod bus_tests {
    use super::*;
    use crate::disk::usb::{UsbController, UsbInfo};
    use crate::disk::Disk;
    use crate::model::together::TogetherRecord;
    use crate::model::TargetKind;
    use crate::model::{Colour, Phase};

    fn usb_target(name: &str, controller: &str, model: &str) -> TargetResult {
        let usb = UsbInfo {
            link_speed: Some(crate::disk::usb::LinkSpeed(5000.0)),
            controller: Some(UsbController {
                sysfs_path: format!("/sys/devices/{controller}").into(),
                name: controller.into(),
                pci_address: None,
            }),
            ..UsbInfo::default()
        };
        let disk = Disk {
            name: name.into(),
            vendor: Some("Samsung".into()),
            model: Some(model.into()),
            usb: Some(usb),
            ..Disk::default()
        };
        TargetResult {
            disk: Some(disk),
            ..TargetResult::new(name, "/x", TargetKind::Disk, "d")
        }
    }

    fn disk(target: &str, read_mib_s: f64) -> TogetherDisk {
        let mut r = crate::model::bench::tests_support::sample_fileio_result();
        if let Counters::Fileio(c) = &mut r.counters {
            (c.read_mib_per_s, c.written_mib_per_s) = (read_mib_s, 0.0);
        }
        TogetherDisk {
            target: target.into(),
            status: PhaseStatus::Ok,
            error: None,
            result: Some(r),
            mib_s: Some(read_mib_s),
            alone_mib_s: None,
            ratio: None,
            group: None,
            outlier: None,
            device_io: None,
            validity: None,
        }
    }

    #[test]
    fn each_disks_figure_together_is_judged_by_the_solo_rules_in_every_rendering() {
        let mut s = crate::model::suite::tests_support::two_disk_suite();
        s.targets = vec![
            usb_target("sda", "VIA VL805", "T7"),
            usb_target("sdb", "VIA VL805", "T7"),
        ];
        let phase = Phase::FileioRun {
            set: 0,
            mode: crate::fileio::TestMode::Seqrd,
            threads: 1,
            queue: None,
        };
        // 900 MiB/s cannot have crossed a 5 Gb/s link; sdb's 300 did, its device says so.
        let fast = disk("sda", 900.0);
        let mut fine = disk("sdb", 300.0);
        let secs = fine.result.as_ref().unwrap().measurement.total_time_s;
        fine.device_io = Some(crate::sys::blockdev::Counters {
            device: "sdb".into(),
            read_bytes: (300.0 * 1_048_576.0 * secs) as u64,
            written_bytes: 0,
        });
        s.together = Some(TogetherRecord {
            runs: vec![TogetherRun {
                name: format!("together-{}", phase.name()),
                phase,
                disks: vec![fast, fine],
                buses: vec![],
            }],
            notes: vec![],
        });
        super::super::validity::judge(&mut s);
        let run = &s.together.as_ref().unwrap().runs[0];
        let rules = |i: usize| -> Vec<(String, Colour)> {
            let v = run.disks[i].validity.as_ref().expect("judged");
            v.reasons
                .iter()
                .map(|r| (r.rule.clone(), r.colour))
                .collect()
        };
        assert!(
            rules(0).contains(&("link_ceiling".into(), Colour::Red)),
            "{:?}",
            rules(0)
        );
        assert!(
            rules(1)
                .iter()
                .all(|(r, _)| r != "link_ceiling" && r != "device_bytes"),
            "{:?}",
            rules(1)
        );
        assert_eq!(super::super::validity::red_count(&s), 1);
        let words: Vec<String> = rows(&s).into_iter().map(|r| r[5].clone()).collect();
        assert_eq!(words[0], "red");
        assert_ne!(words[1], "red");
        let text = summary_section(&s);
        assert!(
            text.contains("sda: validity: red — link_ceiling (red): read 900.0 MiB/s"),
            "{text}"
        );
        let md = markdown(&s, |c| c.to_string());
        assert!(md.contains("| 900.0 | - | - | red |"), "{md}");
        let csv = csv_rows(&s, 26, |f| f.to_string());
        assert!(csv[0].ends_with(",red"), "{csv:?}");
        // A bundle written before the verdict was recorded gets it when read.
        let mut old = s.clone();
        old.together.as_mut().unwrap().runs[0].disks[0].validity = None;
        assert_eq!(rows(&old)[0][5], "red");
    }

    #[test]
    fn disks_on_one_controller_share_its_ceiling_and_models_group_apart() {
        let targets = [
            usb_target("sda", "VIA VL805", "T7"),
            usb_target("sdb", "VIA VL805", "T7"),
            usb_target("sdc", "RP1 USB controller usb@80000", "T5"),
        ];
        let disks = [disk("sda", 200.0), disk("sdb", 150.0), disk("sdc", 300.0)];
        let refs: Vec<Option<&TargetResult>> = targets.iter().map(Some).collect();
        let b = buses(&disks, &refs);
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].bus.as_str(), b[0].targets.len()), ("VIA VL805", 2));
        assert!((b[0].read_mb_s - 350.0 * 1.048_576).abs() < 1e-9);
        let c = b[0].ceiling.as_ref().unwrap();
        assert_eq!((c.mb_s, c.half_duplex), (500.0, false));
        assert!(
            bus_line(&b[0]).contains(
                "73 % of one USB 3 Gen 1 (5 Gb/s) link's 500 MB/s (the busier direction)"
            ),
            "{}",
            bus_line(&b[0])
        );
        assert_eq!(group_of(&targets[0]), "Samsung T7");
        assert_ne!(group_of(&targets[0]), group_of(&targets[2]));
    }
}
