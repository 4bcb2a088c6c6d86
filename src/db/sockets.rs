//! The one place that chooses how the measured loop's connections await their replies
//! ([`ClientIo`], hidden `--client-io`), the notes that say which way a run used, and the
//! client threads' runtime (the threads themselves: [`super::clients`]).
//!
//! * **direct** (the default of OLTP and TPC-C): spindle writes each statement and reads its
//!   reply itself ([`super::wire`]); a client thread's sessions are run by
//!   [`super::ringdrive`], which sleeps in the thread's io_uring ([`super::sharedring`], one
//!   `io_uring_enter` per statement) or, where the kernel refuses such a ring, in its epoll
//!   instance ([`super::threadepoll`]: a send, an `epoll_wait`, a receive); where the thread
//!   gets neither, mysql_async's path below.
//! * **direct-epoll**: the same, always in the thread's epoll instance (the A/B that keeps the
//!   fallback honest).
//! * **reactor**: mysql_async's own path in tokio's reactor, the baseline. On a unix stream
//!   socket the kernel signals EPOLLOUT each time the peer *reads*, so every query woke the
//!   client twice; the run's requests are tiny and strictly request/response, so EPOLLOUT is
//!   dropped from the sockets of the run's own runtime (found through /proc/self/fdinfo),
//!   unless `--keep-write-wakeups` or bulk_insert (`OltpConfig::drops_write_wakeups`).
//!
//! Retired (results that name them still load as [`ClientIo::Retired`] or their successor;
//! the command line refuses them): `uring`, `uring-send`, `direct-ring`, `direct-reactor`,
//! `direct-thread-epoll` (now `direct-epoll`).

use super::blocking::epoll_ctl;
use super::conn::ConnectionConfig;
use super::wire::Wire;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

/// The words `--client-io` takes.
const KEPT: &str = "direct (the default), direct-epoll or reactor";

/// How the measured loop's connections await replies (hidden `--client-io`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientIo {
    /// Spindle's own statements and replies, awaited in the client thread's io_uring, else
    /// in its epoll instance, else through mysql_async (the default).
    #[default]
    #[serde(alias = "direct_ring")]
    Direct,
    /// The same, always in the thread's epoll instance.
    #[serde(alias = "direct_thread_epoll")]
    DirectEpoll,
    /// mysql_async's own path in tokio's reactor, writable wake-ups dropped (the baseline).
    Reactor,
    /// A way a result written by an older spindle used and this one no longer has
    /// (`uring`, `uring_send`, `direct_reactor`); such a result loads but does not run.
    #[serde(alias = "uring", alias = "uring_send", alias = "direct_reactor")]
    Retired,
}

impl ClientIo {
    /// What results written before the choice existed used.
    pub fn before_uring() -> Self {
        ClientIo::Reactor
    }

    /// The hidden `--client-io` flag of `oltp run` and `tpcc run`: [`ClientIo::Direct`] when
    /// not given; a word that is gone is refused, naming the kept ones.
    pub fn from_flag(flag: Option<&str>) -> anyhow::Result<Self> {
        match flag {
            None => Ok(ClientIo::Direct),
            Some(s) => Self::parse(s).ok_or_else(|| {
                let gone =
                    "uring io_uring uring-send direct-ring direct-reactor direct-thread-epoll";
                match gone.split(' ').any(|w| w == s) {
                    true => anyhow::anyhow!("--client-io {s} was retired: use {KEPT}"),
                    false => anyhow::anyhow!("--client-io {s}: use {KEPT}"),
                }
            }),
        }
    }

    /// Whether spindle writes and reads the measured statements itself ([`super::wire`]).
    pub fn is_direct(self) -> bool {
        matches!(self, ClientIo::Direct | ClientIo::DirectEpoll)
    }

    /// OS threads for `connections` (OLTP's and TPC-C's rule): `asked` when not 0, else one per
    /// two connections, whose replies the thread awaits together, and no more than the CPUs
    /// (sysbench, tpcc_start: one per connection; BENCHMARKS.md "One client-thread rule").
    pub fn threads(connections: usize, asked: u32) -> usize {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let auto = connections.div_ceil(2).min(cpus);
        let n = if asked == 0 { auto } else { asked as usize };
        n.clamp(1, connections.max(1))
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "direct" => Some(ClientIo::Direct),
            "direct-epoll" => Some(ClientIo::DirectEpoll),
            "reactor" => Some(ClientIo::Reactor),
            _ => None,
        }
    }
}

/// How a run's connections waited for replies, for the result's notes.
#[derive(Debug, Default)]
pub struct IoStats {
    /// Connections whose measured statements spindle wrote and read itself ([`super::wire`]),
    /// and those of them that waited in their thread's io_uring ([`super::sharedring`]).
    direct: AtomicU64,
    direct_ring: AtomicU64,
    /// Sockets whose writable wake-ups were dropped.
    tuned: AtomicU64,
    /// Why a connection meant for spindle's own client went through mysql_async (the first
    /// reason seen).
    fallback: Mutex<Option<String>>,
}

