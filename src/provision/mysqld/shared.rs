//! What the server helpers share, below all of them: the errors callers tell apart, what a
//! server is asked to be (`ServerSpec`), what `status` and `client_info` return, how a stop
//! went, and the small readers every step uses (the init record, a path as an argument).

use super::config::MysqldSettings;
pub use super::error::MysqldError;
use super::layout::{self, Credentials, Layout, ServerRecord};
use super::version::{self, parse_version, Flavor, ServerBinary, ServerVersion};
use crate::sys::runner::{which, CommandRunner};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(super) const MIB: u64 = 1024 * 1024;
/// Name of the benchmark database and user created at start.
pub const BENCH_DB: &str = "sbtest";
/// Lines of the error log quoted in errors.
pub(super) const LOG_TAIL_LINES: usize = 25;

/// How to initialise and start one server. Plain config; the CLI and the appliance fill it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSpec {
    /// The data directory (created by `init`; must be new or empty then).
    pub datadir: PathBuf,
    /// Force the flavor instead of detecting it from `--version`.
    pub flavor: Option<Flavor>,
    /// Server program to use instead of `mariadbd`/`mysqld` from PATH.
    pub mysqld: Option<PathBuf>,
    /// my.cnf values; used by `init` (which writes my.cnf), `start` uses the file as is.
    pub settings: MysqldSettings,
    /// None: unix socket only (`skip-networking`); Some(port): also TCP on 127.0.0.1:port.
    /// Used by `init` (written to my.cnf).
    pub tcp_port: Option<u16>,
    /// How long `start` waits for the server to answer on its socket.
    pub start_timeout: Duration,
}

impl Default for ServerSpec {
    fn default() -> Self {
        ServerSpec {
            datadir: PathBuf::new(),
            flavor: None,
            mysqld: None,
            settings: MysqldSettings::default(),
            tcp_port: None,
            start_timeout: Duration::from_secs(120),
        }
    }
}

/// How a client reaches the benchmark database of a running server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientInfo {
    /// Unix socket (always available).
    pub socket: PathBuf,
    /// `127.0.0.1` when the server also listens on TCP.
    pub host: Option<String>,
    /// TCP port when the server listens on TCP.
    pub port: Option<u16>,
    /// Benchmark user (`sbtest`).
    pub user: String,
    /// Its random password (also in `credentials.json`).
    pub password: String,
    /// Benchmark database (`sbtest`).
    pub database: String,
}

/// What `status` reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerStatus {
    /// The data directory (absolute).
    pub datadir: PathBuf,
    /// Whether this datadir's server process is alive.
    pub running: bool,
    /// Its pid when running.
    pub pid: Option<u32>,
    /// Flavor recorded at init.
    pub flavor: Flavor,
    /// `major.minor.patch`, recorded at init.
    pub version: String,
    /// Unix socket path (from my.cnf).
    pub socket: PathBuf,
    /// TCP port on 127.0.0.1, if my.cnf enables networking.
    pub tcp_port: Option<u16>,
    /// The my.cnf path.
    pub config: PathBuf,
    /// The error log path.
    pub error_log: PathBuf,
    /// The server program recorded at init.
    pub mysqld: PathBuf,
}

/// How `stop` ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StopOutcome {
    /// Nothing was running.
    NotRunning,
    /// Clean shutdown after SIGTERM.
    Stopped { pid: u32, waited: Duration },
    /// Did not stop within the timeout: killed with SIGKILL (InnoDB will run crash recovery at
    /// the next start).
    Killed { pid: u32, waited: Duration },
}

impl fmt::Display for StopOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopOutcome::NotRunning => write!(f, "the server was not running; nothing to stop"),
            StopOutcome::Stopped { pid, waited } => {
                write!(f, "server (pid {pid}) shut down cleanly in {:.1} s", waited.as_secs_f64())
            }
            StopOutcome::Killed { pid, waited } => write!(
                f,
                "warning: server (pid {pid}) did not shut down within {:.1} s and was killed (SIGKILL); InnoDB will run crash recovery at the next start",
                waited.as_secs_f64()
            ),
        }
    }
}

