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
mod error;
mod init;
pub mod layout;
pub mod observe;
mod process;
mod shared;
mod start;
mod user;
pub mod version;

pub use config::MysqldSettings;
pub use init::{free_bytes, init, required_free_bytes};
pub use layout::{Credentials, Layout, ServerRecord};
pub use process::{stop, stop_blocking};
pub use shared::{
    detect, ClientInfo, MysqldError, ServerSpec, ServerStatus, StopOutcome, BENCH_DB,
};
pub use start::{random_password, start};
pub use version::{parse_version, Flavor, ServerBinary, ServerVersion};

use process::running_pid;
use shared::{client_info_of, read_record};

use anyhow::{bail, Context};
use std::path::Path;

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

#[cfg(test)]
mod tests {
    use super::shared::MIB;
    use super::start::sql_str;
    use super::*;
    use std::time::Duration;

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
