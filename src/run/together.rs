//! The all-at-once phase (`[together]`): after every target's solo phases, the chosen fileio
//! sets run on every target at the same time — each set prepared on every disk at once, then
//! each of its runs (the same mode × thread count as alone) started on every disk together, one
//! thread per disk, released by one barrier. Each disk's result is kept in
//! `SuiteResult::together`; `report::together::analyse` computes the ratios, the bus loads
//! and the outliers, and the bundle is rewritten after every run.

use super::options::{SuiteObserver, SuiteOptions};
use super::progress::{worst, Progress};
use super::target_run::{ram_bytes, Chatter};
use crate::engine::Controller;
use crate::fileio::{self, FileioConfig, TestMode};
use crate::model::together::{TogetherDisk, TogetherRecord, TogetherRun};
use crate::model::{BenchResult, Phase, PhaseStatus, SuiteResult, TestOptions};
use crate::report::bundle::write_bundle;
use crate::sys::blockdev::Counters;
use std::path::PathBuf;
use std::sync::Barrier;

/// A disk taking part: its target's name and its work directory.
struct Member {
    name: String,
    work: PathBuf,
}

/// Runs `[together]` on every target of `result` when the profile has it and there are two
/// targets or more, each in the work directory `open_work` makes in the target (the suite's,
/// removed after). Errors only when the bundle cannot be written.
pub fn run_together(
    opts: &SuiteOptions,
    result: &mut SuiteResult,
    (observer, controller, progress): (&dyn SuiteObserver, &Controller, &mut Progress),
    open_work: fn(&std::path::Path) -> anyhow::Result<PathBuf>,
) -> anyhow::Result<()> {
    let Some(plan) = &opts.profile.together else {
        return Ok(());
    };
    let mut rec = TogetherRecord::default();
    if result.targets.len() < 2 {
        if !result.targets.is_empty() {
            rec.notes.push(format!(
                "[together] needs two targets or more; this run had {}: nothing ran at once",
                result.targets.len()
            ));
            result.together = Some(rec);
        }
        return Ok(());
    }
    let mut members = Vec::new();
    for t in &result.targets {
        match open_work(std::path::Path::new(&t.path)) {
            Ok(work) => members.push(Member {
                name: t.name.clone(),
                work,
            }),
            Err(e) => rec.notes.push(format!("{} left out: {e:#}", t.name)),
        }
    }
    result.together = Some(rec);
    if members.len() >= 2 {
        for &set in &plan.sets {
            if controller.stop_requested() {
                break;
            }
            run_set(
                opts,
                result,
                &members,
                set,
                (observer, controller, progress),
            )?;
        }
    }
    if controller.stop_requested() {
        let rec = result.together.get_or_insert_with(Default::default);
        rec.notes
            .push("the run was stopped: the all-at-once runs after it did not run".into());
    }
    for m in &members {
        let _ = std::fs::remove_dir_all(&m.work);
    }
    crate::report::together::analyse(result);
    write_bundle(&opts.out_dir, result)
}

/// Fileio set `set`'s configuration on member `m`, for `mode` (None: to prepare).
fn config(
    opts: &SuiteOptions,
    m: &Member,
    set: usize,
    run: Option<(TestMode, u32)>,
) -> FileioConfig {
    let (mode, threads) = run.map_or((None, 1), |(m, t)| (Some(m), t));
    let mut cfg = opts.profile.fileio[set].config(
        m.work.join(format!("together{set}")),
        ram_bytes(),
        mode,
        threads,
    );
    if let Some(t) = opts.profile.together.as_ref().and_then(|p| p.time_limit) {
        cfg.time_limit = Some(t);
    }
    cfg
}

/// Prepares set `set` on every member at once; the error of each that failed.
fn prepare_all(
    opts: &SuiteOptions,
    members: &[Member],
    set: usize,
    controller: &Controller,
) -> Vec<Option<String>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = members
            .iter()
            .map(|m| {
                scope.spawn(move || {
                    let cfg = config(opts, m, set, None);
                    std::fs::create_dir_all(&cfg.dir)?;
                    fileio::prepare(&cfg, controller, &Chatter::default()).map(|_| ())
                })
            })
            .collect();
        let joined = handles.into_iter().map(|h| h.join());
        joined
            .map(|r| match r {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(format!("preparing the files failed: {e:#}")),
                Err(_) => Some("preparing the files panicked".into()),
            })
            .collect()
    })
}

