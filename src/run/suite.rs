//! The suite executor: runs the plan on every target, records every phase, and rewrites the
//! results bundle as each one starts (the previous phase's result and this one marked running,
//! in one atomic write) so a crash loses at most the phase in progress and names it.
//!
//! A failure in one phase is recorded (error text, partial numbers) and the suite goes on;
//! phases that depend on it are skipped with the reason. When the controller is asked to stop
//! (Ctrl-C, SIGTERM, the abort button) the measurement in progress ends early, remaining
//! measurements are marked aborted, and the clean-up phases still run: servers stopped, files
//! removed, partial results kept.

use super::options::{SuiteObserver, SuiteOptions};
use super::phases;
use super::plan::{steps as plan_steps, Step};
use super::progress::Progress;
use super::sampler::Sampler;
use super::target_run::{Chatter, Outcome, TargetRun};
use super::targets::TargetSpec;
use crate::engine::Controller;
use crate::model::Phase;
use crate::model::{BenchResult, ToolInfo};
use crate::model::{
    PhaseResult, PhaseStatus, RunStatus, SuiteResult, TargetResult, SUITE_SCHEMA_VERSION,
};
use crate::report::bundle::write_bundle;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::provision::scratch::{WORK_DIR, WORK_MARKER};

/// Runs the whole suite. Errors only for problems before anything ran (bad output directory)
/// or when the bundle cannot be written; everything else is recorded in the returned result.
pub fn run_suite(
    opts: &SuiteOptions,
    observer: &dyn SuiteObserver,
    controller: &Controller,
) -> anyhow::Result<SuiteResult> {
    std::fs::create_dir_all(&opts.out_dir).with_context(|| {
        format!(
            "could not create the results directory '{}'",
            opts.out_dir.display()
        )
    })?;
    let plan = plan_steps(&opts.profile, &opts.servers);
    let mut result = SuiteResult {
        schema_version: SUITE_SCHEMA_VERSION,
        tool: ToolInfo::spindle("1.0"),
        host: crate::sys::HostInfo::collect(),
        run_id: opts.run_id.clone(),
        started_at: crate::sys::clock::now_rfc3339(),
        finished_at: None,
        status: RunStatus::Running,
        profile: opts.profile.record.clone(),
        environment: Some(crate::disk::facts::Environment::collect(
            &opts.sys.root,
            &opts
                .targets
                .iter()
                .filter_map(|t| t.disk.clone())
                .collect::<Vec<_>>(),
        )),
        governor: None,
        targets: vec![],
        together: None,
        skipped: opts.skipped.clone(),
    };
    // `performance` on every cpufreq policy while the run measures; the governors found are
    // put back when it ends, also on an early return (the guard's drop).
    let mut pinned = if opts.targets.is_empty() {
        None
    } else {
        crate::sys::governor::pin(&opts.sys.root)
    };
    result.governor = pinned.as_ref().map(|p| p.record.clone());
    // Every target is listed from the start: a bundle cut short by a power loss still names
    // the disks that were prepared and not reached.
    result.targets = opts.targets.iter().map(new_target).collect();
    for t in &mut result.targets {
        t.filesystem = super::targets::filesystem_of(&opts.sys.root, Path::new(&t.path));
    }
    if opts.targets.is_empty() {
        result.status = RunStatus::NoTargets;
    }
    write_bundle(&opts.out_dir, &result)?;
    let together: Vec<u64> = if opts.targets.len() >= 2 {
        super::together::planned(&opts.profile)
            .into_iter()
            .map(|(_, s)| s)
            .collect()
    } else {
        vec![]
    };
    let mut progress = Progress::new(&plan, opts, together);
    for ti in 0..opts.targets.len() {
        run_target(
            opts,
            &plan,
            &mut result,
            ti,
            &mut progress,
            observer,
            controller,
        )?;
    }
    super::together::run_together(
        opts,
        &mut result,
        (observer, controller, &mut progress),
        open_work_dir,
    )?;
    if let Some(p) = pinned.as_mut() {
        result.governor = Some(p.restore().clone());
    }
    result.finished_at = Some(crate::sys::clock::now_rfc3339());
    result.status = if opts.targets.is_empty() {
        RunStatus::NoTargets
    } else if controller.stop_requested() {
        RunStatus::Aborted
    } else {
        RunStatus::Complete
    };
    write_bundle(&opts.out_dir, &result)?;
    Ok(result)
}

