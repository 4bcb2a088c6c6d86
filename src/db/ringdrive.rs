//! The loop that runs a client thread's sessions on the thread's io_uring
//! ([`super::sharedring`]): it polls the sessions that were woken, and when none is ready and
//! every live one waits for its reply in the ring, it sleeps in one `io_uring_enter(2)` that also
//! submits what the sessions queued. When a session waits for something of tokio's (a
//! reconnect, a pause between tries), it gives the thread back to tokio, whose reactor then
//! watches an eventfd registered with the ring so a reply wakes it there; tokio also gets the
//! thread at every tick of the ring's timer and every few hundred rounds, for its timers and
//! tasks.
//!
//! A session must not wait for a reply and for tokio at once (none does; a timer beside a
//! reply fires at the ring's next tick, up to 100 ms late).

use super::sharedring::{with_ring, DRIVING};
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

/// No session is ready: sleeps in the ring when every live session waits for its reply there,
/// else takes what has come without sleeping; wakes the sessions whose replies came.
fn sleep_in_ring(live: usize) -> Next {
    let slept = with_ring(|r| {
        let all = r.waits >= live && r.watch(false).is_ok();
        let e = r.enter(usize::from(all));
        let (woke, ticked) = r.reap();
        (all && e.is_ok() || woke, ticked)
    });
    match slept {
        // Tokio's timers and tasks get the thread at every tick at the latest.
        Some((_, true)) => Next::Yield,
        Some((true, _)) => Next::Run,
        _ => Next::Yield,
    }
}

/// The ring's eventfd registered in the current runtime's reactor (inside `block_on`).
fn watch_event(fd: RawFd) -> Option<tokio::io::unix::AsyncFd<EventFd>> {
    // SAFETY: the ring's eventfd stays open and the same while this registration lives: the
    // ring is the thread's, dropped after [`drive`] returns.
    unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(EventFd(fd), tokio::io::Interest::READABLE)
    }
    .ok()
}

/// Runs `sessions` to their ends on `rt` with this thread's ring
/// ([`super::sharedring::install`]); their outputs in the same order.
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
    let was_driving = DRIVING.replace(true);
    rt.block_on(async {
        let watched = with_ring(|r| r.event_fd()).and_then(watch_event);
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
                    false => sleep_in_ring(live),
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
                let watching = with_ring(|r| {
                    r.watch(true)?;
                    let _ = r.enter(0);
                    Ok::<_, std::io::Error>(r.reap().0)
                });
                match watching {
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
                    with_ring(|r| r.drain_event());
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
