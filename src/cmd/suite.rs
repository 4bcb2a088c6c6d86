//! `spindle suite`: turns the command line into a [`RunRequest`], shows progress on the
//! terminal, prints the summary and where the bundle is. The run itself is `run::execute`, the
//! same the daemon uses.

use crate::cli::SuiteArgs;
use crate::config::profile::SuiteProfile;
use crate::config::spindle::SpindleConfig;
use crate::disk::Naming;
use crate::engine::Controller;
use crate::model::{PhaseStatus, RunStatus};
use crate::run::plan::Step;
use crate::run::{RunRequest, SuiteObserver, TargetSource};
use crate::sys::{CommandRunner, SysRoot, System};
use anyhow::bail;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Progress on stderr: one live line on a terminal (phase, target, elapsed, time left), plain
/// log lines otherwise.
struct Progress {
    tty: bool,
    start: Instant,
}

impl SuiteObserver for Progress {
    fn phase_started(&self, target: &str, step: &Step, index: usize, total: usize, eta_s: u64) {
        let left = if eta_s >= 60 {
            format!("~{} min left", eta_s.div_ceil(60))
        } else {
            format!("~{eta_s} s left")
        };
        let el = self.start.elapsed().as_secs();
        let line = format!(
            "[{index}/{total}] {target}: {} ({}:{:02} elapsed, {left})",
            step.name(),
            el / 60,
            el % 60
        );
        // Never eprint!: a closed stderr must not end the run before it released its disks.
        if self.tty {
            super::output::err(&format!("\r\x1b[2K{line}"));
        } else {
            super::output::err(&format!("spindle: {line}\n"));
        }
    }
    fn message(&self, line: &str) {
        if self.tty {
            super::output::err("\r\x1b[2K");
        }
        super::output::err(&format!("spindle: {line}\n"));
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
    let mut profile = SuiteProfile::load(args.profile.as_deref().unwrap_or(&config.suite.profile))?;
    if let Some(n) = args.repeat {
        profile.repeat = profile.repeat.with_count(n).map_err(anyhow::Error::msg)?;
    }
    let host = crate::sys::HostInfo::collect().hostname;
    let run_id = crate::model::run_id(&host, crate::sys::clock::unix_now());
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
        servers: config.mysqld.servers()?,
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
        super::output::err("\n");
    }
    let result = result?;
    super::output::out(&crate::report::summary::render_summary(&result));
    super::output::out(&format!("\nResults bundle: {}\n", out.display()));
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
        let during = result
            .targets
            .iter()
            .flat_map(|t| t.phases.iter().map(move |p| (t, p)))
            .find(|(_, p)| p.status == PhaseStatus::Interrupted)
            .map(|(t, p)| format!(" during {} {}", t.name, p.name))
            .unwrap_or_default();
        super::output::err(&format!(
            "spindle: interrupted by a signal{during}; the bundle keeps the phases that finished and the partial figures\n"
        ));
        130
    } else if failed {
        1
    } else {
        0
    })
}

/// `--dry-run`: the targets with what would be done to each, the disks left out and why, and
/// the phases per target — nothing touched.
fn dry_run(req: &RunRequest, sys: &System) -> anyhow::Result<i32> {
    let plan = crate::run::assemble::plan(req, sys)?;
    if let Some(name) = plan.missing.first() {
        return Err(crate::run::RunError::NoSuchDisk(name.clone()).into());
    }
    super::output::out(&describe_plan(req, &plan));
    Ok(0)
}

/// What a disk's preparation would do, in words.
fn verdict(p: &crate::provision::prepare::Preparation) -> String {
    use crate::provision::prepare::Preparation::*;
    match p {
        Erase {
            filesystem,
            label,
            named: false,
        } => format!(
            "blank: would be erased (GPT, one {} partition labelled {label})",
            filesystem.name()
        ),
        Erase {
            filesystem,
            label,
            named: true,
        } => format!(
            "named in [disks] erase: would be erased, its data lost (GPT, one {} partition labelled {label})",
            filesystem.name()
        ),
        Reuse {
            filesystem,
            partition,
            fs_type,
            ..
        } => format!(
            "spindle's scratch disk from an earlier run ({partition}, {fs_type}): checked read-only to hold only spindle's files, then erased again ({})",
            filesystem.name()
        ),
        UseExisting { device, fs_type } => format!(
            "holds a writable {fs_type} filesystem on {device}: used in a spindle/ folder, removed afterwards; nothing else touched"
        ),
        Skip { reason } => format!("left out: {reason}"),
    }
}

