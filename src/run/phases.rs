//! What each phase does on one target: the engines called with the profile's typed settings,
//! the private server started and stopped, the system state recorded, and the facts about how a
//! phase ran (notes). Engine progress lines are collected per phase ([`Chatter`]) for its text
//! file instead of going to the screen.

use super::suite::SuiteOptions;
use crate::engine::IntervalSample;
use crate::engine::{Controller, Observer};
use crate::fileio::{self, TestMode};
use crate::model::{BenchResult, TestOptions};
use crate::model::{DataSetFit, PhaseResult, ServerInfo, TargetResult};
use crate::model::{Phase, Regime, When};
use crate::oltp::{self, OltpConfig, Workload};
use crate::provision::mysqld;
use crate::sys::state;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// What the suite remembers about a target while its phases run.
pub struct TargetRun {
    pub work: PathBuf,
    /// Per fileio set: its files are prepared.
    fileio_ok: Vec<bool>,
    pub(super) server: Option<mysqld::ClientInfo>,
    /// The buffer pool the server runs with now (the profile's, or a regime's).
    pub(super) buffer_pool: u64,
    /// A regime whose pass cannot run on this target, and why (its runs are skipped).
    pub(super) regime_skipped: Option<(Regime, String)>,
    /// The OLTP tables on the server, when prepared.
    oltp_tables: Option<DataSet>,
    /// The TPC-C warehouses are loaded.
    pub(super) tpcc_loaded: bool,
}

/// One OLTP data set: which workload it was prepared before, which ran on it since.
struct DataSet {
    prepared_for: Workload,
    used_by: Vec<Workload>,
}

impl DataSet {
    /// How the tables a run starts on came to be, for its notes.
    fn describe(&self) -> String {
        if self.used_by.is_empty() {
            format!(
                "OLTP tables freshly prepared (oltp-{}-prepare)",
                self.prepared_for.name()
            )
        } else {
            let used: Vec<&str> = self.used_by.iter().map(|w| w.name()).collect();
            format!(
                "OLTP tables prepared before {}, used since by {}",
                self.prepared_for.name(),
                used.join(", ")
            )
        }
    }
}

impl TargetRun {
    pub fn new(work: PathBuf, fileio_sets: usize) -> Self {
        TargetRun {
            work,
            fileio_ok: vec![false; fileio_sets],
            server: None,
            buffer_pool: 0,
            regime_skipped: None,
            oltp_tables: None,
            tpcc_loaded: false,
        }
    }
}

/// How a phase ended when it did not fail outright.
pub enum Outcome {
    /// It ran; a measurement carries its result (with `error` set when it ended early).
    Done(Option<Box<BenchResult>>),
    /// It did not run because something it needs is missing; the reason.
    Skipped(String),
    /// TPC-C's consistency check ran (its conditions may have failed).
    Checked(Box<crate::tpcc::CheckReport>),
}

/// Collects what an engine says during one phase (for the phase's text file).
#[derive(Default)]
pub struct Chatter {
    lines: Mutex<Vec<String>>,
}

impl Chatter {
    /// Everything said, one line each.
    pub fn text(&self) -> String {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let mut s = String::new();
        for l in lines.iter() {
            s.push_str(l);
            if !l.ends_with('\n') {
                s.push('\n');
            }
        }
        s
    }
}

impl Observer for Chatter {
    fn message(&self, line: &str) {
        self.lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(line.to_string());
    }
    fn interval(&self, _sample: &IntervalSample) {}
}

/// What every phase of a target gets.
pub struct Ctx<'a> {
    pub opts: &'a SuiteOptions,
    pub controller: &'a Controller,
    pub chatter: &'a Chatter,
}