impl IoStats {
    /// One line per way of waiting that the run used.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let (direct, ring) = (self.direct.load(Relaxed), self.direct_ring.load(Relaxed));
        if ring > 0 {
            notes.push(format!(
                "statements sent and replies read by spindle on {ring} connections (one \
                 io_uring_enter on the client thread's io_uring sends what its connections \
                 queued and waits for the replies)"
            ));
        }
        if direct > ring {
            notes.push(format!(
                "statements sent and replies read by spindle on {} connections (one send and \
                 one receive per statement, one wait in the client thread's epoll instance for \
                 the replies that came meanwhile)",
                direct - ring
            ));
        }
        let fallback = self.fallback.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(why) = fallback.as_ref() {
            notes.push(format!("{why}; replies awaited through mysql_async"));
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
    /// Write and read the measured statements on a blocking socket with this read timeout,
    /// the replies awaited in the thread's io_uring or epoll instance.
    direct: Option<Duration>,
    /// The runtime's eventpoll fds whose sockets lose EPOLLOUT; empty: no tuning.
    polls: Vec<i32>,
}

impl ThreadIo {
    /// Applies the thread's way of waiting to `conn` (connected and prepared) and counts it.
    /// The [`Wire`] the measured loop is to use for its statements, when direct.
    pub(crate) fn apply(&self, conn: &mut mysql_async::Conn, stats: &IoStats) -> Option<Wire> {
        if let Some(timeout) = self.direct {
            match super::wire::attach(conn, timeout) {
                Ok(Some(wire)) => {
                    stats.direct.fetch_add(1, Relaxed);
                    stats
                        .direct_ring
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
        let n = drop_write_interest(&self.polls);
        stats.tuned.fetch_add(n as u64, Relaxed);
        None
    }
}

/// Serialises runtime creation so the new eventpoll fds can be told apart.
static CREATE: Mutex<()> = Mutex::new(());

fn eventpoll_fds() -> BTreeSet<i32> {
    let Ok(rd) = std::fs::read_dir("/proc/self/fd") else {
        return BTreeSet::new();
    };
    let is_poll = |t: std::path::PathBuf| t.to_string_lossy() == "anon_inode:[eventpoll]";
    rd.flatten()
        .filter(|e| std::fs::read_link(e.path()).is_ok_and(is_poll))
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
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

/// A client thread's runtime and what it does to its connections: direct (`io`), with the
/// thread's io_uring or epoll instance installed for the connections' read timeout, else the
/// reactor with write wake-ups dropped when `skip_write_wakeups`. When no runtime can be built,
/// tells the starting thread through `ready_tx`, still waits at the start `barrier` (the others
/// count on it) and returns `None`.
pub(crate) fn client_runtime(
    io: ClientIo,
    skip_write_wakeups: bool,
    connection: &ConnectionConfig,
    ready_tx: &std::sync::mpsc::Sender<Option<String>>,
    barrier: &std::sync::Barrier,
) -> Option<(tokio::runtime::Runtime, ThreadIo)> {
    match runtime_with_polls() {
        Ok((rt, polls)) => {
            let timeout = connection.read_timeout();
            let ring = io == ClientIo::Direct;
            let direct = io.is_direct() && super::ringdrive::install(timeout, ring);
            let polls = if skip_write_wakeups { polls } else { vec![] };
            let direct = direct.then_some(timeout);
            Some((rt, ThreadIo { direct, polls }))
        }
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
            let link = std::fs::read_link(format!("/proc/self/fd/{fd}"));
            if !link.is_ok_and(|t| t.to_string_lossy().starts_with("socket:")) {
                continue;
            }
            // MOD keeps the registration's data (tokio's token) unchanged.
            let events = events & !(libc::EPOLLOUT as u32);
            if epoll_ctl(epfd, libc::EPOLL_CTL_MOD, fd, events, data).is_ok() {
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
    fn two_connections_per_client_thread_and_no_more_threads_than_cpus() {
        let cpus = std::thread::available_parallelism().unwrap().get();
        assert_eq!(ClientIo::threads(1, 0), 1);
        assert_eq!(ClientIo::threads(2, 0), 1);
        assert_eq!(ClientIo::threads(3, 0), 2.min(cpus));
        assert_eq!(ClientIo::threads(64, 0), cpus.min(32));
        // --client-threads is taken as asked, never more threads than connections.
        assert_eq!(ClientIo::threads(8, 8), 8);
        assert_eq!(ClientIo::threads(4, 9), 4);
        assert_eq!(ClientIo::threads(0, 0), 1);
    }

    #[test]
    fn a_result_that_names_a_retired_way_still_loads() {
        use crate::model::{bench::tests_support::sample_fileio_result, BenchResult, TestOptions};
        let mut r = sample_fileio_result();
        r.options = TestOptions::Oltp(Box::default());
        let stored = r.to_json_pretty();
        assert!(stored.contains(r#""client_io": "direct""#), "{stored}");
        for (word, io) in [
            ("uring", ClientIo::Retired),
            ("uring_send", ClientIo::Retired),
            ("direct_reactor", ClientIo::Retired),
            ("direct_ring", ClientIo::Direct),
            ("direct_thread_epoll", ClientIo::DirectEpoll),
            ("direct_epoll", ClientIo::DirectEpoll),
            ("reactor", ClientIo::Reactor),
        ] {
            let old = stored.replace(
                r#""client_io": "direct""#,
                &format!(r#""client_io": "{word}""#),
            );
            let loaded = BenchResult::from_json(&old, "old.json").unwrap();
            match loaded.options {
                TestOptions::Oltp(c) => assert_eq!(c.client_io, io, "{word}"),
                other => panic!("{other:?}"),
            }
        }
    }

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
