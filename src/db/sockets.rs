//! How the measured loop's connections wait for replies, and the client threads' runtime
//! (the threads themselves: [`super::clients`]).
//!
//! * **Direct** (`ClientIo::Direct`, the default of OLTP and TPC-C): after connecting and
//!   preparing, the socket leaves mysql_async's tokio stream and the measured statements are
//!   written and read by spindle's own protocol code ([`super::wire`]), about a third of the
//!   client's user time per query of the paths below (BENCHMARKS.md). A thread that drives one
//!   connection sends each statement and receives its reply in one `io_uring_enter`
//!   ([`super::ringwire`]) where the kernel has what that needs (6.1); on older kernels, and
//!   with the hidden `--client-io=direct-epoll`, in one send, one `epoll_wait` and one
//!   receive. A thread that drives several (OLTP's default: two) runs their sessions in
//!   spindle's loop rather than tokio's scheduler ([`super::ringdrive`]) and lets the others go
//!   on while a reply is on its way: each statement queued linked to its reply's receive in
//!   the thread's own io_uring, one `io_uring_enter` for whatever the thread's connections
//!   queued and the replies that came ([`super::sharedring`]); where the kernel refuses such a
//!   ring (and with the hidden `--client-io=direct-thread-epoll`) a send, one `epoll_wait` in
//!   the thread's own epoll instance for the replies that came meanwhile and a receive
//!   ([`super::threadepoll`]); with the hidden `--client-io=direct-reactor` the same in the
//!   thread's tokio reactor.
//! * **io_uring** (`ClientIo::Uring`, hidden `--client-io=uring`, for a client thread that
//!   drives one connection): after connecting and preparing, the connection's socket leaves tokio's
//!   reactor and is read through its own ring ([`super::uring`], a vendored mysql_async patch:
//!   `Conn::set_blocking_io`): one `io_uring_enter` per statement, the request sent in it
//!   (sysbench's blocking client does one send and one receive). The thread sleeps in the kernel while its
//!   one query is in flight; nothing else runs on it. A reply that does not come within the
//!   connection's read timeout is a lost connection (2013).
//! * **The reactor without write wake-ups** (`ClientIo::Reactor`, hidden `--client-io=reactor`;
//!   threads with several connections, or where the others are unavailable): tokio registers
//!   every socket for readable AND writable events (edge-triggered). On a unix stream socket
//!   the kernel signals EPOLLOUT each time the peer *reads* (unix_write_space has no "was full"
//!   check, unlike TCP), so every query woke the client thread twice: once when the server read
//!   the request (useless), once when the reply arrived. During `run` the requests are tiny
//!   (under 1 KiB) and strictly request/response, so a write never meets a full buffer and
//!   never needs a writable event: EPOLLOUT is dropped from the sockets of the run's own
//!   runtime, found through its eventpoll instances in /proc/self/fdinfo (tokio 1.4x creates
//!   two per runtime). A query then costs write + epoll_wait + read. If anything looks
//!   unexpected the tuning is skipped; correctness never depends on it. `--keep-write-wakeups`
//!   (hidden) turns it off for A/B runs. bulk_insert's requests are not tiny (multi-row INSERTs
//!   of 512 KiB fill the socket buffer and must wait for it to drain), so its runs keep the
//!   wake-ups (`OltpConfig::drops_write_wakeups`).
//!
//! Tried and dropped: a blocking `read(2)` past the reactor (write + read per query). On a unix
//! socket a reader sleeping in `recv` is also woken when the server consumes the request (see
//! [`super::uring`]), so it cost more CPU per query than epoll: 0.89-0.90x the queries per
//! second and 1.10-1.18x the client CPU per query in interleaved runs. The same held for the
//! direct path ([`super::wire`]), which therefore waits in io_uring or in an epoll instance of
//! its own.

use super::conn::ConnectionConfig;
use super::wire::{Wait, Wire};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