/// Prepares set `set` on every member, makes each of its runs on all of them at once, and
/// removes its files.
fn run_set(
    opts: &SuiteOptions,
    result: &mut SuiteResult,
    members: &[Member],
    set: usize,
    (observer, controller, progress): (&dyn SuiteObserver, &Controller, &mut Progress),
) -> anyhow::Result<()> {
    let phases = super::plan::set_runs(&opts.profile, set);
    observer.message(&format!(
        "all disks at once: preparing fileio set {} on {} disks",
        set + 1,
        members.len()
    ));
    let prepare = Phase::FileioPrepare { set };
    progress.together_started(observer, prepare);
    let mut broken = prepare_all(opts, members, set, controller);
    let prepared = broken.iter().map(|b| match b {
        None => PhaseStatus::Ok,
        Some(_) => PhaseStatus::Failed,
    });
    progress.together_done(observer, &prepare, worst(prepared));
    for phase in phases {
        if controller.stop_requested() {
            break;
        }
        let Phase::FileioRun { mode, threads, .. } = phase else {
            continue;
        };
        let name = format!("together-{}", phase.name());
        observer.message(&format!(
            "all disks at once: {name} on {} disks",
            members.len()
        ));
        progress.together_started(observer, phase);
        let mut run = TogetherRun {
            name,
            phase,
            disks: vec![],
            buses: vec![],
        };
        if opts.profile.fileio[set].drop_caches {
            crate::sys::drop_caches();
        }
        let outcomes = run_all(opts, members, set, (mode, threads), &broken, controller);
        for ((m, outcome), broken) in members.iter().zip(outcomes).zip(broken.iter_mut()) {
            run.disks
                .push(disk_result(&m.name, outcome, broken.clone(), controller));
            if mode == TestMode::Seqwr && broken.is_none() {
                // seqwr truncates and rewrites the files; give later modes full files again.
                let again = config(opts, m, set, None);
                if let Err(e) = fileio::prepare(&again, controller, &Chatter::default()) {
                    *broken = Some(format!("re-prepare after seqwr failed: {e:#}"));
                }
            }
        }
        unshared_device_io(&mut run.disks);
        progress.together_done(observer, &phase, worst(run.disks.iter().map(|d| d.status)));
        result
            .together
            .get_or_insert_with(Default::default)
            .runs
            .push(run);
        crate::report::together::analyse(result);
        write_bundle(&opts.out_dir, result)?;
    }
    for m in members {
        let cfg = config(opts, m, set, None);
        if cfg.dir.exists() {
            let _ = fileio::cleanup(&cfg, &Chatter::default());
            let _ = std::fs::remove_dir(&cfg.dir);
        }
    }
    Ok(())
}

/// A disk's run: its result and what its block device moved over it.
type Outcome = Option<anyhow::Result<(BenchResult, Option<Counters>)>>;

/// One run on every member not `broken`, started together: each thread waits at one barrier.
fn run_all(
    opts: &SuiteOptions,
    members: &[Member],
    set: usize,
    run: (TestMode, u32),
    broken: &[Option<String>],
    controller: &Controller,
) -> Vec<Outcome> {
    let going = broken.iter().filter(|b| b.is_none()).count();
    let barrier = Barrier::new(going);
    let barrier = &barrier;
    std::thread::scope(|scope| {
        let handles: Vec<_> = members
            .iter()
            .zip(broken)
            .map(|(m, b)| {
                b.is_none().then(|| {
                    scope.spawn(move || {
                        let cfg = config(opts, m, set, Some(run));
                        if cfg.io_mode == fileio::IoMode::Async {
                            // Checked before the barrier, which every thread must reach.
                            if let Err(e) = fileio::uring::Ring::new(1) {
                                barrier.wait();
                                return Err(anyhow::anyhow!("{e}"));
                            }
                        }
                        let before = Counters::of_dir(&cfg.dir);
                        barrier.wait();
                        let m = fileio::run(&cfg, controller, &Chatter::default())?;
                        let after = Counters::of_dir(&cfg.dir);
                        let mut r = BenchResult::new(TestOptions::Fileio(cfg), m);
                        r.judge_steady(&opts.profile.fileio[set].steady);
                        Ok((r, before.zip(after).map(|(b, a)| b.until(&a))))
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("the run panicked")))
                })
            })
            .collect()
    })
}

