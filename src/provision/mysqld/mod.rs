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
pub mod layout;
pub mod version;

pub use config::MysqldSettings;
pub use layout::{Credentials, Layout, ServerRecord};
pub use version::{parse_version, Flavor, ServerBinary, ServerVersion};

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

/// Free space `init` requires: 256 MiB (system tables, undo, temp) plus twice the redo log.
pub fn required_free_bytes(settings: &MysqldSettings) -> u64 {
    256 * MIB + 2 * settings.log_file_size
}

/// Free bytes for an unprivileged user on the filesystem holding `path` (or its nearest
/// existing ancestor).
pub fn free_bytes(path: &Path) -> anyhow::Result<(PathBuf, u64)> {
    let mut p = path;
    while !p.exists() {
        p = p.parent().unwrap_or(Path::new("/"));
    }
    let c = std::ffi::CString::new(path_arg(p)?)?;
    // SAFETY: `c` is a valid NUL-terminated path and `st` is a properly sized out-parameter.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("could not read free space of '{}'", p.display()));
    }
    #[allow(clippy::unnecessary_cast)]
    Ok((p.to_path_buf(), st.f_bavail as u64 * st.f_frsize as u64))
}

/// An OS account the server runs as.
#[derive(Clone, Debug)]
struct OsUser {
    name: String,
    uid: u32,
    gid: u32,
}

fn lookup_user(name: &str) -> Option<OsUser> {
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: getpwnam returns NULL or a pointer to a static passwd record we copy at once.
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    if pw.is_null() {
        return None;
    }
    let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
    Some(OsUser {
        name: name.to_string(),
        uid,
        gid,
    })
}

/// Who the server should run as: as root, `mysql` if it exists, else `root`. As a normal
/// user: `None` (the server runs as the calling user and gets no `--user`).
fn choose_run_as() -> Option<OsUser> {
    if !crate::sys::is_root() {
        return None;
    }
    Some(lookup_user("mysql").unwrap_or(OsUser {
        name: "root".into(),
        uid: 0,
        gid: 0,
    }))
}

/// The first ancestor of `path` that `user` cannot enter (no search permission), if any.
fn unreachable_ancestor(path: &Path, user: &OsUser) -> Option<(PathBuf, u32)> {
    use std::os::unix::fs::MetadataExt as _;
    if user.uid == 0 {
        return None;
    }
    for a in path.ancestors().skip(1) {
        let Ok(md) = std::fs::metadata(a) else {
            continue;
        };
        let mode = md.mode();
        let ok = if md.uid() == user.uid {
            mode & 0o100 != 0
        } else if md.gid() == user.gid {
            mode & 0o010 != 0
        } else {
            mode & 0o001 != 0
        };
        if !ok {
            return Some((a.to_path_buf(), mode & 0o7777));
        }
    }
    None
}

fn chown_to(path: &Path, user: Option<&OsUser>) -> anyhow::Result<()> {
    if let Some(u) = user {
        std::os::unix::fs::chown(path, Some(u.uid), Some(u.gid))
            .with_context(|| format!("could not give '{}' to user '{}'", path.display(), u.name))?;
    }
    Ok(())
}

fn create_dir_for(path: &Path, user: Option<&OsUser>, mode: u32) -> anyhow::Result<()> {
    std::fs::create_dir_all(path)
        .with_context(|| format!("could not create directory '{}'", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("could not set permissions of '{}'", path.display()))?;
    chown_to(path, user)
}

/// Does `dir` hold a server's system schema (MariaDB/MySQL `mysql/`, MySQL 8 `mysql.ibd`)?
fn looks_like_datadir(dir: &Path) -> bool {
    dir.join("mysql").is_dir() || dir.join("mysql.ibd").is_file()
}

/// Removes everything inside `dir` (not `dir` itself: it may be a mount point).
fn clear_dir(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            let _ = if p.is_dir() && !p.is_symlink() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
        }
    }
}