fn new_target(spec: &TargetSpec) -> TargetResult {
    TargetResult {
        disk: spec.disk.clone(),
        preparation: spec.preparation.clone(),
        reused: spec.reused.clone(),
        ..TargetResult::new(
            &spec.name,
            &spec.dir.display().to_string(),
            spec.kind,
            &spec.description,
        )
    }
}

/// Runs every phase on target `ti` of `result`.
fn run_target(
    opts: &SuiteOptions,
    plan: &[Step],
    result: &mut SuiteResult,
    ti: usize,
    progress: &mut Progress,
    observer: &dyn SuiteObserver,
    controller: &Controller,
) -> anyhow::Result<()> {
    let name = result.targets[ti].name.clone();
    let sampler = Sampler::start(opts.sys.root.clone(), opts.sample_interval);
    let facts = DiskWatch::start(opts, result.targets[ti].disk.as_ref());
    let t0 = Instant::now();
    let work = match open_work_dir(Path::new(&result.targets[ti].path)) {
        Ok(w) => w,
        Err(e) => {
            observer.message(&format!("{name}: {e:#}"));
            let mut pr = new_phase("setup", None, 0.0);
            pr.status = PhaseStatus::Failed;
            pr.error = Some(format!("{e:#}"));
            result.targets[ti].phases.push(pr);
            result.targets[ti].samples = sampler.finish();
            facts.finish(opts, &mut result.targets[ti]);
            progress.target_left();
            return write_bundle(&opts.out_dir, result);
        }
    };
    let mut run = TargetRun::new(work, opts.profile.fileio.len());
    // Set when the target disk went away: the rest of its phases are skipped with the reason.
    let mut gone: Option<String> = None;
    for (pi, step) in plan.iter().enumerate() {
        progress.started(observer, &name, step);
        // Recorded as running first: a power cut leaves it marked, not missing. The same write
        // saves the previous phase's result, so every bundle saved while the target's phases
        // run names exactly one running phase (one write per phase, not two).
        let started_s = t0.elapsed().as_secs_f64();
        let mut pr = new_step(step, started_s);
        pr.status = PhaseStatus::Running;
        result.targets[ti].phases.push(pr);
        write_bundle(&opts.out_dir, result)?;
        let chatter = Chatter::default();
        let mut pr = match &gone {
            Some(why) if step.phase != Phase::MysqldStop => skipped(step, started_s, why),
            _ => execute_phase(
                opts,
                &mut run,
                step,
                !plan[pi + 1..].contains(step),
                &mut result.targets[ti],
                &chatter,
                controller,
            ),
        };
        pr.start_s = Some(started_s);
        if pr.status == PhaseStatus::Failed && gone.is_none() {
            if let Some(why) = disk_gone(opts, &result.targets[ti], &step.phase) {
                pr.error = Some(format!("{why} ({})", pr.error.as_deref().unwrap_or("")));
                gone = Some(why);
            }
        }
        write_phase_text(opts, &name, &pr, &chatter, observer);
        if pr.status == PhaseStatus::Failed {
            observer.message(&format!(
                "{name} {} failed: {}",
                pr.name,
                pr.error.as_deref().unwrap_or("")
            ));
        }
        observer.phase_finished(&name, &step.phase, pr.status);
        *result.targets[ti]
            .phases
            .last_mut()
            .expect("the running phase was recorded") = pr;
        result.targets[ti].samples = sampler.snapshot();
        progress.phase_done(pi);
    }
    // The last phase's result, saved before the slower after-run facts (SMART, kernel log).
    write_bundle(&opts.out_dir, result)?;
    result.targets[ti].samples = sampler.finish();
    facts.finish(opts, &mut result.targets[ti]);
    crate::report::doubts::explain_left(&mut result.targets[ti]);
    // The work directory is ours (marker checked); remove what is left of it.
    if gone.is_none() {
        if let Err(e) = std::fs::remove_dir_all(&run.work) {
            observer.message(&format!("could not remove '{}': {e}", run.work.display()));
        }
    }
    write_bundle(&opts.out_dir, result)
}

