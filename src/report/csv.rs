//! `results.csv`: one row per target and test, for spreadsheets.

use super::figures::figures;
use crate::engine::Counters;
use crate::model::{PhaseStatus, SuiteResult};
use std::fmt::Write as _;

/// The CSV header of `results.csv`.
pub const CSV_HEADER: &str = "run_id,target,path,test,status,threads,events,total_time_s,reads_per_s,writes_per_s,fsyncs_per_s,read_mib_per_s,written_mib_per_s,tps,qps,tpmc,ignored_errors,reconnects,lat_min_ms,lat_avg_ms,lat_p95_ms,lat_p99_ms,lat_max_ms,vs_best,error,validity,repeats,mean,median,cv_pct,ci95_low,ci95_high,p99_ci95_low_ms,p99_ci95_high_ms";

pub(crate) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `results.csv`: one row per target and test (measurement phases and the SLC-cache cliff
/// write). `vs_best` is the
/// test's main figure (req/s, tps, TpmC) over the best target's, as in summary.txt;
/// `validity` the result's verdict (`report::validity`: green, amber or red), last so older
/// spreadsheets keep their columns; then a repeated measurement's statistics over its runs
/// (`stats::repeat`: the main figure's mean, median, CV and 95 % interval, and p99's interval).
pub fn render_csv(s: &SuiteResult) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    // The columns up to `validity`; the repeat columns follow.
    let columns = CSV_HEADER.split(',').count() - REPEAT_COLUMNS;
    let no_repeats = ",".repeat(REPEAT_COLUMNS);
    for t in &s.targets {
        for p in &t.phases {
            let head = [
                csv_field(&s.run_id),
                csv_field(&t.name),
                csv_field(&t.path),
                p.name.clone(),
                p.status.to_string(),
            ];
            let Some(r) = &p.result else {
                if let Some(c) = &p.cliff {
                    let _ = writeln!(out, "{}{no_repeats}", cliff_row(&head, p, c, columns));
                } else if p.status != PhaseStatus::Ok && is_measurement(p) {
                    let mut row = head.to_vec();
                    row.resize(columns - 2, String::new());
                    row.push(csv_field(p.error.as_deref().unwrap_or("")));
                    row.push(String::new());
                    let _ = writeln!(out, "{}{no_repeats}", row.join(","));
                }
                continue;
            };
            let mut rates = [0.0; 8]; // reads, writes, fsyncs, read MiB, written MiB, tps, qps, tpmc
            let (mut ignored, mut reconnects) = (0, 0);
            match &r.counters {
                Counters::Fileio(c) => {
                    rates[..5].copy_from_slice(&[
                        c.reads_per_s,
                        c.writes_per_s,
                        c.fsyncs_per_s,
                        c.read_mib_per_s,
                        c.written_mib_per_s,
                    ]);
                }
                Counters::Oltp(c) => {
                    (rates[5], rates[6]) = (c.tps, c.qps);
                    (ignored, reconnects) = (c.ignored_errors, c.reconnects);
                }
                Counters::Tpcc(c) => {
                    rates[7] = c.tpmc;
                    reconnects = c.reconnects;
                }
            }
            let l = &r.latency;
            let mut row = head.to_vec();
            row.push(r.threads.to_string());
            row.push(r.events.to_string());
            row.push(format!("{:.4}", r.total_time_s));
            row.extend(rates.iter().map(|v| format!("{v:.2}")));
            row.push(ignored.to_string());
            row.push(reconnects.to_string());
            for ms in [l.min_us, l.avg_us, l.p95_us, l.p99_us, l.max_us] {
                row.push(format!("{:.3}", ms / 1e3));
            }
            row.push(match best_of(s, &p.name) {
                Some(best) if best > 0.0 => format!("{:.3}", figures(r).primary / best),
                _ => String::new(),
            });
            row.push(csv_field(
                p.error.as_deref().or(r.error.as_deref()).unwrap_or(""),
            ));
            row.push(
                super::validity::of_phase(s, t, p)
                    .map_or("", |v| v.verdict.word())
                    .to_string(),
            );
            row.extend(repeat_fields(p));
            let _ = writeln!(out, "{}", row.join(","));
        }
    }
    out
}

