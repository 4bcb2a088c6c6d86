//! `spindle suite`: turns the command line into a [`RunRequest`], shows progress on the
//! terminal, prints the summary and where the bundle is. The run itself is `run::execute`, the
//! same the daemon uses.

use crate::cli::SuiteArgs;
use crate::config::profile::SuiteProfile;
use crate::config::spindle::SpindleConfig;
use crate::disk::Naming;
use crate::engine::Controller;
use crate::report::phase::Phase;
use crate::report::suite::{PhaseStatus, RunStatus};
use crate::run::{RunRequest, ServerOverrides, SuiteObserver, TargetSource};
use crate::sys::{CommandRunner, SysRoot, System};
use anyhow::bail;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Progress on stderr: one live line on a terminal (phase, target, elapsed, time left), plain
/// log lines otherwise.
struct Progress {
    tty: bool,
    start: Instant,
}

impl SuiteObserver for Progress {
    fn phase_started(&self, target: &str, phase: &Phase, index: usize, total: usize, eta_s: u64) {
        let left = if eta_s >= 60 {
            format!("~{} min left", eta_s.div_ceil(60))
        } else {
            format!("~{eta_s} s left")
        };
        let el = self.start.elapsed().as_secs();
        let line = format!(
            "[{index}/{total}] {target}: {} ({}:{:02} elapsed, {left})",
            phase.name(),
            el / 60,
            el % 60
        );
        if self.tty {
            eprint!("\r\x1b[2K{line}");
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("spindle: {line}");
        }
    }
    fn message(&self, line: &str) {
        if self.tty {
            eprint!("\r\x1b[2K");
        }
        eprintln!("spindle: {line}");
    }
}

/// The targets the command line asks for.
pub fn source(args: &SuiteArgs) -> anyhow::Result<TargetSource> {
    Ok(match (&args.target[..], &args.disk[..]) {
        ([], []) => TargetSource::Eligible,
        (dirs, []) => {
            if let Some(d) = dirs.iter().find(|d| !d.is_dir()) {
                bail!(
                    "--target '{}' is not a directory: create it first",
                    d.display()
                );
            }
            TargetSource::Directories(dirs.to_vec())
        }
        ([], names) => TargetSource::Disks {
            names: names.to_vec(),
            // A person at a terminal may use the kernel names `spindle disks` shows.
            naming: Naming::AlsoKernelNames,
        },
        _ => bail!(
            "--target and --disk cannot be combined: run one suite on the directories and another on the disks"
        ),
    })
}

pub fn run(args: SuiteArgs) -> anyhow::Result<i32> {
    // The same file the daemon reads: its appliance tables are checked too, the suite uses
    // [suite], [disks] and [mysqld].
    let config: SpindleConfig = match &args.config {
        Some(p) => crate::config::appliance::ApplianceSettings::load(Some(p))?.config,
        None => SpindleConfig::default(),
    };
    let profile = SuiteProfile::load(args.profile.as_deref().unwrap_or(&config.suite.profile))?;
    let host = crate::sys::HostInfo::collect().hostname;
    let run_id = crate::report::suite::run_id(&host, crate::sys::clock::unix_now());
    let out = match &args.out {
        Some(o) => o.clone(),
        None if !config.suite.out.is_empty() => PathBuf::from(&config.suite.out).join(&run_id),
        None => PathBuf::from("spindle-results").join(&run_id),
    };
    let sys = System::new(SysRoot::new(&args.sysroot), CommandRunner::new());
    let req = RunRequest {
        work_dir: std::env::temp_dir().join(format!("spindle-{run_id}")),
        run_id,
        out_dir: out.clone(),
        profile,
        source: source(&args)?,
        policy: config.disks.clone(),
        stick_disk: None,
        server: ServerOverrides {
            mysqld: (!config.mysqld.binary.is_empty())
                .then(|| PathBuf::from(&config.mysqld.binary)),
            flavor: config.mysqld.flavor.parse().ok(),
        },
        sample_interval: Duration::from_secs(5),
    };
    if args.dry_run {
        return dry_run(&req, &sys);
    }
    let progress = Progress {
        tty: std::io::stderr().is_terminal(),
        start: Instant::now(),
    };
    let controller = Controller::on_signals();
    let result = crate::run::execute(&req, &sys, &progress, &controller);
    if progress.tty {
        eprintln!();
    }
    let result = result?;
    print!("{}", crate::report::summary::render_summary(&result));
    println!("\nResults bundle: {}", out.display());
    if result.status == RunStatus::NoTargets {
        bail!(
            "nothing was benchmarked: {}",
            crate::run::assemble::describe_no_targets(&result.skipped)
        );
    }
    let failed = result
        .targets
        .iter()
        .flat_map(|t| &t.phases)
        .any(|p| p.status == PhaseStatus::Failed);
    Ok(if result.status == RunStatus::Aborted {
        130
    } else if failed {
        1
    } else {
        0
    })
}

/// `--dry-run`: the disk verdicts and the phases, nothing touched.
fn dry_run(req: &RunRequest, sys: &System) -> anyhow::Result<i32> {
    let plan = crate::run::assemble::plan(req, sys)?;
    if let Some(name) = plan.missing.first() {
        return Err(crate::run::RunError::NoSuchDisk(name.clone()).into());
    }
    for s in &plan.skipped {
        println!("skip {} ({}): {}", s.device, s.id, s.reason);
    }
    for (d, p) in &plan.planned {
        println!(
            "prepare {} ({}): {p:?}",
            d.path.display(),
            d.stable_id.as_deref().unwrap_or(&d.name)
        );
    }
    for p in crate::run::plan::phases(&req.profile) {
        println!("{}", p.name());
    }
    Ok(0)
}