/// A step skipped for `why` (the disk went away).
fn skipped(step: &Step, started_s: f64, why: &str) -> PhaseResult {
    let mut pr = new_step(step, started_s);
    pr.status = PhaseStatus::Skipped;
    pr.error = Some(why.to_string());
    pr
}

/// The result of a step not yet run, named after it (and its server).
fn new_step(step: &Step, started_s: f64) -> PhaseResult {
    PhaseResult {
        server: step.server.map(|f| f.key().to_string()),
        ..new_phase(&step.name(), Some(step.phase), started_s)
    }
}

/// A phase result not yet run.
fn new_phase(name: &str, phase: Option<Phase>, started_s: f64) -> PhaseResult {
    PhaseResult {
        start_s: Some(started_s),
        ..PhaseResult::new(name, phase, PhaseStatus::Ok)
    }
}

/// "disk X disconnected during PHASE: …" when the target's disk went away.
fn disk_gone(opts: &SuiteOptions, target: &TargetResult, phase: &Phase) -> Option<String> {
    let disk = target.disk.as_ref()?;
    let why = crate::disk::vanished(&opts.sys.root, disk)?;
    Some(format!(
        "disk {} disconnected during {}: {why}",
        disk.stable_id.as_deref().unwrap_or(&disk.name),
        phase.name()
    ))
}

/// What is read about a target disk before its phases and compared after them: SMART, and
/// the kernel log's USB trouble.
struct DiskWatch {
    disk: Option<crate::disk::Disk>,
    smart_before: Option<crate::disk::smart::SmartReading>,
    mark: Result<crate::disk::kernel_log::KernelLogMark, String>,
}

impl DiskWatch {
    fn start(opts: &SuiteOptions, disk: Option<&crate::disk::Disk>) -> Self {
        let table = crate::disk::bridges::BridgeTable::builtin();
        DiskWatch {
            disk: disk.cloned(),
            smart_before: disk.map(|d| crate::disk::smart::read(d, &opts.sys.runner, table)),
            mark: crate::disk::kernel_log::mark(&opts.sys.root),
        }
    }

    fn finish(self, opts: &SuiteOptions, target: &mut TargetResult) {
        use crate::disk::{kernel_log, smart};
        let Some(disk) = self.disk else { return };
        let table = crate::disk::bridges::BridgeTable::builtin();
        if let Some(before) = self.smart_before {
            let after = smart::read(&disk, &opts.sys.runner, table);
            target.smart = Some(crate::model::SmartRecord {
                change: Some(smart::SmartChange::between(&before, &after)),
                before,
                after: Some(after),
            });
        }
        target.usb_trouble = Some(match &self.mark {
            Ok(m) => kernel_log::count_since(&opts.sys.root, m, std::slice::from_ref(&disk)),
            Err(e) => kernel_log::UsbTroubleCount::Unavailable { reason: e.clone() },
        });
    }
}

/// Runs one phase (or records why it did not run) and classifies how it ended. A measurement
/// the profile repeats (`[repeat]`) runs once per round; its last round gathers the earlier
/// rounds' results from the target and keeps one result with every run (`run::repeat`).
fn execute_phase(
    opts: &SuiteOptions,
    run: &mut TargetRun,
    step: &Step,
    last_round: bool,
    target: &mut TargetResult,
    chatter: &Chatter,
    controller: &Controller,
) -> PhaseResult {
    let this = run_once(opts, run, step, target, chatter, controller);
    let plan = super::plan::repeat_of(&opts.profile, &step.phase);
    if !step.phase.is_measurement() || plan.max <= 1 || !last_round {
        return this;
    }
    let mut runs = super::repeat::take_rounds(&mut target.phases, &step.name());
    runs.push(this);
    super::repeat::repeat(&plan, runs, controller, || {
        run_once(opts, run, step, target, chatter, controller)
    })
}