/// How the measured loop's connections wait for replies (hidden `--client-io`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientIo {
    /// A client thread with one connection reads it through io_uring, the request sent in
    /// the same system call (one `io_uring_enter` per statement); threads with several
    /// connections use the reactor. Fewer system calls than sysbench, but more client CPU per
    /// query than the reactor on a quiet 2-core machine (BENCHMARKS.md), hence not the default.
    Uring,
    /// The same with the request sent by its own `send(2)` (two system calls per statement).
    UringSend,
    /// tokio's reactor for every connection (epoll_wait + recv per reply), writable wake-ups
    /// dropped.
    #[default]
    Reactor,
    /// The default of OLTP and TPC-C: the measured loop's statements written and read by spindle
    /// itself on the socket made blocking ([`super::wire`]; TPC-C's rows decoded by
    /// mysql_common, [`super::Link`]): a thread's only connection with one `io_uring_enter`
    /// per statement ([`super::ringwire`]), or where the kernel lacks what that needs, as
    /// `DirectEpoll`; a thread's several connections through the thread's own io_uring, run by
    /// spindle's loop ([`super::sharedring`], [`super::ringdrive`]): one `io_uring_enter` sends
    /// what they queued and waits for the replies, about one system call per statement; where
    /// the kernel refuses such a ring, each statement with a send and a receive, the replies
    /// awaited together in the thread's own epoll instance ([`super::threadepoll`]), and
    /// where it refuses that too in the thread's tokio reactor ([`super::wire::Wait::Shared`]).
    Direct,
    /// The same, a thread's only connection waiting in epoll: one send, one `epoll_wait` and
    /// one receive per statement.
    DirectEpoll,
    /// As `Direct`, a thread's several connections through the thread's own io_uring or else
    /// its reactor (the hidden mode that measured the ring before it became the default).
    DirectRing,
    /// As `Direct`, a thread's several connections waiting in the thread's tokio reactor, each
    /// statement's task scheduled by tokio ([`super::reactorwait`]): the same system calls as
    /// the thread epoll's, more user-space instructions per statement (BENCHMARKS.md).
    DirectReactor,
    /// As `Direct`, a thread's several connections waiting in the thread's own epoll instance
    /// ([`super::threadepoll`]): the fewest user-space instructions per statement, three
    /// system calls per statement against the ring's one, the same client CPU per query on
    /// BENCHMARKS.md's VM.
    DirectThreadEpoll,
}

impl ClientIo {
    /// What results written before the choice existed used.
    pub fn before_uring() -> Self {
        ClientIo::Reactor
    }

    /// The hidden `--client-io` flag of `oltp run` and `tpcc run`: [`ClientIo::Direct`] when
    /// not given.
    pub fn from_flag(flag: Option<&str>) -> anyhow::Result<Self> {
        match flag {
            None => Ok(ClientIo::Direct),
            Some(s) => Self::parse(s).ok_or_else(|| {
                anyhow::anyhow!(
                    "--client-io {s}: use direct, direct-epoll, reactor, uring, uring-send, \
                     direct-ring, direct-thread-epoll or direct-reactor"
                )
            }),
        }
    }

    /// Whether spindle writes and reads the measured statements itself ([`super::wire`]).
    pub fn is_direct(self) -> bool {
        matches!(
            self,
            ClientIo::Direct
                | ClientIo::DirectEpoll
                | ClientIo::DirectRing
                | ClientIo::DirectReactor
                | ClientIo::DirectThreadEpoll
        )
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "uring" | "io_uring" => Some(ClientIo::Uring),
            "uring-send" => Some(ClientIo::UringSend),
            "reactor" => Some(ClientIo::Reactor),
            "direct" => Some(ClientIo::Direct),
            "direct-epoll" => Some(ClientIo::DirectEpoll),
            "direct-ring" => Some(ClientIo::DirectRing),
            "direct-reactor" => Some(ClientIo::DirectReactor),
            "direct-thread-epoll" => Some(ClientIo::DirectThreadEpoll),
            _ => None,
        }
    }
}

/// How a run's connections waited for replies, for the result's notes.
#[derive(Debug, Default)]
pub struct IoStats {
    /// Connections read through io_uring, and those of them whose requests went out linked to
    /// the receive.
    uring: AtomicU64,
    linked: AtomicU64,
    /// Connections whose measured statements spindle wrote and read itself ([`super::wire`]),
    /// and those of them that did through io_uring ([`super::ringwire`]).
    direct: AtomicU64,
    direct_ring: AtomicU64,
    /// Those of them that shared their thread with others ([`Wait::Shared`]), and those of
    /// these that waited in the thread's io_uring ([`super::sharedring`]).
    direct_shared: AtomicU64,
    direct_shared_ring: AtomicU64,
    /// Sockets whose writable wake-ups were dropped.
    tuned: AtomicU64,
    /// Why a connection meant for io_uring used the reactor (the first reason seen).
    fallback: Mutex<Option<String>>,
}

