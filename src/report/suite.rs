//! The suite's result model (`results.json`): a whole run — every target, every phase — typed:
//! statuses and kinds are enums, the disk is the discovery record, each phase names the step it
//! ran ([`Phase`]) and holds the engine's result document. Renderers (`summary`, `csv`, `html`)
//! take this model; nothing parses its JSON back except readers of older bundles.
//!
//! Schema 2 (this version): typed statuses (same lowercase words as 1), `phase` and `start_s`
//! in each phase result, the profile recorded as its name, description and TOML text, each
//! test's options tagged by engine. Schema 1 bundles are upgraded when read.

pub use super::phase::{Phase, When};
use super::{BenchResult, HostInfo, ToolInfo};
use crate::disk::Disk;
use crate::sys::state::{StateSample, SystemState};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Version of the suite document layout.
pub const SUITE_SCHEMA_VERSION: u32 = 2;

/// How a run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// In progress (or cut off by a power loss / crash before it could say otherwise).
    Running,
    /// Every phase ran (some may have failed: see the phases).
    Complete,
    /// Stopped on request (signal, abort button); partial results kept.
    Aborted,
    /// Found still `running` after a restart: power loss or crash.
    Interrupted,
    /// Nothing was benchmarked: every disk seen was left out (the bundle says why, per disk).
    NoTargets,
}

/// How a phase ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseStatus {
    Ok,
    Failed,
    /// Not run because something it depends on failed; `error` says what.
    Skipped,
    /// Cut short or not started because the run was stopped.
    Aborted,
    /// Started and not finished yet (what a bundle says while the phase runs).
    Running,
    /// In progress when the machine lost power or crashed.
    Interrupted,
}

/// What a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A disk spindle prepared (erased, or an existing filesystem).
    Disk,
    /// A directory the user named (no disk preparation).
    Directory,
}

macro_rules! words {
    ($t:ty { $($v:ident => $w:literal),* $(,)? }) => {
        impl $t {
            /// The word used in files and tables.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$v => $w),* }
            }
        }
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
words!(RunStatus { Running => "running", Complete => "complete", Aborted => "aborted", Interrupted => "interrupted", NoTargets => "no_targets" });
words!(PhaseStatus { Ok => "ok", Failed => "failed", Skipped => "skipped", Aborted => "aborted", Running => "running", Interrupted => "interrupted" });
words!(TargetKind { Disk => "disk", Directory => "directory" });

/// The profile a run used, as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileRecord {
    /// Built-in name (`quick`, `standard`, `reference`) or the file's stem.
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Where it came from: `built-in` or the file path.
    #[serde(default)]
    pub source: String,
    /// The TOML text itself, so the run can be repeated exactly.
    #[serde(default)]
    pub toml: String,
}

/// A whole suite run: every target, every phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteResult {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub host: HostInfo,
    /// Identifier of this run ([`run_id`]), also the bundle directory name.
    pub run_id: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: RunStatus,
    pub profile: ProfileRecord,
    /// The machine and the target disks (board, kernel, USB bridges, drivers, quirks).
    #[serde(default)]
    pub environment: Option<crate::disk::facts::Environment>,
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

/// The private database server a target's OLTP/TPC-C phases ran on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// `MariaDB`, `MySQL` or `Percona Server`.
    pub flavor: String,
    pub version: String,
    /// The my.cnf settings that matter for the numbers (buffer pool, log size, flush policy …).
    pub settings: std::collections::BTreeMap<String, String>,
}

/// SMART around a target's phases.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SmartRecord {
    pub before: crate::disk::smart::SmartReading,
    pub after: Option<crate::disk::smart::SmartReading>,
    /// What the run wrote and wore, or why that is unknown.
    pub change: Option<crate::disk::smart::SmartChange>,
}

/// One target (a disk or a directory).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetResult {
    /// Short name used in tables and file names (`sda`, `dir1`).
    pub name: String,
    /// Where the work happened (mount point or directory).
    pub path: String,
    pub kind: TargetKind,
    /// One line describing the target (model, size, link speed, driver) for tables.
    pub description: String,
    /// The disk's discovery record, when a disk.
    pub disk: Option<Disk>,
    /// How the disk was prepared (erased / existing filesystem), and the exact commands.
    pub preparation: Vec<String>,
    #[serde(default)]
    pub server: Option<ServerInfo>,
    pub state_before: Option<SystemState>,
    pub state_after: Option<SystemState>,
    /// The disk's SMART before and after its phases (disks only), and what the run cost it.
    #[serde(default)]
    pub smart: Option<SmartRecord>,
    /// UAS aborts, USB resets and disconnects the kernel logged while the target ran.
    #[serde(default)]
    pub usb_trouble: Option<crate::disk::kernel_log::UsbTroubleCount>,
    /// Temperature/throttling samples during the run.
    pub samples: Vec<StateSample>,
    pub phases: Vec<PhaseResult>,
}

