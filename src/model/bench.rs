//! The result document: one test run's [`Measurement`] with the fully resolved options, the tool
//! version and the host, so two documents can be compared from files alone. Units are in the
//! field names. Readers take schema 1 (options untagged) and 2; newer ones are refused with a
//! clear error.
//!
//! Schema 2 (this version): `options` carries a `kind` tag (`fileio`, `oltp`, `tpcc`) and is
//! read back into the engine's typed config ([`TestOptions`]). Everything else is as in 1.

use crate::engine::{Measurement, SteadySettings, SteadyState};
use crate::sys::HostInfo;
use serde::{Deserialize, Serialize};

/// Version of the result document layout.
pub const SCHEMA_VERSION: u32 = 2;

/// The resolved options of a test, typed per engine. Tagged by `kind` in JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TestOptions {
    Fileio(crate::fileio::FileioConfig),
    Oltp(Box<crate::oltp::OltpConfig>),
    Tpcc(Box<crate::tpcc::TpccConfig>),
}

impl TestOptions {
    /// The test name used in documents: `fileio`, `oltp_read_write`, …, `tpcc`.
    pub fn test_name(&self) -> String {
        match self {
            TestOptions::Fileio(_) => "fileio".into(),
            TestOptions::Oltp(c) => c.test_name(),
            TestOptions::Tpcc(_) => "tpcc".into(),
        }
    }

    /// The reference behaviour emulated: sysbench `1.0` or `0.4`, or `tpcc-mysql`.
    pub fn compat(&self) -> &'static str {
        match self {
            TestOptions::Fileio(c) => c.compat.as_str(),
            TestOptions::Oltp(_) => "1.0",
            TestOptions::Tpcc(_) => "tpcc-mysql",
        }
    }
}

/// One test run: the [`Measurement`] (its fields inline in JSON, read through `Deref`) with
/// what it was measured with and where.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub host: HostInfo,
    /// Test name: `fileio`, `oltp_read_write`, `oltp_point_select`, …, `tpcc`.
    pub test: String,
    /// The fully resolved options (every default filled in), as the engine saw them.
    pub options: TestOptions,
    /// Whether and when the run reached a steady state (fio's `ss`), and left it. Documents
    /// written before it was recorded get it computed when read, by the engine's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyState>,
    #[serde(flatten)]
    pub measurement: Measurement,
}

impl std::ops::Deref for BenchResult {
    type Target = Measurement;
    fn deref(&self) -> &Measurement {
        &self.measurement
    }
}

impl std::ops::DerefMut for BenchResult {
    fn deref_mut(&mut self) -> &mut Measurement {
        &mut self.measurement
    }
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
            version: crate::version::VERSION.into(),
            compat: compat.into(),
        }
    }
}

impl BenchResult {
    /// The document for `m`, measured with `options` on this host by this spindle.
    /// Its steady state is judged by the engine's default criterion ([`Self::judge_steady`]
    /// judges it again by other settings).
    pub fn new(options: TestOptions, m: Measurement) -> Self {
        BenchResult {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo::spindle(options.compat()),
            host: HostInfo::collect(),
            test: options.test_name(),
            options,
            steady_state: Some(m.steady_state(&SteadySettings::default())),
            measurement: m,
        }
    }

    /// Judges the steady state by `settings` (`--ss`, `--ss-dur`, `--ss-ramp`).
    pub fn judge_steady(&mut self, settings: &SteadySettings) -> &SteadyState {
        self.steady_state
            .insert(self.measurement.steady_state(settings))
    }

    /// The steady state of a document read back, computed by the engine's default when the
    /// document predates it.
    pub(crate) fn fill_steady_state(&mut self) {
        if self.steady_state.is_none() {
            self.judge_steady(&SteadySettings::default());
        }
    }

    /// Parses a result document (schema 1 or 2), refusing newer schemas with a clear message.
    pub fn from_json(text: &str, origin: &str) -> anyhow::Result<Self> {
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| anyhow::anyhow!("'{origin}' is not a JSON result document: {e}"))?;
        Self::from_value(v, origin)
    }

    /// [`from_json`](Self::from_json) for an already parsed value.
    pub fn from_value(mut v: serde_json::Value, origin: &str) -> anyhow::Result<Self> {
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
        if ver < 2 {
            upgrade_v1(&mut v);
        }
        move_diagnostics(&mut v);
        // Through the text form, sharing the string deserializer of the model with the
        // suite document's reader (one instantiation in the binary instead of two).
        let mut r: Self = serde_json::from_str(&v.to_string())
            .map_err(|e| anyhow::anyhow!("'{origin}': malformed result document: {e}"))?;
        r.fill_steady_state();
        Ok(r)
    }

    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("result model always serialises")
    }
}

