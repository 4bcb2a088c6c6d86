//! The suite's results bundle: one [`SuiteResult`] document (`results.json`), a CSV with one
//! row per target and test (`results.csv`), `summary.txt`, a side-by-side table of the targets
//! per test with ratios to the best one — the way the reference articles compare an SSD with an
//! HDD — and `report.html` (see [`super::html`]). Renderers are pure; [`write_bundle`] writes
//! every file atomically.

use super::{BenchResult, Counters, HostInfo, ToolInfo};
use crate::sys::fs::write_atomic;
use crate::sys::state::{StateSample, SystemState};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// Version of the suite document layout.
pub const SUITE_SCHEMA_VERSION: u32 = 1;

/// A whole suite run: every target, every phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteResult {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub host: HostInfo,
    /// Identifier of this run (`<host>-<timestamp>`), also the bundle directory name.
    pub run_id: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// `running`, `complete`, `aborted` or `interrupted` (found unfinished after a restart).
    pub status: String,
    /// The profile as it was run (resolved).
    pub profile: serde_json::Value,
    pub targets: Vec<TargetResult>,
    /// Disks that were found but not benchmarked, with the reason.
    pub skipped: Vec<Skipped>,
}

/// A disk that was not benchmarked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    pub device: String,
    pub id: String,
    pub reason: String,
}

/// One target (a disk or a directory).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetResult {
    /// Short name used in tables and file names (`sda`, `dir1`).
    pub name: String,
    /// Where the work happened (mount point or directory).
    pub path: String,
    /// `disk` or `directory`.
    pub kind: String,
    /// One line describing the target (model, link speed, driver) for tables.
    pub description: String,
    /// Disk facts (discovery record), when a disk.
    pub disk: Option<serde_json::Value>,
    /// How the disk was prepared (erased / existing filesystem), and the exact commands.
    pub preparation: Vec<String>,
    pub state_before: Option<SystemState>,
    pub state_after: Option<SystemState>,
    /// Temperature/throttling samples during the run.
    pub samples: Vec<StateSample>,
    pub phases: Vec<PhaseResult>,
}

/// What happened in one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    pub name: String,
    /// `ok`, `failed`, `skipped` or `aborted`.
    pub status: String,
    pub seconds: f64,
    /// Start, seconds since the target's first phase (the clock of `TargetResult::samples`).
    /// Absent in documents written before it was recorded.
    #[serde(default)]
    pub start_s: Option<f64>,
    pub error: Option<String>,
    /// Facts about how the phase ran (page cache dropped, O_DIRECT, data set vs RAM …).
    #[serde(default)]
    pub notes: Vec<String>,
    /// The benchmark result (also partial ones when the phase failed mid-run).
    pub result: Option<BenchResult>,
}

impl SuiteResult {
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("suite result serialises")
    }
}

/// Key figures of one result, for tables and CSV.
struct Figures {
    primary: f64,
    primary_label: &'static str,
    secondary: f64,
    secondary_label: &'static str,
    p95_ms: f64,
    p99_ms: f64,
}

fn figures(r: &BenchResult) -> Figures {
    let (p95, p99) = (r.latency.p95_us / 1e3, r.latency.p99_us / 1e3);
    match &r.counters {
        Counters::Fileio(c) => Figures {
            primary: c.reads_per_s + c.writes_per_s,
            primary_label: "req/s",
            secondary: c.read_mib_per_s + c.written_mib_per_s,
            secondary_label: "MiB/s",
            p95_ms: p95,
            p99_ms: p99,
        },
        Counters::Oltp(c) => Figures {
            primary: c.tps,
            primary_label: "tps",
            secondary: c.qps,
            secondary_label: "qps",
            p95_ms: p95,
            p99_ms: p99,
        },
        Counters::Tpcc(c) => Figures {
            primary: c.tpmc,
            primary_label: "TpmC",
            secondary: 0.0,
            secondary_label: "",
            p95_ms: p95,
            p99_ms: p99,
        },
    }
}

