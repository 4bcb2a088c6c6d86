//! `spindle daemon`: the loop that turns the button, the control socket, sysfs polling (disks,
//! the results stick), the run thread and signals into [`Event`]s for the state machine, and
//! carries out its [`Action`]s (LEDs, starting and aborting runs, copying to the stick).
//!
//! The suite runs behind [`RunLauncher`] so the loop is tested with a fake run; the real one is
//! [`SuiteLauncher`]. Disks are not polled while a run is in progress (reading their first and
//! last MiB would disturb the measurement); sticks inserted or pulled meanwhile are seen when it
//! ends. Logs go to stderr.

use super::control::{bind_control, serve_control, ControlCommand};
use super::state::{self, Action, Event, RunOutcome, State};
use crate::config::appliance::{ApplianceSettings, StickOverrides};
use crate::config::profile::SuiteProfile;
use crate::disk::{Disk, DiskPolicy, Naming};
use crate::engine::Controller;
use crate::report::phase::{Family, Phase};
use crate::report::suite::{PhaseStatus, RunStatus};
use crate::run::{RunRequest, ServerOverrides, SuiteObserver, TargetSource};
use crate::sink::{self, CopyReport, ResultsStick, RunStore};
use crate::status::Indicator;
use crate::sys::{CommandRunner, SysRoot, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs one suite. Blocks until it ends or `stop` is asked; reports progress to `observer`.
pub trait RunLauncher: Send + Sync {
    fn launch(
        &self,
        req: &RunRequest,
        observer: &dyn SuiteObserver,
        stop: &Controller,
    ) -> anyhow::Result<RunOutcome>;
}

/// Where the appliance's runs take their targets: `[appliance] targets` (directories), else
/// `[appliance] disks` (named by stable names only: kernel names change between boots), else
/// every eligible disk.
pub fn target_source(settings: &ApplianceSettings) -> TargetSource {
    if !settings.appliance.targets.is_empty() {
        TargetSource::Directories(settings.appliance.targets.clone())
    } else if !settings.appliance.disks.is_empty() {
        TargetSource::Disks {
            names: settings.appliance.disks.clone(),
            naming: Naming::Stable,
        }
    } else {
        TargetSource::Eligible
    }
}

/// Counts the disks a run would use among `scanned` (every block device), or the existing
/// configured directories.
fn count_targets(
    settings: &ApplianceSettings,
    root: &SysRoot,
    policy: &DiskPolicy,
    scanned: &[Disk],
    stick: Option<&str>,
) -> usize {
    match target_source(settings) {
        TargetSource::Directories(dirs) => dirs.iter().filter(|d| d.is_dir()).count(),
        source => crate::run::targets::plan_disks(scanned, root, &source, policy, stick)
            .planned
            .len(),
    }
}

/// The real launcher: `run::execute` on the machine it was made for.
pub struct SuiteLauncher {
    pub sys: System,
}

impl SuiteLauncher {
    /// The launcher for the machine `settings` describe (`[appliance] sysroot`), commands
    /// logged.
    pub fn for_settings(settings: &ApplianceSettings) -> Self {
        SuiteLauncher {
            sys: System::new(
                SysRoot::new(&settings.appliance.sysroot),
                CommandRunner::new(),
            ),
        }
    }
}

impl RunLauncher for SuiteLauncher {
    fn launch(
        &self,
        req: &RunRequest,
        observer: &dyn SuiteObserver,
        stop: &Controller,
    ) -> anyhow::Result<RunOutcome> {
        let result = crate::run::execute(req, &self.sys, observer, stop)?;
        Ok(match result.status {
            RunStatus::Aborted => RunOutcome::Aborted,
            RunStatus::NoTargets => RunOutcome::NothingToDo,
            _ => RunOutcome::Completed {
                failed_phases: result.failures().count(),
            },
        })
    }
}

/// What a run cut short by a power loss or crash left in the work directory (`.work` of the
/// runs directory): mounts of its disks (unmounted lazily) and mount-point folders (removed
/// when empty; a folder that still holds files is left alone and reported).
fn clear_dead_runs(work: &Path, settings: &ApplianceSettings, runner: &CommandRunner) {
    if !work.exists() {
        return;
    }
    let root = SysRoot::new(&settings.appliance.sysroot);
    let mounts = root.read_string("/proc/self/mounts").unwrap_or_default();
    let mut under: Vec<&str> = mounts
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter(|mp| Path::new(mp).starts_with(work))
        .collect();
    under.sort_by_key(|mp| std::cmp::Reverse(mp.len()));
    for mp in under {
        eprintln!("spindle: unmounting {mp}, left by an interrupted run");
        if let Err(e) = runner.run("umount", &["-l", mp]) {
            eprintln!("spindle: {e:#}");
        }
    }
    remove_empty_dirs(work);
    if work.exists() {
        eprintln!(
            "spindle: '{}' still holds files of an earlier run; they are kept",
            work.display()
        );
    }
}

/// Removes `dir` and its subdirectories if they are all empty. Never removes a file, so a
/// mount point left mounted (a failed release) keeps its contents.
fn remove_empty_dirs(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_dirs(&e.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

enum Msg {
    Event(Event),
    Control(ControlCommand, Sender<String>),
    RunDone(Result<RunOutcome, String>),
    /// A copy ended; the number tells stale reports (of a copy superseded by a re-insert) apart.
    CopyDone(u64, CopyReport),
}

/// Sends suite progress into the loop.
struct Observer(Sender<Msg>);

/// The LED pattern's phase for a suite phase; `None` for bookkeeping a person need not see.
fn led_phase(phase: &Phase) -> Option<crate::status::Phase> {
    use crate::status::Phase as Led;
    match phase.family() {
        Family::System => None,
        Family::Fileio => Some(Led::Fileio),
        Family::Oltp => Some(Led::Oltp),
        Family::Tpcc => Some(Led::Tpcc),
    }
}

impl SuiteObserver for Observer {
    fn phase_started(&self, target: &str, phase: &Phase, index: usize, total: usize, _eta: u64) {
        eprintln!("spindle: [{index}/{total}] {target}: {}", phase.name());
        if let Some(led) = led_phase(phase) {
            let _ = self.0.send(Msg::Event(Event::PhaseStarted { phase: led }));
        }
    }
    fn phase_finished(&self, target: &str, phase: &Phase, status: PhaseStatus) {
        if status == PhaseStatus::Failed {
            eprintln!("spindle: {target}: {} failed", phase.name());
        }
        let ok = matches!(status, PhaseStatus::Ok | PhaseStatus::Skipped);
        let _ = self.0.send(Msg::Event(Event::PhaseFinished { ok }));
    }
    fn message(&self, line: &str) {
        eprintln!("spindle: {line}");
    }
}

/// What the daemon needs besides its settings.
pub struct DaemonDeps {
    pub indicator: Box<dyn Indicator>,
    pub launcher: Arc<dyn RunLauncher>,
    /// Start the button as `[button]` says (false in tests: no hardware is touched).
    pub gpio_button: bool,
}

struct Daemon {
    settings: ApplianceSettings,
    store: RunStore,
    indicator: Box<dyn Indicator>,
    launcher: Arc<dyn RunLauncher>,
    tx: Sender<Msg>,
    state: State,
    stick: Option<ResultsStick>,
    overrides: Option<StickOverrides>,
    run_stop: Controller,
    run_thread: Option<std::thread::JoinHandle<()>>,
    copy_thread: Option<std::thread::JoinHandle<()>>,
    disks: usize,
    runner: CommandRunner,
    /// Unlabelled FAT/exFAT filesystems already looked at for a `spindle/` folder.
    probed: std::collections::HashMap<String, bool>,
    /// Number of the latest copy started.
    copy_gen: u64,
}

impl Daemon {
    fn policy(&self) -> DiskPolicy {
        let mut p = self.settings.config.disks.clone();
        p.stick_label = self.settings.stick.label.clone();
        if let Some(extra) = self.overrides.as_ref().and_then(|o| o.erase.clone()) {
            p.erase.extend(extra);
        }
        p
    }

    /// Feeds one event to the state machine and performs the actions; returns them.
    fn handle(&mut self, ev: Event) -> Vec<Action> {
        let (next, actions) = state::step(self.state, ev.clone());
        if next != self.state {
            eprintln!("spindle: {ev:?}: {:?} -> {:?}", self.state.mode, next.mode);
        }
        self.state = next;
        for a in &actions {
            match a {
                Action::Show(p) => self.indicator.show(*p),
                Action::StartRun => self.start_run(),
                Action::AbortRun => {
                    eprintln!(
                        "spindle: aborting the run (servers are stopped, partial results kept)"
                    );
                    self.run_stop.ask_to_stop();
                }
                Action::CopyToStick => self.start_copy(),
                Action::Refuse(why) => eprintln!("spindle: {why}"),
                Action::Exit => {}
            }
        }
        actions
    }

    /// The request of a run into `run`: the profile (the stick's choice, else `[suite]`), the
    /// targets, the policy with the stick's erase list.
    fn request(&self, run: &sink::RunEntry) -> anyhow::Result<RunRequest> {
        let profile = self
            .overrides
            .as_ref()
            .and_then(|o| o.profile.clone())
            .unwrap_or_else(|| self.settings.config.suite.profile.clone());
        let mysqld = &self.settings.config.mysqld;
        Ok(RunRequest {
            run_id: run.id.clone(),
            out_dir: run.dir.clone(),
            work_dir: self.store.dir().join(".work").join(&run.id),
            profile: SuiteProfile::load(&profile)?,
            source: target_source(&self.settings),
            policy: self.policy(),
            stick_disk: self.stick.as_ref().map(|s| s.disk.clone()),
            server: ServerOverrides {
                mysqld: (!mysqld.binary.is_empty()).then(|| PathBuf::from(&mysqld.binary)),
                flavor: mysqld.flavor.parse().ok(),
            },
            sample_interval: Duration::from_secs(5),
        })
    }

    fn start_run(&mut self) {
        let run = match self
            .store
            .create_run(&crate::sys::HostInfo::collect().hostname)
        {
            Ok(r) => r,
            Err(e) => {
                eprintln!("spindle: {e:#}");
                let tx = self.tx.clone();
                let _ = tx.send(Msg::RunDone(Err(format!("{e:#}"))));
                return;
            }
        };
        let req = match self.request(&run) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("spindle: {e:#}");
                let text = format!("The run could not be carried out:\n{e:#}\n");
                let _ = crate::sys::fs::write_atomic(&run.dir.join("ERROR.txt"), text.as_bytes());
                let _ = self.tx.send(Msg::RunDone(Err(format!("{e:#}"))));
                return;
            }
        };
        eprintln!(
            "spindle: starting run {} (profile {})",
            run.id, req.profile.record.name
        );
        self.run_stop = Controller::new();
        let stop = self.run_stop.clone();
        let launcher = self.launcher.clone();
        let tx = self.tx.clone();
        self.run_thread = Some(std::thread::spawn(move || {
            let obs = Observer(tx.clone());
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                launcher.launch(&req, &obs, &stop)
            }))
            .unwrap_or_else(|_| {
                Err(anyhow::anyhow!(
                    "the run crashed (a bug in spindle; see the log)"
                ))
            });
            if let Err(e) = &r {
                let text = format!("The run could not be carried out:\n{e:#}\n");
                let _ =
                    crate::sys::fs::write_atomic(&req.out_dir.join("ERROR.txt"), text.as_bytes());
            }
            remove_empty_dirs(&req.work_dir);
            let _ = tx.send(Msg::RunDone(r.map_err(|e| format!("{e:#}"))));
        }));
    }

    fn start_copy(&mut self) {
        if let Some(t) = self.copy_thread.take() {
            let _ = t.join();
        }
        self.copy_gen += 1;
        let gen = self.copy_gen;
        let Some(stick) = self.stick.clone() else {
            let _ = self.tx.send(Msg::CopyDone(
                gen,
                CopyReport {
                    remaining: self.store.pending().len(),
                    problem: Some(crate::status::StickProblem::NotFound),
                    ..CopyReport::default()
                },
            ));
            return;
        };
        let (store, cfg, runner, tx) = (
            self.store.clone(),
            self.settings.stick.clone(),
            self.runner.clone(),
            self.tx.clone(),
        );
        self.copy_thread = Some(std::thread::spawn(move || {
            let r = sink::copy_pending(&stick, &store, &cfg, &runner);
            let _ = tx.send(Msg::CopyDone(gen, r));
        }));
    }

    /// Polls sticks and disks (not while a run is in progress: reading the disks' first and
    /// last MiB would disturb the measurement) and emits change events. One sysfs scan serves
    /// both.
    fn poll(&mut self) {
        if matches!(self.state.mode, state::Mode::Running { .. }) {
            return;
        }
        let Some(scanned) = self.scan() else { return };
        self.update_stick(&scanned);
        if self.state.stick != state::Stick::Copying {
            let stick = self.stick.as_ref().map(|s| s.disk.clone());
            let root = SysRoot::new(&self.settings.appliance.sysroot);
            let n = count_targets(
                &self.settings,
                &root,
                &self.policy(),
                &scanned,
                stick.as_deref(),
            );
            if n != self.disks {
                self.disks = n;
                self.handle(Event::DisksChanged { disks: n });
            }
        }
    }

    fn scan(&self) -> Option<Vec<Disk>> {
        let root = SysRoot::new(&self.settings.appliance.sysroot);
        match crate::disk::scan_all(&root) {
            Ok(v) => Some(v),
            Err(e) => {
                eprintln!("spindle: disk scan failed: {e:#}");
                None
            }
        }
    }

    /// Looks for the results stick only and emits inserted/removed events.
    fn poll_sticks(&mut self) {
        if let Some(scanned) = self.scan() {
            self.update_stick(&scanned);
        }
    }

    fn update_stick(&mut self, scanned: &[Disk]) {
        let root = SysRoot::new(&self.settings.appliance.sysroot);
        let probe_dir = {
            let mut p = self.settings.stick.mount_dir.clone().into_os_string();
            p.push("-probe");
            PathBuf::from(p)
        };
        let (cache, runner) = (&mut self.probed, &self.runner);
        let mut seen = Vec::new();
        let found = sink::stick::sticks_among(scanned, &root, &self.settings.stick, &mut |s| {
            let key = format!("{} {} {:?}", s.device.display(), s.fs_type, s.label);
            seen.push(key.clone());
            *cache
                .entry(key)
                .or_insert_with(|| sink::stick::probe_marker(s, &probe_dir, runner))
        })
        .into_iter()
        .next();
        // forget filesystems that went away, so a re-inserted stick is looked at again
        self.probed.retain(|k, _| seen.contains(k));
        let same = |a: &ResultsStick, b: &ResultsStick| a.device == b.device && a.label == b.label;
        match (&self.stick, found) {
            (None, Some(s)) => self.stick_inserted(s),
            (Some(old), Some(s)) if !same(old, &s) => {
                self.stick_removed();
                self.stick_inserted(s);
            }
            (Some(_), None) => self.stick_removed(),
            _ => {}
        }
    }

    fn stick_inserted(&mut self, s: ResultsStick) {
        eprintln!(
            "spindle: results stick {} ({}, {}) inserted",
            s.name(),
            s.device.display(),
            s.fs_type
        );
        let ins = sink::inspect(&s, &self.settings.stick, &self.runner);
        self.overrides = ins.overrides;
        self.stick = Some(s);
        self.handle(Event::StickInserted {
            config_ok: ins.config_error.is_none(),
        });
    }

    fn stick_removed(&mut self) {
        eprintln!("spindle: results stick removed");
        self.stick = None;
        self.overrides = None;
        self.handle(Event::StickRemoved);
    }

    fn control(&mut self, cmd: ControlCommand) -> String {
        let ev = match cmd {
            ControlCommand::Start => Event::StartRequested,
            ControlCommand::Abort => Event::AbortRequested,
            ControlCommand::Status => {
                return format!(
                    "ok: {} (disks {}, runs waiting for a stick {})",
                    state::pattern(&self.state),
                    self.state.disks,
                    self.state.pending
                )
            }
        };
        let acts = self.handle(ev);
        if let Some(Action::Refuse(why)) = acts.iter().find(|a| matches!(a, Action::Refuse(_))) {
            return format!("refused: {why}");
        }
        if acts.contains(&Action::StartRun) {
            return "ok: run started".into();
        }
        if acts.contains(&Action::AbortRun) {
            return "ok: aborting the run".into();
        }
        "ok".into()
    }
}

