//! `spindle suite`: runs the plan on every target, records every phase, and rewrites the
//! results bundle after each one so a crash loses at most the phase in progress.
//!
//! A failure in one phase is recorded (error text, partial numbers) and the suite goes on;
//! phases that depend on it are skipped with the reason. When `stop` is set (Ctrl-C, SIGTERM,
//! the abort button) the measurement in progress ends early, remaining measurements are marked
//! aborted, and the clean-up phases still run: servers stopped, files removed, partial results
//! kept.

use super::plan::{phases, Phase};
use crate::config::profile::{FileioSet, Profile};
use crate::fileio::{self, FileioConfig, TestMode};
use crate::oltp::{self, OltpConfig, Workload};
use crate::provision::mysqld;
use crate::report::suite::{
    write_bundle, PhaseResult, Skipped, SuiteResult, TargetResult, SUITE_SCHEMA_VERSION,
};
use crate::report::{BenchResult, ToolInfo};
use crate::sys::state;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Marker file in a work directory spindle created (so it only ever removes its own).
const WORK_MARKER: &str = ".spindle-work";

/// Receives progress (the CLI prints it; the appliance drives LEDs from it). Called from the
/// suite's thread.
pub trait SuiteObserver: Sync {
    fn phase_started(
        &self,
        _target: &str,
        _phase: &str,
        _index: usize,
        _total: usize,
        _eta_s: u64,
    ) {
    }
    fn phase_finished(&self, _target: &str, _phase: &str, _ok: bool) {}
    fn message(&self, _line: &str) {}
}

/// An observer that ignores everything.
pub struct QuietObserver;
impl SuiteObserver for QuietObserver {}

/// One place to benchmark: a directory (on a disk spindle prepared, or one the user named).
#[derive(Clone, Debug)]
pub struct TargetSpec {
    /// Short name for tables and file names.
    pub name: String,
    /// Directory the work happens in (spindle creates `spindle-work/` inside).
    pub dir: PathBuf,
    /// `disk` or `directory`.
    pub kind: String,
    /// One line for tables (model, link speed, driver).
    pub description: String,
    /// The disk's discovery record, when a disk.
    pub disk: Option<serde_json::Value>,
    /// How the disk was prepared (commands run).
    pub preparation: Vec<String>,
}

impl TargetSpec {
    /// A plain directory target.
    pub fn directory(name: &str, dir: &Path) -> Self {
        TargetSpec {
            name: name.to_string(),
            dir: dir.to_path_buf(),
            kind: "directory".into(),
            description: format!("directory {}", dir.display()),
            disk: None,
            preparation: vec![],
        }
    }
}

/// Everything a suite run needs.
#[derive(Clone, Debug)]
pub struct SuiteOptions {
    pub profile: Profile,
    pub targets: Vec<TargetSpec>,
    /// Disks found but not benchmarked (reported in the bundle).
    pub skipped: Vec<Skipped>,
    /// The bundle directory (created if missing).
    pub out_dir: PathBuf,
    /// Run identifier (the bundle directory name by default).
    pub run_id: String,
    /// Root for system-state readers (`/`; a fixture tree in tests).
    pub sysroot: PathBuf,
    /// Server program and flavor overrides.
    pub mysqld: Option<PathBuf>,
    pub flavor: Option<mysqld::Flavor>,
    /// Seconds between temperature/throttling samples.
    pub sample_interval: Duration,
}

