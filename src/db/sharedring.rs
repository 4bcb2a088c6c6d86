//! One io_uring for all the connections of a client thread (the default way to await a
//! reply): each statement's request is queued linked before the receive of its reply (a send
//! that worked posts no completion, IORING_FEAT_CQE_SKIP; the receive arms its EPOLLIN-only
//! poll first, IORING_RECVSEND_POLL_FIRST), and the session's task waits. When every session
//! of the thread waits, [`super::ringdrive`] makes one `io_uring_enter(2)` that submits every
//! request queued since the last one and sleeps until a reply has been received: at most one
//! system call per statement. A wait used outside that loop (a test's) sleeps in the ring.
//!
//! The read timeout: the ring's own timer ([`Ticker::for_thread`]), watched by a multishot
//! poll, wakes every wait at each tick; a wait gives up by [`ticks_apart`], cancelling.

//! The request and reply buffers belong to the ring while the kernel may use them: a wait
//! moves the wire's buffers into the connection's slot and gets them back with the reply. A
//! wait given up (its timeout, or its caller dropped it) leaves them to the slot until the
//! kernel's completion says it let go of them; a ring dropped before that leaks them rather
//! than free memory the kernel may still write.
//!
//! The ring is single-issuer with deferred task work (Linux 6.1: completions run only when the
//! thread enters the ring, measured at 1.41x the point_selects per second of a ring that runs
//! them when it next enters the kernel, BENCHMARKS.md) and is held by the client thread that
//! made it ([`RING`]). Such a ring's own descriptor does not wake an epoll waiter
//! on Linux 6.1 when a reply comes, so while the thread sleeps in tokio's reactor instead of
//! the ring an eventfd registered with the ring ([`SharedRing::watch`]) stands in: the kernel
//! signals it when completion work is queued.

use super::blocking::{ticks_apart, timed_out, Ticker};
use super::threadwait::{PerThread, DRIVING};
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::cell::RefCell;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::RawFd;
use std::sync::atomic::Ordering::Relaxed;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// Connections one thread's ring can hold (registered files); more go through mysql_async.
const SLOTS: u32 = 64;
/// user_data: `slot << 2 | kind`, and the timer's poll.
const REPLY: u64 = 1;
const SEND: u64 = 2;
const CANCEL: u64 = 3;
const TICK: u64 = u64::MAX;
/// IORING_ENTER_GETEVENTS: the call runs completions (and waits for `min_complete`).
const ENTER_GETEVENTS: u32 = 1;

/// IORING_RECVSEND_POLL_FIRST (the receive's ioprio): arm the poll without trying first.
const POLL_FIRST: u16 = 1;

/// Requests up to this size go out linked to the receive; larger ones with `send(2)` first.
pub(super) const LINK_MAX: usize = 64 * 1024;

/// The receive of a reply into `buf` on registered file `file`; armed without trying first when
/// a request goes out linked before it (the reply cannot be there yet).
fn reply_entry(
    file: types::Fixed,
    buf: &mut [MaybeUninit<u8>],
    after_request: bool,
    user_data: u64,
) -> squeue::Entry {
    let len = buf.len().min(u32::MAX as usize) as u32;
    opcode::Recv::new(file, buf.as_mut_ptr().cast::<u8>(), len)
        .ioprio(if after_request { POLL_FIRST } else { 0 })
        .build()
        .user_data(user_data)
}

/// Request `out` sent on `file`, linked before the entry that follows it (its reply's receive);
/// it posts a completion only if it fails.
fn request_entry(file: types::Fixed, out: &[u8], user_data: u64) -> squeue::Entry {
    opcode::Send::new(file, out.as_ptr(), out.len() as u32)
        .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
        .build()
        .flags(squeue::Flags::IO_LINK | squeue::Flags::SKIP_SUCCESS)
        .user_data(user_data)
}

/// The multishot poll of `tick`'s timerfd.
fn tick_entry(tick: &Ticker, user_data: u64) -> squeue::Entry {
    opcode::PollAdd::new(types::Fd(tick.fd()), libc::POLLIN as u32)
        .multi(true)
        .build()
        .user_data(user_data)
}

thread_local! {
    static RING_CELL: RefCell<Option<SharedRing>> = const { RefCell::new(None) };
}

/// This thread's ring, if it has one.
pub(super) static RING: PerThread<SharedRing> = PerThread(&RING_CELL);

/// Runs `f` on this thread's ring if it is ring `id` (a slot of a ring dropped since is gone).
fn with_ring_of<R>(id: u64, f: impl FnOnce(&mut SharedRing) -> R) -> Option<R> {
    RING.with(|r| (r.id == id).then(|| f(r))).flatten()
}