/// `summary.txt`.
pub fn render_summary(s: &SuiteResult) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(
        w,
        "spindle {} suite, profile '{}'",
        s.tool.version,
        s.profile["name"].as_str().unwrap_or("?")
    );
    let _ = writeln!(
        w,
        "host: {} ({}, {} CPUs, {} MiB RAM{})",
        s.host.hostname,
        s.host.cpu_model,
        s.host.cpus,
        s.host.ram_bytes >> 20,
        s.host
            .board_model
            .as_deref()
            .map(|m| format!(", {m}"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        w,
        "run: {}  started {}  finished {}  status: {}",
        s.run_id,
        s.started_at,
        s.finished_at.as_deref().unwrap_or("-"),
        s.status
    );
    let _ = writeln!(w, "\nTargets:");
    for t in &s.targets {
        let _ = writeln!(w, "  {:<10} {}  {}", t.name, t.path, t.description);
        let temps: Vec<f64> = t.samples.iter().filter_map(|x| x.temp_c).collect();
        if let Some(max) = temps.iter().cloned().reduce(f64::max) {
            let _ = writeln!(w, "  {:<10} SoC temperature max {max:.1} °C", "");
        }
        let bits = t
            .samples
            .iter()
            .filter_map(|x| x.throttled)
            .fold(0, |a, b| a | b);
        if bits != 0 {
            let _ = writeln!(
                w,
                "  {:<10} THROTTLING: {}",
                "",
                crate::sys::state::throttled_flags(bits).join(", ")
            );
        }
    }
    if !s.skipped.is_empty() {
        let _ = writeln!(w, "\nSkipped disks:");
        for k in &s.skipped {
            let _ = writeln!(w, "  {:<10} {}  {}", k.device, k.id, k.reason);
        }
    }
    // Tests in plan order, each with one row per target.
    let mut tests: Vec<String> = Vec::new();
    for t in &s.targets {
        for p in &t.phases {
            if p.result.is_some() && !tests.contains(&p.name) {
                tests.push(p.name.clone());
            }
        }
    }
    for test in &tests {
        let rows: Vec<(&TargetResult, &PhaseResult)> = s
            .targets
            .iter()
            .filter_map(|t| t.phases.iter().find(|p| &p.name == test).map(|p| (t, p)))
            .collect();
        let best = rows
            .iter()
            .filter(|(_, p)| p.status == "ok")
            .filter_map(|(_, p)| p.result.as_ref().map(|r| figures(r).primary))
            .fold(0.0, f64::max);
        let Some(first) = rows.iter().find_map(|(_, p)| p.result.as_ref()) else {
            continue;
        };
        let f0 = figures(first);
        let _ = writeln!(w, "\n{test}  ({} threads)", first.threads);
        let _ = writeln!(
            w,
            "  {:<10} {:>12} {:>10} {:>9} {:>9} {:>8}",
            "target", f0.primary_label, f0.secondary_label, "p95 ms", "p99 ms", "vs best"
        );
        for (t, p) in rows {
            match (&p.result, p.status.as_str()) {
                (Some(r), st) => {
                    let f = figures(r);
                    let ratio = if best > 0.0 { f.primary / best } else { 0.0 };
                    let flag = if st == "ok" {
                        String::new()
                    } else {
                        format!("  ({st}: partial)")
                    };
                    let _ = writeln!(
                        w,
                        "  {:<10} {:>12.2} {:>10.2} {:>9.2} {:>9.2} {:>8.2}{flag}",
                        t.name, f.primary, f.secondary, f.p95_ms, f.p99_ms, ratio
                    );
                }
                (None, st) => {
                    let _ = writeln!(
                        w,
                        "  {:<10} {st}: {}",
                        t.name,
                        p.error.as_deref().unwrap_or("")
                    );
                }
            }
        }
    }
    let failures: Vec<(&str, &PhaseResult)> = s
        .targets
        .iter()
        .flat_map(|t| t.phases.iter().map(move |p| (t.name.as_str(), p)))
        .filter(|(_, p)| p.status == "failed")
        .collect();
    if !failures.is_empty() {
        let _ = writeln!(w, "\nFailures:");
        for (t, p) in failures {
            let _ = writeln!(
                w,
                "  {t} {}: {}",
                p.name,
                p.error.as_deref().unwrap_or("(no message)")
            );
        }
    }
    // One line per target and distinct note, naming the phases it applies to.
    let mut notes: Vec<(String, Vec<&str>)> = Vec::new();
    for t in &s.targets {
        for p in &t.phases {
            for n in &p.notes {
                let key = format!("{} {n}", t.name);
                match notes.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, phases)) => phases.push(&p.name),
                    None => notes.push((key, vec![&p.name])),
                }
            }
        }
    }
    if !notes.is_empty() {
        let _ = writeln!(w, "\nNotes:");
        for (note, phases) in notes {
            let _ = writeln!(w, "  {note} ({})", phases.join(", "));
        }
    }
    out
}