/// What the suite needs to remember about a target while its phases run.
struct TargetRun {
    work: PathBuf,
    fileio_ok: Vec<bool>,
    server: Option<mysqld::ClientInfo>,
    oltp_prepared: Option<Workload>,
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Flushes dirty pages and drops the page cache (root only). Returns whether it happened.
fn drop_caches() -> bool {
    if !is_root() {
        return false;
    }
    // SAFETY: sync(2) has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").is_ok()
}

/// Runs the whole suite. Errors only for problems before anything ran (bad output directory);
/// everything after that is recorded in the returned result.
pub fn run_suite(
    opts: &SuiteOptions,
    observer: &dyn SuiteObserver,
    stop: &crate::engine::Controller,
) -> anyhow::Result<SuiteResult> {
    std::fs::create_dir_all(&opts.out_dir)
        .with_context(|| format!("--out: could not create '{}'", opts.out_dir.display()))?;
    let plan = phases(&opts.profile);
    let mut result = SuiteResult {
        schema_version: SUITE_SCHEMA_VERSION,
        tool: ToolInfo::spindle("1.0"),
        host: crate::sys::HostInfo::collect(),
        run_id: opts.run_id.clone(),
        started_at: crate::sys::clock::now_rfc3339(),
        finished_at: None,
        status: "running".into(),
        profile: serde_json::to_value(&opts.profile).expect("profile serialises"),
        targets: vec![],
        skipped: opts.skipped.clone(),
    };
    write_bundle(&opts.out_dir, &result)?;
    let total = plan.len() * opts.targets.len();
    let mut done = 0usize;
    let est: Vec<u64> = plan.iter().map(|p| p.estimate_s(&opts.profile)).collect();
    let est_total: u64 = est.iter().sum::<u64>() * opts.targets.len() as u64;
    let mut est_done = 0u64;

    for spec in &opts.targets {
        result.targets.push(TargetResult {
            name: spec.name.clone(),
            path: spec.dir.display().to_string(),
            kind: spec.kind.clone(),
            description: spec.description.clone(),
            disk: spec.disk.clone(),
            preparation: spec.preparation.clone(),
            state_before: None,
            state_after: None,
            samples: vec![],
            phases: vec![],
        });
        let ti = result.targets.len() - 1;
        let sampler = Sampler::start(opts.sysroot.clone(), opts.sample_interval);
        let mut run = match open_work_dir(&spec.dir) {
            Ok(work) => TargetRun {
                work,
                fileio_ok: vec![false; opts.profile.fileio.len()],
                server: None,
                oltp_prepared: None,
            },
            Err(e) => {
                result.targets[ti].phases.push(PhaseResult {
                    name: "setup".into(),
                    status: "failed".into(),
                    seconds: 0.0,
                    error: Some(format!("{e:#}")),
                    notes: vec![],
                    result: None,
                });
                observer.message(&format!("{}: {e:#}", spec.name));
                result.targets[ti].samples = sampler.finish();
                write_bundle(&opts.out_dir, &result)?;
                done += plan.len();
                continue;
            }
        };
        for (pi, phase) in plan.iter().enumerate() {
            let name = phase.name();
            let eta = est_total.saturating_sub(est_done);
            observer.phase_started(&spec.name, &name, done + 1, total, eta);
            let t0 = Instant::now();
            let stopped = stop.stop_requested();
            let pr = if stopped && !phase.is_cleanup() {
                PhaseResult {
                    name: name.clone(),
                    status: "aborted".into(),
                    seconds: 0.0,
                    error: Some("the run was stopped".into()),
                    notes: vec![],
                    result: None,
                }
            } else {
                let mut notes = Vec::new();
                let outcome = run_phase(
                    opts,
                    &mut run,
                    phase,
                    &mut notes,
                    &mut result.targets[ti],
                    stop,
                    observer,
                );
                let seconds = t0.elapsed().as_secs_f64();
                match outcome {
                    Ok(Outcome::Done(r)) => {
                        let status = match &r {
                            Some(b) if b.error.is_some() => "failed",
                            _ if stop.stop_requested() && phase.is_measurement() => "aborted",
                            _ => "ok",
                        };
                        let error = r.as_ref().and_then(|b| b.error.clone());
                        PhaseResult {
                            name: name.clone(),
                            status: status.into(),
                            seconds,
                            error,
                            notes,
                            result: r.map(|b| *b),
                        }
                    }
                    Ok(Outcome::Skipped(why)) => PhaseResult {
                        name: name.clone(),
                        status: "skipped".into(),
                        seconds,
                        error: Some(why),
                        notes,
                        result: None,
                    },
                    Err(e) => PhaseResult {
                        name: name.clone(),
                        status: "failed".into(),
                        seconds,
                        error: Some(format!("{e:#}")),
                        notes,
                        result: None,
                    },
                }
            };
            if let Some(r) = &pr.result {
                let text = render_test_text(opts, phase, r);
                let dir = opts.out_dir.join(&spec.name);
                let _ = std::fs::create_dir_all(&dir);
                if let Err(e) =
                    crate::sys::fs::write_atomic(&dir.join(format!("{name}.txt")), text.as_bytes())
                {
                    observer.message(&format!("could not write the report of {name}: {e:#}"));
                }
            }
            if pr.status == "failed" {
                observer.message(&format!(
                    "{} {name} failed: {}",
                    spec.name,
                    pr.error.as_deref().unwrap_or("")
                ));
            }
            observer.phase_finished(
                &spec.name,
                &name,
                pr.status == "ok" || pr.status == "skipped",
            );
            result.targets[ti].phases.push(pr);
            result.targets[ti].samples = sampler.snapshot();
            write_bundle(&opts.out_dir, &result)?;
            done += 1;
            est_done += est[pi];
        }
        result.targets[ti].samples = sampler.finish();
        // The work directory is ours (marker checked); remove what is left of it.
        if let Err(e) = std::fs::remove_dir_all(&run.work) {
            observer.message(&format!("could not remove '{}': {e}", run.work.display()));
        }
        write_bundle(&opts.out_dir, &result)?;
    }
    result.finished_at = Some(crate::sys::clock::now_rfc3339());
    result.status = if stop.stop_requested() {
        "aborted"
    } else {
        "complete"
    }
    .into();
    write_bundle(&opts.out_dir, &result)?;
    Ok(result)
}

/// Creates `<dir>/spindle-work` (or reuses one spindle left behind), refusing anything else.
fn open_work_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    if !dir.is_dir() {
        bail!(
            "--target '{}' is not a directory: create it first",
            dir.display()
        );
    }
    let work = dir.join("spindle-work");
    if work.exists() {
        if !work.join(WORK_MARKER).exists() {
            bail!(
                "'{}' exists and was not made by spindle: remove or rename it, or choose another --target",
                work.display()
            );
        }
        // Left over from an interrupted run: start clean.
        std::fs::remove_dir_all(&work)
            .with_context(|| format!("could not clear '{}'", work.display()))?;
    }
    std::fs::create_dir(&work).with_context(|| {
        format!(
            "could not create '{}' (is --target writable?)",
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

enum Outcome {
    Done(Option<Box<BenchResult>>),
    Skipped(String),
}

fn fileio_config(
    set: &FileioSet,
    work: &Path,
    index: usize,
    ram: u64,
) -> anyhow::Result<FileioConfig> {
    let dir = work.join(format!("fileio{index}"));
    let total = set.total_bytes(ram)?;
    Ok(FileioConfig {
        dir,
        file_num: set.file_num,
        block_size: crate::units::parse_size(&set.block_size).map_err(anyhow::Error::msg)?,
        total_size: total,
        extra_flags: crate::config::fileio::parse_extra_flags(&set.extra_flags)?,
        io_mode: set.io_mode,
        async_backlog: set.async_backlog,
        fill: set.fill,
        fsync_freq: set.fsync_freq,
        time_limit: (set.time > 0).then(|| Duration::from_secs(set.time)),
        events: set.events,
        compat: set.compat()?,
        ..Default::default()
    })
}

fn oltp_config(
    opts: &SuiteOptions,
    workload: Workload,
    threads: u32,
    client: &mysqld::ClientInfo,
) -> OltpConfig {
    let o = opts
        .profile
        .oltp
        .as_ref()
        .expect("plan has OLTP phases only with [oltp]");
    let mut cfg = OltpConfig {
        workload,
        tables: o.tables,
        table_size: o.table_size,
        threads,
        time_s: o.time,
        report_interval_s: o.report_interval,
        ..Default::default()
    };
    if let Some(rt) = &o.rand_type {
        if let Some(k) = [
            oltp::RandType::Uniform,
            oltp::RandType::Gaussian,
            oltp::RandType::Special,
            oltp::RandType::Pareto,
        ]
        .into_iter()
        .find(|k| k.name() == rt)
        {
            cfg.rand.kind = k;
        }
    }
    cfg.connection.socket = Some(client.socket.clone());
    cfg.connection.user = client.user.clone();
    cfg.connection.password = client.password.clone();
    cfg.connection.database = client.database.clone();
    cfg
}

fn server_spec(opts: &SuiteOptions, work: &Path) -> anyhow::Result<mysqld::ServerSpec> {
    let m = &opts.profile.mysqld;
    let mut settings = mysqld::MysqldSettings::default();
    if let Some(v) = &m.buffer_pool_size {
        settings.buffer_pool_size = Some(crate::units::parse_size(v).map_err(anyhow::Error::msg)?);
    }
    if let Some(v) = &m.log_file_size {
        settings.log_file_size = crate::units::parse_size(v).map_err(anyhow::Error::msg)?;
    }
    if let Some(v) = m.flush_log_at_trx_commit {
        settings.flush_log_at_trx_commit = v;
    }
    settings.extra = m.extra.clone();
    Ok(mysqld::ServerSpec {
        datadir: work.join("mysql"),
        flavor: opts.flavor,
        mysqld: opts.mysqld.clone(),
        settings,
        ..Default::default()
    })
}

fn block_on<F: std::future::Future>(f: F) -> anyhow::Result<F::Output> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(f))
}

/// Forwards the OLTP engine's progress lines to the suite observer.
struct OltpForward<'a>(&'a dyn SuiteObserver);
impl crate::engine::Observer for OltpForward<'_> {
    fn message(&self, line: &str) {
        self.0.message(line);
    }
}
// The observer is only used from the thread that calls the engine and its workers' callbacks.
unsafe impl Send for OltpForward<'_> {}

