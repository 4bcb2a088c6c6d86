//! The figure each test is ranked by and the test families the report groups them into, shared
//! by report.html and `spindle report compare`: fileio random (requests/s), fileio sequential
//! (MiB/s), OLTP (transactions/s), TPC-C (TpmC). Higher is better for every one of them.

use crate::engine::Counters;
use crate::model::{BenchResult, Phase, PhaseResult, TestOptions};

/// A group of tests that stress the disk the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    FileioRandom,
    FileioSequential,
    Oltp,
    Tpcc,
}

impl Family {
    /// Every family, in report order.
    pub const ALL: [Family; 4] = [
        Family::FileioRandom,
        Family::FileioSequential,
        Family::Oltp,
        Family::Tpcc,
    ];

    /// Words for headings and tables.
    pub fn name(self) -> &'static str {
        match self {
            Family::FileioRandom => "fileio random",
            Family::FileioSequential => "fileio sequential",
            Family::Oltp => "OLTP",
            Family::Tpcc => "TPC-C",
        }
    }

    /// A short identifier for CSV columns and anchors.
    pub fn id(self) -> &'static str {
        match self {
            Family::FileioRandom => "fileio_random",
            Family::FileioSequential => "fileio_sequential",
            Family::Oltp => "oltp",
            Family::Tpcc => "tpcc",
        }
    }
}

/// The family of a test, from its result when there is one, else from the phase name
/// (`fileio-rndrw-t4`, `fileio2-seqrd-t50`, `oltp-read_write-t8`, `tpcc-…`). None for phases
/// that are not measurements.
pub fn family(phase: &str, result: Option<&BenchResult>) -> Option<Family> {
    if let Some(r) = result {
        return Some(match (&r.options, &r.counters) {
            (_, Counters::Tpcc(_)) => Family::Tpcc,
            (TestOptions::Fileio(c), _) => match c.test_mode {
                Some(m) if m.is_random() => Family::FileioRandom,
                _ => Family::FileioSequential,
            },
            (TestOptions::Oltp(_), _) => Family::Oltp,
            (TestOptions::Tpcc(_), _) => Family::Tpcc,
        });
    }
    let mut parts = phase.split('-');
    let head = parts.next().unwrap_or("");
    let second = parts.next().unwrap_or("");
    if ["-prepare", "-cleanup", "-check", "-prewarm"]
        .iter()
        .any(|end| phase.ends_with(end))
    {
        return None;
    }
    if head.starts_with("fileio") {
        return Some(if second.starts_with("rnd") {
            Family::FileioRandom
        } else {
            Family::FileioSequential
        });
    }
    match head {
        "oltp" => Some(Family::Oltp),
        "tpcc" => Some(Family::Tpcc),
        _ => None,
    }
}

/// The family of a phase's test: from its result, else from the step it ran, else — a schema 1
/// document, which did not record the step — from its name. None for phases that are not
/// measurements.
pub fn family_of(p: &PhaseResult) -> Option<Family> {
    match (&p.result, p.phase) {
        (Some(r), _) => family(&p.name, Some(r)),
        (None, Some(Phase::FileioRun { mode, .. })) => Some(if mode.is_random() {
            Family::FileioRandom
        } else {
            Family::FileioSequential
        }),
        (None, Some(Phase::OltpRun { .. })) => Some(Family::Oltp),
        (None, Some(Phase::TpccRun { .. })) => Some(Family::Tpcc),
        (None, Some(_)) => None,
        (None, None) => family(&p.name, None),
    }
}

/// The ranked figure of a result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metric {
    pub value: f64,
    /// Unit as printed after the value.
    pub unit: &'static str,
    /// What is measured, for sentences ("requests/s", "MiB/s", "transactions/s", "TpmC").
    pub what: &'static str,
}

/// The figure a result is ranked by (higher is better).
pub fn primary(r: &BenchResult) -> Metric {
    match &r.counters {
        Counters::Fileio(c) => {
            let random = matches!(&r.options, TestOptions::Fileio(o) if o.test_mode.is_some_and(|m| m.is_random()));
            if random {
                Metric {
                    value: c.reads_per_s + c.writes_per_s,
                    unit: "req/s",
                    what: "requests/s",
                }
            } else {
                Metric {
                    value: c.read_mib_per_s + c.written_mib_per_s,
                    unit: "MiB/s",
                    what: "MiB/s",
                }
            }
        }
        Counters::Oltp(c) => Metric {
            value: c.tps,
            unit: "tps",
            what: "transactions/s",
        },
        Counters::Tpcc(c) => Metric {
            value: c.tpmc,
            unit: "TpmC",
            what: "TpmC",
        },
    }
}