/// Runs the daemon until `stop` is asked (SIGTERM/SIGINT); a run in progress is aborted cleanly
/// first. The indicator is dark when this returns.
pub fn run_daemon(
    settings: ApplianceSettings,
    deps: DaemonDeps,
    stop: &Controller,
) -> anyhow::Result<()> {
    settings.validate()?;
    let store = RunStore::open(&settings.appliance.runs_dir)?;
    for id in store.recover_interrupted() {
        eprintln!("spindle: run {id} was interrupted (power loss or crash); it is kept and will be copied to the stick");
    }
    sink::stick::clear_stale_mount(&settings.stick.mount_dir, &CommandRunner::new());
    clear_dead_runs(&store.dir().join(".work"), &settings, &CommandRunner::new());
    let (tx, rx): (Sender<Msg>, Receiver<Msg>) = mpsc::channel();
    let listener = bind_control(&settings.appliance.control_socket)?;
    let quit = Arc::new(AtomicBool::new(false));
    let control_thread = start_control(listener, tx.clone(), quit.clone());
    let _button = deps
        .gpio_button
        .then(|| start_button(&settings.button, tx.clone()))
        .flatten();
    let mut d = Daemon {
        store,
        indicator: deps.indicator,
        launcher: deps.launcher,
        tx,
        state: State::default(),
        stick: None,
        overrides: None,
        run_stop: Controller::new(),
        run_thread: None,
        copy_thread: None,
        disks: 0,
        runner: CommandRunner::new(),
        probed: Default::default(),
        copy_gen: 0,
        settings,
    };
    d.boot();
    d.serve(&rx, stop);
    quit.store(true, Ordering::SeqCst);
    let _ = control_thread.join();
    let _ = std::fs::remove_file(&d.settings.appliance.control_socket);
    d.indicator.shutdown();
    eprintln!("spindle: daemon stopped");
    Ok(())
}