/// Runs `phase`. `pr` receives facts about how it ran (notes, the page cache, the data set);
/// `target` what the phase records about the target itself (system state, server).
pub fn run_phase(
    ctx: &Ctx<'_>,
    run: &mut TargetRun,
    phase: &Phase,
    pr: &mut PhaseResult,
    target: &mut TargetResult,
) -> anyhow::Result<Outcome> {
    match *phase {
        Phase::SystemState { when } => {
            let s = state::snapshot(ctx.opts.sys.root.root());
            match when {
                When::Before => target.state_before = Some(s),
                When::After => target.state_after = Some(s),
            }
            Ok(Outcome::Done(None))
        }
        Phase::FileioPrepare { set } => fileio_prepare(ctx, run, set),
        Phase::FileioRun {
            set, mode, threads, ..
        } => fileio_run(ctx, run, set, mode, threads, pr),
        Phase::FileioCleanup { set } => {
            let cfg = fileio_config(ctx, run, set, None, 1);
            if cfg.dir.exists() {
                fileio::cleanup(&cfg, ctx.chatter)?;
                let _ = std::fs::remove_dir(&cfg.dir);
            }
            Ok(Outcome::Done(None))
        }
        Phase::MysqldStart => mysqld_start(ctx, run, pr, target),
        Phase::MysqldRestart { regime } => super::regimes::restart(ctx, run, regime, pr),
        Phase::OltpPrewarm => super::regimes::prewarm(ctx, run, pr),
        Phase::OltpPrepare { workload } => oltp_prepare(ctx, run, workload),
        Phase::OltpRun {
            workload,
            threads,
            regime,
        } => oltp_run(ctx, run, (workload, threads, regime), pr),
        Phase::OltpCleanup { workload } => {
            let client = match server_ready(run) {
                Ok(c) => c,
                Err(why) => return Ok(Outcome::Skipped(why)),
            };
            let cfg = oltp_config(ctx, workload, 1, &client);
            oltp::cleanup(&cfg, ctx.chatter)?;
            run.oltp_tables = None;
            Ok(Outcome::Done(None))
        }
        Phase::TpccPrepare => super::tpcc::prepare(ctx, run),
        Phase::TpccRun { .. } => super::tpcc::run(ctx, run, pr),
        Phase::TpccCheck => super::tpcc::check(ctx, run),
        Phase::TpccCleanup => super::tpcc::cleanup(ctx, run),
        Phase::MysqldStop => {
            let datadir = run.work.join("mysql");
            if !datadir.exists() {
                return Ok(Outcome::Skipped("no server was provisioned".into()));
            }
            let out = block_on(mysqld::stop(&datadir, Duration::from_secs(300)))??;
            pr.notes.push(out.to_string());
            run.server = None;
            Ok(Outcome::Done(None))
        }
    }
}

fn ram_bytes() -> u64 {
    crate::sys::HostInfo::collect().ram_bytes
}

/// The engine config of a fileio run of set `set` in the target's work directory.
fn fileio_config(
    ctx: &Ctx<'_>,
    run: &TargetRun,
    set: usize,
    mode: Option<TestMode>,
    threads: u32,
) -> fileio::FileioConfig {
    ctx.opts.profile.fileio[set].config(
        run.work.join(format!("fileio{set}")),
        ram_bytes(),
        mode,
        threads,
    )
}

fn fileio_prepare(ctx: &Ctx<'_>, run: &mut TargetRun, set: usize) -> anyhow::Result<Outcome> {
    let cfg = fileio_config(ctx, run, set, None, 1);
    std::fs::create_dir_all(&cfg.dir)?;
    fileio::prepare(&cfg, ctx.controller, ctx.chatter)?;
    run.fileio_ok[set] = true;
    Ok(Outcome::Done(None))
}

fn fileio_run(
    ctx: &Ctx<'_>,
    run: &mut TargetRun,
    set: usize,
    mode: TestMode,
    threads: u32,
    pr: &mut PhaseResult,
) -> anyhow::Result<Outcome> {
    if !run.fileio_ok[set] {
        return Ok(Outcome::Skipped(
            "the fileio files were not prepared".into(),
        ));
    }
    let cfg = fileio_config(ctx, run, set, Some(mode), threads);
    if cfg.io_mode == fileio::IoMode::Async {
        // Kernels without io_uring (or with it disabled): skipped, saying why and the fix.
        if let Err(e) = fileio::uring::Ring::new(1) {
            return Ok(Outcome::Skipped(e.to_string()));
        }
    }
    if ctx.opts.profile.fileio[set].drop_caches {
        pr.caches_dropped = Some(crate::sys::drop_caches());
    }
    let m = fileio::run(&cfg, ctx.controller, ctx.chatter)?;
    if mode == TestMode::Seqwr {
        // seqwr truncates and rewrites the files; give later modes full files again.
        let again = fileio_config(ctx, run, set, None, 1);
        if let Err(e) = fileio::prepare(&again, ctx.controller, ctx.chatter) {
            run.fileio_ok[set] = false;
            pr.notes
                .push(format!("re-prepare after seqwr failed: {e:#}"));
        }
    }
    Ok(Outcome::Done(Some(Box::new(BenchResult::new(
        TestOptions::Fileio(cfg),
        m,
    )))))
}

