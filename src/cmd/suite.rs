//! `spindle suite`: choose targets (directories, or disks found and prepared safely), run the
//! plan with progress on the terminal, release the disks, print where the bundle is.

use crate::appliance::suite::{run_suite, SuiteObserver, SuiteOptions, TargetSpec};
use crate::appliance::targets::{candidates, plan_disks, prepare_disks, release_disks};
use crate::cli::SuiteArgs;
use crate::config::profile::Profile;
use crate::config::spindle::SpindleConfig;
use crate::disk;
use crate::sys::{CommandRunner, SysRoot};
use anyhow::{bail, Context};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

/// Progress: a live line on a terminal, plain log lines otherwise (both on stderr).
struct Progress {
    tty: bool,
}

impl SuiteObserver for Progress {
    fn phase_started(&self, target: &str, phase: &str, index: usize, total: usize, eta_s: u64) {
        let left = if eta_s >= 60 {
            format!("~{} min left", eta_s.div_ceil(60))
        } else {
            format!("~{eta_s} s left")
        };
        let line = format!("[{index}/{total}] {target}: {phase} ({left})");
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

/// `<host>-<YYYYmmdd-HHMMSS>`.
pub fn run_id() -> String {
    let host = crate::sys::HostInfo::collect().hostname;
    let ts = crate::sys::clock::now_rfc3339()
        .replace(['-', ':'], "")
        .replace('T', "-")
        .trim_end_matches('Z')
        .to_string();
    format!("{}-{ts}", if host.is_empty() { "spindle" } else { &host })
}

pub fn run(args: SuiteArgs) -> anyhow::Result<i32> {
    // The same file the daemon reads: its appliance tables are checked too, the suite uses
    // [suite], [disks] and [mysqld].
    let config: SpindleConfig = match &args.config {
        Some(p) => crate::config::appliance::ApplianceSettings::load(Some(p))?.config,
        None => SpindleConfig::default(),
    };
    let profile = Profile::load(args.profile.as_deref().unwrap_or(&config.suite.profile))?;
    let run_id = run_id();
    let out = match &args.out {
        Some(o) => o.clone(),
        None if !config.suite.out.is_empty() => PathBuf::from(&config.suite.out).join(&run_id),
        None => PathBuf::from("spindle-results").join(&run_id),
    };
    let progress = Progress {
        tty: std::io::stderr().is_terminal(),
    };
    let runner = CommandRunner::new();
    let mut targets = Vec::new();
    let mut skipped = Vec::new();
    let mut guards = Vec::new();
    for (i, dir) in args.target.iter().enumerate() {
        if !dir.is_dir() {
            bail!(
                "--target '{}' is not a directory: create it first",
                dir.display()
            );
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| format!("dir{}", i + 1));
        targets.push(TargetSpec::directory(&name, &std::fs::canonicalize(dir)?));
    }
    if !args.disk.is_empty() || args.target.is_empty() {
        let root = SysRoot::new(&args.sysroot);
        let (found, policy) = if args.disk.is_empty() {
            candidates(&disk::scan_all(&root)?, &[], &config.disks)
        } else {
            // Named disks must exist (a typo is an error). They may be non-USB (a laptop's
            // SATA disk, a loop device); every other rule still applies, and naming a disk
            // here never allows erasing its data.
            let named = args
                .disk
                .iter()
                .map(|d| disk::find_disk(&root, d).with_context(|| format!("--disk {d}")))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let mut policy = config.disks.clone();
            policy.allow_non_usb = true;
            (named, policy)
        };
        let (planned, left_out) = plan_disks(found, &policy, None);
        for s in &left_out {
            progress.message(&format!("skipping {} ({}): {}", s.device, s.id, s.reason));
        }
        skipped.extend(left_out);
        if args.dry_run {
            for (d, plan) in &planned {
                progress.message(&format!(
                    "would prepare {} ({}): {plan:?}",
                    d.path.display(),
                    d.stable_id.as_deref().unwrap_or(&d.name)
                ));
            }
        } else {
            let run_dir = std::env::temp_dir().join(format!("spindle-{run_id}"));
            let prepared = prepare_disks(planned, &policy, &run_dir, &runner, &progress);
            targets.extend(prepared.targets);
            skipped.extend(prepared.skipped);
            guards = prepared.guards;
        }
    }
    if args.dry_run {
        for p in crate::appliance::plan::phases(&profile) {
            println!("{}", p.name());
        }
        return Ok(0);
    }
    if targets.is_empty() {
        for s in &skipped {
            eprintln!("spindle: {} ({}): {}", s.device, s.id, s.reason);
        }
        bail!("no benchmark target: plug in a blank USB3 disk, name one with --disk, or give a directory with --target");
    }
    let stop = crate::engine::Controller::on_signals();
    let opts = SuiteOptions {
        profile,
        targets,
        skipped,
        out_dir: out.clone(),
        run_id,
        sysroot: args.sysroot.clone(),
        mysqld: (!config.mysqld.binary.is_empty()).then(|| PathBuf::from(&config.mysqld.binary)),
        flavor: config.mysqld.flavor.parse().ok(),
        sample_interval: Duration::from_secs(5),
    };
    let result = run_suite(&opts, &progress, &stop);
    if progress.tty {
        eprintln!();
    }
    release_disks(guards, &progress);
    let result = result?;
    print!("{}", crate::report::suite::render_summary(&result));
    println!("\nResults bundle: {}", out.display());
    let failed = result
        .targets
        .iter()
        .flat_map(|t| &t.phases)
        .any(|p| p.status == "failed");
    Ok(if result.status == "aborted" {
        130
    } else if failed {
        1
    } else {
        0
    })
}
