//! The server errors a caller may want to tell apart, below every step that returns one.

use std::path::PathBuf;

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
