//! Where a spindle-managed server keeps its files: the run directory beside the datadir, the
//! socket (with a short fallback), and the JSON records written at init and first start.

use super::config::parse_cnf_section;
use super::error::MysqldError;
use super::version::ServerBinary;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Longest socket path spindle uses in place (`sun_path` holds 108 bytes with the NUL).
pub const MAX_SOCKET_PATH: usize = 100;

/// All paths of one managed server. See the module doc of `provision::mysqld` for the picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The data directory (absolute).
    pub datadir: PathBuf,
    /// `<parent>/<datadir name>.spindle/`: config, logs, pid, socket, records, tmp, binlog.
    pub run_dir: PathBuf,
    /// The generated `my.cnf` (the source of truth for socket, pid file and error log).
    pub my_cnf: PathBuf,
    /// `server.json`: the server binary, flavor, version and user recorded at init.
    pub server_json: PathBuf,
    /// `credentials.json` (mode 0600): benchmark and root passwords.
    pub credentials: PathBuf,
    /// The server's error log (`log-error`).
    pub error_log: PathBuf,
    /// The server's pid file.
    pub pid_file: PathBuf,
    /// The unix socket (in the run dir, or under /tmp when that path would be too long).
    pub socket: PathBuf,
    /// `tmpdir` default (same disk as the datadir).
    pub tmpdir: PathBuf,
    /// Directory of the binary logs.
    pub binlog_dir: PathBuf,
}

/// Makes `datadir` absolute (resolving symlinks when it exists), so every command finds the
/// same run directory.
pub fn absolute_datadir(datadir: &Path) -> anyhow::Result<PathBuf> {
    if datadir.as_os_str().is_empty() {
        anyhow::bail!("--datadir is empty: give the data directory path");
    }
    let abs = std::path::absolute(datadir)
        .with_context(|| format!("--datadir '{}': cannot make it absolute", datadir.display()))?;
    Ok(abs.canonicalize().unwrap_or(abs))
}

/// A stable 64-bit FNV-1a hash, for the short socket directory name.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Layout {
    /// The default layout for an absolute datadir (what `init` writes).
    pub fn new(datadir: &Path) -> anyhow::Result<Layout> {
        let name = datadir.file_name().with_context(|| {
            format!(
                "--datadir '{}' has no directory name: use a directory such as /mnt/disk1/mysql",
                datadir.display()
            )
        })?;
        let parent = datadir.parent().unwrap_or(Path::new("/"));
        let mut run_name = name.to_os_string();
        run_name.push(".spindle");
        let run_dir = parent.join(run_name);
        let natural = run_dir.join("mysqld.sock");
        let socket = if natural.as_os_str().len() <= MAX_SOCKET_PATH {
            natural
        } else {
            use std::os::unix::ffi::OsStrExt as _;
            let h = fnv1a(run_dir.as_os_str().as_bytes());
            PathBuf::from(format!("/tmp/spindle-{h:016x}/mysqld.sock"))
        };
        Ok(Layout {
            datadir: datadir.to_path_buf(),
            my_cnf: run_dir.join("my.cnf"),
            server_json: run_dir.join("server.json"),
            credentials: run_dir.join("credentials.json"),
            error_log: run_dir.join("error.log"),
            pid_file: run_dir.join("mysqld.pid"),
            tmpdir: run_dir.join("tmp"),
            binlog_dir: run_dir.join("binlog"),
            socket,
            run_dir,
        })
    }

    /// The layout of an initialised datadir: paths as the `my.cnf` written at init says
    /// (the user may have edited it). Fails with [`MysqldError::NotInitialised`] without one.
    pub fn load(datadir: &Path) -> anyhow::Result<Layout> {
        let abs = absolute_datadir(datadir)?;
        let mut l = Layout::new(&abs)?;
        let text = match std::fs::read_to_string(&l.my_cnf) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(MysqldError::NotInitialised {
                    datadir: abs,
                    config: l.my_cnf,
                }
                .into())
            }
            Err(e) => {
                return Err(e).with_context(|| format!("could not read '{}'", l.my_cnf.display()))
            }
        };
        let m = parse_cnf_section(&text, "mysqld");
        let get = |k: &str| m.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(p) = get("socket") {
            l.socket = p;
        }
        if let Some(p) = get("pid_file") {
            l.pid_file = p;
        }
        if let Some(p) = get("log_error") {
            l.error_log = p;
        }
        if let Some(p) = get("tmpdir") {
            l.tmpdir = p;
        }
        Ok(l)
    }

    /// TCP port from the `my.cnf`, unless it says `skip-networking`.
    pub fn tcp_port(&self) -> Option<u16> {
        let text = std::fs::read_to_string(&self.my_cnf).ok()?;
        let m = parse_cnf_section(&text, "mysqld");
        if m.contains_key("skip_networking") {
            return None;
        }
        m.get("port")?.parse().ok()
    }
}

/// What `init` recorded about the server (`server.json` in the run directory).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerRecord {
    /// The server binary, flavor and version used to initialise the datadir.
    pub binary: ServerBinary,
    /// The OS user the server runs as when started by root (`mysql` or `root`); None when
    /// spindle ran as a normal user (the server runs as that user).
    pub run_as: Option<String>,
    /// spindle version that wrote the record.
    pub spindle_version: String,
}

/// The benchmark and administrator logins (`credentials.json`, mode 0600).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    pub user: String,
    pub password: String,
    pub database: String,
    pub root_user: String,
    pub root_password: String,
}

/// Reads a JSON record, naming the file in the error.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("could not read '{}'", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "'{}' is not a valid spindle record (was it edited by hand?)",
            path.display()
        )
    })
}

/// Writes a JSON record atomically with the given file mode.
pub fn write_json<T: Serialize>(path: &Path, value: &T, mode: u32) -> anyhow::Result<()> {
    let mut body = serde_json::to_string_pretty(value)?;
    body.push('\n');
    crate::sys::fs::write_atomic_mode(path, body.as_bytes(), mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_dir_sits_beside_the_datadir() {
        let l = Layout::new(Path::new("/mnt/disk1/mysql")).unwrap();
        assert_eq!(l.run_dir, Path::new("/mnt/disk1/mysql.spindle"));
        assert_eq!(l.my_cnf, Path::new("/mnt/disk1/mysql.spindle/my.cnf"));
        assert_eq!(l.socket, Path::new("/mnt/disk1/mysql.spindle/mysqld.sock"));
        assert!(!l.my_cnf.starts_with(&l.datadir));
    }

    #[test]
    fn long_paths_get_a_short_stable_socket() {
        let long = format!("/mnt/{}/mysql", "x".repeat(120));
        let a = Layout::new(Path::new(&long)).unwrap();
        let b = Layout::new(Path::new(&long)).unwrap();
        assert!(a.socket.as_os_str().len() <= MAX_SOCKET_PATH);
        assert!(a.socket.starts_with("/tmp"));
        assert_eq!(a.socket, b.socket);
        let other = Layout::new(Path::new(&format!("{long}2"))).unwrap();
        assert_ne!(a.socket, other.socket);
    }

    #[test]
    fn root_is_not_a_datadir() {
        assert!(Layout::new(Path::new("/")).is_err());
        assert!(absolute_datadir(Path::new("")).is_err());
    }
}