impl IoStats {
    /// One line per way of waiting that the run used.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let (uring, linked) = (self.uring.load(Relaxed), self.linked.load(Relaxed));
        if uring > 0 {
            notes.push(format!(
                "replies received through io_uring on {uring} connections ({})",
                match linked {
                    0 => "one send and one io_uring_enter per statement".to_string(),
                    n if n == uring =>
                        "one io_uring_enter per statement, the request sent in it".into(),
                    n => format!("on {n} of them the request sent in the same io_uring_enter"),
                }
            ));
        }
        let (direct, ring) = (self.direct.load(Relaxed), self.direct_ring.load(Relaxed));
        if ring > 0 {
            notes.push(format!(
                "statements sent and replies read by spindle on {ring} connections \
                 (one io_uring_enter per statement, the request sent in it)"
            ));
        }
        let shared = self.direct_shared.load(Relaxed);
        let shared_ring = self.direct_shared_ring.load(Relaxed);
        if shared_ring > 0 {
            notes.push(format!(
                "statements sent and replies read by spindle on {shared_ring} connections \
                 sharing client threads and each thread's io_uring (one io_uring_enter sends \
                 what the thread's connections queued and waits for the replies)"
            ));
        }
        if shared > shared_ring {
            notes.push(format!(
                "statements sent and replies read by spindle on {} connections sharing \
                 client threads (one send and one receive per statement, one wait in the \
                 thread's epoll for the replies that came meanwhile)",
                shared - shared_ring
            ));
        }
        if direct > ring + shared {
            notes.push(format!(
                "statements sent and replies read by spindle on {} connections \
                 (one send, one wait and one receive per statement)",
                direct - ring - shared
            ));
        }
        if let Some(why) = self
            .fallback
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            notes.push(format!("{why}; replies awaited through epoll"));
        }
        let tuned = self.tuned.load(Relaxed);
        if tuned > 0 {
            notes.push(format!(
                "writable wake-ups dropped on {tuned} client sockets (one wake-up per query instead of two)"
            ));
        }
        notes
    }

    fn fell_back(&self, why: String) {
        let mut f = self.fallback.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert(why);
    }
}

/// What one client thread does to each connection it (re)connects, before the measured loop
/// uses it.
#[derive(Clone, Debug)]
pub(crate) struct ThreadIo {
    /// Read through io_uring with this read timeout (the thread drives one connection), and
    /// whether requests go out linked to the receive.
    uring: Option<(Duration, bool)>,
    /// Write and read the measured statements on a blocking socket, with this read timeout,
    /// awaiting replies as [`Wait`] says (the thread's own way with one connection, its
    /// reactor with several).
    direct: Option<(Duration, Wait)>,
    /// The runtime's eventpoll fds whose sockets lose EPOLLOUT; empty: no tuning.
    polls: Vec<i32>,
}

impl ThreadIo {
    /// Applies the thread's way of waiting to `conn` (connected and prepared) and counts it.
    /// The [`Wire`] the measured loop is to use for its statements, in `ClientIo::Direct`.
    pub(crate) fn apply(&self, conn: &mut mysql_async::Conn, stats: &IoStats) -> Option<Wire> {
        if let Some((timeout, wait)) = self.direct {
            match super::wire::attach(conn, timeout, wait) {
                Ok(Some(wire)) => {
                    stats.direct.fetch_add(1, Relaxed);
                    stats
                        .direct_ring
                        .fetch_add(u64::from(wire.uses_ring()), Relaxed);
                    stats
                        .direct_shared
                        .fetch_add(u64::from(wire.shares_thread()), Relaxed);
                    stats
                        .direct_shared_ring
                        .fetch_add(u64::from(wire.shares_ring()), Relaxed);
                    return Some(wire);
                }
                Ok(None) => stats.fell_back("direct I/O not used: not a plain socket".into()),
                Err(e) => {
                    stats.fell_back(format!("direct I/O not used: {e}"));
                    return None;
                }
            }
        }
        if let Some((timeout, link)) = self.uring {
            match read_through_io_uring(conn, timeout, link) {
                Ok(Some(linked)) => {
                    stats.uring.fetch_add(1, Relaxed);
                    stats.linked.fetch_add(u64::from(linked), Relaxed);
                    return None;
                }
                Ok(None) => stats.fell_back("io_uring not used: not a plain socket".into()),
                Err(e) => stats.fell_back(format!("io_uring not used: {e}")),
            }
        }
        let n = drop_write_interest(&self.polls);
        stats.tuned.fetch_add(n as u64, Relaxed);
        None
    }
}