/// What happened in one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    /// The phase's name (`fileio-rndrw-t8`), also its text file's stem.
    pub name: String,
    /// The step it ran (absent in schema 1 bundles).
    #[serde(default)]
    pub phase: Option<Phase>,
    pub status: PhaseStatus,
    /// Start, seconds since the target's first phase (the clock of `TargetResult::samples`).
    /// Absent in documents written before it was recorded.
    #[serde(default)]
    pub start_s: Option<f64>,
    pub seconds: f64,
    pub error: Option<String>,
    /// Facts about how the phase ran (page cache dropped, O_DIRECT, data set vs RAM …).
    #[serde(default)]
    pub notes: Vec<String>,
    /// The benchmark result (also partial ones when the phase failed mid-run).
    pub result: Option<BenchResult>,
    /// `tpcc-check`: every consistency condition per warehouse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc_check: Option<crate::tpcc::CheckReport>,
}

impl PhaseResult {
    /// A phase named `name` with `status`, nothing measured or noted yet.
    pub fn new(name: impl Into<String>, phase: Option<Phase>, status: PhaseStatus) -> Self {
        PhaseResult {
            name: name.into(),
            phase,
            status,
            start_s: None,
            seconds: 0.0,
            error: None,
            notes: vec![],
            result: None,
            tpcc_check: None,
        }
    }
}

impl SuiteResult {
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("suite result serialises")
    }

    /// Reads a `results.json` (schema 1 or 2); `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> anyhow::Result<Self> {
        let mut v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| anyhow::anyhow!("'{origin}' is not a JSON results document: {e}"))?;
        let ver = v
            .get("schema_version")
            .and_then(|x| x.as_u64())
            .ok_or_else(|| {
                anyhow::anyhow!("'{origin}' has no schema_version: not a spindle results document")
            })?;
        if ver > SUITE_SCHEMA_VERSION as u64 {
            anyhow::bail!(
                "'{origin}' uses suite schema {ver}; this spindle reads schema 1 to {SUITE_SCHEMA_VERSION}: upgrade spindle"
            );
        }
        if v.get("targets").is_none() {
            anyhow::bail!("'{origin}' is not a suite results document (no targets): a single test's result? use it with `spindle report show`");
        }
        if ver < 2 {
            upgrade_v1(&mut v);
        }
        upgrade_results(&mut v);
        serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("'{origin}': malformed suite results document: {e}"))
    }

    /// After a power loss or crash: the run and the phase that was running are marked
    /// interrupted. Returns whether the run was still running.
    pub fn mark_interrupted(&mut self) -> bool {
        if self.status != RunStatus::Running {
            return false;
        }
        self.status = RunStatus::Interrupted;
        for p in self.targets.iter_mut().flat_map(|t| t.phases.iter_mut()) {
            if p.status == PhaseStatus::Running {
                p.status = PhaseStatus::Interrupted;
                p.error =
                    Some("the machine lost power or spindle stopped while this phase ran".into());
            }
        }
        true
    }

    /// Phases that failed, with their target's name.
    pub fn failures(&self) -> impl Iterator<Item = (&TargetResult, &PhaseResult)> {
        self.targets.iter().flat_map(|t| {
            t.phases
                .iter()
                .filter(|p| p.status == PhaseStatus::Failed)
                .map(move |p| (t, p))
        })
    }
}

/// Schema 1 → 2: the profile becomes a record.
fn upgrade_v1(v: &mut serde_json::Value) {
    if let Some(p) = v.get_mut("profile") {
        let name = p.get("name").cloned().unwrap_or_default();
        let description = p.get("description").cloned().unwrap_or_default();
        *p = serde_json::json!({
            "name": name, "description": description, "source": "schema 1 bundle", "toml": ""
        });
    }
    v["schema_version"] = SUITE_SCHEMA_VERSION.into();
}

/// Test documents of schema 1 inside the bundle get their engine tag (each is upgraded by its
/// own version: a bundle may hold documents copied in from an older single-test run).
fn upgrade_results(v: &mut serde_json::Value) {
    for t in v
        .get_mut("targets")
        .and_then(|t| t.as_array_mut())
        .into_iter()
        .flatten()
    {
        for p in t
            .get_mut("phases")
            .and_then(|p| p.as_array_mut())
            .into_iter()
            .flatten()
        {
            if let Some(r) = p.get_mut("result").filter(|r| !r.is_null()) {
                if r.get("schema_version").and_then(|n| n.as_u64()) < Some(2) {
                    super::model::upgrade_v1(r);
                }
            }
        }
    }
}