/// The control socket's thread: each request goes into the loop, the answer back out.
fn start_control(
    listener: std::os::unix::net::UnixListener,
    tx: Sender<Msg>,
    quit: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let forward = |cmd| {
            let (rtx, rrx) = mpsc::channel();
            tx.send(Msg::Control(cmd, rtx)).ok()?;
            Some(
                rrx.recv_timeout(Duration::from_secs(10))
                    .unwrap_or_else(|_| "refused: the daemon did not answer".into()),
            )
        };
        serve_control(listener, forward, quit)
    })
}

/// The GPIO button, its presses sent into the loop; `None` when it cannot be read or is off.
/// Logs one `spindle: button:` line either way. Independent of the LEDs: whatever backend
/// shows the status, the button is tried on its own chip and line.
fn start_button(
    b: &crate::status::ButtonConfig,
    tx: Sender<Msg>,
) -> Option<crate::status::gpio::GpioButton> {
    if !b.enabled {
        eprintln!(
            "spindle: button: off ([button] enabled = false); use spindle start / spindle abort"
        );
        return None;
    }
    let on_press = move |p| {
        let ev = match p {
            crate::status::Press::Short => Event::ButtonShort,
            crate::status::Press::Long => Event::ButtonLong,
        };
        let _ = tx.send(Msg::Event(ev));
    };
    match crate::status::gpio::GpioButton::start(b, on_press) {
        Ok(b) => {
            eprintln!("spindle: button: {}", b.description);
            Some(b)
        }
        Err(e) => {
            eprintln!("spindle: button: {e}; use spindle start / spindle abort");
            None
        }
    }
}