/// The CSV header of `results.csv`.
pub const CSV_HEADER: &str = "run_id,target,path,test,status,threads,events,total_time_s,reads_per_s,writes_per_s,fsyncs_per_s,read_mib_per_s,written_mib_per_s,tps,qps,ignored_errors,reconnects,lat_min_ms,lat_avg_ms,lat_p95_ms,lat_p99_ms,lat_max_ms,error";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `results.csv`: one row per target and test (measurement phases only).
pub fn render_csv(s: &SuiteResult) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for t in &s.targets {
        for p in &t.phases {
            let Some(r) = &p.result else {
                if p.status != "ok"
                    && (p.name.starts_with("fileio") || p.name.starts_with("oltp"))
                    && !p.name.ends_with("prepare")
                    && !p.name.ends_with("cleanup")
                {
                    let _ = writeln!(
                        out,
                        "{},{},{},{},{},,,,,,,,,,,,,,,,,,{}",
                        csv_field(&s.run_id),
                        csv_field(&t.name),
                        csv_field(&t.path),
                        p.name,
                        p.status,
                        csv_field(p.error.as_deref().unwrap_or(""))
                    );
                }
                continue;
            };
            let (rd, wr, fs, rm, wm, tps, qps, ie, rc) = match &r.counters {
                Counters::Fileio(c) => (
                    c.reads_per_s,
                    c.writes_per_s,
                    c.fsyncs_per_s,
                    c.read_mib_per_s,
                    c.written_mib_per_s,
                    0.0,
                    0.0,
                    0,
                    0,
                ),
                Counters::Oltp(c) => (
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    c.tps,
                    c.qps,
                    c.ignored_errors,
                    c.reconnects,
                ),
                Counters::Tpcc(_) => Default::default(),
            };
            let l = &r.latency;
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{:.4},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{},{},{:.3},{:.3},{:.3},{:.3},{:.3},{}",
                csv_field(&s.run_id), csv_field(&t.name), csv_field(&t.path), p.name, p.status, r.threads, r.events, r.total_time_s,
                rd, wr, fs, rm, wm, tps, qps, ie, rc,
                l.min_us / 1e3, l.avg_us / 1e3, l.p95_us / 1e3, l.p99_us / 1e3, l.max_us / 1e3,
                csv_field(p.error.as_deref().or(r.error.as_deref()).unwrap_or(""))
            );
        }
    }
    out
}