/// Creates the datadir, writes my.cnf next to it and initialises it the flavor's way.
///
/// Refuses ([`MysqldError::NotEmpty`]) a datadir that exists and is not empty, and
/// ([`MysqldError::NoSpace`]) a filesystem with less than [`required_free_bytes`] free.
/// On failure, whatever init created is removed again.
pub fn init(spec: &ServerSpec) -> anyhow::Result<()> {
    let binary = detect(spec)?;
    let datadir = layout::absolute_datadir(&spec.datadir)?;
    let existed = datadir.exists();
    if existed {
        if !datadir.is_dir() {
            bail!(
                "--datadir '{}' exists and is not a directory: choose a directory path",
                datadir.display()
            );
        }
        let non_empty = std::fs::read_dir(&datadir)
            .with_context(|| format!("could not read --datadir '{}'", datadir.display()))?
            .next()
            .is_some();
        if non_empty {
            let initialised = looks_like_datadir(&datadir);
            return Err(MysqldError::NotEmpty {
                path: datadir.clone(),
                what: if initialised {
                    "is already an initialised MySQL data directory".into()
                } else {
                    "exists and is not empty".into()
                },
                fix: if initialised {
                    let run_dir = Layout::new(&datadir)
                        .map(|l| l.run_dir.display().to_string())
                        .unwrap_or_default();
                    format!("start it with `spindle mysqld start --datadir {0}`, or stop it and delete '{0}' and '{run_dir}' to start over", datadir.display())
                } else {
                    "choose a new or empty directory (e.g. a 'mysql' subdirectory)".into()
                },
            }
            .into());
        }
    }
    let need = required_free_bytes(&spec.settings);
    let (fs_path, free) = free_bytes(&datadir)?;
    if free < need {
        return Err(MysqldError::NoSpace {
            path: fs_path,
            free_mib: free / MIB,
            need_mib: need.div_ceil(MIB),
        }
        .into());
    }

    let run_as = choose_run_as();
    std::fs::create_dir_all(&datadir)
        .with_context(|| format!("could not create --datadir '{}'", datadir.display()))?;
    let datadir = layout::absolute_datadir(&datadir)?;
    let result = init_created(spec, &binary, &datadir, run_as.as_ref());
    if result.is_err() {
        clear_dir(&datadir);
        if !existed {
            let _ = std::fs::remove_dir(&datadir);
        }
    }
    result
}

