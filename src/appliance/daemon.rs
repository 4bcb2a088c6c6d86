//! `spindle daemon`: the loop that turns the button, the control socket, sysfs polling (disks,
//! the results stick), the run thread and signals into [`Event`]s for the state machine, and
//! carries out its [`Action`]s (LEDs, starting and aborting runs, copying to the stick).
//!
//! The suite runs behind a [`RunLauncher`] (`launch.rs`) so the loop is tested with a fake run.
//! At start, what a power cut left behind is cleared (`recovery.rs`); the stick is followed by
//! `sticks.rs`. Disks are not polled while a run is in progress (reading their first and last
//! MiB would disturb the measurement); sticks inserted or pulled meanwhile are seen when it
//! ends. Logs go to stderr.

use super::control::{bind_control, serve_control, ControlCommand};
use super::launch::{count_targets, target_source, Observer, RunLauncher};
use super::state::{self, Action, Event, RunOutcome, State};
use super::sticks::StickWatch;
use crate::config::appliance::ApplianceSettings;
use crate::config::profile::SuiteProfile;
use crate::disk::{Disk, DiskPolicy};
use crate::engine::Controller;
use crate::run::RunRequest;
use crate::sink::{self, CopyReport, RunStore};
use crate::status::Indicator;
use crate::sys::System;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

enum Msg {
    Event(Event),
    Control(ControlCommand, Sender<String>),
    RunDone(Result<RunOutcome, String>),
    /// A copy ended; the number tells stale reports (of a copy superseded by a re-insert) apart.
    CopyDone(u64, CopyReport),
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
    sticks: StickWatch,
    run_stop: Controller,
    run_thread: Option<std::thread::JoinHandle<()>>,
    copy_thread: Option<std::thread::JoinHandle<()>>,
    disks: usize,
    /// The machine (`[appliance] sysroot`) and the runner every command goes through.
    sys: System,
    /// Number of the latest copy started.
    copy_gen: u64,
}

impl Daemon {
    fn policy(&self) -> DiskPolicy {
        let mut p = self.settings.config.disks.clone();
        p.stick_label = self.settings.stick.label.clone();
        if let Some(extra) = self.sticks.overrides.as_ref().and_then(|o| o.erase.clone()) {
            p.erase.extend(extra);
        }
        p
    }

    /// Feeds one event to the state machine and performs the actions; returns them.
    fn handle(&mut self, ev: Event) -> Vec<Action> {
        let (next, actions) = state::step(self.state, ev.clone());
        if next != self.state {
            crate::sys::log::say!("{ev:?}: {:?} -> {:?}", self.state.mode, next.mode);
        }
        self.state = next;
        for a in &actions {
            match a {
                Action::Show(p) => self.indicator.show(*p),
                Action::StartRun => self.start_run(),
                Action::AbortRun => {
                    crate::sys::log::say!(
                        "aborting the run (servers are stopped, partial results kept)"
                    );
                    self.run_stop.ask_to_stop();
                }
                Action::CopyToStick => self.start_copy(),
                Action::Refuse(why) => crate::sys::log::say!("{why}"),
                Action::Exit => {}
            }
        }
        actions
    }

    /// The request of a run into `run`: the profile (the stick's choice, else `[suite]`), the
    /// targets, the policy with the stick's erase list, the servers (the stick's `flavors`, else
    /// `[mysqld]`).
    fn request(&self, run: &sink::RunEntry) -> anyhow::Result<RunRequest> {
        let profile = self
            .sticks
            .overrides
            .as_ref()
            .and_then(|o| o.profile.clone())
            .unwrap_or_else(|| self.settings.config.suite.profile.clone());
        // The stick's `flavors` chooses among the servers the image's [mysqld.binaries] lists.
        let mut mysqld = self.settings.config.mysqld.clone();
        if let Some(f) = self
            .sticks
            .overrides
            .as_ref()
            .and_then(|o| o.flavors.clone())
        {
            mysqld.flavors = f;
        }
        Ok(RunRequest {
            run_id: run.id.clone(),
            out_dir: run.dir.clone(),
            work_dir: self.store.dir().join(".work").join(&run.id),
            profile: SuiteProfile::load(&profile)?,
            source: target_source(&self.settings),
            policy: self.policy(),
            stick_disk: self.sticks.current.as_ref().map(|s| s.disk.clone()),
            servers: mysqld.servers()?,
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
                crate::sys::log::say!("{e:#}");
                let tx = self.tx.clone();
                let _ = tx.send(Msg::RunDone(Err(format!("{e:#}"))));
                return;
            }
        };
        let req = match self.request(&run) {
            Ok(r) => r,
            Err(e) => {
                crate::sys::log::say!("{e:#}");
                let text = format!("The run could not be carried out:\n{e:#}\n");
                let _ = crate::sys::fs::write_atomic(&run.dir.join("ERROR.txt"), text.as_bytes());
                let _ = self.tx.send(Msg::RunDone(Err(format!("{e:#}"))));
                return;
            }
        };
        crate::sys::log::say!(
            "starting run {} (profile {})",
            run.id,
            req.profile.record.name
        );
        self.run_stop = Controller::new();
        let stop = self.run_stop.clone();
        let launcher = self.launcher.clone();
        let tx = self.tx.clone();
        self.run_thread = Some(std::thread::spawn(move || {
            let events = tx.clone();
            let obs = Observer(Box::new(move |ev| {
                let _ = events.send(Msg::Event(ev));
            }));
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
            super::recovery::remove_empty_dirs(&req.work_dir);
            let _ = tx.send(Msg::RunDone(r.map_err(|e| format!("{e:#}"))));
        }));
    }

