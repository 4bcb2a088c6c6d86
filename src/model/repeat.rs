//! A measurement run several times (a profile's `[repeat]`, `spindle suite --repeat N`): each
//! run's figure and p99 latency, and which run's full result the phase keeps (the median one).
//! The statistics over them are `stats::repeat`'s, computed again on every reading from these
//! figures (the bootstrap is seeded, so the same figures give the same interval).

use serde::{Deserialize, Serialize};

/// One run of a repeated measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepeatRun {
    /// The phase's ranked figure (`report::metric::primary`) in `unit`.
    pub value: f64,
    pub unit: String,
    /// The 99th percentile latency, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<f64>,
    /// Ran to its end without an error.
    pub ok: bool,
    pub seconds: f64,
}

/// Every run of a repeated measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Repeats {
    pub runs: Vec<RepeatRun>,
    /// The run (from 0) whose full result the phase holds: the one with the median figure, or
    /// the one that failed.
    pub kept: usize,
    /// The interval goal the runs were extended for (`until_ci_pct`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ci_pct: Option<f64>,
}

impl Repeats {
    /// The figures of the runs that ran to their end.
    pub fn values(&self) -> Vec<f64> {
        self.runs.iter().filter(|r| r.ok).map(|r| r.value).collect()
    }

    /// Their p99 latencies.
    pub fn p99s(&self) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| r.ok)
            .filter_map(|r| r.p99_ms)
            .collect()
    }
}
