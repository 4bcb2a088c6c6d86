//! The result model shared by every engine (fileio, OLTP, TPC-C), the suite and the appliance.
//!
//! One [`BenchResult`] is one test run (one `run` of one engine with one set of options). It
//! embeds the fully resolved options, the tool version and the host, so two documents can be
//! compared from files alone. Units are in the field names. Bump [`SCHEMA_VERSION`] on any
//! incompatible change; readers reject documents from a newer schema with a clear error.

pub use crate::stats::{Fairness, HistogramData, LatencySummary, ThreadShare};
pub use crate::sys::HostInfo;
use serde::{Deserialize, Serialize};

/// Version of the result document layout.
pub const SCHEMA_VERSION: u32 = 1;

/// One test run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub host: HostInfo,
    /// Test name: `fileio`, `oltp_read_write`, `oltp_point_select`, …, `tpcc`.
    pub test: String,
    /// Start of the measured run, RFC 3339 UTC.
    pub started_at: String,
    /// The fully resolved options (every default filled in), as the engine saw them.
    pub options: serde_json::Value,
    pub threads: u32,
    /// Wall time of the measured run, seconds (sysbench's `total time`).
    pub total_time_s: f64,
    /// Events executed (fileio requests incl. periodic fsyncs; OLTP transactions).
    pub events: u64,
    pub counters: Counters,
    pub latency: LatencySummary,
    /// Per-interval series (`--report-interval`); empty when intervals were off.
    pub intervals: Vec<IntervalSample>,
    pub fairness: Fairness,
    pub histogram: HistogramData,
    /// What made the numbers measure the disk (O_DIRECT, page cache dropped, data > RAM …) or
    /// anything else a reader must know. Free text, one fact per entry.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Set when the run ended early; the numbers are then partial.
    #[serde(default)]
    pub error: Option<String>,
}

/// Which tool produced the document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
    /// sysbench behaviour emulated: `1.0` or `0.4`.
    pub compat: String,
}

impl ToolInfo {
    pub fn spindle(compat: &str) -> Self {
        ToolInfo {
            name: "spindle".into(),
            version: crate::VERSION.into(),
            compat: compat.into(),
        }
    }
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

/// TPC-C (tpcc-mysql model): per transaction type counts and TpmC.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TpccCounters {
    pub warehouses: u32,
    pub tpmc: f64,
    /// Per type: new_order, payment, order_status, delivery, stock_level.
    pub per_type: Vec<TpccTypeCounters>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TpccTypeCounters {
    pub name: String,
    pub success: u64,
    pub late: u64,
    pub retries: u64,
    pub failures: u64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
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
    Tpcc {
        new_orders: u64,
        payments: u64,
        order_status: u64,
        deliveries: u64,
        stock_levels: u64,
    },
}

impl BenchResult {
    /// Parses a result document, refusing newer schemas with a clear message.
    pub fn from_json(text: &str, origin: &str) -> anyhow::Result<Self> {
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| anyhow::anyhow!("'{origin}' is not a JSON result document: {e}"))?;
        let ver = v
            .get("schema_version")
            .and_then(|x| x.as_u64())
            .ok_or_else(|| {
                anyhow::anyhow!("'{origin}' has no schema_version: not a spindle result document")
            })?;
        if ver > SCHEMA_VERSION as u64 {
            anyhow::bail!(
                "'{origin}' uses result schema {ver}, this spindle reads up to {SCHEMA_VERSION}: upgrade spindle"
            );
        }
        serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("'{origin}': malformed result document: {e}"))
    }

    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("result model always serialises")
    }
}

/// The current time as RFC 3339 UTC (`2026-11-29T20:01:02Z`).
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339_from_unix(secs)
}

/// Formats seconds since the Unix epoch as RFC 3339 UTC.
pub fn rfc3339_from_unix(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn oltp_counters_with_error_codes_round_trip_through_json() {
        let mut r = super::tests_support::sample_fileio_result();
        let mut c = super::OltpCounters::default();
        c.errors_by_code.insert("1213".into(), 3);
        r.counters = super::Counters::Oltp(c);
        let back = super::BenchResult::from_json(&r.to_json_pretty(), "test").unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn rfc3339_known_dates() {
        assert_eq!(super::rfc3339_from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            super::rfc3339_from_unix(951_782_400),
            "2000-02-29T00:00:00Z"
        );
        assert_eq!(
            super::rfc3339_from_unix(1_796_000_000),
            "2026-11-30T00:53:20Z"
        );
    }
}

/// Builders for tests across the crate.
#[cfg(test)]
pub mod tests_support {
    use super::*;

    /// A small, plausible fileio result.
    pub fn sample_fileio_result() -> BenchResult {
        let mut rec = crate::stats::LatencyRecorder::new();
        for ns in [20_000u64, 30_000, 3_640_000] {
            rec.record(ns);
        }
        BenchResult {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo::spindle("1.0"),
            host: HostInfo::default(),
            test: "fileio".into(),
            started_at: now_rfc3339(),
            options: serde_json::json!({}),
            threads: 1,
            total_time_s: 2.0032,
            events: 3,
            counters: Counters::Fileio(FileioCounters {
                reads: 2,
                writes: 1,
                ..Default::default()
            }),
            latency: rec.summary(95.0),
            intervals: vec![],
            fairness: crate::stats::fairness(vec![ThreadShare {
                events: 3,
                busy_s: 0.0037,
            }]),
            histogram: rec.histogram_data(),
            notes: vec![],
            error: None,
        }
    }
}
