//! The loop that runs a client thread's sessions on a place of the thread's own to sleep: its
//! io_uring ([`super::sharedring`]) or its epoll instance ([`super::threadepoll`]). It polls
//! the sessions that were woken, and when none is ready and every live one waits for its
//! reply, it sleeps in one system call (an `io_uring_enter(2)` that also submits what the
//! sessions queued, or an `epoll_wait(2)`). When a session waits for something of tokio's (a
//! reconnect, a pause between tries), it gives the thread back to tokio, whose reactor then
//! watches a descriptor that a reply makes readable (an eventfd registered with the ring, or
//! the epoll instance itself); tokio also gets the thread at every tick of the thread's timer
//! and every few hundred rounds, for its timers and tasks.
//!
//! A session must not wait for a reply and for tokio at once (none does; a timer beside a
//! reply fires at the thread timer's next tick, up to 100 ms late).

use super::sharedring::{SharedRing, RING};
use super::threadepoll::{ThreadEpoll, EPOLL};
use super::threadwait::DRIVING;
use std::future::Future;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// Sessions polled in a row before [`drive`] lets tokio run its own tasks.
const ROUNDS: u32 = 256;

/// The readiness of a thread's sessions under [`drive`].
struct Ready {
    flags: Vec<AtomicBool>,
    /// [`drive`] is running sessions (a wake needs no more than the flag).
    polling: AtomicBool,
    /// Wakes tokio's `block_on` when it is not.
    root: Mutex<Option<Waker>>,
}

struct Flag {
    ready: Arc<Ready>,
    index: usize,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.ready.flags[self.index].store(true, Relaxed);
        if !self.ready.polling.load(Relaxed) {
            if let Some(w) = self
                .ready
                .root
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
            {
                w.wake_by_ref();
            }
        }
    }
}

/// The ring's eventfd, watched by tokio's reactor while [`drive`] gives the thread back.
struct EventFd(RawFd);

impl AsRawFd for EventFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

/// What [`drive`] does when no session is ready to run.
enum Next {
    /// Sessions were woken: run them.
    Run,
    /// Give the thread to tokio (its timers, its tasks, a session waiting there).
    Yield,
}

/// Makes this thread's place to wait for connections with read timeout `timeout`, unless it
/// has one: its io_uring when `ring` and the kernel allows (Linux 6.1), else its epoll
/// instance. False where it gets neither (its connections then go through mysql_async).
pub fn install(timeout: std::time::Duration, ring: bool) -> bool {
    (!EPOLL.installed() && ring && RING.install(|| SharedRing::new(timeout)))
        || (!RING.installed() && EPOLL.install(|| ThreadEpoll::new(timeout)))
}

/// Drops this thread's ring or epoll instance (a test's thread, between ways).
pub fn remove() {
    RING.remove();
    EPOLL.remove();
}

/// Whether this thread waits in its io_uring (else its epoll instance, if installed).
pub fn in_ring() -> bool {
    RING.installed()
}

// Where the thread sleeps when every live session waits for its reply: its io_uring
// ([`super::sharedring`]) or its epoll instance ([`super::threadepoll`]; at most one is
// installed). Each function is `None` without either.

/// No session is ready: sleeps when every live session waits for its reply there, else takes
/// what has come without sleeping; wakes the sessions whose replies came.
fn sleep(live: usize) -> Next {
    let slept = RING
        .with(|r| {
            let all = r.waits >= live && r.watch(false).is_ok();
            let e = r.enter(usize::from(all));
            let (woke, ticked) = r.reap();
            (all && e.is_ok() || woke, ticked)
        })
        .or_else(|| {
            EPOLL.with(|e| {
                let all = e.waits >= live;
                e.wait(all)
                    .map_or((false, false), |(woke, t)| (all || woke, t))
            })
        });
    // Tokio's timers and tasks get the thread at every tick at the latest.
    match slept {
        Some((true, false)) => Next::Run,
        _ => Next::Yield,
    }
}

/// The descriptor tokio's reactor watches while the thread sleeps there.
fn event_fd() -> Option<RawFd> {
    RING.with(|r| r.event_fd())
        .or_else(|| EPOLL.with(|e| e.fd()))
}