/// Runs one phase once and classifies how it ended.
fn run_once(
    opts: &SuiteOptions,
    run: &mut TargetRun,
    step: &Step,
    target: &mut TargetResult,
    chatter: &Chatter,
    controller: &Controller,
) -> PhaseResult {
    let t0 = Instant::now();
    let phase = &step.phase;
    run.server_label = step.server;
    let mut pr = new_step(step, 0.0);
    if controller.stop_requested() && !phase.is_cleanup() {
        pr.status = PhaseStatus::Aborted;
        pr.error = Some("the run was stopped".into());
        return pr;
    }
    let ctx = super::target_run::Ctx {
        opts,
        controller,
        chatter,
    };
    let outcome = phases::run_phase(&ctx, run, phase, &mut pr, target);
    pr.seconds = t0.elapsed().as_secs_f64();
    let outcome = if controller.stop_requested() && !phase.is_cleanup() {
        match interrupted(&mut pr, outcome, phase) {
            Some(outcome) => outcome,
            None => return pr,
        }
    } else {
        outcome
    };
    match outcome {
        Ok(Outcome::Done(r)) => {
            pr.error = r.as_ref().and_then(|b| b.error.clone());
            pr.status = if pr.error.is_some() {
                PhaseStatus::Failed
            } else if controller.stop_requested() && phase.is_measurement() {
                PhaseStatus::Aborted
            } else {
                PhaseStatus::Ok
            };
            pr.result = r.map(|b| *b);
        }
        Ok(Outcome::Skipped(why)) => {
            pr.status = PhaseStatus::Skipped;
            pr.error = Some(why);
        }
        Ok(Outcome::Checked(report)) => {
            pr.error = super::tpcc::check_failure(&report);
            pr.status = if pr.error.is_some() {
                PhaseStatus::Failed
            } else {
                PhaseStatus::Ok
            };
            pr.tpcc_check = Some(*report);
        }
        Err(e) => {
            pr.status = PhaseStatus::Failed;
            pr.error = Some(format!("{e:#}"));
        }
    }
    pr
}

/// A phase a stop request cut short is `interrupted` (not failed: no advice to prepare again)
/// and keeps a measurement's partial figures; returns `None` then. A phase that ended on its
/// own before the request came (a preparation that finished, a check) gets its outcome back.
fn interrupted(
    pr: &mut PhaseResult,
    outcome: anyhow::Result<Outcome>,
    phase: &Phase,
) -> Option<anyhow::Result<Outcome>> {
    let why = "interrupted by a stop request (Ctrl-C, SIGTERM or the button)";
    match outcome {
        Ok(Outcome::Done(Some(r))) if phase.is_measurement() => {
            pr.error = Some(format!("{why}: the figures are partial"));
            pr.result = Some(*r);
        }
        Err(_) => pr.error = Some(why.to_string()),
        other => return Some(other),
    }
    pr.status = PhaseStatus::Interrupted;
    None
}

/// `<bundle>/<target>/<phase>.txt`: what the engine said, then the sysbench-style report of a
/// measurement. Nothing is written for a phase that said nothing.
fn write_phase_text(
    opts: &SuiteOptions,
    target: &str,
    pr: &PhaseResult,
    chatter: &Chatter,
    observer: &dyn SuiteObserver,
) {
    let mut text = chatter.text();
    if let Some(r) = &pr.result {
        text.push_str(&render_test_text(r));
    }
    if let Some(c) = &pr.tpcc_check {
        text.push_str(&crate::report::tpcc_text::check_report(c));
    }
    if text.is_empty() {
        return;
    }
    let dir = opts.out_dir.join(target);
    let written = std::fs::create_dir_all(&dir)
        .map_err(anyhow::Error::from)
        .and_then(|()| {
            crate::sys::fs::write_atomic(&dir.join(format!("{}.txt", pr.name)), text.as_bytes())
        });
    if let Err(e) = written {
        observer.message(&format!("could not write the report of {}: {e:#}", pr.name));
    }
}