/// Notes that were developer diagnostics before `diagnostics` existed move there, and the
/// page-cache note that is now one of the report's doubts (`report::doubts`) goes, so a
/// document of an older spindle shows only what a reader needs with its figures.
pub(crate) fn move_diagnostics(v: &mut serde_json::Value) {
    const DIAGNOSTICS: &[&str] = &["writable wake-ups dropped on "];
    let Some(notes) = v.get_mut("notes").and_then(|n| n.as_array_mut()) else {
        return;
    };
    notes.retain(|n| {
        !n.as_str()
            .is_some_and(|t| t.starts_with("file set (") && t.contains("is smaller than RAM"))
    });
    let (moved, kept): (Vec<_>, Vec<_>) = notes.drain(..).partition(|n| {
        n.as_str()
            .is_some_and(|t| DIAGNOSTICS.iter().any(|d| t.starts_with(d)))
    });
    *notes = kept;
    if moved.is_empty() {
        return;
    }
    let d = v
        .as_object_mut()
        .expect("a document with notes is an object")
        .entry("diagnostics")
        .or_insert_with(|| serde_json::Value::Array(vec![]));
    if let Some(d) = d.as_array_mut() {
        d.extend(moved);
    }
}

/// Schema 1 → 2: tag the options with the engine the test name says.
pub(crate) fn upgrade_v1(v: &mut serde_json::Value) {
    let kind = match v.get("test").and_then(|t| t.as_str()) {
        Some(t) if t.starts_with("oltp") => "oltp",
        Some("tpcc") => "tpcc",
        _ => "fileio",
    };
    if let Some(o) = v.get_mut("options").and_then(|o| o.as_object_mut()) {
        o.entry("kind").or_insert(kind.into());
    }
    if let Some(n) = v.get_mut("schema_version") {
        *n = SCHEMA_VERSION.into();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn oltp_counters_with_error_codes_round_trip_through_json() {
        let mut r = super::tests_support::sample_fileio_result();
        let mut c = crate::engine::OltpCounters::default();
        c.errors_by_code.insert("1213".into(), 3);
        r.counters = crate::engine::Counters::Oltp(c);
        let back = super::BenchResult::from_json(&r.to_json_pretty(), "test").unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn tpcc_results_round_trip_with_typed_options() {
        let mut r = super::tests_support::sample_fileio_result();
        r.options = super::TestOptions::Tpcc(Box::default());
        r.test = r.options.test_name();
        let mut c = crate::engine::TpccCounters {
            tpmc: 9925.0,
            ..Default::default()
        };
        c.per_type.push(crate::engine::TpccTypeCounters {
            name: "new_order".into(),
            success: 49575,
            late: 50,
            ..Default::default()
        });
        c.errors_by_code.insert("1213".into(), 2);
        r.counters = crate::engine::Counters::Tpcc(c);
        let back = super::BenchResult::from_json(&r.to_json_pretty(), "test").unwrap();
        assert_eq!(back, r);
        assert_eq!(back.test, "tpcc");
        assert_eq!(r.options.compat(), "tpcc-mysql");
        // Schema 1 documents of test "tpcc" get their options read as TPC-C options.
        let mut v = serde_json::to_value(&r).unwrap();
        v["schema_version"] = 1.into();
        v["options"].as_object_mut().unwrap().remove("kind");
        let old = super::BenchResult::from_value(v, "old.json").unwrap();
        assert!(matches!(old.options, super::TestOptions::Tpcc(_)));
    }

    #[test]
    fn documents_without_a_steady_state_get_the_default_judgement_when_read() {
        let mut r = super::tests_support::sample_fileio_result();
        r.measurement.total_time_s = 8.0;
        let mut v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["steady_state"]["criterion"], "iops_slope:10%");
        v.as_object_mut().unwrap().remove("steady_state");
        let back = super::BenchResult::from_value(v, "old.json").unwrap();
        let s = back.steady_state.unwrap();
        // No interval samples: judged as not attained, saying why; 8 s → a 10 s window, 2 s ramp.
        assert_eq!((s.attained, s.dur_s, s.ramp_s), (false, 10.0, 2.0));
        assert!(s.reason.unwrap().contains("no interval samples"));
    }

    #[test]
    fn schema_1_documents_are_read_with_their_options_typed() {
        let r = super::tests_support::sample_fileio_result();
        let mut v = serde_json::to_value(&r).unwrap();
        v["schema_version"] = 1.into();
        v["options"].as_object_mut().unwrap().remove("kind");
        let back = super::BenchResult::from_value(v.clone(), "old.json").unwrap();
        assert_eq!(back.options, r.options);
        v["schema_version"] = 99.into();
        let e = super::BenchResult::from_value(v, "new.json").unwrap_err();
        assert!(e.to_string().contains("upgrade spindle"), "{e}");
    }
}

/// Builders for tests across the crate.
#[cfg(test)]
pub mod tests_support {
    use super::*;
    use crate::engine::{Counters, FileioCounters, ThreadShare};

    /// A small, plausible fileio result.
    pub fn sample_fileio_result() -> BenchResult {
        let mut rec = crate::stats::LatencyRecorder::new();
        for ns in [20_000u64, 30_000, 3_640_000] {
            rec.record(ns);
        }
        let mut r = BenchResult::new(
            TestOptions::Fileio(crate::fileio::FileioConfig::default()),
            Measurement {
                started_at: crate::sys::clock::now_rfc3339(),
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
                diagnostics: vec![],
                error: None,
            },
        );
        r.host = HostInfo::default();
        r
    }
}