impl Daemon {
    /// Shows "booting", scans, and tells the state machine what it found.
    fn boot(&mut self) {
        eprintln!(
            "spindle: daemon started (status: {}, runs in {}, control socket {})",
            self.indicator.backend(),
            self.store.dir().display(),
            self.settings.appliance.control_socket.display()
        );
        let sensors = crate::sys::sensors::probe(&self.settings.appliance.sysroot);
        eprintln!("spindle: sensors: {}", sensors.describe());
        self.indicator.show(crate::status::Pattern::Booting);
        self.poll();
        let autostart = self.settings.appliance.autostart
            || self
                .overrides
                .as_ref()
                .and_then(|o| o.autostart)
                .unwrap_or(false);
        let pending = self.store.pending().len();
        self.handle(Event::Booted {
            disks: self.disks,
            pending,
            autostart,
        });
    }

    /// The loop: messages in, polls on time, until a signal and no run or copy left.
    fn serve(&mut self, rx: &Receiver<Msg>, stop: &Controller) {
        let poll_every = Duration::from_millis(self.settings.appliance.poll_interval_ms);
        let settle = Duration::from_millis(self.settings.appliance.settle_ms);
        let booted = Instant::now();
        let mut settled = false;
        let mut last_poll = Instant::now();
        let mut exiting = false;
        loop {
            if !settled && booted.elapsed() >= settle {
                settled = true;
                self.handle(Event::Settled);
            }
            if stop.stop_requested() && !exiting {
                eprintln!("spindle: signal received, stopping");
                self.handle(Event::Signal);
                exiting = true;
            }
            let running = self.run_thread.is_some();
            let copying = self.state.stick == state::Stick::Copying;
            if exiting && !running && !copying {
                break;
            }
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(Msg::Event(ev)) => {
                    self.handle(ev);
                }
                Ok(Msg::Control(cmd, reply)) => {
                    let answer = if exiting {
                        "refused: the daemon is stopping".to_string()
                    } else {
                        self.control(cmd)
                    };
                    let _ = reply.send(answer);
                }
                Ok(Msg::RunDone(r)) => {
                    self.run_done(r);
                    last_poll = Instant::now() - poll_every; // look for sticks right away
                }
                Ok(Msg::CopyDone(gen, r)) => self.copy_done(gen, r),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if !exiting && last_poll.elapsed() >= poll_every {
                last_poll = Instant::now();
                self.poll();
            }
        }
    }

