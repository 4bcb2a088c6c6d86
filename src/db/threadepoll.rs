//! One epoll instance for all the connections of a client thread, waited in by
//! [`super::ringdrive::drive`] instead of tokio's reactor where the thread cannot have its own
//! io_uring ([`super::sharedring`]; and with `--client-io=direct-epoll`): a send, a receive
//! and an `epoll_wait` shared by the thread's connections, without tokio's scheduler and
//! driver between a reply and the next request.
//!
//! Each socket is registered edge-triggered for EPOLLIN for the connection's life, its slot's
//! index as the event's data. A slot is ready from its edge until a receive leaves the socket
//! empty (fewer bytes than the room, or EAGAIN), so a wait whose reply has come receives at
//! once and one whose reply has not sleeps rather than trying a receive that finds nothing.
//!
//! The read timeout: the instance's own timer ([`Ticker::for_thread`]) wakes every wait at
//! each tick, and a wait gives up by [`ticks_apart`]. A wait used outside that loop sleeps in
//! the instance itself; the instance's descriptor is pollable, so while the thread sleeps in
//! tokio (a reconnect, a pause) tokio's reactor watches it.

use super::blocking::{
    epoll_ctl as ctl, epoll_instance, recv_append, ticks_apart, timed_out, Ticker,
};
use super::threadwait::{PerThread, DRIVING};
use std::cell::RefCell;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

/// The timer's epoll data (a slot's is its index).
const TICK: u64 = u64::MAX;
/// Events taken per `epoll_wait`.
const EVENTS: usize = 16;

/// Tells instances apart (a slot of an instance dropped since is gone).
static INSTANCES: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static EPOLL_CELL: RefCell<Option<ThreadEpoll>> = const { RefCell::new(None) };
}

/// This thread's epoll instance, if it has one.
pub(super) static EPOLL: PerThread<ThreadEpoll> = PerThread(&EPOLL_CELL);

fn with_epoll_of<R>(id: u64, f: impl FnOnce(&mut ThreadEpoll) -> R) -> Option<R> {
    EPOLL.with(|e| (e.id == id).then(|| f(e))).flatten()
}

#[derive(Default)]
struct Slot {
    fd: Option<RawFd>,
    /// An edge came and no receive has found the socket empty since.
    ready: bool,
    /// A tick came while the slot's wait slept.
    ticked: bool,
    waker: Option<Waker>,
}

pub(super) struct ThreadEpoll {
    id: u64,
    ep: OwnedFd,
    tick: Ticker,
    slots: Vec<Slot>,
    /// Sessions waiting for a reply (the loop sleeps here when every live one does).
    pub(super) waits: usize,
}

impl ThreadEpoll {
    pub(super) fn new(timeout: Duration) -> Option<ThreadEpoll> {
        let tick = Ticker::for_thread(timeout)?;
        let ep = epoll_instance()?;
        ctl(
            ep.as_raw_fd(),
            libc::EPOLL_CTL_ADD,
            tick.fd(),
            libc::EPOLLIN as u32,
            TICK,
        )
        .ok()?;
        Some(ThreadEpoll {
            id: INSTANCES.fetch_add(1, Relaxed),
            ep,
            tick,
            slots: Vec::new(),
            waits: 0,
        })
    }

    /// The instance's descriptor, readable while an event is pending.
    pub(super) fn fd(&self) -> RawFd {
        self.ep.as_raw_fd()
    }

    fn attach(&mut self, fd: RawFd) -> Option<u32> {
        let index = match self.slots.iter().position(|s| s.fd.is_none()) {
            Some(i) => i,
            None => {
                self.slots.push(Slot::default());
                self.slots.len() - 1
            }
        };
        let events = (libc::EPOLLIN | libc::EPOLLET) as u32;
        ctl(self.fd(), libc::EPOLL_CTL_ADD, fd, events, index as u64).ok()?;
        // Ready until a receive finds the socket empty: bytes may have come before the edge
        // this registration could see.
        self.slots[index] = Slot {
            fd: Some(fd),
            ready: true,
            ..Slot::default()
        };
        Some(index as u32)
    }

    fn release(&mut self, index: u32) {
        let slot = std::mem::take(&mut self.slots[index as usize]);
        if let Some(fd) = slot.fd {
            let _ = ctl(self.fd(), libc::EPOLL_CTL_DEL, fd, 0, 0);
        }
    }

