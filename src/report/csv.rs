//! `results.csv`: one row per target and test, for spreadsheets.

use super::suite::{PhaseStatus, SuiteResult};
use super::Counters;
use std::fmt::Write as _;

/// The CSV header of `results.csv`.
pub const CSV_HEADER: &str = "run_id,target,path,test,status,threads,events,total_time_s,reads_per_s,writes_per_s,fsyncs_per_s,read_mib_per_s,written_mib_per_s,tps,qps,ignored_errors,reconnects,lat_min_ms,lat_avg_ms,lat_p95_ms,lat_p99_ms,lat_max_ms,error";

pub(crate) fn csv_field(s: &str) -> String {
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
                let measurement = match p.phase {
                    Some(ph) => ph.is_measurement(),
                    None => {
                        (p.name.starts_with("fileio") || p.name.starts_with("oltp"))
                            && !p.name.ends_with("prepare")
                            && !p.name.ends_with("cleanup")
                    }
                };
                if p.status != PhaseStatus::Ok && measurement {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::suite::tests_support::two_disk_suite as suite;

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
}
