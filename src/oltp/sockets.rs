//! How the run's connections wait for replies, so a query costs the client what it costs
//! sysbench (which blocks in recv()).
//!
//! * **Blocking I/O** (default when a client thread drives one connection over a unix socket,
//!   i.e. always unless `client_threads` < `threads`): the connection's socket is switched to
//!   blocking mode and read/written with plain read(2)/write(2) (a small patch in the vendored
//!   mysql_async, `Conn::set_blocking_io`). A query is then one write and one read that sleeps
//!   in the kernel: no failed read, no epoll_wait, no reactor bookkeeping. tokio's reactor
//!   cannot give this: it clears a socket's readiness after every short read, so it always asks
//!   epoll before the next one. The thread has nothing else to do while its query is in flight,
//!   exactly like a sysbench thread.
//! * **Reactor without write wake-ups** (several connections per thread, or TCP): tokio
//!   registers every socket for readable AND writable events (edge-triggered). On a unix stream
//!   socket the kernel signals EPOLLOUT each time the peer *reads* (unix_write_space has no "was
//!   full" check, unlike TCP), so every query woke the client twice. Requests are tiny (< 1 KiB)
//!   and strictly request/response, so a write never meets a full buffer: EPOLLOUT is dropped
//!   from the sockets of the run's own runtime (found through its eventpoll instances in
//!   /proc/self/fdinfo). If anything looks unexpected this is skipped; correctness never
//!   depends on it.
//!
//! The hidden `--client-io=reactor|plain` selects the second mode or plain tokio for A/B runs.

use super::ClientIo;
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

/// The I/O mode one client thread applies to each connection it (re)connects.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tuning {
    /// Switch unix-socket connections to blocking I/O (the thread drives only one).
    blocking: bool,
    /// The runtime's eventpoll fds whose sockets lose EPOLLOUT; empty: none.
    polls: Vec<i32>,
}

impl Tuning {
    /// `polls`: the thread's runtime's eventpoll fds; `connections`: how many it drives.
    pub(crate) fn new(mode: ClientIo, polls: Vec<i32>, connections: usize) -> Self {
        match mode {
            ClientIo::Auto => Tuning {
                blocking: connections == 1,
                polls,
            },
            ClientIo::Reactor => Tuning {
                blocking: false,
                polls,
            },
            ClientIo::Plain => Tuning::default(),
        }
    }

    /// Applies the mode to a freshly connected `conn` of this thread.
    pub(crate) fn apply(&self, conn: &mut mysql_async::Conn) {
        if self.blocking && matches!(conn.set_blocking_io(), Ok(true)) {
            return;
        }
        drop_write_interest(&self.polls);
    }
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
