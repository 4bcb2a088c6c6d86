//! Linux-only tuning of the run phase: no wake-up per query for "socket writable".
//!
//! tokio registers every socket for readable AND writable events (edge-triggered). On a unix
//! stream socket the kernel signals EPOLLOUT each time the peer *reads* (unix_write_space has no
//! "was full" check, unlike TCP), so every query woke the client thread twice: once when the
//! server read the request (useless), once when the reply arrived. During `run` the requests
//! are tiny (< 1 KiB) and strictly request/response, so a write never meets a full buffer and
//! never needs a writable event: EPOLLOUT is dropped from the sockets of the run's own runtime,
//! found through its eventpoll instances in /proc/self/fdinfo (tokio 1.4x creates two per
//! runtime). A query then costs write + epoll_wait + read. If anything looks unexpected the
//! tuning is skipped; correctness never depends on it. `--keep-write-wakeups` (hidden) turns it
//! off for A/B runs. bulk_insert's requests are not tiny (multi-row INSERTs of 512 KiB fill the
//! socket buffer and must wait for it to drain), so its runs keep the wake-ups
//! (`OltpConfig::drops_write_wakeups`).
//!
//! Tried and dropped: switching the socket to blocking mode and reading with plain read(2)
//! past the reactor (write + read per query, like sysbench's recv). It cut the syscalls per
//! query from 3 to 2 but, in interleaved 4-second runs on the 2-CPU test machine, gave 0.89-0.90x
//! the queries per second and 1.10-1.18x the client CPU per query of this mode (point_select and
//! read_only, 4 threads, 6 pairs each).

use std::collections::BTreeSet;
use std::sync::Mutex;

/// Serialises runtime creation so the new eventpoll fds can be told apart.
static CREATE: Mutex<()> = Mutex::new(());

fn eventpoll_fds() -> BTreeSet<i32> {
    let mut set = BTreeSet::new();
    if let Ok(rd) = std::fs::read_dir("/proc/self/fd") {
        for e in rd.flatten() {
            if let Ok(target) = std::fs::read_link(e.path()) {
                if target.to_string_lossy() == "anon_inode:[eventpoll]" {
                    if let Some(fd) = e.file_name().to_str().and_then(|s| s.parse().ok()) {
                        set.insert(fd);
                    }
                }
            }
        }
    }
    set
}

/// Builds a current-thread runtime and returns it with the eventpoll fds it created (tokio
/// 1.4x creates two: the I/O driver's and the signal/process driver's).
pub(crate) fn runtime_with_polls() -> std::io::Result<(tokio::runtime::Runtime, Vec<i32>)> {
    let _guard = CREATE.lock().unwrap_or_else(|p| p.into_inner());
    let before = eventpoll_fds();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    let after = eventpoll_fds();
    Ok((rt, after.difference(&before).copied().collect()))
}

/// A client thread's runtime and, when `tune` (skip write wake-ups), its eventpoll fds. When no
/// runtime can be built, tells the starting thread through `ready_tx`, still waits at the start
/// `barrier` (the others count on it) and returns `None`.
pub(crate) fn client_runtime(
    tune: bool,
    ready_tx: &std::sync::mpsc::Sender<Option<String>>,
    barrier: &std::sync::Barrier,
) -> Option<(tokio::runtime::Runtime, Vec<i32>)> {
    match runtime_with_polls() {
        Ok((rt, polls)) => Some((rt, if tune { polls } else { Vec::new() })),
        Err(e) => {
            let _ = ready_tx.send(Some(format!("could not start a tokio runtime: {e}")));
            barrier.wait();
            None
        }
    }
}

/// Joins a run's client threads and returns their outputs in connection order (`idx`). After an
/// abort (`all_done` false) a thread still waiting on the server is left behind: its numbers are
/// lost with it. A thread that panicked is reported through `on_panic`.
pub(crate) fn join_clients<T>(
    handles: Vec<std::thread::JoinHandle<Vec<T>>>,
    all_done: bool,
    mut on_panic: impl FnMut(),
    idx: impl Fn(&T) -> usize,
) -> Vec<T> {
    let mut outs = Vec::with_capacity(handles.len());
    for h in handles {
        if !all_done && !h.is_finished() {
            continue;
        }
        match h.join() {
            Ok(v) => outs.extend(v),
            Err(_) => on_panic(),
        }
    }
    outs.sort_by_key(|o| idx(o));
    outs
}

/// A client thread's sessions are connected (or not): drop write interest from its sockets when
/// they are (`tuned` counts them), tell the starting thread, wait at the start `barrier`.
pub(crate) fn sessions_ready<T>(
    sessions: &Result<T, String>,
    polls: &[i32],
    tuned: &std::sync::atomic::AtomicU64,
    ready_tx: &std::sync::mpsc::Sender<Option<String>>,
    barrier: &std::sync::Barrier,
) {
    if sessions.is_ok() {
        let n = drop_write_interest(polls);
        tuned.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
    }
    let _ = ready_tx.send(sessions.as_ref().err().cloned());
    barrier.wait();
}

/// Parses the `tfd:` lines of an eventpoll fdinfo: (fd, events, data).
pub(crate) fn parse_fdinfo(text: &str) -> Vec<(i32, u32, u64)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        if it.next() != Some("tfd:") {
            continue;
        }
        let fd = it.next().and_then(|s| s.parse().ok());
        let mut events = None;
        let mut data = None;
        while let Some(k) = it.next() {
            match k {
                "events:" => events = it.next().and_then(|s| u32::from_str_radix(s, 16).ok()),
                "data:" => data = it.next().and_then(|s| u64::from_str_radix(s, 16).ok()),
                _ => {}
            }
        }
        if let (Some(fd), Some(ev), Some(d)) = (fd, events, data) {
            out.push((fd, ev, d));
        }
    }
    out
}

/// Removes EPOLLOUT from every socket registered in the eventpoll instances `polls` (a
/// runtime's, from [`runtime_with_polls`]). Returns how many registrations were changed.
pub(crate) fn drop_write_interest(polls: &[i32]) -> usize {
    let mut changed = 0;
    for &epfd in polls {
        let Ok(text) = std::fs::read_to_string(format!("/proc/self/fdinfo/{epfd}")) else {
            continue;
        };
        for (fd, events, data) in parse_fdinfo(&text) {
            if events & libc::EPOLLOUT as u32 == 0 {
                continue;
            }
            let is_socket = std::fs::read_link(format!("/proc/self/fd/{fd}"))
                .map(|t| t.to_string_lossy().starts_with("socket:"))
                .unwrap_or(false);
            if !is_socket {
                continue;
            }
            let mut ev = libc::epoll_event {
                events: events & !(libc::EPOLLOUT as u32),
                u64: data,
            };
            // SAFETY: epoll_ctl on fds this process owns, with a valid event struct; MOD keeps
            // the registration's data (tokio's token) unchanged.
            if unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_MOD, fd, &mut ev) } == 0 {
                changed += 1;
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_eventpoll_fdinfo() {
        let text = "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\n\
            tfd:        4 events:       19 data:                0  pos:0 ino:1057 sdev:f\n\
            tfd:        9 events: 80002005 data:     7f5dc0012345  pos:0 ino:6a4f1 sdev:8\n";
        assert_eq!(
            parse_fdinfo(text),
            vec![(4, 0x19, 0), (9, 0x8000_2005, 0x7f5d_c001_2345)]
        );
    }
}