/// Writes results.json, results.csv, summary.txt and report.html into `dir`, each atomically.
pub fn write_bundle(dir: &Path, s: &SuiteResult) -> anyhow::Result<()> {
    write_atomic(&dir.join("results.json"), s.to_json_pretty().as_bytes())?;
    write_atomic(&dir.join("results.csv"), render_csv(s).as_bytes())?;
    write_atomic(&dir.join("summary.txt"), render_summary(s).as_bytes())?;
    write_atomic(
        &dir.join("report.html"),
        super::html::render_html(s).as_bytes(),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests_support::sample_fileio_result;

    fn suite() -> SuiteResult {
        let mut fast = sample_fileio_result();
        if let Counters::Fileio(c) = &mut fast.counters {
            c.reads_per_s = 600.0;
            c.writes_per_s = 400.0;
        }
        let mut slow = fast.clone();
        if let Counters::Fileio(c) = &mut slow.counters {
            c.reads_per_s = 60.0;
            c.writes_per_s = 40.0;
        }
        let phase = |r: BenchResult| PhaseResult {
            name: "fileio-rndrw-t1".into(),
            status: "ok".into(),
            seconds: 1.0,
            start_s: None,
            error: None,
            notes: vec![],
            result: Some(r),
        };
        let target = |name: &str, r| TargetResult {
            name: name.into(),
            path: format!("/mnt/{name}"),
            kind: "disk".into(),
            description: "test disk".into(),
            disk: None,
            preparation: vec![],
            state_before: None,
            state_after: None,
            samples: vec![],
            phases: vec![phase(r)],
        };
        SuiteResult {
            schema_version: SUITE_SCHEMA_VERSION,
            tool: ToolInfo::spindle("1.0"),
            host: HostInfo::default(),
            run_id: "h-1".into(),
            started_at: "x".into(),
            finished_at: None,
            status: "complete".into(),
            profile: serde_json::json!({"name": "quick"}),
            targets: vec![target("ssd", fast), target("hdd", slow)],
            skipped: vec![Skipped {
                device: "/dev/sdc".into(),
                id: "usb-X".into(),
                reason: "holds data".into(),
            }],
        }
    }

    #[test]
    fn summary_compares_targets_with_ratio_to_best() {
        let text = render_summary(&suite());
        assert!(text.contains("fileio-rndrw-t1"), "{text}");
        let ssd = text
            .lines()
            .find(|l| l.trim_start().starts_with("ssd ") && l.contains("1000.00"))
            .unwrap();
        let hdd = text
            .lines()
            .find(|l| l.trim_start().starts_with("hdd ") && l.contains("100.00"))
            .unwrap();
        assert!(
            ssd.contains("1000.00") && ssd.trim_end().ends_with("1.00"),
            "{ssd}"
        );
        assert!(hdd.trim_end().ends_with("0.10"), "{hdd}");
        assert!(text.contains("Skipped disks:") && text.contains("holds data"));
    }

    #[test]
    fn repeated_notes_are_listed_once_with_their_phases() {
        let mut s = suite();
        let mut second = s.targets[0].phases[0].clone();
        second.name = "fileio-rndrd-t1".into();
        s.targets[0].phases.push(second);
        for p in &mut s.targets[0].phases {
            p.notes = vec!["page cache dropped before the run".into()];
        }
        let text = render_summary(&s);
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("page cache dropped"))
            .collect();
        assert_eq!(
            lines,
            vec!["  ssd page cache dropped before the run (fileio-rndrw-t1, fileio-rndrd-t1)"]
        );
    }

    #[test]
    fn csv_has_one_row_per_target_and_test() {
        let csv = render_csv(&suite());
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(lines.len(), 3);
        let cols = CSV_HEADER.split(',').count();
        for l in &lines[1..] {
            assert_eq!(l.split(',').count(), cols, "{l}");
        }
        assert_eq!(csv_field("a,b"), "\"a,b\"");
    }

    #[test]
    fn bundle_round_trips() {
        let d = tempfile::tempdir().unwrap();
        let s = suite();
        write_bundle(d.path(), &s).unwrap();
        let back: SuiteResult =
            serde_json::from_str(&std::fs::read_to_string(d.path().join("results.json")).unwrap())
                .unwrap();
        assert_eq!(back, s);
    }
}