#[allow(clippy::too_many_arguments)]
fn run_phase(
    opts: &SuiteOptions,
    run: &mut TargetRun,
    phase: &Phase,
    notes: &mut Vec<String>,
    target: &mut TargetResult,
    stop: &crate::engine::Controller,
    observer: &dyn SuiteObserver,
) -> anyhow::Result<Outcome> {
    let ram = crate::sys::HostInfo::collect().ram_bytes;
    match *phase {
        Phase::SystemState { when } => {
            let s = state::snapshot(&opts.sysroot);
            if when == "before" {
                target.state_before = Some(s);
            } else {
                target.state_after = Some(s);
            }
            Ok(Outcome::Done(None))
        }
        Phase::FileioPrepare { set } => {
            let cfg = fileio_config(&opts.profile.fileio[set], &run.work, set, ram)?;
            std::fs::create_dir_all(&cfg.dir)?;
            fileio::prepare(
                &cfg,
                &crate::engine::Controller::new(),
                &crate::engine::Silent,
            )?;
            run.fileio_ok[set] = true;
            Ok(Outcome::Done(None))
        }
        Phase::FileioRun {
            set, mode, threads, ..
        } => {
            if !run.fileio_ok[set] {
                return Ok(Outcome::Skipped("fileio prepare failed".into()));
            }
            let fs = &opts.profile.fileio[set];
            let mut cfg = fileio_config(fs, &run.work, set, ram)?;
            cfg.test_mode = Some(mode);
            cfg.threads = threads;
            if cfg.io_mode == fileio::IoMode::Async {
                if let Err(e) = fileio::uring::Ring::new(1) {
                    return Ok(Outcome::Skipped(e.to_string()));
                }
            }
            if fs.drop_caches {
                if drop_caches() {
                    notes.push("page cache dropped before the run".into());
                } else {
                    notes.push("page cache not dropped (needs root)".into());
                }
            }
            let r = fileio::run(&cfg, stop, &crate::engine::Silent)?;
            let r = BenchResult::new(crate::report::TestOptions::Fileio(cfg.clone()), r);
            if mode == TestMode::Seqwr {
                // seqwr truncates and rewrites the files; give later modes full files again.
                if let Err(e) = fileio::prepare(
                    &FileioConfig {
                        test_mode: None,
                        ..cfg.clone()
                    },
                    &crate::engine::Controller::new(),
                    &crate::engine::Silent,
                ) {
                    run.fileio_ok[set] = false;
                    notes.push(format!("re-prepare after seqwr failed: {e:#}"));
                }
            }
            Ok(Outcome::Done(Some(Box::new(r))))
        }
        Phase::FileioCleanup { set } => {
            let cfg = fileio_config(&opts.profile.fileio[set], &run.work, set, ram)?;
            if cfg.dir.exists() {
                fileio::cleanup(&cfg, &crate::engine::Silent)?;
                let _ = std::fs::remove_dir(&cfg.dir);
            }
            Ok(Outcome::Done(None))
        }
        Phase::MysqldStart => {
            let spec_ = server_spec(opts, &run.work)?;
            mysqld::init(&spec_)?;
            let client = block_on(mysqld::start(&spec_))??;
            notes.push(format!("server socket {}", client.socket.display()));
            if let Ok(st) = mysqld::status(&spec_.datadir) {
                notes.push(format!("{} {}", st.flavor, st.version));
            }
            run.server = Some(client);
            Ok(Outcome::Done(None))
        }
        Phase::OltpPrepare { workload } => {
            let Some(client) = run.server.clone() else {
                return Ok(Outcome::Skipped("the server did not start".into()));
            };
            if !server_alive(&run.work) {
                return Ok(Outcome::Skipped(
                    "the server is not running any more".into(),
                ));
            }
            let o = opts.profile.oltp.as_ref().expect("oltp");
            let threads = o.threads.iter().copied().max().unwrap_or(1);
            let cfg = oltp_config(opts, workload, threads, &client);
            oltp::prepare(
                &cfg,
                &crate::engine::Controller::new(),
                &OltpForward(observer),
            )?;
            run.oltp_prepared = Some(workload);
            Ok(Outcome::Done(None))
        }
        Phase::OltpRun { workload, threads } => {
            let Some(client) = run.server.clone() else {
                return Ok(Outcome::Skipped("the server did not start".into()));
            };
            if run.oltp_prepared != Some(workload) {
                return Ok(Outcome::Skipped(format!(
                    "oltp {} prepare failed",
                    workload.name()
                )));
            }
            if !server_alive(&run.work) {
                return Ok(Outcome::Skipped(
                    "the server is not running any more".into(),
                ));
            }
            let cfg = oltp_config(opts, workload, threads, &client);
            let o = opts.profile.oltp.as_ref().expect("oltp");
            let bp = opts
                .profile
                .mysqld
                .buffer_pool_size
                .as_deref()
                .and_then(|s| crate::units::parse_size(s).ok());
            let data = o.tables as u64 * o.table_size as u64 * 250; // ≈ bytes per sbtest row on disk
            if let Some(bp) = bp {
                notes.push(format!(
                    "OLTP data set ≈ {} MiB vs buffer pool {} MiB: {}",
                    data >> 20,
                    bp >> 20,
                    if data > bp {
                        "I/O-bound"
                    } else {
                        "fits in memory (CPU-bound)"
                    }
                ));
            }
            if drop_caches() {
                notes.push("page cache dropped before the run".into());
            }
            let r = oltp::run(&cfg, stop, &OltpForward(observer))?;
            let mut r =
                BenchResult::new(crate::report::TestOptions::Oltp(Box::new(cfg.clone())), r);
            if r.error.is_none() && !server_alive(&run.work) {
                // The engine may have spent the end of the run trying to reconnect; a server
                // that is gone makes the numbers partial whatever the engine saw.
                r.error = Some(format!(
                    "the database server stopped during the run; last lines of its error log:\n{}",
                    error_log_tail(&run.work)
                ));
            }
            Ok(Outcome::Done(Some(Box::new(r))))
        }
        Phase::OltpCleanup { workload } => {
            let Some(client) = run.server.clone() else {
                return Ok(Outcome::Skipped("the server did not start".into()));
            };
            if !server_alive(&run.work) {
                return Ok(Outcome::Skipped(
                    "the server is not running any more".into(),
                ));
            }
            let cfg = oltp_config(opts, workload, 1, &client);
            oltp::cleanup(&cfg, &OltpForward(observer))?;
            run.oltp_prepared = None;
            Ok(Outcome::Done(None))
        }
        Phase::MysqldStop => {
            let datadir = run.work.join("mysql");
            if !datadir.exists() {
                return Ok(Outcome::Skipped("no server was provisioned".into()));
            }
            let out = block_on(mysqld::stop(&datadir, Duration::from_secs(300)))??;
            notes.push(out.to_string());
            run.server = None;
            Ok(Outcome::Done(None))
        }
    }
}

