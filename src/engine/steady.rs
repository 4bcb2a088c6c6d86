//! Steady state of a run (fio's `ss`, judged by `stats::steady`) on the samples its engine
//! took, with what fio's words measure in each engine:
//!
//! | word | fileio | OLTP | TPC-C |
//! |---|---|---|---|
//! | `iops` | reads + writes per second | transactions per second (tps) | transactions of every type per second |
//! | `bw` | MiB read + written per second | queries per second (qps) | New-Orders per minute (tpmC) |
//! | `lat` | the interval's `--percentile` (p95 when off), ms | the same | New-Order's 95th percentile, ms |
//!
//! `lat` is a percentile, not fio's mean completion latency: the samples carry no mean. The
//! default criterion is [`DEFAULT_CRITERION`] for every engine; `ss_dur` and `ss_ramp`
//! default to a third and a sixth of the run ([`default_dur_s`], [`default_ramp_s`]).

use super::measurement::{Counters, IntervalRates, IntervalSample, Measurement};
use crate::stats::steady::{judge, Criterion, Metric, Point};
pub use crate::stats::steady::{Criterion as SteadyCriterion, SteadyState};

/// The criterion when none is given: the least-squares slope of the throughput (fileio's
/// requests, OLTP's and TPC-C's transactions per second) under 10 % of its mean per second.
pub const DEFAULT_CRITERION: Criterion = Criterion {
    metric: Metric::Iops,
    slope: true,
    limit: 10.0,
    percent: true,
};

/// `ss`, `ss_dur`, `ss_ramp` as given (command line or profile); the rest take the defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SteadySettings {
    pub criterion: Option<Criterion>,
    pub dur_s: Option<u64>,
    pub ramp_s: Option<u64>,
}

impl SteadySettings {
    /// Whether anything was given.
    pub fn given(&self) -> bool {
        self.criterion.is_some() || self.dur_s.is_some() || self.ramp_s.is_some()
    }
}

/// `ss_dur` for a run of `run_s` seconds sampled every `interval_s`: a third of the run,
/// 10 to 60 s, and at least three samples.
pub fn default_dur_s(run_s: f64, interval_s: f64) -> f64 {
    (run_s / 3.0)
        .round()
        .clamp(10.0, 60.0)
        .max((3.0 * interval_s).ceil())
}

/// `ss_ramp` for a run of `run_s` seconds: a sixth of the run, 2 to 30 s.
pub fn default_ramp_s(run_s: f64) -> f64 {
    (run_s / 6.0).round().clamp(2.0, 30.0)
}

impl Measurement {
    /// Whether and when this run reached a steady state by `settings`, and left it.
    pub fn steady_state(&self, settings: &SteadySettings) -> SteadyState {
        let c = settings.criterion.unwrap_or(DEFAULT_CRITERION);
        let points = self.steady_series(c.metric);
        let interval_s = points.first().map_or(0.0, |p| p.len_s);
        let dur = settings.dur_s.map_or_else(
            || default_dur_s(self.total_time_s, interval_s),
            |d| d as f64,
        );
        let ramp = settings
            .ramp_s
            .map_or_else(|| default_ramp_s(self.total_time_s), |r| r as f64);
        let mut s = judge(&points, c, dur, ramp);
        s.series = self.series_name(c.metric).into();
        s
    }

    /// One value per interval for `metric`, each with its interval's length.
    fn steady_series(&self, metric: Metric) -> Vec<Point> {
        let mut prev = 0.0;
        self.intervals
            .iter()
            .map(|s| {
                let len_s = (s.time_s - prev).max(1e-9);
                prev = s.time_s;
                Point {
                    end_s: s.time_s,
                    len_s,
                    value: value(s, len_s, metric),
                }
            })
            .collect()
    }

