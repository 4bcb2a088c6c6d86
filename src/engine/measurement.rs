//! What an engine measured: the numbers of one run, independent of how it was configured or
//! rendered. Engines return a [`Measurement`]; `model` wraps it with the run's options, the
//! tool and the host into the versioned result document.

pub use crate::stats::{Fairness, HistogramData, LatencySummary, ThreadShare};
use serde::{Deserialize, Serialize};

/// The numbers of one run (one `run` step of one engine).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Start of the measured run, RFC 3339 UTC.
    pub started_at: String,
    pub threads: u32,
    /// Wall time of the measured run, seconds (sysbench's `total time`).
    pub total_time_s: f64,
    /// Events executed (fileio requests incl. periodic fsyncs; OLTP and TPC-C transactions).
    pub events: u64,
    pub counters: Counters,
    pub latency: LatencySummary,
    /// Per-interval series (`--report-interval`); empty when intervals were off.
    pub intervals: Vec<IntervalSample>,
    pub fairness: Fairness,
    pub histogram: HistogramData,
    /// What made the numbers measure the disk (O_DIRECT, data > RAM …) or anything else a
    /// reader must know. Free text, one fact per entry; shown with the figures.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Facts for whoever develops or tunes spindle (socket tuning …): kept in the document
    /// and the phase's log, never shown with the figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<String>,
    /// Set when the run ended early; the numbers are then partial.
    #[serde(default)]
    pub error: Option<String>,
}

/// Engine-specific counters. Tagged by `kind` in JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Counters {
    Fileio(FileioCounters),
    Oltp(OltpCounters),
    Tpcc(TpccCounters),
}

/// fileio: completed operations and bytes, and the per-second rates sysbench prints.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileioCounters {
    pub reads: u64,
    pub writes: u64,
    /// fsync/fdatasync/msync calls: periodic, fsync-all and end-of-test.
    pub fsyncs: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub fsyncs_per_s: f64,
    pub read_mib_per_s: f64,
    pub written_mib_per_s: f64,
    /// With `--validate`: blocks whose checksum and offset were verified on read.
    #[serde(default)]
    pub validated_blocks: u64,
}

/// OLTP: sysbench's SQL statistics.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OltpCounters {
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub queries: u64,
    pub transactions: u64,
    pub ignored_errors: u64,
    pub reconnects: u64,
    pub tps: f64,
    pub qps: f64,
    pub ignored_errors_per_s: f64,
    pub reconnects_per_s: f64,
    /// Ignored errors broken down by MySQL error code (the code as text: JSON keys are strings).
    #[serde(default)]
    pub errors_by_code: std::collections::BTreeMap<String, u64>,
}

/// TPC-C (tpcc-mysql model): per transaction type counts, response times, TpmC.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TpccCounters {
    pub warehouses: u32,
    /// New-Orders completed (success + late, rollbacks included) per minute of measured time.
    pub tpmc: f64,
    /// All transactions completed per minute of measured time.
    #[serde(default)]
    pub tpm_total: f64,
    /// Seconds measured (ramp-up excluded).
    #[serde(default)]
    pub measured_s: f64,
    /// Ramp-up seconds before measuring (nothing of it is counted).
    #[serde(default)]
    pub rampup_s: f64,
    /// Per type, in tpcc-mysql's order: new_order, payment, order_status, delivery,
    /// stock_level.
    pub per_type: Vec<TpccTypeCounters>,
    /// Connections re-established after the server dropped them.
    #[serde(default)]
    pub reconnects: u64,
    /// Errors that made a transaction roll back and retry (or reconnect), by MySQL error code
    /// (the code as text: JSON keys are strings), all types together.
    #[serde(default)]
    pub errors_by_code: std::collections::BTreeMap<String, u64>,
}

/// The most TpmC one warehouse can give under the TPC-C specification's keying and think
/// times (TPC-C 5.11, §4.2: each warehouse's 10 terminals): the denominator of HammerDB's and
/// go-tpc's efficiency.
pub const TPMC_PER_WAREHOUSE: f64 = 12.86;

impl TpccCounters {
    /// Committed New-Orders per minute — HammerDB's NOPM, which counts the orders the database
    /// took: TpmC less the intended 1 % rollbacks (tpcc-mysql counts those in TpmC).
    pub fn nopm(&self) -> f64 {
        let Some(n) = self.per_type.first() else {
            return self.tpmc;
        };
        let done = n.success + n.late;
        if done == 0 {
            return 0.0;
        }
        self.tpmc * done.saturating_sub(n.rollbacks) as f64 / done as f64
    }