fn init_created(
    spec: &ServerSpec,
    binary: &ServerBinary,
    datadir: &Path,
    run_as: Option<&OsUser>,
) -> anyhow::Result<()> {
    let l = Layout::new(datadir)?;
    // The server user owns the datadir and the run dir (it writes logs, pid, socket there).
    let server_user = run_as.filter(|u| u.uid != 0);
    if let Some(u) = server_user {
        for p in [&l.datadir, &l.run_dir] {
            if let Some((dir, mode)) = unreachable_ancestor(p, u) {
                bail!(
                    "the server runs as user '{}', which cannot enter '{}' (mode {:o}); allow it with `chmod o+x {}` or choose a datadir under a directory it can reach",
                    u.name,
                    dir.display(),
                    mode,
                    dir.display()
                );
            }
        }
    }
    create_dir_for(&l.datadir, server_user, 0o750)?;
    create_dir_for(&l.run_dir, server_user, 0o755)?;
    create_dir_for(&l.binlog_dir, server_user, 0o750)?;
    let tmpdir = spec
        .settings
        .tmpdir
        .clone()
        .unwrap_or_else(|| l.tmpdir.clone());
    if spec.settings.tmpdir.is_none() {
        create_dir_for(&tmpdir, server_user, 0o750)?;
    }
    if let Some(sock_dir) = l.socket.parent().filter(|d| !d.starts_with(&l.run_dir)) {
        create_dir_for(sock_dir, server_user, 0o755)?;
    }
    // A leftover from an earlier datadir of the same name would not match the new one.
    let _ = std::fs::remove_file(&l.credentials);
    touch_log(&l.error_log, server_user)?;

    let paths = config::CnfPaths {
        datadir: l.datadir.clone(),
        socket: l.socket.clone(),
        pid_file: l.pid_file.clone(),
        error_log: l.error_log.clone(),
        tmpdir,
        binlog_base: l.binlog_dir.join("mysql-bin"),
    };
    let cnf = config::render_my_cnf(
        &spec.settings,
        &config::CnfTarget {
            flavor: binary.flavor,
            version: binary.version,
            paths: &paths,
            tcp_port: spec.tcp_port,
            ram_bytes: crate::sys::HostInfo::collect().ram_bytes,
        },
    );
    std::fs::write(&l.my_cnf, cnf)
        .with_context(|| format!("could not write '{}'", l.my_cnf.display()))?;
    std::fs::set_permissions(&l.my_cnf, std::fs::Permissions::from_mode(0o644))?;

    let defaults = format!("--defaults-file={}", path_arg(&l.my_cnf)?);
    let user_arg = run_as.map(|u| format!("--user={}", u.name));
    let log_start = file_len(&l.error_log);
    let runner = CommandRunner::new();
    let outcome = match binary.flavor {
        Flavor::MariaDb => {
            let script = binary.install_db.as_ref().with_context(|| {
                format!(
                    "MariaDB's 'mariadb-install-db' (or 'mysql_install_db') was not found next to '{}' or in PATH; install the full mariadb-server package",
                    binary.mysqld.display()
                )
            })?;
            let mut args = vec![
                defaults,
                format!("--datadir={}", path_arg(&l.datadir)?),
                "--auth-root-authentication-method=normal".into(),
                "--skip-test-db".into(),
                "--skip-name-resolve".into(),
            ];
            args.extend(user_arg);
            if let Some(base) = binary.mysqld.parent().and_then(Path::parent) {
                if base != Path::new("/usr") {
                    args.push(format!("--basedir={}", path_arg(base)?));
                }
            }
            runner.run(path_arg(script)?, &args)
        }
        Flavor::MySql | Flavor::Percona => {
            let mut args = vec![defaults, "--initialize-insecure".into()];
            args.extend(user_arg);
            runner.run(path_arg(&binary.mysqld)?, &args)
        }
    };
    if let Err(e) = outcome {
        let tail = log_tail_since(&l.error_log, log_start);
        bail!(
            "initialising {} in '{}' failed (the datadir is removed again): {e:#}\n\nlast lines of the server's error log '{}':\n{tail}",
            binary.describe(),
            l.datadir.display(),
            l.error_log.display()
        );
    }
    if !looks_like_datadir(&l.datadir) {
        bail!(
            "initialising '{}' reported success but created no system schema; see '{}'",
            l.datadir.display(),
            l.error_log.display()
        );
    }
    let record = ServerRecord {
        binary: binary.clone(),
        run_as: run_as.map(|u| u.name.clone()),
        spindle_version: crate::VERSION.to_string(),
    };
    layout::write_json(&l.server_json, &record, 0o644)
}

fn touch_log(path: &Path, owner: Option<&OsUser>) -> anyhow::Result<()> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("could not create the error log '{}'", path.display()))?;
    chown_to(path, owner)
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// The last lines of a log written after byte `start` (the whole tail if it shrank).
fn log_tail_since(path: &Path, start: u64) -> String {
    let mut text = String::new();
    if let Ok(mut f) = std::fs::File::open(path) {
        let start = if file_len(path) >= start { start } else { 0 };
        let _ = f.seek(std::io::SeekFrom::Start(start));
        let mut bytes = Vec::new();
        let _ = f.read_to_end(&mut bytes);
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    let t = tail_lines(text.trim_end(), LOG_TAIL_LINES);
    if t.trim().is_empty() {
        "(the error log is empty)".into()
    } else {
        t
    }
}

/// The pid of this datadir's server if it is alive: the pid file when it names a live
/// process started with this datadir's my.cnf (a stale pid file is never trusted), else a scan
/// of /proc for such a process (the pid file is mode 0660 and unreadable to other users).
fn running_pid(l: &Layout) -> Option<u32> {
    let want = format!("--defaults-file={}", l.my_cnf.display());
    let from_file = std::fs::read_to_string(&l.pid_file)
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
        .filter(|pid| is_our_server(*pid, &want));
    from_file.or_else(|| {
        std::fs::read_dir("/proc")
            .ok()?
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .find(|pid| is_our_server(*pid, &want))
    })
}

/// Is `pid` a live server process (not an init/bootstrap run) with argument `defaults_arg`?
fn is_our_server(pid: u32, defaults_arg: &str) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let prog = args
        .first()
        .map(|a| {
            String::from_utf8_lossy(a)
                .rsplit('/')
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default();
    let is_server = prog.contains("mysqld") || prog.contains("mariadbd");
    let ours = args.contains(&defaults_arg.as_bytes());
    let setup = args.iter().any(|a| {
        let a = String::from_utf8_lossy(a);
        a.starts_with("--bootstrap") || a.starts_with("--initialize")
    });
    is_server && ours && !setup && pid_alive(pid)
}

/// True if `pid` exists and is not a zombie.
fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // "pid (comm) S …": the state follows the last ')'.
            let state = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next())
                .unwrap_or("");
            state != "Z" && state != "X"
        }
        Err(_) => false,
    }
}