/// The sysbench-style text of one test.
fn render_test_text(r: &BenchResult) -> String {
    use crate::model::TestOptions;
    use crate::report::{oltp_text, sysbench_text};
    match &r.options {
        TestOptions::Fileio(cfg) => match cfg.test_mode {
            Some(mode) => format!(
                "{}{}",
                sysbench_text::fileio_header(cfg, mode),
                sysbench_text::fileio_report(r, cfg)
            ),
            None => r.to_json_pretty(),
        },
        TestOptions::Oltp(cfg) => {
            let mut s = oltp_text::run_header(r.threads, cfg.report_interval_s, cfg.rand.seed);
            for i in &r.intervals {
                s.push_str(&oltp_text::interval_line(
                    i,
                    r.latency.sysbench_percentile as u32,
                ));
                s.push('\n');
            }
            s.push_str(&oltp_text::final_report(r));
            s
        }
        TestOptions::Tpcc(cfg) => {
            use crate::report::tpcc_text::{self, Layout};
            let mut s = tpcc_text::run_header(cfg);
            for i in &r.intervals {
                s.push_str(&tpcc_text::interval_line(i, Layout::Current));
                s.push('\n');
            }
            s.push_str(&tpcc_text::final_report(r, Layout::Current));
            s
        }
    }
}

/// Creates `<dir>/spindle-work` (or reuses one spindle left behind), refusing anything else.
fn open_work_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    if !dir.is_dir() {
        bail!(
            "target directory '{}' does not exist or is not a directory: create it first",
            dir.display()
        );
    }
    let work = dir.join(WORK_DIR);
    if work.exists() {
        if !work.join(WORK_MARKER).exists() {
            bail!(
                "'{}' exists and was not made by spindle: remove or rename it, or choose another target directory",
                work.display()
            );
        }
        // Left over from an interrupted run: start clean.
        std::fs::remove_dir_all(&work)
            .with_context(|| format!("could not clear '{}'", work.display()))?;
    }
    std::fs::create_dir(&work).with_context(|| {
        format!(
            "could not create '{}' (is the target directory writable?)",
            work.display()
        )
    })?;
    std::fs::write(
        work.join(WORK_MARKER),
        "spindle suite work directory; removed after the run\n",
    )?;
    // The server may run as the `mysql` user: let it reach its datadir below.
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o755));
    Ok(work)
}

#[cfg(test)]
mod tests {
    use super::super::options::ServerChoice;
    use super::*;
    use crate::config::profile::SuiteProfile;
    use crate::sys::System;
    use std::time::Duration;

    #[test]
    fn work_dir_is_ours_or_refused() {
        let d = tempfile::tempdir().unwrap();
        let w = open_work_dir(d.path()).unwrap();
        std::fs::write(w.join("left-over"), "x").unwrap();
        // a work directory spindle left behind is cleared
        let w = open_work_dir(d.path()).unwrap();
        assert!(!w.join("left-over").exists() && w.join(WORK_MARKER).exists());
        // someone else's spindle-work is never touched
        std::fs::remove_file(w.join(WORK_MARKER)).unwrap();
        std::fs::write(w.join("theirs"), "x").unwrap();
        let e = open_work_dir(d.path()).unwrap_err();
        assert!(e.to_string().contains("not made by spindle"), "{e}");
        assert!(w.join("theirs").exists());
    }

    /// Reads the saved bundle at every progress call and counts its running phases.
    struct BundleWatch {
        out: PathBuf,
        seen: std::sync::Mutex<Vec<(String, usize)>>,
    }
    impl BundleWatch {
        fn look(&self, when: String) {
            let r = load_saved(&self.out);
            let running = r.targets.iter().flat_map(|t| &t.phases);
            let running = running.filter(|p| p.status == PhaseStatus::Running);
            self.seen.lock().unwrap().push((when, running.count()));
        }
    }
    impl SuiteObserver for BundleWatch {
        fn phase_started(&self, _: &str, step: &Step, index: usize, _: usize, _: u64) {
            self.look(format!("{index} {} starting", step.name()));
        }
        fn phase_finished(&self, _: &str, phase: &Phase, _: PhaseStatus) {
            self.look(format!("{} finished", phase.name()));
        }
    }

