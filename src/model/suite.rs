//! The suite's result document (`results.json`): a whole run — every target
//! ([`TargetResult`]), every phase ([`PhaseResult`]) — typed: statuses and kinds are enums
//! (`status.rs`), the disk is the discovery record, each phase names the step it ran
//! (`phase.rs`) and holds the engine's result document (`bench.rs`). Reading it back (with the
//! upgrade of older schemas) is here; renderers (`report`) take the typed document.
//!
//! Schema 5 (this version): each phase result's validity verdict (`validity`, green, amber or
//! red with its reasons; computed when an older document is read). Schema 4 (no change of
//! layout here) and schema 3: each target's filesystem (statfs: `tmpfs` is RAM) and how a reused
//! scratch disk was recognised; each OLTP/TPC-C phase's data set against the buffer pool (its
//! regime) and whether the page cache was dropped, as typed fields instead of notes. Schema 2
//! added typed statuses, `phase` and `start_s` in each phase result, the profile recorded as
//! its name, description and TOML text, each test's options tagged by engine. Schema 1 and 2
//! bundles are upgraded when read.

use super::bench::{self, TestOptions, ToolInfo};
use super::status::{PhaseStatus, RunStatus};
use super::target::{DataSetFit, PhaseResult, TargetResult};
use crate::sys::HostInfo;
use serde::{Deserialize, Serialize};

/// Version of the suite document layout.
pub const SUITE_SCHEMA_VERSION: u32 = 5;

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
    /// The CPU frequency governor before and during the run (`sys::governor`: spindle pins
    /// `performance`); absent on a machine without cpufreq.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governor: Option<crate::sys::governor::GovernorRecord>,
    pub targets: Vec<TargetResult>,
    /// `[together]`: the fileio runs made on every disk at once after the solo phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub together: Option<super::together::TogetherRecord>,
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

impl SuiteResult {
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("suite result serialises")
    }

    /// Reads a `results.json` (schema 1 to 5); `origin` names it in errors.
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
        if ver < 4 {
            upgrade_v3(&mut v);
        }
        let mut s: SuiteResult = serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("'{origin}': malformed suite results document: {e}"))?;
        if ver < 3 {
            s.upgrade_v2();
        }
        // Results written before steady state was recorded get it from their samples.
        let results = s.targets.iter_mut().flat_map(|t| &mut t.phases);
        results
            .filter_map(|p| p.result.as_mut())
            .for_each(bench::BenchResult::fill_steady_state);
        s.schema_version = SUITE_SCHEMA_VERSION;
        Ok(s)
    }

    /// Schema 2 → 3: the notes that were facts become typed fields — "page cache dropped before
    /// the run" the phase's `caches_dropped`, the data set notes its `data_set` (estimated from
    /// the rows and the recorded buffer pool, as those notes were).
    fn upgrade_v2(&mut self) {
        for t in &mut self.targets {
            let pool = t.buffer_pool_bytes();
            for p in &mut t.phases {
                p.notes.retain(|n| match n.as_str() {
                    "page cache dropped before the run" => {
                        p.caches_dropped = Some(true);
                        false
                    }
                    "page cache not dropped (needs root)" => {
                        p.caches_dropped = Some(false);
                        false
                    }
                    n => !(n.starts_with("OLTP data set ≈") || n.starts_with("TPC-C data set ≈")),
                });
                if p.data_set.is_none() {
                    let rows = p
                        .result
                        .as_ref()
                        .and_then(|r| estimated_data_bytes(&r.options));
                    p.data_set = rows
                        .zip(pool)
                        .map(|(data_bytes, buffer_pool_bytes)| DataSetFit {
                            data_bytes,
                            measured: false,
                            buffer_pool_bytes,
                        });
                }
            }
        }
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

/// The data set of an OLTP or TPC-C run estimated from its options (rows or warehouses).
pub fn estimated_data_bytes(options: &TestOptions) -> Option<u64> {
    match options {
        TestOptions::Oltp(c) => Some(crate::oltp::estimated_data_bytes(c.tables, c.table_size)),
        TestOptions::Tpcc(c) => Some(crate::tpcc::estimated_data_bytes(c.warehouses)),
        TestOptions::Fileio(_) => None,
    }
}

/// The elements of the array `v[key]` (none when it is missing or not an array).
fn array_mut<'a>(
    v: &'a mut serde_json::Value,
    key: &str,
) -> impl Iterator<Item = &'a mut serde_json::Value> {
    v.get_mut(key)
        .and_then(|a| a.as_array_mut())
        .into_iter()
        .flatten()
}