/// The one run id: `<UTC YYYYmmdd-HHMMSS>-<host>` (time first, so name order is age order).
pub fn run_id(host: &str, unix_secs: u64) -> String {
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(32)
        .collect();
    let host = if host.is_empty() { "spindle" } else { &host };
    format!("{}-{host}", crate::sys::clock::compact_stamp(unix_secs))
}

/// Writes results.json, results.csv, summary.txt and report.html into `dir`, each atomically.
pub fn write_bundle(dir: &Path, s: &SuiteResult) -> anyhow::Result<()> {
    use crate::sys::fs::write_atomic;
    write_atomic(&dir.join("results.json"), s.to_json_pretty().as_bytes())?;
    write_atomic(
        &dir.join("results.csv"),
        super::csv::render_csv(s).as_bytes(),
    )?;
    write_atomic(
        &dir.join("summary.txt"),
        super::summary::render_summary(s).as_bytes(),
    )?;
    write_atomic(
        &dir.join("report.html"),
        super::html::render_html(s).as_bytes(),
    )?;
    Ok(())
}

/// Builders for tests across the crate.
#[cfg(test)]
pub mod tests_support {
    use super::*;
    use crate::report::tests_support::sample_fileio_result;
    use crate::report::Counters;

    /// Two disks, one fileio test, the first 10× the second; one skipped disk.
    pub fn two_disk_suite() -> SuiteResult {
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
            start_s: Some(0.0),
            seconds: 1.0,
            result: Some(r),
            ..PhaseResult::new(
                "fileio-rndrw-t1",
                Some(Phase::FileioRun {
                    set: 0,
                    mode: crate::fileio::TestMode::Rndrw,
                    threads: 1,
                    queue: None,
                }),
                PhaseStatus::Ok,
            )
        };
        let target = |name: &str, r| TargetResult {
            name: name.into(),
            path: format!("/mnt/{name}"),
            kind: TargetKind::Disk,
            description: "test disk".into(),
            disk: None,
            preparation: vec![],
            server: None,
            smart: None,
            usb_trouble: None,
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
            status: RunStatus::Complete,
            profile: ProfileRecord {
                name: "quick".into(),
                ..ProfileRecord::default()
            },
            environment: None,
            targets: vec![target("ssd", fast), target("hdd", slow)],
            skipped: vec![Skipped {
                device: "/dev/sdc".into(),
                id: "usb-X".into(),
                reason: "holds data".into(),
            }],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_round_trips() {
        let d = tempfile::tempdir().unwrap();
        let s = tests_support::two_disk_suite();
        write_bundle(d.path(), &s).unwrap();
        let text = std::fs::read_to_string(d.path().join("results.json")).unwrap();
        assert_eq!(SuiteResult::from_json(&text, "results.json").unwrap(), s);
    }

    #[test]
    fn schema_1_bundles_are_upgraded_and_newer_ones_refused() {
        let s = tests_support::two_disk_suite();
        let mut v = serde_json::to_value(&s).unwrap();
        v["schema_version"] = 1.into();
        v["profile"] = serde_json::json!({"name": "quick", "description": "d", "fileio": []});
        let r = &mut v["targets"][0]["phases"][0]["result"];
        r["schema_version"] = 1.into();
        r["options"].as_object_mut().unwrap().remove("kind");
        let back = SuiteResult::from_json(&v.to_string(), "old/results.json").unwrap();
        assert_eq!(back.profile.name, "quick");
        assert_eq!(
            back.targets[0].phases[0].result,
            s.targets[0].phases[0].result
        );
        v["schema_version"] = 9.into();
        let e = SuiteResult::from_json(&v.to_string(), "new/results.json").unwrap_err();
        assert!(e.to_string().contains("upgrade spindle"), "{e}");
        let e = SuiteResult::from_json("{\"schema_version\": 2}", "x.json").unwrap_err();
        assert!(
            e.to_string().contains("not a suite results document"),
            "{e}"
        );
        let e = SuiteResult::from_json("[1,2", "bad.json").unwrap_err();
        assert!(e.to_string().contains("bad.json"), "{e}");
    }

    #[test]
    fn run_ids_sort_by_time_and_keep_hosts_safe() {
        assert_eq!(run_id("pi", 1_796_000_000), "20261130-005320-pi");
        assert_eq!(run_id("a b/c", 0), "19700101-000000-a_b_c");
        assert_eq!(run_id("", 0), "19700101-000000-spindle");
    }
}