/// Tells rings apart.
static RINGS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A request's and its reply's buffers, the ring's while the kernel may use them.
struct Bufs {
    out: Vec<u8>,
    inb: Vec<u8>,
}

enum State {
    /// No request in flight.
    Idle,
    /// A receive (with the request linked before it) in flight; the wait's waker, and whether
    /// a tick came since the wait last looked.
    Waiting {
        bufs: Bufs,
        waker: Option<Waker>,
        ticked: bool,
    },
    /// The receive's (or a failed send's) result, not taken yet.
    Done { bufs: Bufs, result: i32 },
    /// Given up; the kernel may still hold the buffers until the receive's completion.
    Abandoned(Bufs),
}

struct Slot {
    /// A wire holds the slot (its socket is the registered file of the same index).
    held: bool,
    state: State,
}

pub(super) struct SharedRing {
    id: u64,
    ring: IoUring,
    tick: Ticker,
    /// The timer's multishot poll is armed.
    ticking: bool,
    slots: Vec<Slot>,
    /// Waits alive (one per session waiting for its reply).
    pub(super) waits: usize,
    /// Signalled by the kernel for each completion while registered ([`SharedRing::watch`]).
    event: std::os::fd::OwnedFd,
    watching: bool,
}

impl SharedRing {
    pub(super) fn new(timeout: Duration) -> Option<SharedRing> {
        let mut b = IoUring::builder();
        b.setup_single_issuer().setup_defer_taskrun();
        let ring = b.build(2 * SLOTS + 8).ok()?;
        if !ring.params().is_feature_skip_cqe_on_success() {
            return None;
        }
        ring.submitter().register_files_sparse(SLOTS).ok()?;
        let mut r = SharedRing {
            id: RINGS.fetch_add(1, Relaxed),
            ring,
            tick: Ticker::for_thread(timeout)?,
            ticking: false,
            slots: Vec::new(),
            waits: 0,
            event: eventfd()?,
            watching: false,
        };
        r.arm_ticks().ok()?;
        r.enter(0).ok()?;
        // A kernel that cannot poll that way fails the request at once.
        r.reap();
        r.ticking.then_some(r)
    }

    /// The eventfd that [`SharedRing::watch`] registers.
    pub(super) fn event_fd(&self) -> RawFd {
        use std::os::fd::AsRawFd;
        self.event.as_raw_fd()
    }

    /// Registers the eventfd with the ring (`on`, before the thread sleeps elsewhere, e.g. in
    /// tokio's reactor with the eventfd watched there) or unregisters it (before it sleeps in
    /// the ring again: no signal per completion meanwhile). No system call when it already is.
    pub(super) fn watch(&mut self, on: bool) -> io::Result<()> {
        if on != self.watching {
            match on {
                true => self.ring.submitter().register_eventfd(self.event_fd())?,
                false => self.ring.submitter().unregister_eventfd()?,
            }
            self.watching = on;
            self.drain_event();
        }
        Ok(())
    }

    /// Takes the eventfd's count (non-blocking), so it reads as not ready until its next signal.
    pub(super) fn drain_event(&self) {
        let mut count = [0u8; 8];
        // SAFETY: reads the eventfd's 8-byte count into `count` (non-blocking).
        unsafe { libc::read(self.event_fd(), count.as_mut_ptr().cast(), 8) };
    }

    /// Queues the timer's multishot poll.
    fn arm_ticks(&mut self) -> io::Result<()> {
        self.push(&[tick_entry(&self.tick, TICK)])?;
        self.ticking = true;
        Ok(())
    }

    /// Queues `sqes`, submitting what is queued first if the queue is full.
    fn push(&mut self, sqes: &[squeue::Entry]) -> io::Result<()> {
        for _ in 0..2 {
            // SAFETY: the entries' buffers are the slots' (kept until their completions) or
            // none.
            if unsafe { self.ring.submission().push_multiple(sqes) }.is_ok() {
                return Ok(());
            }
            self.enter(0)?;
        }
        Err(io::Error::other("io_uring submission queue full"))
    }

    /// Submits what is queued and runs completions, sleeping until `min` have come.
    pub(super) fn enter(&mut self, min: usize) -> io::Result<()> {
        let queued = self.ring.submission().len();
        // SAFETY: no signal mask is passed (None); the queued entries were checked when pushed.
        match unsafe {
            self.ring.submitter().enter::<libc::sigset_t>(
                queued as u32,
                min as u32,
                ENTER_GETEVENTS,
                None,
            )
        } {
            Err(e) if e.raw_os_error() != Some(libc::EINTR) => Err(e),
            _ => Ok(()),
        }
    }

