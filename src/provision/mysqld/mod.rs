//! The private MySQL-family server: flavor detection, datadir init, my.cnf, start/stop/status.
//!
//! # On-disk layout
//! For a datadir `/mnt/disk1/mysql`, spindle keeps everything else in a *run directory* beside
//! it (never inside it, so the datadir stays a plain server datadir):
//! ```text
//! /mnt/disk1/mysql/                 the datadir (initialised by the flavor's own tool)
//! /mnt/disk1/mysql.spindle/
//!     my.cnf                        generated at init; `start` uses it as is (edit to tune)
//!     server.json                   server binary, flavor, version, run-as user (from init)
//!     credentials.json              mode 0600: sbtest and root passwords (first start)
//!     error.log                     the server's log-error (also its stdout/stderr)
//!     mysqld.pid, mysqld.sock       pid file and unix socket
//!     tmp/                          tmpdir (same disk as the datadir, as in the article)
//!     binlog/                       binary logs (mysql-bin.*)
//! ```
//! If `<run dir>/mysqld.sock` would be longer than 100 bytes (the unix socket limit is 107),
//! the socket goes to `/tmp/spindle-<hash of the run dir>/mysqld.sock`; `my.cnf` records it.
//!
//! # Rules
//! - `init` refuses a datadir that exists and is not empty (an initialised one included): it
//!   never touches existing data. It needs [`required_free_bytes`] free on the datadir's
//!   filesystem (256 MiB plus twice `innodb_log_file_size`; 384 MiB with the defaults).
//! - As root the server runs as `mysql` when that user exists (spindle chowns the datadir and
//!   run dir), else with `--user=root`; as a normal user it runs as that user.
//! - The root account gets a random password at first start (stored in `credentials.json`);
//!   the benchmark login is `sbtest` with its own random password, database `sbtest`.
//! - `stop` sends SIGTERM (a clean InnoDB shutdown), waits, then SIGKILLs with a warning.

pub mod command;
pub mod config;
mod init;
pub mod layout;
mod process;
mod start;
mod user;
pub mod version;

pub use config::MysqldSettings;
pub use init::{free_bytes, init, required_free_bytes};
pub use layout::{Credentials, Layout, ServerRecord};
pub use process::{stop, stop_blocking};
pub use start::{random_password, start};
pub use version::{parse_version, Flavor, ServerBinary, ServerVersion};

#[allow(unused_imports)]
use {init::*, process::*, start::*, user::*};

use crate::sys::runner::{display_command, tail_lines, which, CommandRunner};
use anyhow::{bail, Context};
use mysql_async::prelude::Queryable as _;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::io::{Read as _, Seek as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const MIB: u64 = 1024 * 1024;
/// Name of the benchmark database and user created at start.
pub const BENCH_DB: &str = "sbtest";
/// Lines of the error log quoted in errors.
const LOG_TAIL_LINES: usize = 25;

/// The errors a caller may want to tell apart (they arrive inside `anyhow::Error`; use
/// `downcast_ref::<MysqldError>()`). Each message names the path and the fix.
#[derive(Debug, thiserror::Error)]
pub enum MysqldError {
    /// No server program found.
    #[error("no MySQL-family server is installed: neither 'mariadbd' nor 'mysqld' is in PATH, /usr/sbin or /usr/local/sbin; install one (Debian/Raspberry Pi OS: `apt install mariadb-server`; or MySQL / Percona Server) or pass --mysqld PATH")]
    NotInstalled,
    /// `start` on something that is not an initialised MySQL datadir.
    #[error("'{path}' is not a MySQL data directory ({reason}); create one with `spindle mysqld init --datadir {path}`")]
    NotADatadir { path: PathBuf, reason: String },
    /// A datadir without spindle's config beside it.
    #[error("'{datadir}' was not initialised by spindle: '{config}' is missing; run `spindle mysqld init --datadir {datadir}` (on a new or empty directory)")]
    NotInitialised { datadir: PathBuf, config: PathBuf },
    /// `init` on a non-empty directory.
    #[error("'{path}' {what}; spindle initialises only a new or empty directory and never touches existing data: {fix}")]
    NotEmpty {
        path: PathBuf,
        what: String,
        fix: String,
    },
    /// Too little free space for a datadir.
    #[error("not enough free space for a datadir at '{path}': {free_mib} MiB free, at least {need_mib} MiB needed; free some space, choose a bigger disk, or lower --log-file-size")]
    NoSpace {
        path: PathBuf,
        free_mib: u64,
        need_mib: u64,
    },
    /// `start` while the server already runs.
    #[error("the server for '{datadir}' is already running (pid {pid}); stop it first with `spindle mysqld stop --datadir {datadir}`")]
    AlreadyRunning { datadir: PathBuf, pid: u32 },
    /// The server is needed but not running.
    #[error("the server for '{datadir}' is not running; start it with `spindle mysqld start --datadir {datadir}`")]
    NotRunning { datadir: PathBuf },
    /// The server exited during start.
    #[error(
        "the server exited during start ({status}); last lines of its error log '{log}':\n{tail}"
    )]
    ServerDied {
        status: String,
        log: PathBuf,
        tail: String,
    },
    /// The server did not answer within the start timeout.
    #[error("the server did not answer on '{socket}' within {secs} s (it was stopped again); raise --timeout if the disk is slow; last lines of its error log '{log}':\n{tail}")]
    NotReady {
        socket: PathBuf,
        secs: u64,
        log: PathBuf,
        tail: String,
    },
}

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