pub(super) fn server_spec(ctx: &Ctx<'_>, work: &Path) -> mysqld::ServerSpec {
    mysqld::ServerSpec {
        datadir: work.join("mysql"),
        flavor: ctx.opts.server.flavor,
        mysqld: ctx.opts.server.mysqld.clone(),
        settings: ctx.opts.profile.mysqld.clone(),
        ..Default::default()
    }
}

/// The my.cnf settings recorded with the results: the ones that change the numbers.
const SETTINGS_THAT_MATTER: &[&str] = &[
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_redo_log_capacity",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_method",
    "innodb_doublewrite",
    "innodb_io_capacity",
    "sync_binlog",
    "log_bin",
    "skip_log_bin",
    "binlog_format",
    "max_connections",
];

fn mysqld_start(
    ctx: &Ctx<'_>,
    run: &mut TargetRun,
    pr: &mut PhaseResult,
    target: &mut TargetResult,
) -> anyhow::Result<Outcome> {
    let spec = server_spec(ctx, &run.work);
    mysqld::init(&spec)?;
    let client = block_on(mysqld::start(&spec))??;
    // Where the server listened is for the phase's log, not the report (it is gone after).
    ctx.chatter
        .message(&format!("server socket {}", client.socket.display()));
    run.buffer_pool = buffer_pool_bytes(ctx);
    if let Ok(st) = mysqld::status(&spec.datadir) {
        pr.notes.push(format!("{} {}", st.flavor, st.version));
        let cnf = std::fs::read_to_string(&st.config)
            .map(|t| mysqld::config::parse_cnf_section(&t, "mysqld"))
            .unwrap_or_default();
        target.server = Some(ServerInfo {
            flavor: st.flavor.to_string(),
            version: st.version.clone(),
            settings: cnf
                .into_iter()
                .filter(|(k, _)| SETTINGS_THAT_MATTER.contains(&k.replace('-', "_").as_str()))
                .collect(),
        });
    }
    run.server = Some(client);
    Ok(Outcome::Done(None))
}

/// The server's login, or why OLTP or TPC-C cannot run.
pub(super) fn server_ready(run: &TargetRun) -> Result<mysqld::ClientInfo, String> {
    let Some(client) = run.server.clone() else {
        return Err("the database server did not start".into());
    };
    if !server_alive(&run.work) {
        return Err("the database server stopped earlier in the run".into());
    }
    Ok(client)
}

pub(super) fn oltp_config(
    ctx: &Ctx<'_>,
    workload: Workload,
    threads: u32,
    client: &mysqld::ClientInfo,
) -> OltpConfig {
    let o = ctx
        .opts
        .profile
        .oltp
        .as_ref()
        .expect("the plan has OLTP phases only with [oltp]");
    let mut cfg = OltpConfig {
        workload,
        threads,
        ..o.base.clone()
    };
    cfg.connection.socket = Some(client.socket.clone());
    cfg.connection.user = client.user.clone();
    cfg.connection.password = client.password.clone();
    cfg.connection.database = client.database.clone();
    cfg
}