    /// Takes every completion and wakes the waits they end (every wait on a tick: it checks
    /// its timeout); (whether a wait was woken, whether the timer ticked). The wakers only mark
    /// sessions ready (none polls in `wake`), so they are woken here.
    pub(super) fn reap(&mut self) -> (bool, bool) {
        let (mut woke, mut ticked_now) = (false, false);
        for c in self.ring.completion() {
            if c.user_data() == TICK {
                ticked_now = true;
                self.ticking &= c.result() >= 0 && cqueue::more(c.flags());
                self.tick.drain();
                for s in &mut self.slots {
                    if let State::Waiting { waker, ticked, .. } = &mut s.state {
                        *ticked = true;
                        woke |= waker.take().map(Waker::wake).is_some();
                    }
                }
                continue;
            }
            let (slot, kind) = ((c.user_data() >> 2) as usize, c.user_data() & 3);
            let Some(s) = self.slots.get_mut(slot) else {
                continue;
            };
            // A send that failed posts its completion, and its receive was never started.
            if kind == REPLY || (kind == SEND && c.result() < 0) {
                match std::mem::replace(&mut s.state, State::Idle) {
                    State::Waiting { bufs, waker, .. } => {
                        woke |= waker.map(Waker::wake).is_some();
                        s.state = State::Done {
                            bufs,
                            result: c.result(),
                        };
                    }
                    other @ State::Done { .. } => s.state = other,
                    // Idle, or Abandoned and now let go of by the kernel (after a failed send
                    // its receive never started): the buffers are freed.
                    _ => {}
                }
            }
        }
        if !self.ticking {
            let _ = self.arm_ticks();
        }
        (woke, ticked_now)
    }

    /// A slot for socket `fd`, its registered file; `None` when all are taken.
    fn attach(&mut self, fd: RawFd) -> Option<u32> {
        let free = self
            .slots
            .iter()
            .position(|s| !s.held && matches!(s.state, State::Idle));
        let i = match free {
            Some(i) => i,
            None if self.slots.len() < SLOTS as usize => {
                self.slots.push(Slot {
                    held: false,
                    state: State::Idle,
                });
                self.slots.len() - 1
            }
            None => return None,
        };
        self.ring
            .submitter()
            .register_files_update(i as u32, &[fd])
            .ok()?;
        self.slots[i].held = true;
        Some(i as u32)
    }

    /// The wire of slot `i` is gone: its file leaves the ring (its buffers stay while the
    /// kernel may use them).
    fn release(&mut self, i: u32) {
        let _ = self.ring.submitter().register_files_update(i, &[-1]);
        self.slots[i as usize].held = false;
    }

    /// Queues slot `i`'s receive into `bufs.inb`'s spare room, with `bufs.out` sent before it
    /// when `send`.
    fn start(&mut self, i: u32, mut bufs: Bufs, send: bool) -> io::Result<()> {
        let file = types::Fixed(i);
        let recv = reply_entry(
            file,
            bufs.inb.spare_capacity_mut(),
            send,
            u64::from(i) << 2 | REPLY,
        );
        let pushed = if send {
            let send = request_entry(file, &bufs.out, u64::from(i) << 2 | SEND);
            self.push(&[send, recv])
        } else {
            self.push(&[recv])
        };
        // The heap buffers the entries name move with `bufs` into the slot, unmoved.
        self.slots[i as usize].state = match pushed {
            Ok(()) => State::Waiting {
                bufs,
                waker: None,
                ticked: false,
            },
            Err(_) => State::Idle,
        };
        pushed
    }

    /// Slot `i`'s wait is given up: its requests are cancelled and its buffers stay with the
    /// slot until the kernel lets go of them.
    fn abandon(&mut self, i: u32) {
        let slot = &mut self.slots[i as usize];
        let State::Waiting { bufs, .. } = std::mem::replace(&mut slot.state, State::Idle) else {
            return; // nothing in flight (its result, if any, is dropped)
        };
        slot.state = State::Abandoned(bufs);
        let cancel = |kind| {
            opcode::AsyncCancel::new(u64::from(i) << 2 | kind)
                .build()
                .user_data(u64::from(i) << 2 | CANCEL)
        };
        let _ = self.push(&[cancel(SEND), cancel(REPLY)]);
    }
}

impl Drop for SharedRing {
    fn drop(&mut self) {
        // The kernel may still write into the buffers of a receive in flight: leak them.
        for s in self.slots.drain(..) {
            if let State::Waiting { bufs, .. } | State::Abandoned(bufs) = s.state {
                std::mem::forget(bufs);
            }
        }
    }
}

/// A wire's place in its thread's ring.
#[derive(Debug)]
pub(super) struct RingSlot {
    ring: u64,
    index: u32,
    timeout: Duration,
}

