//! The state of one target while its phases run ([`TargetRun`]), what every phase gets
//! ([`Ctx`]), how a phase ended ([`Outcome`]), the engine chatter collected per phase, and the
//! private server's helpers the phases share (start spec, readiness, the data set against the
//! buffer pool, the error log).

use super::options::SuiteOptions;
use crate::engine::IntervalSample;
use crate::engine::{Controller, Observer};
use crate::model::BenchResult;
use crate::model::DataSetFit;
use crate::model::Regime;
use crate::oltp::{OltpConfig, Workload};
use crate::provision::mysqld;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the suite remembers about a target while its phases run.
pub struct TargetRun {
    pub work: PathBuf,
    /// Per fileio set: its files are prepared.
    pub(super) fileio_ok: Vec<bool>,
    pub(super) server: Option<mysqld::ClientInfo>,
    /// The buffer pool the server runs with now (the profile's, or a regime's).
    pub(super) buffer_pool: u64,
    /// A regime whose pass cannot run on this target, and why (its runs are skipped).
    pub(super) regime_skipped: Option<(Regime, String)>,
    /// The OLTP tables on the server, when prepared.
    pub(super) oltp_tables: Option<DataSet>,
    /// The TPC-C warehouses are loaded.
    pub(super) tpcc_loaded: bool,
    /// The flavor of the server the current step runs on, when the suite runs several.
    pub(super) server_label: Option<mysqld::Flavor>,
}

/// One OLTP data set: which workload it was prepared before, which ran on it since.
pub(super) struct DataSet {
    pub(super) prepared_for: Workload,
    pub(super) used_by: Vec<Workload>,
}

impl DataSet {
    /// How the tables a run starts on came to be, for its notes.
    pub(super) fn describe(&self) -> String {
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
            server_label: None,
        }
    }

    /// The datadir of the server the current step runs on: `mysql` in the work directory, or
    /// `mysql-<flavor>` when the suite runs several servers.
    pub fn datadir(&self) -> PathBuf {
        match self.server_label {
            Some(f) => self.work.join(format!("mysql-{}", f.key())),
            None => self.work.join("mysql"),
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

pub(super) fn ram_bytes() -> u64 {
    crate::sys::HostInfo::collect().ram_bytes
}

/// The spec of the server the current step runs on: the suite's only one, or the one of its
/// flavor.
pub(super) fn server_spec(ctx: &Ctx<'_>, run: &TargetRun) -> mysqld::ServerSpec {
    let servers = &ctx.opts.servers;
    let choice = servers
        .iter()
        .find(|c| run.server_label.is_some() && c.flavor == run.server_label)
        .or(servers.first())
        .cloned()
        .unwrap_or_default();
    mysqld::ServerSpec {
        datadir: run.datadir(),
        flavor: choice.flavor,
        mysqld: choice.mysqld,
        settings: ctx.opts.profile.mysqld.clone(),
        ..Default::default()
    }
}

/// The server's login, or why OLTP or TPC-C cannot run.
pub(super) fn server_ready(run: &TargetRun) -> Result<mysqld::ClientInfo, String> {
    let Some(client) = run.server.clone() else {
        return Err("the database server did not start".into());
    };
    if !server_alive(&run.datadir()) {
        return Err("the database server stopped earlier in the run".into());
    }
    Ok(client)
}

/// The server's login ([`server_ready`]); when there is none, returns from the phase as
/// skipped, with the reason.
macro_rules! ready_or_skip {
    ($run:expr) => {
        match $crate::run::target_run::server_ready($run) {
            Ok(c) => c,
            Err(why) => return Ok($crate::run::target_run::Outcome::Skipped(why)),
        }
    };
}
pub(super) use ready_or_skip;

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

/// The private server's buffer pool, as the profile sets it or the default for this machine.
pub(super) fn buffer_pool_bytes(ctx: &Ctx<'_>) -> u64 {
    ctx.opts
        .profile
        .mysqld
        .buffer_pool_size
        .unwrap_or_else(|| mysqld::config::default_buffer_pool_size(ram_bytes()))
}

/// The error of a run whose server is gone, with the end of the server's error log.
pub(super) fn server_stopped_error(datadir: &Path) -> String {
    format!(
        "the database server stopped during the run; last lines of its error log:\n{}",
        error_log_tail(datadir)
    )
}

/// The benchmark database's data set against the buffer pool the server runs with: the size
/// of its table files (`<datadir>/<database>/*.ibd`) right now, or `estimate` when they
/// cannot be read.
pub(super) fn data_set(run: &TargetRun, client: &mysqld::ClientInfo, estimate: u64) -> DataSetFit {
    let measured = table_files_bytes(&run.datadir().join(&client.database));
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

fn error_log_tail(datadir: &Path) -> String {
    mysqld::status(datadir)
        .ok()
        .and_then(|st| std::fs::read_to_string(st.error_log).ok())
        .map(|t| crate::sys::runner::tail_lines(&t, 5))
        .unwrap_or_else(|| "(error log not readable)".into())
}

pub(super) fn server_alive(datadir: &Path) -> bool {
    mysqld::status(datadir).map(|s| s.running).unwrap_or(false)
}