/// The 99th percentile latency of a result in milliseconds; `None` when it measured no event.
pub fn p99_ms(r: &BenchResult) -> Option<f64> {
    (r.latency.count > 0).then_some(r.latency.p99_us / 1e3)
}

/// The throughput of one interval in the unit of [`primary`], when the interval has it.
pub fn interval_value(r: &BenchResult, i: &crate::engine::IntervalSample) -> Option<f64> {
    use crate::engine::IntervalRates as R;
    let unit = primary(r).unit;
    match &i.rates {
        R::Fileio {
            read_mib_per_s,
            written_mib_per_s,
            reads_per_s,
            writes_per_s,
            ..
        } => Some(if unit == "req/s" {
            reads_per_s + writes_per_s
        } else {
            read_mib_per_s + written_mib_per_s
        }),
        R::Oltp { tps, .. } => Some(*tps),
        R::Tpcc { new_orders, .. } => {
            // New-Order transactions per minute over this interval.
            let prev = r
                .intervals
                .iter()
                .take_while(|x| x.time_s < i.time_s)
                .last()
                .map_or(0.0, |x| x.time_s);
            let secs = i.time_s - prev;
            (secs > 0.0).then(|| *new_orders as f64 * 60.0 / secs)
        }
    }
}

/// The geometric mean of positive values; None when there are none or one is not positive.
pub fn geomean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let s: f64 = values.iter().map(|v| v.ln()).sum();
    Some((s / values.len() as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bench::tests_support::sample_fileio_result;

    #[test]
    fn a_phase_without_a_result_gets_its_family_from_its_step() {
        use crate::model::PhaseStatus;
        let run = |mode| Phase::FileioRun {
            set: 0,
            mode,
            threads: 1,
            queue: None,
        };
        let failed = |name: &str, phase| PhaseResult::new(name, phase, PhaseStatus::Failed);
        let p = failed("x", Some(run(crate::fileio::TestMode::Rndrd)));
        assert_eq!(family_of(&p), Some(Family::FileioRandom));
        let p = failed("x", Some(run(crate::fileio::TestMode::Seqwr)));
        assert_eq!(family_of(&p), Some(Family::FileioSequential));
        assert_eq!(
            family_of(&failed("tpcc-w1-c1", Some(Phase::TpccCheck))),
            None
        );
        // a schema 1 phase recorded no step: its name says
        assert_eq!(
            family_of(&failed("oltp-read_write-t4", None)),
            Some(Family::Oltp)
        );
    }

    #[test]
    fn families_from_results_and_from_names() {
        let mut r = sample_fileio_result();
        if let TestOptions::Fileio(c) = &mut r.options {
            c.test_mode = Some(crate::fileio::TestMode::Rndrw);
        }
        assert_eq!(family("x", Some(&r)), Some(Family::FileioRandom));
        assert_eq!(primary(&r).unit, "req/s");
        if let TestOptions::Fileio(c) = &mut r.options {
            c.test_mode = Some(crate::fileio::TestMode::Seqrd);
        }
        assert_eq!(family("x", Some(&r)), Some(Family::FileioSequential));
        assert_eq!(primary(&r).unit, "MiB/s");
        assert_eq!(
            family("fileio2-rndrd-t50", None),
            Some(Family::FileioRandom)
        );
        assert_eq!(
            family("fileio-seqwr-t4", None),
            Some(Family::FileioSequential)
        );
        assert_eq!(family("oltp-read_write-t4", None), Some(Family::Oltp));
        assert_eq!(family("oltp-read_write-prepare", None), None);
        assert_eq!(family("oltp-prewarm", None), None);
        assert_eq!(
            family("oltp-read_only-t8-io_bound", None),
            Some(Family::Oltp)
        );
        assert_eq!(family("mysqld-start", None), None);
        assert_eq!(family("tpcc-w10-t8", None), Some(Family::Tpcc));
    }

    #[test]
    fn geometric_mean() {
        assert!((geomean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(geomean(&[]), None);
        assert_eq!(geomean(&[1.0, 0.0]), None);
    }
}