    fn start_copy(&mut self) {
        if let Some(t) = self.copy_thread.take() {
            let _ = t.join();
        }
        self.copy_gen += 1;
        let gen = self.copy_gen;
        let Some(stick) = self.sticks.current.clone() else {
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
            self.sys.runner.clone(),
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
            let stick = self.sticks.current.as_ref().map(|s| s.disk.clone());
            let n = count_targets(
                &self.settings,
                &self.sys.root,
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
        match crate::disk::scan_all(&self.sys.root) {
            Ok(v) => Some(v),
            Err(e) => {
                crate::sys::log::say!("disk scan failed: {e:#}");
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
        for ev in self.sticks.update(scanned, &self.settings.stick, &self.sys) {
            self.handle(ev);
        }
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
    let sys = super::launch::machine(&settings);
    super::recovery::recover(&store, &settings, &sys);
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
        sticks: StickWatch::default(),
        run_stop: Controller::new(),
        run_thread: None,
        copy_thread: None,
        disks: 0,
        sys,
        copy_gen: 0,
        settings,
    };
    d.boot();
    d.serve(&rx, stop);
    quit.store(true, Ordering::SeqCst);
    let _ = control_thread.join();
    let _ = std::fs::remove_file(&d.settings.appliance.control_socket);
    d.indicator.shutdown();
    crate::sys::log::say!("daemon stopped");
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
        crate::sys::log::say!(
            "button: off ([button] enabled = false); use spindle start / spindle abort"
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
            crate::sys::log::say!("button: {}", b.description);
            Some(b)
        }
        Err(e) => {
            crate::sys::log::say!("button: {e}; use spindle start / spindle abort");
            None
        }
    }
}

impl Daemon {
    /// Shows "booting", scans, and tells the state machine what it found.
    fn boot(&mut self) {
        crate::sys::log::say!(
            "daemon started (status: {}, runs in {}, control socket {})",
            self.indicator.backend(),
            self.store.dir().display(),
            self.settings.appliance.control_socket.display()
        );
        let sensors = crate::sys::sensors::probe(self.sys.root.root());
        crate::sys::log::say!("sensors: {}", sensors.describe());
        self.indicator.show(crate::status::Pattern::Booting);
        self.poll();
        let autostart = self.settings.appliance.autostart
            || self
                .sticks
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
                crate::sys::log::say!("signal received, stopping");
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
                crate::sys::log::say!("the run failed: {e}");
                RunOutcome::Failed
            }
        };
        crate::sys::log::say!("run ended: {outcome:?}");
        // Sticks were not polled during the run: see what is plugged in now, so results never
        // go to a stick that was pulled meanwhile.
        self.poll_sticks();
        self.handle(Event::RunFinished { outcome });
    }

    fn copy_done(&mut self, gen: u64, r: CopyReport) {
        if gen != self.copy_gen {
            crate::sys::log::say!("a superseded copy ended: {:?}", r.error);
            return;
        }
        if let Some(t) = self.copy_thread.take() {
            let _ = t.join();
        }
        if let Some(e) = &r.error {
            crate::sys::log::say!("copying to the stick stopped: {e}");
        }
        for id in self.store.prune(self.settings.appliance.keep_copied_runs) {
            crate::sys::log::say!("deleted run {id} from the SD card (it is on a stick)");
        }
        self.handle(Event::CopyFinished {
            remaining: r.remaining,
            problem: r.problem,
        });
    }
}