impl RingSlot {
    /// A slot in this thread's ring for socket `fd` with read timeout `timeout`; `None` without
    /// a ring or a free slot.
    pub(super) fn attach(fd: RawFd, timeout: Duration) -> Option<RingSlot> {
        let (ring, index) = RING.with(|r| Some((r.id, r.attach(fd)?))).flatten()?;
        Some(RingSlot {
            ring,
            index,
            timeout,
        })
    }

    /// Sends `out` (when `send`) and receives into `inb`'s spare room, waiting while the
    /// thread's other sessions go on: the bytes received (0: the server closed the connection),
    /// `TimedOut` after the read timeout. `out` and `inb` are the ring's meanwhile (empty if
    /// the wait is given up).
    pub(super) async fn round_trip(
        &self,
        out: &mut Vec<u8>,
        send: bool,
        inb: &mut Vec<u8>,
    ) -> io::Result<usize> {
        let bufs = Bufs {
            out: std::mem::take(out),
            inb: std::mem::take(inb),
        };
        let started = with_ring_of(self.ring, |r| {
            r.waits += 1;
            r.start(self.index, bufs, send)
        });
        let mut wait = ReplyWait {
            ring: self.ring,
            index: self.index,
            first_tick: None,
            timeout: self.timeout,
        };
        if !matches!(started, Some(Ok(()))) {
            return Err(started
                .and_then(Result::err)
                .unwrap_or_else(|| io::Error::other("the thread's io_uring is gone")));
        }
        let (bufs, result) = std::future::poll_fn(|cx| wait.poll(cx)).await?;
        *out = bufs.out;
        *inb = bufs.inb;
        if result < 0 {
            return Err(io::Error::from_raw_os_error(-result));
        }
        // SAFETY: the receive (into this spare capacity, kept in the slot) wrote `result` bytes.
        unsafe { inb.set_len(inb.len() + result as usize) };
        Ok(result as usize)
    }
}

impl Drop for RingSlot {
    fn drop(&mut self) {
        with_ring_of(self.ring, |r| r.release(self.index));
    }
}

/// One wait for a slot's reply; counted among the ring's waits while alive.
struct ReplyWait {
    ring: u64,
    index: u32,
    first_tick: Option<Instant>,
    timeout: Duration,
}

impl ReplyWait {
    /// Ready with the slot's buffers and the receive's result, or the read timeout. Outside
    /// [`super::ringdrive::drive`] (a connection used on its own) it sleeps in the ring itself
    /// until then.
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<(Bufs, i32)>> {
        loop {
            let polled = with_ring_of(self.ring, |r| self.look(r, cx))
                .unwrap_or_else(|| Poll::Ready(Err(timed_out(self.timeout))));
            if polled.is_ready() || DRIVING.get() {
                return polled;
            }
            let slept = with_ring_of(self.ring, |r| {
                let e = r.enter(1);
                r.reap();
                e
            });
            if let Some(Err(e)) = slept {
                with_ring_of(self.ring, |r| r.abandon(self.index));
                return Poll::Ready(Err(e));
            }
        }
    }

    /// The slot's state now; a wait that saw ticks its read timeout apart gives up.
    fn look(&mut self, r: &mut SharedRing, cx: &Context<'_>) -> Poll<io::Result<(Bufs, i32)>> {
        let slot = &mut r.slots[self.index as usize];
        match std::mem::replace(&mut slot.state, State::Idle) {
            State::Done { bufs, result } => Poll::Ready(Ok((bufs, result))),
            State::Waiting {
                bufs,
                waker,
                ticked,
            } => {
                slot.state = State::Waiting {
                    bufs,
                    waker: Some(match waker {
                        Some(w) if w.will_wake(cx.waker()) => w,
                        _ => cx.waker().clone(),
                    }),
                    ticked: false,
                };
                // Never early: the first tick seen came after the wait began.
                if ticked && ticks_apart(&mut self.first_tick, self.timeout) {
                    r.abandon(self.index);
                    return Poll::Ready(Err(timed_out(self.timeout)));
                }
                Poll::Pending
            }
            other => {
                slot.state = other;
                Poll::Ready(Err(io::Error::other("the wait's request was lost")))
            }
        }
    }
}

impl Drop for ReplyWait {
    fn drop(&mut self) {
        with_ring_of(self.ring, |r| {
            r.waits -= 1;
            // Given up by its caller while in flight.
            r.abandon(self.index);
        });
    }
}

/// A new non-blocking eventfd; `None` if the kernel refuses one.
fn eventfd() -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: eventfd returns a new descriptor, owned by nothing else, or -1 (refused).
    unsafe {
        let fd = libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK);
        (fd >= 0).then(|| std::os::fd::OwnedFd::from_raw_fd(fd))
    }
}
