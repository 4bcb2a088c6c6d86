//! One run, assembled the same way for `spindle suite` and the daemon: find the targets
//! (directories, named disks or every eligible disk), plan what to do to each disk, prepare
//! them, run the suite, release them. The callers only turn their settings into a
//! [`RunRequest`] and the [`SuiteResult`] into an exit code or an LED pattern.

use super::options::{ServerChoice, SuiteObserver, SuiteOptions};
use super::suite::run_suite;
use super::targets::{
    directory_targets, plan_disks, prepare_disks, release_disks, DiskPlan, PreparedDisks,
    TargetSource,
};
use crate::config::profile::SuiteProfile;
use crate::disk::{DiskPolicy, Naming};
use crate::engine::Controller;
use crate::model::{Skipped, SuiteResult};

use crate::sys::System;
use std::path::PathBuf;
use std::time::Duration;

/// Everything one run needs.
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// The run id (also the bundle directory's name).
    pub run_id: String,
    /// The bundle directory.
    pub out_dir: PathBuf,
    /// Scratch space for mount points (outside the bundle).
    pub work_dir: PathBuf,
    pub profile: SuiteProfile,
    pub source: TargetSource,
    /// Which disks may be used and how (with a stick's `erase` list merged in).
    pub policy: DiskPolicy,
    /// Kernel name of the results stick's disk (never a target).
    pub stick_disk: Option<String>,
    /// The servers the database phases run on (at least one).
    pub servers: Vec<ServerChoice>,
    /// Seconds between temperature/throttling samples.
    pub sample_interval: Duration,
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A disk named on the command line does not exist.
    #[error("no block device matches '{0}' (use /dev/NAME, a /dev/disk/by-id name, or a serial; `spindle disks --all` lists them)")]
    NoSuchDisk(String),
}

/// Why nothing was benchmarked, in one line: every disk seen and why it was left out.
pub fn describe_no_targets(skipped: &[Skipped]) -> String {
    if skipped.is_empty() {
        "no disk was found; plug in a blank USB3 disk, name one, or give a directory".into()
    } else {
        let why: Vec<String> = skipped
            .iter()
            .map(|s| format!("{} ({}): {}", s.device, s.id, s.reason))
            .collect();
        format!("every disk was left out: {}", why.join("; "))
    }
}

/// What a run would do to the disks now, without touching any (for `--dry-run`, the daemon's
/// disk count, and the run itself). Names that match no disk are in `missing`.
pub fn plan(req: &RunRequest, sys: &System) -> anyhow::Result<DiskPlan> {
    if let TargetSource::Directories(_) = req.source {
        return Ok(DiskPlan {
            policy: req.policy.clone(),
            ..DiskPlan::default()
        });
    }
    let scanned = crate::disk::scan_all(&sys.root)?;
    Ok(plan_disks(
        &scanned,
        &sys.root,
        &req.source,
        &req.policy,
        req.stick_disk.as_deref(),
    ))
}

/// Runs the suite of `req` on its targets and returns the results (also written to the bundle
/// after every phase). Disks are prepared through `sys` and always released afterwards. When
/// no target is left, the bundle still says so — status `no_targets`, every disk seen with why
/// it was left out — so a run that does nothing leaves a note where the user looks.
pub fn execute(
    req: &RunRequest,
    sys: &System,
    observer: &dyn SuiteObserver,
    controller: &Controller,
) -> anyhow::Result<SuiteResult> {
    let message = |line: &str| observer.message(line);
    let prepared = gather(req, sys, &message)?;
    let PreparedDisks {
        targets,
        skipped,
        guards,
    } = prepared;
    let opts = SuiteOptions {
        profile: req.profile.clone(),
        targets,
        skipped,
        out_dir: req.out_dir.clone(),
        run_id: req.run_id.clone(),
        sys: sys.clone(),
        servers: req.servers.clone(),
        sample_interval: req.sample_interval,
    };
    let result = run_suite(&opts, observer, controller);
    release_disks(guards, &message);
    result
}