fn error_log_tail(work: &Path) -> String {
    mysqld::status(&work.join("mysql"))
        .ok()
        .and_then(|st| std::fs::read_to_string(st.error_log).ok())
        .map(|t| crate::sys::runner::tail_lines(&t, 5))
        .unwrap_or_else(|| "(error log not readable)".into())
}

fn server_alive(work: &Path) -> bool {
    mysqld::status(&work.join("mysql"))
        .map(|s| s.running)
        .unwrap_or(false)
}

/// The sysbench-style text of one test, written beside the bundle.
fn render_test_text(opts: &SuiteOptions, phase: &Phase, r: &BenchResult) -> String {
    use crate::report::{oltp_text, sysbench_text};
    match phase {
        Phase::FileioRun { mode, .. } => match &r.options {
            crate::report::TestOptions::Fileio(cfg) => format!(
                "{}{}",
                sysbench_text::fileio_header(cfg, *mode),
                sysbench_text::fileio_report(r, cfg)
            ),
            _ => r.to_json_pretty(),
        },
        Phase::OltpRun { .. } => {
            let iv = opts
                .profile
                .oltp
                .as_ref()
                .map(|o| o.report_interval)
                .unwrap_or(0);
            let mut s = oltp_text::run_header(r.threads, iv, 0);
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
        _ => String::new(),
    }
}

/// Samples temperature and throttling in the background while a target runs.
struct Sampler {
    samples: Arc<Mutex<Vec<state::StateSample>>>,
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    fn start(root: PathBuf, every: Duration) -> Self {
        let samples = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s2, st2) = (Arc::clone(&samples), Arc::clone(&stop));
        let handle = std::thread::Builder::new()
            .name("state-sampler".into())
            .spawn(move || {
                let t0 = Instant::now();
                let mut next = t0;
                while !st2.load(Ordering::Relaxed) {
                    if Instant::now() >= next {
                        let sample = state::sample(&root, t0.elapsed().as_secs_f64());
                        if sample.temp_c.is_some()
                            || sample.throttled.is_some()
                            || sample.undervoltage.is_some()
                        {
                            s2.lock().unwrap().push(sample);
                        }
                        next += every;
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            })
            .ok();
        Sampler {
            samples,
            stop,
            handle,
        }
    }
    fn snapshot(&self) -> Vec<state::StateSample> {
        self.samples.lock().unwrap().clone()
    }
    fn finish(mut self) -> Vec<state::StateSample> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.snapshot()
    }
}