/// Before the thread sleeps in tokio: the descriptor made to signal, then what came before
/// taken (true: a session was woken). An error: it cannot be watched.
fn watch() -> Option<std::io::Result<bool>> {
    let ring = RING.with(|r| {
        r.watch(true)?;
        let _ = r.enter(0);
        Ok(r.reap().0)
    });
    ring.or_else(|| EPOLL.with(|e| e.wait(false).map(|(woke, _)| woke)))
}

/// The thread's descriptor registered in the current runtime's reactor (inside `block_on`).
fn watch_event(fd: RawFd) -> Option<tokio::io::unix::AsyncFd<EventFd>> {
    // SAFETY: the descriptor stays open and the same while this registration lives: the ring
    // or epoll instance is the thread's, dropped after [`drive`] returns.
    unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(EventFd(fd), tokio::io::Interest::READABLE)
    }
    .ok()
}

/// Whether this thread's sessions are to run under [`drive`]: it has a ring or an epoll
/// instance of its own.
pub fn installed() -> bool {
    RING.installed() || EPOLL.installed()
}

/// Runs `sessions` to their ends on `rt` with this thread's ring or epoll instance
/// ([`install`]); their outputs in the same order.
pub(crate) fn drive<T>(
    rt: &tokio::runtime::Runtime,
    mut sessions: Vec<Pin<Box<dyn Future<Output = T> + '_>>>,
) -> Vec<T> {
    let n = sessions.len();
    let ready = Arc::new(Ready {
        flags: (0..n).map(|_| AtomicBool::new(true)).collect(),
        polling: AtomicBool::new(true),
        root: Mutex::new(None),
    });
    let wakers: Vec<Waker> = (0..n)
        .map(|index| {
            Waker::from(Arc::new(Flag {
                ready: ready.clone(),
                index,
            }))
        })
        .collect();
    let mut outs: Vec<Option<T>> = (0..n).map(|_| None).collect();
    let mut live = n;
    // Without either, the sessions run as tokio tasks would: the thread sleeps in tokio.
    let was_driving = DRIVING.replace(true);
    rt.block_on(async {
        let watched = event_fd().and_then(watch_event);
        std::future::poll_fn(|cx| {
            ready.polling.store(true, Relaxed);
            let mut rounds = 0;
            loop {
                for i in 0..n {
                    if outs[i].is_none() && ready.flags[i].swap(false, Relaxed) {
                        let mut c = Context::from_waker(&wakers[i]);
                        if let Poll::Ready(v) = sessions[i].as_mut().poll(&mut c) {
                            outs[i] = Some(v);
                            live -= 1;
                        }
                    }
                }
                if live == 0 {
                    return Poll::Ready(());
                }
                rounds += 1;
                let next = match ready.flags.iter().any(|f| f.load(Relaxed)) {
                    true if rounds < ROUNDS => Next::Run,
                    true => Next::Yield,
                    false => sleep(live),
                };
                if let Next::Run = next {
                    continue;
                }
                if ready.flags.iter().any(|f| f.load(Relaxed)) {
                    cx.waker().wake_by_ref(); // let tokio run its own, then go on
                    return Poll::Pending;
                }
                // A session waits for tokio (a reconnect, a pause): sleep there, woken by a
                // session's waker or the ring's eventfd (registered first, then the ring
                // looked at again for what came before).
                match watch() {
                    Some(Ok(true)) => continue,
                    Some(Err(_)) => {
                        cx.waker().wake_by_ref(); // no eventfd: come back at once
                        return Poll::Pending;
                    }
                    _ => {}
                }
                *ready.root.lock().unwrap_or_else(|p| p.into_inner()) = Some(cx.waker().clone());
                ready.polling.store(false, Relaxed);
                if ready.flags.iter().any(|f| f.load(Relaxed)) {
                    ready.polling.store(true, Relaxed);
                    continue;
                }
                if let Some(Poll::Ready(Ok(mut g))) =
                    watched.as_ref().map(|w| w.poll_read_ready(cx))
                {
                    g.clear_ready();
                    // The ring's eventfd reset (the epoll instance's events: the next sleep).
                    RING.with(|r| r.drain_event());
                    ready.polling.store(true, Relaxed);
                    continue;
                }
                return Poll::Pending;
            }
        })
        .await
    });
    DRIVING.set(was_driving);
    outs.into_iter().flatten().collect()
}