    /// What `metric` measures in this engine, as recorded with the result.
    fn series_name(&self, metric: Metric) -> &'static str {
        match (&self.counters, metric) {
            (Counters::Fileio(_), Metric::Iops) => "iops: reads + writes per second",
            (Counters::Fileio(_), Metric::Bw) => "bw: MiB read + written per second",
            (Counters::Oltp(_), Metric::Iops) => "iops: transactions per second (tps)",
            (Counters::Oltp(_), Metric::Bw) => "bw: queries per second (qps)",
            (Counters::Tpcc(_), Metric::Iops) => "iops: transactions of every type per second",
            (Counters::Tpcc(_), Metric::Bw) => "bw: New-Orders per minute (tpmC)",
            (Counters::Tpcc(_), Metric::Lat) => {
                "lat: New-Order's 95th percentile per interval, ms (the samples carry no mean)"
            }
            (_, Metric::Lat) => {
                "lat: the interval's latency percentile (p95 when --percentile=0), ms (the samples carry no mean)"
            }
        }
    }
}

/// The interval's value of `metric` (see the module's table).
fn value(s: &IntervalSample, len_s: f64, metric: Metric) -> f64 {
    match metric {
        Metric::Lat if s.latency_pct_ms > 0.0 => s.latency_pct_ms,
        Metric::Lat => s.p95_ms,
        Metric::Iops => match &s.rates {
            IntervalRates::Fileio {
                reads_per_s,
                writes_per_s,
                ..
            } => reads_per_s + writes_per_s,
            IntervalRates::Oltp { tps, .. } => *tps,
            IntervalRates::Tpcc { .. } => s.events as f64 / len_s,
        },
        Metric::Bw => match &s.rates {
            IntervalRates::Fileio {
                read_mib_per_s,
                written_mib_per_s,
                ..
            } => read_mib_per_s + written_mib_per_s,
            IntervalRates::Oltp { qps, .. } => *qps,
            IntervalRates::Tpcc { tpmc, .. } => *tpmc,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_run_and_its_samples() {
        // 30 s: a 10 s window after 5 s; 300 s: 60 s after 30 s; 5 s: 10 s after 2 s (longer
        // than the run, which then says so); 10 s samples over 60 s: 20 s → 30 s (3 samples).
        assert_eq!(
            (default_dur_s(30.0, 1.0), default_ramp_s(30.0)),
            (10.0, 5.0)
        );
        assert_eq!(
            (default_dur_s(300.0, 1.0), default_ramp_s(300.0)),
            (60.0, 30.0)
        );
        assert_eq!((default_dur_s(5.0, 1.0), default_ramp_s(5.0)), (10.0, 2.0));
        assert_eq!(default_dur_s(60.0, 10.0), 30.0);
    }

    #[test]
    fn a_fileio_run_is_judged_on_reads_plus_writes_per_second() {
        let mut m = Measurement {
            started_at: String::new(),
            threads: 1,
            total_time_s: 30.0,
            events: 3000,
            counters: Counters::Fileio(Default::default()),
            latency: Default::default(),
            intervals: vec![],
            fairness: Default::default(),
            histogram: Default::default(),
            notes: vec![],
            diagnostics: vec![],
            error: None,
        };
        m.intervals = (1..=30)
            .map(|t| {
                let rates = IntervalRates::Fileio {
                    read_mib_per_s: 1.0,
                    written_mib_per_s: 1.0,
                    reads_per_s: 60.0,
                    writes_per_s: 40.0,
                    fsyncs_per_s: 0.0,
                };
                IntervalSample::new(t as f64, 1, 100, Default::default(), rates)
            })
            .collect();
        // 100 per second throughout: attained after the 5 s ramp and the 10 s window.
        let s = m.steady_state(&SteadySettings::default());
        assert_eq!(s.criterion.to_string(), "iops_slope:10%");
        assert_eq!((s.dur_s, s.ramp_s, s.at_s), (10.0, 5.0, Some(15.0)));
        assert_eq!(s.series, "iops: reads + writes per second");
        let given = SteadySettings {
            criterion: Some(Criterion::parse("bw:1%").unwrap()),
            dur_s: Some(2),
            ramp_s: Some(1),
        };
        assert_eq!(m.steady_state(&given).at_s, Some(3.0));
    }
}