/// From now on `conn`'s replies are received through io_uring ([`super::uring`]), each within
/// `timeout`, and (`link`) each request goes out in the same system call. Call it on the thread
/// that will use the connection, when the connection is that thread's only work.
/// `Ok(Some(linked))`: moved, requests linked to the receives or not (the kernel cannot before
/// 5.17). `Ok(None)`: not a plain TCP or unix socket (TLS), nothing changed. On `Err` either
/// io_uring is unavailable (nothing changed) or tokio could not release the socket (the
/// connection is closed: its next statement fails as a lost connection).
pub fn read_through_io_uring(
    conn: &mut mysql_async::Conn,
    timeout: Duration,
    link: bool,
) -> std::io::Result<Option<bool>> {
    let ring = super::uring::Ring::new()
        .map_err(|e| std::io::Error::new(e.kind(), format!("io_uring_setup failed ({e})")))?;
    let linked = link && ring.can_link();
    let moved = conn
        .set_blocking_io(|fd| Box::new(ring.attach(fd, timeout, linked)))
        .map_err(|e| {
            std::io::Error::new(e.kind(), format!("tokio did not release the socket ({e})"))
        })?;
    Ok(moved.then_some(linked))
}

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

/// A client thread's runtime and what it does to its `connections` connections: io_uring
/// (`io`, a single connection, with the connection's read timeout), else the reactor with write
/// wake-ups dropped when `skip_write_wakeups`. When no runtime can be built, tells the starting
/// thread through `ready_tx`, still waits at the start `barrier` (the others count on it) and
/// returns `None`.
pub(crate) fn client_runtime(
    io: ClientIo,
    skip_write_wakeups: bool,
    connection: &ConnectionConfig,
    connections: usize,
    ready_tx: &std::sync::mpsc::Sender<Option<String>>,
    barrier: &std::sync::Barrier,
) -> Option<(tokio::runtime::Runtime, ThreadIo)> {
    match runtime_with_polls() {
        Ok((rt, polls)) => Some((
            rt,
            ThreadIo {
                uring: (matches!(io, ClientIo::Uring | ClientIo::UringSend) && connections == 1)
                    .then(|| (connection.read_timeout(), io == ClientIo::Uring)),
                direct: io.is_direct().then(|| {
                    let wait = match (connections, io) {
                        (1, ClientIo::DirectEpoll) => Wait::Epoll,
                        (1, _) => Wait::Ring,
                        // The thread's own io_uring or epoll instance where the kernel allows,
                        // else its reactor.
                        (_, ClientIo::Direct) => {
                            let timeout = connection.read_timeout();
                            let _ = super::sharedring::install(timeout)
                                || super::threadepoll::install(timeout);
                            Wait::Shared
                        }
                        (_, ClientIo::DirectRing) => {
                            super::sharedring::install(connection.read_timeout());
                            Wait::Shared
                        }
                        (_, ClientIo::DirectThreadEpoll) => {
                            super::threadepoll::install(connection.read_timeout());
                            Wait::Shared
                        }
                        _ => Wait::Shared,
                    };
                    (connection.read_timeout(), wait)
                }),
                polls: if skip_write_wakeups {
                    polls
                } else {
                    Vec::new()
                },
            },
        )),
        Err(e) => {
            let _ = ready_tx.send(Some(format!("could not start a tokio runtime: {e}")));
            barrier.wait();
            None
        }
    }
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
fn drop_write_interest(polls: &[i32]) -> usize {
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
