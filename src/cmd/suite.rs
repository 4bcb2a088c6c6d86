//! `spindle suite`: choose targets (directories, or disks found and prepared safely), run the
//! plan with progress on the terminal, release the disks, print where the bundle is.

use crate::appliance::suite::{run_suite, SuiteObserver, SuiteOptions, TargetSpec};
use crate::cli::SuiteArgs;
use crate::config::profile::Profile;
use crate::config::spindle::SpindleConfig;
use crate::disk::{self, DiskPolicy, Verdict};
use crate::provision::prepare::{self, Preparation, ReleaseGuard};
use crate::report::suite::Skipped;
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
    let ts = crate::report::now_rfc3339()
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
    let runner = CommandRunner::new();
    let mut targets = Vec::new();
    let mut skipped = Vec::new();
    let mut guards: Vec<ReleaseGuard> = Vec::new();
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
        let mut policy: DiskPolicy = config.disks.clone();
        let candidates = if args.disk.is_empty() {
            disk::scan(&root, false)?
        } else {
            // Disks the user names may be non-USB (a laptop's SATA disk, a loop device); every
            // other rule still applies, and naming a disk here never allows erasing its data.
            policy.allow_non_usb = true;
            args.disk
                .iter()
                .map(|d| disk::find_disk(&root, d).with_context(|| format!("--disk {d}")))
                .collect::<anyhow::Result<Vec<_>>>()?
        };
        let run_dir = std::env::temp_dir().join(format!("spindle-{run_id}"));
        for d in candidates {
            let id = d.stable_id.clone().unwrap_or_else(|| d.name.clone());
            let device = d.path.display().to_string();
            match disk::classify(&d, &policy) {
                Verdict::Excluded { reason } => {
                    eprintln!("spindle: skipping {device} ({id}): {reason}");
                    skipped.push(Skipped {
                        device,
                        id,
                        reason: reason.to_string(),
                    });
                    continue;
                }
                Verdict::Eligible { .. } => {}
            }
            let plan = prepare::plan_preparation(&d, &policy);
            if let Preparation::Skip { reason } = &plan {
                skipped.push(Skipped {
                    device,
                    id,
                    reason: reason.clone(),
                });
                continue;
            }
            if args.dry_run {
                eprintln!("spindle: would prepare {device} ({id}): {plan:?}");
                continue;
            }
            match prepare::prepare(&d, &plan, &policy, &run_dir, &runner) {
                Ok(t) => {
                    let description = disk_description(&d);
                    targets.push(TargetSpec {
                        name: d.name.clone(),
                        dir: t.work_dir.clone(),
                        kind: "disk".into(),
                        description,
                        disk: serde_json::to_value(&d).ok(),
                        preparation: t.commands.clone(),
                    });
                    guards.push(ReleaseGuard::new(t, runner.clone()));
                }
                Err(e) => {
                    eprintln!("spindle: could not prepare {device}: {e:#}");
                    skipped.push(Skipped {
                        device,
                        id,
                        reason: format!("preparation failed: {e:#}"),
                    });
                }
            }
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
    let stop = crate::sys::signals::install();
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
    let progress = Progress {
        tty: std::io::stderr().is_terminal(),
    };
    let result = run_suite(&opts, &progress, stop);
    if progress.tty {
        eprintln!();
    }
    for g in guards {
        if let Err(e) = g.release() {
            eprintln!("spindle: {e:#}");
        }
    }
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

fn disk_description(d: &disk::Disk) -> String {
    let mut s = format!(
        "{} {}",
        d.vendor.as_deref().unwrap_or(""),
        d.model.as_deref().unwrap_or("")
    )
    .trim()
    .to_string();
    if let Some(b) = d.size_bytes {
        s.push_str(&format!(", {:.1} GB", b as f64 / 1e9));
    }
    if let Some(u) = &d.usb {
        s.push_str(&format!(
            ", USB {}",
            u.link_speed
                .map(|l| l.to_string())
                .unwrap_or_else(|| "link ?".into())
        ));
        if let Some(drv) = &u.driver {
            s.push_str(&format!(", {drv}"));
        }
        if let Some(v) = u.vid_pid() {
            s.push_str(&format!(", {v}"));
        }
    }
    if d.rotational == Some(true) {
        s.push_str(", rotational");
    }
    s
}