/// The dry run's lines on repeats: `[repeat]`'s, and the fileio sets that repeat more.
fn repeat_lines(p: &SuiteProfile) -> String {
    use std::fmt::Write as _;
    let mut w = String::new();
    if p.repeat.max > 1 {
        let _ = writeln!(
            w,
            "  each measurement run {} times, in rounds over its stretch of runs (listed below){}",
            p.repeat.count,
            match p.repeat.until_ci_pct {
                Some(c) => format!(
                    ", up to {} while its 95 % interval is wider than ±{c} %",
                    p.repeat.max
                ),
                None => String::new(),
            }
        );
    }
    let own: Vec<String> = (p.fileio.iter().enumerate())
        .filter(|(_, f)| f.repeat > p.repeat.count)
        .map(|(i, f)| format!("fileio{} {} times", i + 1, f.repeat))
        .collect();
    if !own.is_empty() {
        let _ = writeln!(
            w,
            "  sets with a repeat of their own, in rounds: {}",
            own.join(", ")
        );
    }
    w
}

/// The dry run's text: profile, targets and verdicts, disks left out, phases with their time.
pub fn describe_plan(req: &RunRequest, plan: &crate::run::targets::DiskPlan) -> String {
    use std::fmt::Write as _;
    let mut w = String::new();
    let p = &req.profile;
    let _ = writeln!(w, "Profile '{}': {}", p.record.name, p.record.description);
    let mut targets: Vec<String> = match &req.source {
        TargetSource::Directories(dirs) => dirs
            .iter()
            .map(|d| {
                format!(
                    "{}: a directory, used as it is (no disk preparation)",
                    d.display()
                )
            })
            .collect(),
        _ => plan
            .planned
            .iter()
            .map(|(d, prep)| {
                let model = [d.vendor.as_deref(), d.model.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" ");
                let size = d
                    .size_bytes
                    .map(crate::units::human_size)
                    .unwrap_or_default();
                format!(
                    "{} ({}, {model} {size}): {}",
                    d.path.display(),
                    d.stable_id.as_deref().unwrap_or(&d.name),
                    verdict(prep)
                )
            })
            .collect(),
    };
    if targets.is_empty() {
        targets.push(format!(
            "none: {}",
            crate::run::assemble::describe_no_targets(&plan.skipped)
        ));
    }
    let _ = writeln!(w, "\nTargets:");
    for t in &targets {
        let _ = writeln!(w, "  {t}");
    }
    if !plan.skipped.is_empty() {
        let _ = writeln!(w, "\nLeft out:");
        for s in &plan.skipped {
            let _ = writeln!(w, "  {} ({}): {}", s.device, s.id, s.reason);
        }
    }
    let phases = crate::run::plan::steps(p, &req.servers);
    let secs: Vec<u64> = phases
        .iter()
        .map(|st| crate::run::plan::estimate_s(&st.phase, p))
        .collect();
    let total: u64 = secs.iter().sum();
    let _ = writeln!(
        w,
        "\nPhases per target ({}; about {} min: the profile's run times, loads at 200 MiB/s and 40 000 rows/s as on a Pi 4 with a USB3 SSD):",
        phases.len(),
        total.div_ceil(60)
    );
    w.push_str(&repeat_lines(p));
    for (ph, s) in phases.iter().zip(&secs) {
        let _ = writeln!(w, "  {:<34} ~{s} s", ph.name());
    }
    let together = crate::run::together::planned(p);
    if !together.is_empty() {
        let total: u64 = together.iter().map(|(_, s)| s).sum();
        let _ = writeln!(w, "\nThen on every disk at once, with two targets or more ([together]; about {} min in all):", total.div_ceil(60));
        for (name, s) in &together {
            let _ = writeln!(w, "  {name:<34} ~{s} s");
        }
    }
    let _ = writeln!(w, "\nBundle: {}", req.out_dir.display());
    w
}
