//! Reading result documents back for `spindle report`: a bundle directory, its results.json
//! (a suite document), or a single test's result document (`spindle fileio run --format json`),
//! which is read as a run with one target and one test. Older schemas are upgraded or refused
//! with a message naming the file; so is anything that is not a spindle document.

use super::bench::{BenchResult, TestOptions, SCHEMA_VERSION};
use super::phase::{Phase, Queue};
use super::status::{PhaseStatus, RunStatus, TargetKind};
use super::suite::{ProfileRecord, SuiteResult, SUITE_SCHEMA_VERSION};
use super::target::{PhaseResult, TargetResult};
use anyhow::{bail, Context};
use serde_json::Value;
use std::path::Path;

/// A document read from disk, with where it came from.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The file read (for messages and the comparison's list of runs).
    pub origin: String,
    pub suite: SuiteResult,
}

/// Reads `path`: a bundle directory (its results.json) or a JSON file.
pub fn load(path: &Path) -> anyhow::Result<Loaded> {
    let file = if path.is_dir() {
        let f = path.join("results.json");
        if !f.exists() {
            bail!(
                "'{}' holds no results.json: give a spindle results bundle directory or a results.json file",
                path.display()
            );
        }
        f
    } else {
        path.to_path_buf()
    };
    let origin = file.display().to_string();
    let text =
        std::fs::read_to_string(&file).with_context(|| format!("could not read '{origin}'"))?;
    Ok(Loaded {
        suite: parse(&text, &origin)?,
        origin,
    })
}

/// Parses a suite or single-test document; `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> anyhow::Result<SuiteResult> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "'{origin}' is not JSON ({e}): give a spindle results bundle directory or its results.json"
        )
    })?;
    let Some(o) = v.as_object() else {
        bail!("'{origin}' is JSON but not a spindle results document (not an object)");
    };
    if o.contains_key("targets") && o.contains_key("run_id") {
        parse_suite(v, origin)
    } else if o.contains_key("test") && o.contains_key("counters") {
        let stem = Path::new(origin)
            .file_stem()
            .map_or("result".into(), |s| s.to_string_lossy().into_owned());
        Ok(single_test_run(BenchResult::from_value(v, origin)?, &stem))
    } else {
        bail!(
            "'{origin}' is JSON but not a spindle results document (it has neither run_id and targets nor test and counters)"
        )
    }
}