fn oltp_prepare(ctx: &Ctx<'_>, run: &mut TargetRun, workload: Workload) -> anyhow::Result<Outcome> {
    let client = match server_ready(run) {
        Ok(c) => c,
        Err(why) => return Ok(Outcome::Skipped(why)),
    };
    let o = ctx.opts.profile.oltp.as_ref().expect("oltp");
    let threads = o.threads.iter().copied().max().unwrap_or(1);
    let cfg = oltp_config(ctx, workload, threads, &client);
    oltp::prepare(&cfg, ctx.controller, ctx.chatter)?;
    run.oltp_tables = Some(DataSet {
        prepared_for: workload,
        used_by: vec![],
    });
    Ok(Outcome::Done(None))
}

/// One OLTP run: (workload, threads, the regime of a two-regime profile).
fn oltp_run(
    ctx: &Ctx<'_>,
    run: &mut TargetRun,
    (workload, threads, regime): (Workload, u32, Option<Regime>),
    pr: &mut PhaseResult,
) -> anyhow::Result<Outcome> {
    let client = match server_ready(run) {
        Ok(c) => c,
        Err(why) => return Ok(Outcome::Skipped(why)),
    };
    if let Some((skipped, why)) = &run.regime_skipped {
        if Some(*skipped) == regime {
            return Ok(Outcome::Skipped(why.clone()));
        }
    }
    let Some(tables) = run.oltp_tables.as_mut() else {
        return Ok(Outcome::Skipped("the OLTP tables were not prepared".into()));
    };
    pr.notes.push(tables.describe());
    if !tables.used_by.contains(&workload) {
        tables.used_by.push(workload);
    }
    let cfg = oltp_config(ctx, workload, threads, &client);
    let estimate = oltp::estimated_data_bytes(cfg.tables, cfg.table_size);
    pr.data_set = Some(data_set(run, &client, estimate));
    pr.caches_dropped = Some(crate::sys::drop_caches());
    let m = oltp::run(&cfg, ctx.controller, ctx.chatter)?;
    let mut r = BenchResult::new(TestOptions::Oltp(Box::new(cfg)), m);
    if r.error.is_none() && !server_alive(&run.work) {
        // The engine may have spent the end of the run trying to reconnect; a server that is
        // gone makes the numbers partial whatever the engine saw.
        r.error = Some(server_stopped_error(&run.work));
    }
    Ok(Outcome::Done(Some(Box::new(r))))
}

/// The private server's buffer pool, as the profile sets it or the default for this machine.
pub(super) fn buffer_pool_bytes(ctx: &Ctx<'_>) -> u64 {
    ctx.opts
        .profile
        .mysqld
        .buffer_pool_size
        .unwrap_or_else(|| mysqld::config::default_buffer_pool_size(ram_bytes()))
}

/// The error of a run whose server is gone, with the end of the server's error log.
pub(super) fn server_stopped_error(work: &Path) -> String {
    format!(
        "the database server stopped during the run; last lines of its error log:\n{}",
        error_log_tail(work)
    )
}

/// The benchmark database's data set against the buffer pool the server runs with: the size
/// of its table files (`<datadir>/<database>/*.ibd`) right now, or `estimate` when they
/// cannot be read.
pub(super) fn data_set(run: &TargetRun, client: &mysqld::ClientInfo, estimate: u64) -> DataSetFit {
    let measured = table_files_bytes(&run.work.join("mysql").join(&client.database));
    DataSetFit {
        data_bytes: measured.unwrap_or(estimate),
        measured: measured.is_some(),
        buffer_pool_bytes: run.buffer_pool,
    }
}

/// The bytes of the InnoDB table files in a database directory (`None` if it has none).
pub(super) fn table_files_bytes(dir: &Path) -> Option<u64> {
    let total: u64 = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "ibd"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    (total > 0).then_some(total)
}

pub(super) fn block_on<F: std::future::Future>(f: F) -> anyhow::Result<F::Output> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(f))
}

fn error_log_tail(work: &Path) -> String {
    mysqld::status(&work.join("mysql"))
        .ok()
        .and_then(|st| std::fs::read_to_string(st.error_log).ok())
        .map(|t| crate::sys::runner::tail_lines(&t, 5))
        .unwrap_or_else(|| "(error log not readable)".into())
}

pub(super) fn server_alive(work: &Path) -> bool {
    mysqld::status(&work.join("mysql"))
        .map(|s| s.running)
        .unwrap_or(false)
}