fn send_signal(pid: u32, sig: libc::c_int) -> anyhow::Result<()> {
    let Ok(p) = libc::pid_t::try_from(pid) else {
        bail!("invalid pid {pid}");
    };
    // SAFETY: kill has no memory-safety preconditions.
    if unsafe { libc::kill(p, sig) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::ESRCH) {
            return Ok(());
        }
        return Err(e).with_context(|| {
            format!("could not signal the server (pid {pid}); it belongs to another user: run spindle as root or as that user")
        });
    }
    Ok(())
}

fn wait_gone(pid: u32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if !pid_alive(pid) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// SIGTERM, bounded wait, SIGKILL. Returns the outcome for a known pid.
fn terminate(pid: u32, timeout: Duration) -> anyhow::Result<StopOutcome> {
    let t0 = Instant::now();
    send_signal(pid, libc::SIGTERM)?;
    if wait_gone(pid, timeout) {
        return Ok(StopOutcome::Stopped {
            pid,
            waited: t0.elapsed(),
        });
    }
    send_signal(pid, libc::SIGKILL)?;
    if !wait_gone(pid, Duration::from_secs(10)) {
        bail!("the server (pid {pid}) survived SIGKILL for 10 s; check the process with `ps -p {pid}`");
    }
    Ok(StopOutcome::Killed {
        pid,
        waited: t0.elapsed(),
    })
}

/// Stops the server of `datadir`: SIGTERM (clean shutdown), wait up to `timeout`, then
/// SIGKILL. A server that is not running gives `Ok(StopOutcome::NotRunning)`.
pub async fn stop(datadir: &Path, timeout: Duration) -> anyhow::Result<StopOutcome> {
    let datadir = datadir.to_path_buf();
    tokio::task::spawn_blocking(move || stop_blocking(&datadir, timeout))
        .await
        .context("the stop task failed")?
}

/// [`stop`] for synchronous callers (e.g. `Drop` of a test server).
pub fn stop_blocking(datadir: &Path, timeout: Duration) -> anyhow::Result<StopOutcome> {
    let l = Layout::load(datadir)?;
    let Some(pid) = running_pid(&l) else {
        return Ok(StopOutcome::NotRunning);
    };
    let outcome = terminate(pid, timeout)?;
    if matches!(outcome, StopOutcome::Killed { .. }) {
        let _ = std::fs::remove_file(&l.pid_file);
        let _ = std::fs::remove_file(&l.socket);
    }
    Ok(outcome)
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

/// A random password of 24 letters and digits (from the kernel's CSPRNG).
pub fn random_password() -> anyhow::Result<String> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut f = std::fs::File::open("/dev/urandom").context("could not open /dev/urandom")?;
    let mut out = String::with_capacity(24);
    let mut buf = [0u8; 64];
    while out.len() < 24 {
        f.read_exact(&mut buf)
            .context("could not read /dev/urandom")?;
        for b in buf {
            // 248 = 4 × 62: reject the rest so every character is equally likely.
            if b < 248 && out.len() < 24 {
                out.push(ALPHABET[usize::from(b) % 62] as char);
            }
        }
    }
    Ok(out)
}

/// Launches the server in the background, waits until it answers on its socket, and makes
/// sure database `sbtest` and user `sbtest` (random password, `credentials.json`) exist.
pub async fn start(spec: &ServerSpec) -> anyhow::Result<ClientInfo> {
    let datadir = layout::absolute_datadir(&spec.datadir)?;
    if !datadir.is_dir() {
        return Err(MysqldError::NotADatadir {
            path: datadir,
            reason: "no such directory".into(),
        }
        .into());
    }
    if !looks_like_datadir(&datadir) {
        return Err(MysqldError::NotADatadir {
            path: datadir,
            reason: "it has no 'mysql' system schema".into(),
        }
        .into());
    }
    let l = Layout::load(&datadir)?;
    let record = read_record(&l)?;
    if let Some(pid) = running_pid(&l) {
        return Err(MysqldError::AlreadyRunning {
            datadir: l.datadir.clone(),
            pid,
        }
        .into());
    }
    let mysqld = match &spec.mysqld {
        Some(_) => detect(spec)?.mysqld,
        None => record.binary.mysqld.clone(),
    };
    if !mysqld.is_file() {
        bail!(
            "the server program '{}' recorded at init no longer exists; install it again or pass --mysqld PATH",
            mysqld.display()
        );
    }
    let run_as = if crate::sys::is_root() {
        record
            .run_as
            .as_deref()
            .and_then(lookup_user)
            .or_else(choose_run_as)
    } else {
        None
    };
    touch_log(&l.error_log, run_as.as_ref().filter(|u| u.uid != 0))?;
    if let Some(dir) = l.socket.parent().filter(|d| !d.exists()) {
        // The short /tmp socket directory vanishes at reboot.
        create_dir_for(dir, run_as.as_ref().filter(|u| u.uid != 0), 0o755)?;
    }

    let mut args = vec![format!("--defaults-file={}", path_arg(&l.my_cnf)?)];
    if let Some(u) = &run_as {
        args.push(format!("--user={}", u.name));
    }
    let log_start = file_len(&l.error_log);
    let child = spawn_server(&mysqld, &args, &l.error_log)?;
    let pid = child.id();
    match wait_ready_and_provision(&l, child, spec.start_timeout, log_start).await {
        Ok(info) => Ok(info),
        Err(e) => {
            // Never leave a half-started server behind.
            if pid_alive(pid) {
                let _ = terminate(pid, Duration::from_secs(10));
            }
            Err(e)
        }
    }
}

fn spawn_server(mysqld: &Path, args: &[String], log: &Path) -> anyhow::Result<std::process::Child> {
    use std::os::unix::process::CommandExt as _;
    let prog = path_arg(mysqld)?;
    // CommandRunner runs commands to completion; a background launch is logged the same way.
    eprintln!("spindle: $ {} &", display_command(prog, args));
    let out = std::fs::OpenOptions::new()
        .append(true)
        .open(log)
        .with_context(|| format!("could not open the error log '{}'", log.display()))?;
    let err = out.try_clone()?;
    let mut cmd = std::process::Command::new(prog);
    cmd.args(args)
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err);
    // SAFETY: setsid is async-signal-safe; it detaches the server from our terminal and
    // process group so Ctrl-C on spindle does not kill it.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    cmd.spawn()
        .with_context(|| format!("could not launch '{}'", display_command(prog, args)))
}