    #[test]
    fn a_power_cut_between_phases_still_finds_one_running_phase() {
        let d = tempfile::tempdir().unwrap();
        let text = "[[fileio]]\nfile_num = 2\ntotal_size = \"2M\"\nmodes = [\"seqwr\", \"seqrd\", \"rndrd\"]\nthreads = [1]\ntime = 1\nevents = 50\ndrop_caches = false\n";
        let opts = SuiteOptions {
            profile: SuiteProfile::parse(text, "t", "test").unwrap(),
            targets: vec![TargetSpec::directory("dir", d.path())],
            skipped: vec![],
            out_dir: d.path().join("out"),
            run_id: "r".into(),
            sys: System::host(),
            servers: vec![ServerChoice::default()],
            sample_interval: Duration::from_secs(5),
        };
        let watch = BundleWatch {
            out: opts.out_dir.clone(),
            seen: Default::default(),
        };
        let r = run_suite(&opts, &watch, &Controller::new()).unwrap();
        assert_eq!(r.status, RunStatus::Complete);
        let phases = &r.targets[0].phases;
        assert!(phases.len() >= 5, "{phases:?}");
        assert!(phases.iter().all(|p| p.status == PhaseStatus::Ok));
        let seen = watch.seen.into_inner().unwrap();
        assert_eq!(seen.len(), 2 * phases.len());
        // Before the first phase nothing runs; from then on every saved bundle names exactly
        // the one phase in progress, also between one phase's end and the next one's start.
        assert_eq!(seen[0].1, 0, "{seen:?}");
        for (when, running) in &seen[1..] {
            assert_eq!(*running, 1, "at '{when}': {seen:?}");
        }
        // and the last write is the finished run
        let saved = load_saved(&opts.out_dir);
        assert_eq!(saved.status, RunStatus::Complete);
        let names = |r: &SuiteResult| -> Vec<(String, PhaseStatus)> {
            let phases = r.targets[0].phases.iter();
            phases.map(|p| (p.name.clone(), p.status)).collect()
        };
        assert_eq!(names(&saved), names(&r));
    }

    fn load_saved(out: &Path) -> SuiteResult {
        let text = std::fs::read_to_string(out.join("results.json")).unwrap();
        SuiteResult::from_json(&text, "results.json").unwrap()
    }

    #[test]
    fn an_unplugged_disk_is_named_as_disconnected_in_the_failed_phase() {
        use crate::provision::prepare::tests::{loop_tree, recording_system};
        let tree = loop_tree(64);
        let (sys, _) = recording_system(tree.path());
        let disk = crate::disk::find_disk(&sys.root, "loop7").unwrap();
        let target = TargetResult {
            disk: Some(disk),
            ..new_target(&TargetSpec::directory("loop7", tree.path()))
        };
        let opts = SuiteOptions {
            profile: crate::config::profile::SuiteProfile::load("quick").unwrap(),
            targets: vec![],
            skipped: vec![],
            out_dir: tree.path().join("out"),
            run_id: "r".into(),
            sys,
            servers: vec![ServerChoice::default()],
            sample_interval: Duration::from_secs(5),
        };
        let phase = Phase::OltpRun {
            workload: crate::oltp::Workload::ReadWrite,
            threads: 4,
            regime: None,
        };
        assert_eq!(disk_gone(&opts, &target, &phase), None, "still there");
        // the kernel reports no medium
        let size = tree.path().join("sys/devices/virtual/block/loop7/size");
        std::fs::write(&size, "0\n").unwrap();
        let why = disk_gone(&opts, &target, &phase).unwrap();
        assert!(why.contains("no medium"), "{why}");
        // unplugged: gone from sysfs
        std::fs::remove_file(tree.path().join("sys/block/loop7")).unwrap();
        let why = disk_gone(&opts, &target, &phase).unwrap();
        assert_eq!(
            why,
            "disk file:/t/disk.img disconnected during oltp-read_write-t4: loop7 is gone from the block layer (unplugged?)"
        );
    }
}