/// The targets of `req`: its directories, or its disks prepared.
fn gather(req: &RunRequest, sys: &System, message: &dyn Fn(&str)) -> anyhow::Result<PreparedDisks> {
    if let TargetSource::Directories(dirs) = &req.source {
        return Ok(PreparedDisks {
            targets: directory_targets(dirs)?,
            ..PreparedDisks::default()
        });
    }
    let mut plan = plan(req, sys)?;
    if let TargetSource::Disks { naming, .. } = &req.source {
        for name in std::mem::take(&mut plan.missing) {
            match naming {
                // At a terminal a typo is an error, before anything is touched.
                Naming::AlsoKernelNames => return Err(RunError::NoSuchDisk(name).into()),
                Naming::Stable => message(&format!("[appliance] disks: {name} is not plugged in")),
            }
        }
    }
    for s in &plan.skipped {
        message(&format!("skipping {} ({}): {}", s.device, s.id, s.reason));
    }
    let skipped = std::mem::take(&mut plan.skipped);
    let mut prepared = prepare_disks(plan, &req.work_dir, &req.run_id, sys, message);
    prepared.skipped.splice(0..0, skipped);
    Ok(prepared)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PhaseStatus, RunStatus, TargetKind};
    use crate::provision::prepare::tests::{loop_policy, loop_tree, recording_system};

    const TINY: &str = "[[fileio]]\nfile_num = 2\ntotal_size = \"4M\"\nmodes = [\"rndrd\"]\nthreads = [1]\ntime = 1\ndrop_caches = false\n";

    /// The tiny profile on the fixture's loop disk, named by its stable id.
    fn loop_request(out_dir: std::path::PathBuf, work_dir: std::path::PathBuf) -> RunRequest {
        RunRequest {
            run_id: "t".into(),
            out_dir,
            work_dir,
            profile: SuiteProfile::parse(TINY, "tiny", "tiny.toml").unwrap(),
            source: TargetSource::Disks {
                names: vec!["file:/t/disk.img".into()],
                naming: Naming::Stable,
            },
            policy: loop_policy(),
            stick_disk: None,
            servers: vec![ServerChoice::default()],
            sample_interval: Duration::from_secs(5),
        }
    }

    #[test]
    fn a_named_disk_is_prepared_benchmarked_and_released_in_order() {
        let tree = loop_tree(64);
        let (sys, fake) = recording_system(tree.path());
        let out = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let req = loop_request(out.path().join("bundle"), work.path().to_path_buf());
        let r = execute(&req, &sys, &super::super::QuietObserver, &Controller::new()).unwrap();
        assert_eq!(r.status, RunStatus::Complete);
        let t = &r.targets[0];
        assert_eq!((t.name.as_str(), t.kind), ("loop7", TargetKind::Disk));
        assert!(
            t.phases.iter().all(|p| p.status == PhaseStatus::Ok),
            "{:?}",
            t.phases
        );
        assert!(t.phases.iter().any(|p| p.result.is_some()));
        let calls = fake.calls();
        let programs: Vec<&str> = calls.iter().map(|c| c.split(' ').next().unwrap()).collect();
        assert_eq!(
            programs,
            [
                "parted",
                "partprobe",
                "losetup",
                "mkfs.ext4",
                "mount",
                "umount",
                "losetup"
            ],
            "prepare, then the suite, then release: {calls:?}"
        );
        assert_eq!(t.preparation.len(), 5);
        assert!(out.path().join("bundle/results.json").is_file());
        // the mount point spindle made is gone again
        let left: Vec<_> = std::fs::read_dir(work.path().join("mnt"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn nothing_to_benchmark_leaves_a_bundle_listing_every_disk_left_out() {
        let tree = loop_tree(8); // smaller than the policy's minimum
        let (sys, fake) = recording_system(tree.path());
        let req = loop_request(tree.path().join("bundle"), tree.path().join("work"));
        let r = execute(&req, &sys, &super::super::QuietObserver, &Controller::new()).unwrap();
        assert_eq!(r.status, RunStatus::NoTargets);
        assert!(r.targets.is_empty());
        let m = describe_no_targets(&r.skipped);
        assert!(m.contains("/dev/loop7") && m.contains("too small"), "{m}");
        let summary = std::fs::read_to_string(tree.path().join("bundle/summary.txt")).unwrap();
        assert!(
            summary.contains("NOTHING WAS BENCHMARKED") && summary.contains("too small"),
            "{summary}"
        );
        assert!(fake.calls().is_empty());
    }
}
