//! The key figures of one result, shared by the renderers that tabulate results
//! (`summary.txt`, `results.csv`, the queueing gain): the figure a test is read by and a second
//! one, with their units, and the p95/p99 latencies.

use crate::engine::Counters;
use crate::model::BenchResult;

/// Key figures of one result, for tables and CSV.
pub struct Figures {
    pub primary: f64,
    pub primary_label: &'static str,
    pub secondary: f64,
    pub secondary_label: &'static str,
    pub p95_ms: f64,
    pub p99_ms: f64,
}

pub fn figures(r: &BenchResult) -> Figures {
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
            secondary: c.tpm_total,
            secondary_label: "tpmTotal",
            p95_ms: p95,
            p99_ms: p99,
        },
    }
}