/// One disk's part of a run, classified as a solo phase would be.
fn disk_result(
    target: &str,
    outcome: Outcome,
    broken: Option<String>,
    controller: &Controller,
) -> TogetherDisk {
    let (outcome, device_io) = match outcome {
        Some(Ok((r, io))) => (Some(Ok(r)), io),
        Some(Err(e)) => (Some(Err(e)), None),
        None => (None, None),
    };
    let (status, error, result) = match outcome {
        None => (PhaseStatus::Skipped, broken, None),
        Some(Err(e)) => (PhaseStatus::Failed, Some(format!("{e:#}")), None),
        Some(Ok(r)) if r.error.is_some() => (PhaseStatus::Failed, r.error.clone(), Some(r)),
        Some(Ok(r)) if controller.stop_requested() => (
            PhaseStatus::Interrupted,
            Some("interrupted by a stop request: the figures are partial".into()),
            Some(r),
        ),
        Some(Ok(r)) => (PhaseStatus::Ok, None, Some(r)),
    };
    TogetherDisk {
        target: target.to_string(),
        status,
        error,
        result,
        mib_s: None,
        alone_mib_s: None,
        ratio: None,
        group: None,
        outlier: None,
        device_io,
        validity: None,
    }
}

/// Drops the device counters of disks whose files share a block device: each counts the
/// other's bytes too, so neither tells what reached the disk for its own figure.
fn unshared_device_io(disks: &mut [TogetherDisk]) {
    let device = |d: &TogetherDisk| d.device_io.as_ref().map(|c| c.device.clone());
    let names: Vec<Option<String>> = disks.iter().map(device).collect();
    for (d, name) in disks.iter_mut().zip(&names) {
        let shared = name.is_some() && names.iter().filter(|n| *n == name).count() > 1;
        if shared {
            d.device_io = None;
        }
    }
}

/// What `[together]` would run, for `suite --dry-run`: each step's name and estimated seconds
/// (each set's preparation on every disk at once, then its runs).
pub fn planned(profile: &crate::config::profile::SuiteProfile) -> Vec<(String, u64)> {
    let Some(plan) = &profile.together else {
        return vec![];
    };
    let mut out = Vec::new();
    for &set in &plan.sets {
        let prepare = Phase::FileioPrepare { set };
        out.push((
            format!("together-{}", prepare.name()),
            super::plan::estimate_s(&prepare, profile),
        ));
        for p in super::plan::set_runs(profile, set) {
            // Run once each, whatever `[repeat]` says of the solo runs.
            let time = plan.time_limit.or(profile.fileio[set].base.time_limit);
            let secs = time.map_or(1, |t| t.as_secs().max(1));
            out.push((format!("together-{}", p.name()), secs));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::profile::SuiteProfile;

    #[test]
    fn disks_whose_files_share_a_device_lose_its_counters_and_the_others_keep_theirs() {
        let disk = |target: &str, device: Option<&str>| TogetherDisk {
            device_io: device.map(|d| Counters {
                device: d.into(),
                read_bytes: 1,
                written_bytes: 2,
            }),
            ..disk_result(target, None, None, &Controller::new())
        };
        let mut disks = vec![
            disk("a", Some("sda1")),
            disk("b", Some("sdb1")),
            disk("c", Some("sda1")),
            disk("d", None),
        ];
        unshared_device_io(&mut disks);
        let kept: Vec<Option<&str>> = disks
            .iter()
            .map(|d| d.device_io.as_ref().map(|c| c.device.as_str()))
            .collect();
        assert_eq!(kept, [None, Some("sdb1"), None, None]);
    }

    #[test]
    fn the_plan_prepares_each_set_then_runs_it_once_whatever_repeat_says() {
        let mut p = SuiteProfile::load("standard").unwrap();
        p.repeat = p.repeat.with_count(3).unwrap();
        let names: Vec<(String, u64)> = planned(&p);
        let expect = [
            ("together-fileio6-prepare", None),
            ("together-fileio6-seqrd-1MiB-qd8-t1", Some(20)),
            ("together-fileio6-seqwr-1MiB-qd8-t1", Some(20)),
            ("together-fileio3-prepare", None),
            ("together-fileio3-rndrd-4KiB-qd32-t1", Some(20)),
            ("together-fileio3-rndwr-4KiB-qd32-t1", Some(20)),
        ];
        assert_eq!(names.len(), expect.len(), "{names:?}");
        for ((name, secs), (want, want_secs)) in names.iter().zip(expect) {
            assert_eq!(name, want);
            if let Some(w) = want_secs {
                assert_eq!(*secs, w, "{name}");
            }
        }
        assert!(planned(&SuiteProfile::load("quick").unwrap()).is_empty());
    }
}