/// Schema 3 → 4: a target's one `server` becomes the list `servers` (a suite may run several).
fn upgrade_v3(v: &mut serde_json::Value) {
    for t in array_mut(v, "targets") {
        if let Some(obj) = t.as_object_mut() {
            match obj.remove("server") {
                Some(server) if !server.is_null() => {
                    obj.insert("servers".into(), serde_json::Value::Array(vec![server]));
                }
                _ => {}
            }
        }
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
    for t in array_mut(v, "targets") {
        for p in array_mut(t, "phases") {
            if let Some(r) = p.get_mut("result").filter(|r| !r.is_null()) {
                if r.get("schema_version").and_then(|n| n.as_u64()) < Some(2) {
                    bench::upgrade_v1(r);
                }
                bench::move_diagnostics(r);
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

/// Builders for tests across the crate.
#[cfg(test)]
pub mod tests_support {
    use super::*;
    use crate::engine::Counters;
    use crate::model::bench::tests_support::sample_fileio_result;
    use crate::model::bench::BenchResult;
    use crate::model::phase::Phase;
    use crate::model::status::TargetKind;

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
            phases: vec![phase(r)],
            ..TargetResult::new(name, &format!("/mnt/{name}"), TargetKind::Disk, "test disk")
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
            governor: None,
            targets: vec![target("ssd", fast), target("hdd", slow)],
            together: None,
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
    fn documents_round_trip() {
        let s = tests_support::two_disk_suite();
        assert_eq!(
            SuiteResult::from_json(&s.to_json_pretty(), "results.json").unwrap(),
            s
        );
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
    fn a_schema_3_server_becomes_the_one_of_servers() {
        let s = tests_support::two_disk_suite();
        let mut v = serde_json::to_value(&s).unwrap();
        v["schema_version"] = 3.into();
        let t = v["targets"][0].as_object_mut().unwrap();
        t.remove("servers");
        t.insert(
            "server".into(),
            serde_json::json!({"flavor": "MariaDB", "version": "10.11.6",
                "settings": {"innodb_buffer_pool_size": "64M"}}),
        );
        v["targets"][1]["server"] = serde_json::Value::Null;
        let back = SuiteResult::from_json(&v.to_string(), "old/results.json").unwrap();
        assert_eq!(back.targets[0].servers.len(), 1);
        assert_eq!(back.targets[0].servers[0].flavor, "MariaDB");
        assert_eq!(back.targets[0].buffer_pool_bytes(), Some(64 << 20));
        assert!(back.targets[1].servers.is_empty());
    }

    #[test]
    fn schema_2_notes_become_typed_facts_and_diagnostics() {
        let s = tests_support::two_disk_suite();
        let mut v = serde_json::to_value(&s).unwrap();
        v["schema_version"] = 2.into();
        let p = &mut v["targets"][0]["phases"][0];
        p["notes"] = serde_json::json!([
            "page cache dropped before the run",
            "OLTP data set ≈ 9.5 MiB vs buffer pool 64.0 MiB: fits in memory (CPU-bound)",
            "MariaDB 10.11.6"
        ]);
        p["result"]["notes"] = serde_json::json!([
            "file set (268435456 bytes) is smaller than RAM (25276502016 bytes) and O_DIRECT is off: reads may be served from the page cache",
            "writable wake-ups dropped on 4 client sockets (one wake-up per query instead of two)",
            "write data: random bytes (incompressible, every sector distinct)"
        ]);
        let back = SuiteResult::from_json(&v.to_string(), "old/results.json").unwrap();
        assert_eq!(back.schema_version, SUITE_SCHEMA_VERSION);
        let p = &back.targets[0].phases[0];
        assert_eq!(p.caches_dropped, Some(true));
        assert_eq!(p.notes, ["MariaDB 10.11.6"]);
        let r = p.result.as_ref().unwrap();
        assert_eq!(
            r.notes,
            ["write data: random bytes (incompressible, every sector distinct)"]
        );
        assert_eq!(
            r.diagnostics,
            ["writable wake-ups dropped on 4 client sockets (one wake-up per query instead of two)"]
        );
        // a fileio result has no data set against a buffer pool
        assert_eq!(p.data_set, None);
    }

    #[test]
    fn run_ids_sort_by_time_and_keep_hosts_safe() {
        assert_eq!(run_id("pi", 1_796_000_000), "20261130-005320-pi");
        assert_eq!(run_id("a b/c", 0), "19700101-000000-a_b_c");
        assert_eq!(run_id("", 0), "19700101-000000-spindle");
    }
}