/// Finds the server program and reads its flavor and version (`--flavor` overrides the flavor).
pub fn detect(spec: &ServerSpec) -> anyhow::Result<ServerBinary> {
    let mysqld = match &spec.mysqld {
        Some(p) => {
            let found = which(&p.to_string_lossy()).filter(|p| p.is_file());
            found.with_context(|| {
                format!(
                    "--mysqld '{}' does not exist or is not a file: give the path of mariadbd or mysqld",
                    p.display()
                )
            })?
        }
        None => ["mariadbd", "mysqld"]
            .iter()
            .find_map(|n| which(n))
            .ok_or(MysqldError::NotInstalled)?,
    };
    let prog = path_arg(&mysqld)?;
    let text = CommandRunner::new()
        .stdout(prog, &["--version"])
        .with_context(|| format!("could not ask '{}' for its version", mysqld.display()))?;
    let (detected, version) = parse_version(&text).with_context(|| {
        format!(
            "'{}' does not look like a MySQL-family server; pass --mysqld PATH",
            mysqld.display()
        )
    })?;
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

fn path_arg(p: &Path) -> anyhow::Result<&str> {
    p.to_str().with_context(|| {
        format!(
            "path '{}' is not valid UTF-8; use a plain path",
            p.display()
        )
    })
}

/// The record `init` wrote; a missing one means init never finished.
fn read_record(l: &Layout) -> anyhow::Result<ServerRecord> {
    if !l.server_json.exists() {
        return Err(MysqldError::NotInitialised {
            datadir: l.datadir.clone(),
            config: l.server_json.clone(),
        }
        .into());
    }
    layout::read_json(&l.server_json)
}

/// Running or not, pid, flavor, version, socket of the server of `datadir`.
/// Sets `key = value` in the `[mysqld]` section of a managed server's my.cnf (the next start
/// uses it); the file is rewritten atomically.
pub fn set_setting(datadir: &Path, key: &str, value: &str) -> anyhow::Result<()> {
    let l = Layout::load(datadir)?;
    let text = std::fs::read_to_string(&l.my_cnf)
        .with_context(|| format!("could not read '{}'", l.my_cnf.display()))?;
    let new = config::set_cnf_value(&text, "mysqld", key, value);
    crate::sys::fs::write_atomic(&l.my_cnf, new.as_bytes())
}

pub fn status(datadir: &Path) -> anyhow::Result<ServerStatus> {
    let l = Layout::load(datadir)?;
    let record = read_record(&l)?;
    let pid = running_pid(&l);
    Ok(ServerStatus {
        datadir: l.datadir.clone(),
        running: pid.is_some(),
        pid,
        flavor: record.binary.flavor,
        version: record.binary.version.to_string(),
        socket: l.socket.clone(),
        tcp_port: l.tcp_port(),
        config: l.my_cnf.clone(),
        error_log: l.error_log.clone(),
        mysqld: record.binary.mysqld,
    })
}

/// The benchmark login of the running server of `datadir` (from `credentials.json`).
pub fn client_info(datadir: &Path) -> anyhow::Result<ClientInfo> {
    let l = Layout::load(datadir)?;
    if !l.credentials.exists() {
        bail!(
            "'{}' has no benchmark login yet ('{}' is missing): start the server once with `spindle mysqld start --datadir {}`",
            l.datadir.display(),
            l.credentials.display(),
            l.datadir.display()
        );
    }
    if running_pid(&l).is_none() {
        return Err(MysqldError::NotRunning {
            datadir: l.datadir.clone(),
        }
        .into());
    }
    let creds: Credentials = layout::read_json(&l.credentials)?;
    Ok(client_info_of(&l, &creds))
}

fn client_info_of(l: &Layout, c: &Credentials) -> ClientInfo {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_random_alphanumerics() {
        let a = random_password().unwrap();
        let b = random_password().unwrap();
        assert_eq!(a.len(), 24);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(a, b);
    }

    #[test]
    fn sql_literals_are_escaped() {
        assert_eq!(sql_str("a'b\\c"), "'a\\'b\\\\c'");
    }

    #[test]
    fn free_space_walks_up_to_an_existing_dir() {
        let (p, free) = free_bytes(Path::new("/tmp/does/not/exist/yet")).unwrap();
        assert!(p.exists());
        assert!(free > 0);
    }

    #[test]
    fn required_space_grows_with_the_redo_log() {
        let s = MysqldSettings::default();
        assert_eq!(required_free_bytes(&s), 384 * MIB);
    }

    #[test]
    fn stop_outcome_mentions_the_kill() {
        let k = StopOutcome::Killed {
            pid: 7,
            waited: Duration::from_secs(2),
        };
        assert!(k.to_string().contains("SIGKILL"));
    }
}
