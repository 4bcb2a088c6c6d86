//! One run, assembled the same way for `spindle suite` and the daemon: find the targets
//! (directories, named disks or every eligible disk), plan what to do to each disk, prepare
//! them, run the suite, release them. The callers only turn their settings into a
//! [`RunRequest`] and the [`SuiteResult`] into an exit code or an LED pattern.

use super::suite::{run_suite, ServerOverrides, SuiteObserver, SuiteOptions};
use super::targets::{
    directory_targets, plan_disks, prepare_disks, release_disks, DiskPlan, PreparedDisks,
    TargetSource,
};
use crate::config::profile::SuiteProfile;
use crate::disk::{DiskPolicy, Naming};
use crate::engine::Controller;
use crate::report::suite::{Skipped, SuiteResult};
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
    pub server: ServerOverrides,
    /// Seconds between temperature/throttling samples.
    pub sample_interval: Duration,
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Nothing to benchmark: every disk seen was left out (with the reasons).
    #[error("no benchmark target: {}", describe_no_targets(.skipped))]
    NoTargets { skipped: Vec<Skipped> },
    /// A disk named on the command line does not exist.
    #[error("no block device matches '{0}' (use /dev/NAME, a /dev/disk/by-id name, or a serial; `spindle disks --all` lists them)")]
    NoSuchDisk(String),
}

fn describe_no_targets(skipped: &[Skipped]) -> String {
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
/// after every phase). Disks are prepared through `sys` and always released afterwards.
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
    if targets.is_empty() {
        return Err(RunError::NoTargets { skipped }.into());
    }
    let opts = SuiteOptions {
        profile: req.profile.clone(),
        targets,
        skipped,
        out_dir: req.out_dir.clone(),
        run_id: req.run_id.clone(),
        sys: sys.clone(),
        server: req.server.clone(),
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
    let mut prepared = prepare_disks(plan, &req.work_dir, sys, message);
    prepared.skipped.splice(0..0, skipped);
    Ok(prepared)
}