pub(super) fn path_arg(p: &Path) -> anyhow::Result<&str> {
    p.to_str().with_context(|| {
        format!(
            "path '{}' is not valid UTF-8; use a plain path",
            p.display()
        )
    })
}

/// The record `init` wrote; a missing one means init never finished.
pub(super) fn read_record(l: &Layout) -> anyhow::Result<ServerRecord> {
    if !l.server_json.exists() {
        return Err(MysqldError::NotInitialised {
            datadir: l.datadir.clone(),
            config: l.server_json.clone(),
        }
        .into());
    }
    layout::read_json(&l.server_json)
}

pub(super) fn client_info_of(l: &Layout, c: &Credentials) -> ClientInfo {
    let port = l.tcp_port();
    ClientInfo {
        socket: l.socket.clone(),
        host: port.map(|_| "127.0.0.1".to_string()),
        port,
        user: c.user.clone(),
        password: c.password.clone(),
        database: c.database.clone(),
    }
}

/// Finds the server program and reads its flavor and version (`--flavor` overrides the flavor
/// of a program given by path). Asked for a flavor without a path, it takes the first of
/// `mariadbd`/`mysqld` in PATH that *is* that flavor: on a machine with MariaDB, `mysqld` is
/// MariaDB's alias, and a MySQL run must not quietly measure MariaDB.
pub fn detect(spec: &ServerSpec) -> anyhow::Result<ServerBinary> {
    let (mysqld, text, detected, version) = match &spec.mysqld {
        Some(p) => {
            let found = which(&p.to_string_lossy()).filter(|p| p.is_file());
            let mysqld = found.with_context(|| {
                format!(
                    "--mysqld '{}' does not exist or is not a file: give the path of mariadbd or mysqld",
                    p.display()
                )
            })?;
            let (text, detected, version) = probe(&mysqld)?;
            (mysqld, text, detected, version)
        }
        None => find_in_path(spec.flavor)?,
    };
    let flavor = spec.flavor.unwrap_or(detected);
    let install_db = match flavor {
        Flavor::MariaDb => version::find_install_db(&mysqld),
        Flavor::MySql | Flavor::Percona => None,
    };
    Ok(ServerBinary {
        flavor,
        version,
        version_text: text.lines().next().unwrap_or("").trim().to_string(),
        mysqld,
        install_db,
    })
}

/// Runs `mysqld --version`: its first line, flavor and version.
fn probe(mysqld: &Path) -> anyhow::Result<(String, Flavor, ServerVersion)> {
    let prog = path_arg(mysqld)?;
    let text = CommandRunner::new()
        .stdout(prog, &["--version"])
        .with_context(|| format!("could not ask '{}' for its version", mysqld.display()))?;
    let (detected, version) = parse_version(&text).with_context(|| {
        format!(
            "'{}' does not look like a MySQL-family server; pass --mysqld PATH",
            mysqld.display()
        )
    })?;
    Ok((text, detected, version))
}

/// The first of `mariadbd`, `mysqld` in PATH (and the sbin folders) that is of `want`, or of any
/// flavor when `want` is `None`. Errors say what was found instead and how to name the program.
fn find_in_path(want: Option<Flavor>) -> anyhow::Result<(PathBuf, String, Flavor, ServerVersion)> {
    let mut seen: Vec<String> = Vec::new();
    let mut paths: Vec<PathBuf> = Vec::new();
    for name in ["mariadbd", "mysqld"] {
        match which(name) {
            // `mysqld` is often a symlink to `mariadbd`: one program, asked once.
            Some(p) if !paths.iter().any(|q| same_file(q, &p)) => paths.push(p),
            _ => {}
        }
    }
    if paths.is_empty() {
        return Err(MysqldError::NotInstalled.into());
    }
    for p in paths {
        let (text, detected, version) = probe(&p)?;
        if want.is_none_or(|w| w == detected) {
            return Ok((p, text, detected, version));
        }
        seen.push(format!("'{}' is {detected} {version}", p.display()));
    }
    let want = want.expect("a flavor was asked for");
    anyhow::bail!(
        "no {want} in PATH, /usr/sbin or /usr/local/sbin ({}): install one, or give its program with --mysqld PATH (spindle.toml: [mysqld.binaries] {} = \"PATH\")",
        seen.join(", "),
        want.key()
    )
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