    /// Takes the events that came, sleeping until one does when `block`: wakes the slots that
    /// became readable, and at a tick every waiting slot. (woke a slot, ticked).
    pub(super) fn wait(&mut self, block: bool) -> io::Result<(bool, bool)> {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; EVENTS];
        let timeout = if block { -1 } else { 0 };
        // SAFETY: the kernel writes at most EVENTS events into `evs`, which holds EVENTS.
        let n = unsafe {
            libc::epoll_wait(
                self.ep.as_raw_fd(),
                evs.as_mut_ptr(),
                EVENTS as i32,
                timeout,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EINTR) => Ok((false, false)),
                _ => Err(e),
            };
        }
        let (mut woke, mut ticked) = (false, false);
        for ev in &evs[..n as usize] {
            let data = ev.u64;
            if data == TICK {
                self.tick.drain();
                ticked = true;
                for s in self.slots.iter_mut().filter(|s| s.waker.is_some()) {
                    s.ticked = true;
                    if let Some(w) = s.waker.take() {
                        w.wake();
                    }
                    woke = true;
                }
            } else if let Some(s) = self.slots.get_mut(data as usize) {
                s.ready = true;
                if let Some(w) = s.waker.take() {
                    w.wake();
                    woke = true;
                }
            }
        }
        Ok((woke, ticked))
    }
}

/// A wire's place in its thread's instance.
#[derive(Debug)]
pub(super) struct EpollSlot {
    instance: u64,
    index: u32,
    fd: RawFd,
    timeout: Duration,
}

/// Counts a wait among the instance's while alive.
struct Waiting(u64);

impl Drop for Waiting {
    fn drop(&mut self) {
        with_epoll_of(self.0, |e| e.waits -= 1);
    }
}

impl EpollSlot {
    /// A slot in this thread's instance for socket `fd` (which outlives it) with read timeout
    /// `timeout`; `None` without an instance or when the kernel refuses the registration.
    pub(super) fn attach(fd: RawFd, timeout: Duration) -> Option<EpollSlot> {
        let (instance, index) = EPOLL.with(|e| Some((e.id, e.attach(fd)?))).flatten()?;
        Some(EpollSlot {
            instance,
            index,
            fd,
            timeout,
        })
    }

    /// Waits until the socket is readable and receives what has come into `buf`'s spare
    /// capacity (the caller makes room): `Ok(0)` when the peer closed, `TimedOut` after the read
    /// timeout without a byte. The thread's other sessions run meanwhile.
    pub(super) async fn receive(&self, buf: &mut Vec<u8>) -> io::Result<usize> {
        let gone = || io::Error::other("the thread's epoll instance is gone");
        with_epoll_of(self.instance, |e| e.waits += 1).ok_or_else(gone)?;
        let _waiting = Waiting(self.instance);
        let mut first_tick: Option<Instant> = None;
        std::future::poll_fn(|cx| loop {
            let ready = with_epoll_of(self.instance, |e| {
                let s = &mut e.slots[self.index as usize];
                if s.ready {
                    return Ok(true);
                }
                // Never early: the first tick seen came after the wait began.
                if std::mem::take(&mut s.ticked) && ticks_apart(&mut first_tick, self.timeout) {
                    return Err(timed_out(self.timeout));
                }
                match &s.waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => s.waker = Some(cx.waker().clone()),
                }
                Ok(false)
            });
            match ready {
                None => return Poll::Ready(Err(gone())),
                Some(Err(e)) => return Poll::Ready(Err(e)),
                Some(Ok(true)) => match self.take(buf) {
                    Some(r) => return Poll::Ready(r),
                    None => continue,
                },
                Some(Ok(false)) if DRIVING.get() => return Poll::Pending,
                // A connection on its own: sleep here.
                Some(Ok(false)) => {
                    if let Some(Err(e)) = with_epoll_of(self.instance, |e| e.wait(true)) {
                        return Poll::Ready(Err(e));
                    }
                }
            }
        })
        .await
    }

    /// One receive of a ready slot: `None` if it found the socket empty (the slot then waits
    /// for the next edge).
    fn take(&self, buf: &mut Vec<u8>) -> Option<io::Result<usize>> {
        let room = buf.capacity() - buf.len();
        let r = recv_append(self.fd, buf, libc::MSG_DONTWAIT);
        let drained = match &r {
            Ok(n) => *n < room,
            Err(e) => e.raw_os_error() == Some(libc::EAGAIN),
        };
        if drained {
            with_epoll_of(self.instance, |e| {
                e.slots[self.index as usize].ready = false
            });
        }
        match r {
            Ok(n) => Some(Ok(n)),
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

impl Drop for EpollSlot {
    fn drop(&mut self) {
        with_epoll_of(self.instance, |e| e.release(self.index));
    }
}