async fn wait_ready_and_provision(
    l: &Layout,
    mut child: std::process::Child,
    timeout: Duration,
    log_start: u64,
) -> anyhow::Result<ClientInfo> {
    let deadline = Instant::now() + timeout;
    // An unreadable credentials file is an error: new passwords would lock the old ones out.
    let creds = if l.credentials.exists() {
        layout::read_json::<Credentials>(&l.credentials)?
    } else {
        Credentials {
            user: BENCH_DB.into(),
            password: random_password()?,
            database: BENCH_DB.into(),
            root_user: "root".into(),
            root_password: random_password()?,
        }
    };
    let conn = loop {
        if let Some(st) = child.try_wait()? {
            return Err(MysqldError::ServerDied {
                status: st.to_string(),
                log: l.error_log.clone(),
                tail: log_tail_since(&l.error_log, log_start),
            }
            .into());
        }
        if l.socket.exists() {
            match root_connect(l, &creds).await {
                Ok(c) => break c,
                Err(e) if is_access_denied(&e) => {
                    return Err(e).with_context(|| format!("the server answers on '{}' but refuses spindle's root login; '{}' does not match this datadir: restore it, or re-initialise the datadir", l.socket.display(), l.credentials.display()));
                }
                Err(_) => {}
            }
        }
        if Instant::now() >= deadline {
            return Err(MysqldError::NotReady {
                socket: l.socket.clone(),
                secs: timeout.as_secs(),
                log: l.error_log.clone(),
                tail: log_tail_since(&l.error_log, log_start),
            }
            .into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // Reap the server when it exits, so it never lingers as a zombie of a long-lived caller.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    if !l.credentials.exists() {
        // Written before the passwords are set, so they can never be lost.
        layout::write_json(&l.credentials, &creds, 0o600)?;
    }
    provision(conn, &creds).await.with_context(|| {
        format!(
            "could not create database and user '{BENCH_DB}' on '{}'",
            l.socket.display()
        )
    })?;
    let info = client_info_of(l, &creds);
    // Prove the login the benchmark will use.
    let c = mysql_async::Conn::new(opts(
        &l.socket,
        &creds.user,
        &creds.password,
        Some(&creds.database),
    ))
    .await
    .with_context(|| {
        format!(
            "the new benchmark login '{}' does not work on '{}'",
            creds.user,
            l.socket.display()
        )
    })?;
    let _ = c.disconnect().await;
    Ok(info)
}

fn opts(socket: &Path, user: &str, pass: &str, db: Option<&str>) -> mysql_async::Opts {
    mysql_async::OptsBuilder::default()
        .socket(Some(socket.to_string_lossy()))
        .user(Some(user))
        .pass(Some(pass))
        .db_name(db)
        .into()
}

fn is_access_denied(e: &mysql_async::Error) -> bool {
    matches!(e, mysql_async::Error::Server(s) if s.code == 1045 || s.code == 1698)
}

/// Logs in as root: with the stored password, or (first start) with the empty one.
async fn root_connect(
    l: &Layout,
    c: &Credentials,
) -> Result<mysql_async::Conn, mysql_async::Error> {
    let attempt = tokio::time::timeout(
        Duration::from_secs(5),
        mysql_async::Conn::new(opts(&l.socket, &c.root_user, &c.root_password, None)),
    );
    match attempt.await {
        Ok(Err(e)) if is_access_denied(&e) => {
            mysql_async::Conn::new(opts(&l.socket, &c.root_user, "", None)).await
        }
        Ok(r) => r,
        Err(_) => Err(mysql_async::Error::Io(mysql_async::IoError::Io(
            std::io::Error::new(std::io::ErrorKind::TimedOut, "login timed out"),
        ))),
    }
}

/// Quotes a string as an SQL literal.
fn sql_str(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

async fn provision(mut conn: mysql_async::Conn, c: &Credentials) -> anyhow::Result<()> {
    // Every root account gets the stored password; anonymous accounts go.
    let root_hosts: Vec<String> = conn
        .exec(
            "SELECT Host FROM mysql.user WHERE User = ?",
            (c.root_user.as_str(),),
        )
        .await?;
    for h in root_hosts {
        let r = conn
            .query_drop(format!(
                "ALTER USER {}@{} IDENTIFIED BY {}",
                sql_str(&c.root_user),
                sql_str(&h),
                sql_str(&c.root_password)
            ))
            .await;
        match r {
            // Host-name accounts (MariaDB's root@<hostname>) are ignored under
            // skip-name-resolve and cannot be altered; they cannot log in either.
            Err(mysql_async::Error::Server(e)) if e.code == 1396 && h != "localhost" => {}
            r => r?,
        }
    }
    let anon: Vec<String> = conn
        .query("SELECT Host FROM mysql.user WHERE User = ''")
        .await?;
    for h in anon {
        conn.query_drop(format!("DROP USER ''@{}", sql_str(&h)))
            .await?;
    }
    conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{}`", c.database))
        .await?;
    for host in ["localhost", "127.0.0.1"] {
        let who = format!("{}@{}", sql_str(&c.user), sql_str(host));
        let pw = sql_str(&c.password);
        conn.query_drop(format!(
            "CREATE USER IF NOT EXISTS {who} IDENTIFIED BY {pw}"
        ))
        .await?;
        conn.query_drop(format!("ALTER USER {who} IDENTIFIED BY {pw}"))
            .await?;
        conn.query_drop(format!(
            "GRANT ALL PRIVILEGES ON `{}`.* TO {who}",
            c.database
        ))
        .await?;
    }
    conn.disconnect().await?;
    Ok(())
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