/// The repeat columns' count.
const REPEAT_COLUMNS: usize = 8;

/// A repeated measurement's runs, mean, median, CV %, 95 % interval and p99's interval; empty
/// fields for one run.
fn repeat_fields(p: &crate::model::PhaseResult) -> Vec<String> {
    use crate::stats::repeat::summarise;
    let mut out = vec![String::new(); REPEAT_COLUMNS];
    let Some(rp) = &p.repeats else { return out };
    out[0] = rp.runs.len().to_string();
    if let Some(v) = summarise(&rp.values()) {
        out[1] = format!("{:.2}", v.mean);
        out[2] = format!("{:.2}", v.median);
        out[3] = format!("{:.2}", v.cv * 100.0);
        if let Some((lo, hi)) = v.ci {
            (out[4], out[5]) = (format!("{lo:.2}"), format!("{hi:.2}"));
        }
    }
    if let Some((lo, hi)) = summarise(&rp.p99s()).and_then(|s| s.ci) {
        (out[6], out[7]) = (format!("{lo:.3}"), format!("{hi:.3}"));
    }
    out
}

/// The SLC-cache cliff write's row: its time and mean write rate (where its cliffs are is in
/// summary.txt, report.html and the document); no latency, ratio or verdict.
fn cliff_row(
    head: &[String],
    p: &crate::model::PhaseResult,
    c: &crate::model::CliffRecord,
    columns: usize,
) -> String {
    let f = &c.finding;
    let mut row = head.to_vec();
    row.push("1".into());
    row.push(String::new());
    row.push(format!("{:.4}", f.seconds));
    let mib_s = if f.seconds > 0.0 {
        f.written_bytes as f64 / f.seconds / (1u64 << 20) as f64
    } else {
        0.0
    };
    row.extend(["", "", "", ""].map(String::from));
    row.push(format!("{mib_s:.2}"));
    row.resize(columns - 2, String::new());
    row.push(csv_field(p.error.as_deref().unwrap_or("")));
    row.push(String::new());
    row.join(",")
}

fn is_measurement(p: &crate::model::PhaseResult) -> bool {
    match p.phase {
        Some(ph) => ph.is_measurement(),
        None => {
            ["fileio", "oltp", "tpcc"]
                .iter()
                .any(|f| p.name.starts_with(f))
                && !["prepare", "cleanup", "check"]
                    .iter()
                    .any(|s| p.name.ends_with(s))
        }
    }
}

/// The best main figure of test `name` among the targets whose run completed.
fn best_of(s: &SuiteResult, name: &str) -> Option<f64> {
    s.targets
        .iter()
        .flat_map(|t| t.phases.iter())
        .filter(|p| p.name == name && p.status == PhaseStatus::Ok)
        .filter_map(|p| p.result.as_ref().map(|r| figures(r).primary))
        .reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::suite::tests_support::two_disk_suite as suite;

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
        let vs_best = CSV_HEADER.split(',').position(|c| c == "vs_best").unwrap();
        let ratios: Vec<&str> = lines[1..]
            .iter()
            .map(|l| l.split(',').nth(vs_best).unwrap())
            .collect();
        assert_eq!(
            ratios,
            ["1.000", "0.100"],
            "ssd is the best, hdd a tenth of it"
        );
    }

    #[test]
    fn the_cliff_write_has_a_row_with_its_time_and_mean_write_rate() {
        let mut s = suite();
        s.targets[0]
            .phases
            .push(crate::report::cliff::tests::cliff_phase());
        let csv = render_csv(&s);
        let row = csv.lines().find(|l| l.contains(",fileio-cliff,")).unwrap();
        let cols: Vec<&str> = CSV_HEADER.split(',').collect();
        let cell = |name: &str| {
            row.split(',')
                .nth(cols.iter().position(|c| *c == name).unwrap())
        };
        assert_eq!(row.split(',').count(), cols.len(), "{row}");
        assert_eq!(cell("total_time_s"), Some("30.0000"));
        // 15 s at 400 MB/s and 15 s at 50 MB/s: 6.75 GB in 30 s, 214.58 MiB/s.
        assert_eq!(cell("written_mib_per_s"), Some("214.58"), "{row}");
        assert_eq!(cell("status"), Some("ok"));
    }
}