    /// TpmC over the specification's ceiling for the warehouses (percent): above 100 % a run
    /// without think times (as spindle, tpcc-mysql and go-tpc run) asks more of the database
    /// than the specification lets terminals ask.
    pub fn efficiency_pct(&self) -> Option<f64> {
        (self.warehouses > 0)
            .then(|| self.tpmc / (TPMC_PER_WAREHOUSE * self.warehouses as f64) * 100.0)
    }
}

/// One transaction type of a TPC-C run. Times in milliseconds, wall clock, from the first try
/// to the commit (retries included).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TpccTypeCounters {
    pub name: String,
    /// Completed within the response-time limit.
    pub success: u64,
    /// Completed at or above the limit.
    pub late: u64,
    /// Tries that failed and were retried (deadlock, lock-wait timeout, lost connection).
    pub retries: u64,
    /// Transactions given up after too many retries.
    pub failures: u64,
    /// New-Order only: completed by the intended rollback (unused item); counted in
    /// success/late as tpcc-mysql does.
    #[serde(default)]
    pub rollbacks: u64,
    /// The response-time limit, seconds.
    #[serde(default)]
    pub rt_limit_s: f64,
    #[serde(default)]
    pub avg_ms: f64,
    #[serde(default)]
    pub p50_ms: f64,
    #[serde(default)]
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    #[serde(default)]
    pub p99_9_ms: f64,
    pub max_ms: f64,
    /// Retried errors of this type by MySQL error code.
    #[serde(default)]
    pub errors_by_code: std::collections::BTreeMap<String, u64>,
}

/// One `--report-interval` line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntervalSample {
    /// Seconds since the start of the run at the end of this interval.
    pub time_s: f64,
    /// Threads running during the interval.
    pub threads: u32,
    /// Events completed in the interval.
    pub events: u64,
    /// The sysbench percentile of this interval's events, milliseconds.
    pub latency_pct_ms: f64,
    /// Largest latency in the interval, milliseconds.
    pub latency_max_ms: f64,
    /// 95th and 99th percentiles of this interval's events, milliseconds (sysbench's bucket
    /// method), for "p95/p99 over time". 0 in documents written before these were recorded.
    #[serde(default)]
    pub p95_ms: f64,
    #[serde(default)]
    pub p99_ms: f64,
    pub rates: IntervalRates,
}

/// Engine-specific per-second rates of one interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IntervalRates {
    Fileio {
        read_mib_per_s: f64,
        written_mib_per_s: f64,
        reads_per_s: f64,
        writes_per_s: f64,
        fsyncs_per_s: f64,
    },
    Oltp {
        tps: f64,
        qps: f64,
        reads_per_s: f64,
        writes_per_s: f64,
        other_per_s: f64,
        errors_per_s: f64,
        reconnects_per_s: f64,
    },
    /// Per type arrays are in tpcc-mysql's order: New-Order, Payment, Order-Status,
    /// Delivery, Stock-Level. Times in milliseconds; 0 when a type had no transaction.
    Tpcc {
        /// Completed (success + late) in the interval, per type.
        new_orders: u64,
        payments: u64,
        order_status: u64,
        deliveries: u64,
        stock_levels: u64,
        /// Late transactions in the interval, per type.
        #[serde(default)]
        late: [u64; 5],
        /// 95th percentile response time per type (sysbench-style 1024-bucket histogram).
        #[serde(default)]
        p95_ms: [f64; 5],
        /// 99th percentile response time per type.
        #[serde(default)]
        p99_ms: [f64; 5],
        /// Largest response time per type.
        #[serde(default)]
        max_ms: [f64; 5],
        /// New-Orders per minute in this interval.
        #[serde(default)]
        tpmc: f64,
        /// Retried tries in the interval.
        #[serde(default)]
        retries: u64,
        /// Reconnects in the interval.
        #[serde(default)]
        reconnects: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nopm_leaves_out_the_intended_rollbacks_and_efficiency_is_over_12_86_per_warehouse() {
        let c = TpccCounters {
            warehouses: 2,
            tpmc: 1000.0,
            per_type: vec![TpccTypeCounters {
                name: "new_order".into(),
                success: 950,
                late: 50,
                rollbacks: 10,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!((c.nopm() - 990.0).abs() < 1e-9);
        let e = c.efficiency_pct().unwrap();
        assert!((e - 1000.0 / 25.72 * 100.0).abs() < 1e-9, "{e}");
        let none = TpccCounters::default();
        assert_eq!((none.nopm(), none.efficiency_pct()), (0.0, None));
    }
}