fn parse_suite(v: Value, origin: &str) -> anyhow::Result<SuiteResult> {
    let ver = v["schema_version"].as_u64().ok_or_else(|| {
        anyhow::anyhow!("'{origin}' has no schema_version: not a spindle results document")
    })?;
    if ver == 0 {
        bail!("'{origin}' uses suite schema 0: the file is damaged or not spindle's");
    }
    // A newer test document inside an older-looking suite is refused here, by phase name.
    let phases = v["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["phases"].as_array().into_iter().flatten());
    for p in phases {
        if let Some(n) = p["result"]["schema_version"].as_u64() {
            if n > SCHEMA_VERSION as u64 {
                bail!(
                    "'{origin}': phase {} holds a result of schema {n}; this spindle reads up to {SCHEMA_VERSION}: upgrade spindle",
                    p["name"]
                );
            }
        }
    }
    // The one reader of the suite model: the same one `results.json` is read with after a
    // restart (it upgrades schema 1 and refuses newer schemas).
    SuiteResult::from_json(&v.to_string(), origin)
}

/// A single test's document as a run with one target (named after the file) and one test,
/// named the way the suite names its phases so it lines up with suite runs in comparisons.
pub fn single_test_run(r: BenchResult, name: &str) -> SuiteResult {
    let (phase, path) = match &r.options {
        TestOptions::Fileio(c) => (
            c.test_mode.map(|mode| Phase::FileioRun {
                set: 0,
                mode,
                threads: c.threads,
                queue: (c.io_mode == crate::fileio::IoMode::Async).then_some(Queue {
                    block: c.block_size,
                    depth: c.async_backlog,
                }),
            }),
            c.dir.display().to_string(),
        ),
        TestOptions::Oltp(c) => (
            Some(Phase::OltpRun {
                workload: c.workload,
                threads: c.threads,
                regime: None,
            }),
            String::new(),
        ),
        TestOptions::Tpcc(c) => (
            Some(Phase::TpccRun {
                warehouses: c.warehouses,
                connections: c.connections,
            }),
            String::new(),
        ),
    };
    let description = format!("{} result document", r.test);
    let phase_name = phase
        .as_ref()
        .map_or_else(|| format!("{}-run", r.test), Phase::name);
    let status = if r.error.is_some() {
        PhaseStatus::Failed
    } else {
        PhaseStatus::Ok
    };
    SuiteResult {
        schema_version: SUITE_SCHEMA_VERSION,
        tool: r.tool.clone(),
        host: r.host.clone(),
        run_id: name.to_string(),
        started_at: r.started_at.clone(),
        finished_at: None,
        status: RunStatus::Complete,
        profile: ProfileRecord {
            name: "(single test)".into(),
            description: format!("one {} result document", r.test),
            source: "single test result".into(),
            toml: String::new(),
        },
        environment: None,
        governor: None,
        targets: vec![TargetResult {
            phases: vec![PhaseResult {
                seconds: r.total_time_s,
                error: r.error.clone(),
                result: Some(r),
                ..PhaseResult::new(phase_name, phase, status)
            }],
            ..TargetResult::new(name, &path, TargetKind::Directory, &description)
        }],
        together: None,
        skipped: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bench::tests_support::sample_fileio_result;

    #[test]
    fn errors_name_the_file_and_say_what_is_wrong() {
        let err = |text: &str, name: &str| parse(text, name).unwrap_err().to_string();
        let e = err("{not json", "a.json");
        assert!(e.contains("'a.json' is not JSON"), "{e}");
        let e = err("[1, 2]", "b.json");
        assert!(e.contains("'b.json'") && e.contains("not an object"), "{e}");
        let e = err(r#"{"name": "x"}"#, "c.json");
        assert!(e.contains("'c.json'") && e.contains("not a spindle"), "{e}");
        let e = err(r#"{"run_id": "x", "targets": []}"#, "d.json");
        assert!(e.contains("'d.json' has no schema_version"), "{e}");
        let e = err(
            r#"{"schema_version": 9, "run_id": "x", "targets": []}"#,
            "e.json",
        );
        assert!(
            e.contains("'e.json' uses suite schema 9") && e.contains("upgrade spindle"),
            "{e}"
        );
        let e = err(
            r#"{"schema_version": 1, "run_id": "x", "targets": []}"#,
            "f.json",
        );
        assert!(
            e.contains("'f.json': malformed suite results document"),
            "{e}"
        );
    }

    #[test]
    fn a_single_test_document_reads_as_a_one_target_run() {
        let mut r = sample_fileio_result();
        if let TestOptions::Fileio(c) = &mut r.options {
            c.test_mode = Some(crate::fileio::TestMode::Rndrw);
        }
        let s = parse(&r.to_json_pretty(), "/tmp/ssd.json").unwrap();
        assert_eq!(s.targets.len(), 1);
        assert_eq!(s.targets[0].name, "ssd");
        assert_eq!(s.targets[0].phases[0].name, "fileio-rndrw-t1");
        assert_eq!(s.targets[0].phases[0].result.as_ref(), Some(&r));
    }

    #[test]
    fn schema_1_test_documents_inside_a_bundle_are_upgraded() {
        let s = single_test_run(sample_fileio_result(), "x");
        let mut v = serde_json::to_value(&s).unwrap();
        let r = &mut v["targets"][0]["phases"][0]["result"];
        r["schema_version"] = 1.into();
        r["options"].as_object_mut().unwrap().remove("kind");
        let back = parse(&v.to_string(), "old.json").unwrap();
        assert_eq!(back, s);
        v["targets"][0]["phases"][0]["result"]["schema_version"] = 7.into();
        let e = parse(&v.to_string(), "new.json").unwrap_err().to_string();
        assert!(
            e.contains("'new.json'") && e.contains("upgrade spindle"),
            "{e}"
        );
    }
}