    fn run_done(&mut self, r: Result<RunOutcome, String>) {
        if let Some(t) = self.run_thread.take() {
            let _ = t.join();
        }
        let outcome = match r {
            Ok(o) => o,
            Err(e) => {
                eprintln!("spindle: the run failed: {e}");
                RunOutcome::Failed
            }
        };
        eprintln!("spindle: run ended: {outcome:?}");
        // Sticks were not polled during the run: see what is plugged in now, so results never
        // go to a stick that was pulled meanwhile.
        self.poll_sticks();
        self.handle(Event::RunFinished { outcome });
    }

    fn copy_done(&mut self, gen: u64, r: CopyReport) {
        if gen != self.copy_gen {
            eprintln!("spindle: a superseded copy ended: {:?}", r.error);
            return;
        }
        if let Some(t) = self.copy_thread.take() {
            let _ = t.join();
        }
        if let Some(e) = &r.error {
            eprintln!("spindle: copying to the stick stopped: {e}");
        }
        for id in self.store.prune(self.settings.appliance.keep_copied_runs) {
            eprintln!("spindle: deleted run {id} from the SD card (it is on a stick)");
        }
        self.handle(Event::CopyFinished {
            remaining: r.remaining,
            problem: r.problem,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name)
    }

    #[test]
    fn one_scan_counts_disks_and_finds_the_stick() {
        let mut settings = ApplianceSettings::default();
        settings.appliance.sysroot = fixture("pi4-stick");
        let root = SysRoot::new(&settings.appliance.sysroot);
        let scanned = crate::disk::scan_all(&root).unwrap();
        let policy = settings.config.disks.clone();
        // sda is blank and eligible; sdb is the stick, sdc too small, mmcblk0 the boot card
        assert_eq!(count_targets(&settings, &root, &policy, &scanned, None), 1);
        // the disk holding the current stick never counts, even if the policy would take it
        assert_eq!(
            count_targets(&settings, &root, &policy, &scanned, Some("sda")),
            0
        );
        let sticks = sink::stick::sticks_among(&scanned, &root, &settings.stick, &mut |_| false);
        assert_eq!(sticks.len(), 1);
        assert_eq!(sticks[0].device, PathBuf::from("/dev/sdb1"));
        // configured directories replace disks
        let d = tempfile::tempdir().unwrap();
        settings.appliance.targets = vec![d.path().to_path_buf(), d.path().join("missing")];
        assert_eq!(count_targets(&settings, &root, &policy, &scanned, None), 1);
    }

    #[test]
    fn only_empty_work_directories_are_removed() {
        let d = tempfile::tempdir().unwrap();
        let w = d.path().join("work");
        std::fs::create_dir_all(w.join("mnt/sda")).unwrap();
        remove_empty_dirs(&w);
        assert!(!w.exists());
        std::fs::create_dir_all(w.join("mnt/sda")).unwrap();
        std::fs::write(w.join("mnt/sda/data"), "x").unwrap();
        std::fs::create_dir_all(w.join("mnt/sdb")).unwrap();
        remove_empty_dirs(&w);
        assert!(w.join("mnt/sda/data").exists());
        assert!(!w.join("mnt/sdb").exists());
    }
}
