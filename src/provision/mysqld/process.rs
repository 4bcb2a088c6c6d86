//! Process control: finding the server's pid, signals, waiting for it to go, spawning it with
//! its log, and reading the log's tail for errors.

use super::layout::Layout;
use super::shared::*;
use crate::sys::runner::{display_command, tail_lines};
use anyhow::{bail, Context};
use std::io::{Read as _, Seek as _};
use std::path::Path;
use std::time::{Duration, Instant};

pub(super) fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// The last lines of a log written after byte `start` (the whole tail if it shrank).
pub(super) fn log_tail_since(path: &Path, start: u64) -> String {
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
/// The server is known by its `--defaults-file` argument, not by its program name: a server run
/// through a wrapper, a renamed binary or another root's dynamic loader is found all the same.
pub(super) fn running_pid(l: &Layout) -> Option<u32> {
    let want = format!("--defaults-file={}", l.my_cnf.display());
    let from_file = std::fs::read_to_string(&l.pid_file)
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
        .filter(|pid| is_our_server(*pid, &want, Found::PidFile));
    from_file.or_else(|| {
        std::fs::read_dir("/proc")
            .ok()?
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .find(|pid| is_our_server(*pid, &want, Found::Scan))
    })
}

/// How a candidate pid was found.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    /// Named by the server's own pid file.
    PidFile,
    /// Any process on the machine: a client program given the same `--defaults-file` (the
    /// my.cnf has a `[client]` section) is not the server.
    Scan,
}

/// Is `pid` a live server process (not an init/bootstrap run) with argument `defaults_arg`?
pub(super) fn is_our_server(pid: u32, defaults_arg: &str, found: Found) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let ours = args.contains(&defaults_arg.as_bytes());
    let setup = args.iter().any(|a| {
        let a = String::from_utf8_lossy(a);
        a.starts_with("--bootstrap") || a.starts_with("--initialize")
    });
    let client = found == Found::Scan && args.first().is_some_and(|a| is_client_program(a));
    ours && !setup && !client && pid_alive(pid)
}

/// A MySQL/MariaDB client program (`mysql`, `mariadb-admin`, …) rather than a server
/// (`mysqld`, `mariadbd`, or anything else: a loader, a wrapper).
fn is_client_program(argv0: &[u8]) -> bool {
    let name = String::from_utf8_lossy(argv0);
    let name = name.rsplit('/').next().unwrap_or("");
    (name.starts_with("mysql") || name.starts_with("mariadb"))
        && !name.contains("mysqld")
        && !name.contains("mariadbd")
}

/// True if `pid` exists and is not a zombie.
pub(super) fn pid_alive(pid: u32) -> bool {
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

pub(super) fn send_signal(pid: u32, sig: libc::c_int) -> anyhow::Result<()> {
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

pub(super) fn wait_gone(pid: u32, timeout: Duration) -> bool {
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
pub(super) fn terminate(pid: u32, timeout: Duration) -> anyhow::Result<StopOutcome> {
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

/// Marks every descriptor above 2 close-on-exec (the descriptors std's `Command` uses to
/// report a failed exec are already; they must stay open until the exec). `close_range` with
/// `CLOSE_RANGE_CLOEXEC` needs Linux 5.11; older kernels get the same by `fcntl` per descriptor
/// up to the soft limit. Runs between fork and exec: no allocation, system calls only.
///
/// # Safety
/// Only in a forked child before exec (it changes descriptors the parent's threads may use).
unsafe fn close_inherited_at_exec() {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    if libc::syscall(
        libc::SYS_close_range,
        3 as libc::c_uint,
        libc::c_uint::MAX,
        CLOSE_RANGE_CLOEXEC,
    ) == 0
    {
        return;
    }
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let top = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
        lim.rlim_cur.min(1 << 20) as libc::c_int
    } else {
        1024
    };
    for fd in 3..top {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
        }
    }
}

pub(super) fn spawn_server(
    mysqld: &Path,
    args: &[String],
    log: &Path,
) -> anyhow::Result<std::process::Child> {
    use std::os::unix::process::CommandExt as _;
    let prog = path_arg(mysqld)?;
    // CommandRunner runs commands to completion; a background launch is logged the same way.
    crate::sys::log::say!("$ {} &", display_command(prog, args));
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
    // SAFETY: setsid, close_range and fcntl are async-signal-safe system calls on the child's
    // own descriptors. setsid detaches the server from our terminal and process group so
    // Ctrl-C on spindle does not kill it; every descriptor above 2 that spindle's caller passed
    // down (a lock, a pipe) is closed at exec, so the long-lived server never holds it.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            close_inherited_at_exec();
            Ok(())
        });
    }
    cmd.spawn()
        .with_context(|| format!("could not launch '{}'", display_command(prog, args)))
}
