//! The direct client's round trip in one system call: the request and the receive of its reply
//! go to the kernel together in one `io_uring_enter(2)`, which also sleeps until the reply has
//! been received ([`super::Wire`]'s way of waiting where the kernel allows it).
//!
//! The send is linked before the receive and posts no completion when it worked
//! (IORING_FEAT_CQE_SKIP, Linux 5.17); the receive waits for the reply through a poll entry
//! that only EPOLLIN wakes (a reader sleeping in a blocking `recv` is also woken when the
//! server reads the request: see [`super::uring`]), and is armed first rather than tried
//! (IORING_RECVSEND_POLL_FIRST, Linux 5.19: the reply cannot be there yet). The socket is a
//! registered file, so neither request looks it up in the descriptor table.
//!
//! The wait passes no timeout: a timed wait arms a kernel timer and cancels it on every
//! statement (what made the epoll wait cost more, BENCHMARKS.md "No kernel timer per wait").
//! Instead a timerfd ticks every eighth of the read timeout for the ring's life, watched by a
//! multishot poll of the ring (Linux 5.13), and a wait that has seen ticks a read timeout apart
//! cancels the requests and gives up, as [`super::blocking::Waiter`] does in epoll.
//!
//! The ring is single-issuer with deferred task work (Linux 6.1, the appliance's kernel):
//! completions are run only when this thread waits, so it must be created on the thread that
//! uses it.

use super::blocking::{timed_out, Ticker};
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// user_data of the receive, of a send linked before it, of the timer's poll and of
/// cancellations.
const REPLY: u64 = 1;
const SEND: u64 = 2;
const TICK: u64 = 3;
const CANCEL: u64 = 4;

/// IORING_RECVSEND_POLL_FIRST (the receive's ioprio): arm the poll without trying first.
const POLL_FIRST: u16 = 1;

/// Requests up to this size go out linked to the receive; larger ones with `send(2)` first.
pub(super) const LINK_MAX: usize = 64 * 1024;

/// The receive of a reply into `buf` on registered file `file`; armed without trying first when
/// a request goes out linked before it (the reply cannot be there yet).
pub(super) fn reply_entry(
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
pub(super) fn request_entry(file: types::Fixed, out: &[u8], user_data: u64) -> squeue::Entry {
    opcode::Send::new(file, out.as_ptr(), out.len() as u32)
        .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
        .build()
        .flags(squeue::Flags::IO_LINK | squeue::Flags::SKIP_SUCCESS)
        .user_data(user_data)
}

/// The multishot poll of `tick`'s timerfd.
pub(super) fn tick_entry(tick: &Ticker, user_data: u64) -> squeue::Entry {
    opcode::PollAdd::new(types::Fd(tick.fd()), libc::POLLIN as u32)
        .multi(true)
        .build()
        .user_data(user_data)
}

/// The ring of one connection of a client thread.
pub(super) struct RingWire {
    ring: IoUring,
    /// Ticks every eighth of the read timeout.
    tick: Ticker,
    /// The timer's multishot poll is armed (the kernel may end one, e.g. when completions
    /// overflow; it is then armed again with the next request).
    ticking: bool,
    /// A request may still be in the kernel's hands: no more I/O on this ring.
    broken: bool,
}

impl std::fmt::Debug for RingWire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingWire")
            .field("tick", &self.tick)
            .field("ticking", &self.ticking)
            .field("broken", &self.broken)
            .finish()
    }
}

impl RingWire {
    /// A ring for socket `fd`, or `None` where this kernel lacks one of the features above (the
    /// wire then waits in epoll).
    pub(super) fn new(fd: RawFd, timeout: Duration) -> Option<RingWire> {
        let mut b = IoUring::builder();
        b.setup_single_issuer().setup_defer_taskrun();
        let ring = b.build(4).ok()?;
        if !ring.params().is_feature_skip_cqe_on_success() {
            return None;
        }
        ring.submitter().register_files(&[fd]).ok()?;
        let tick = Ticker::new(timeout)?;
        let mut w = RingWire {
            ring,
            tick,
            ticking: false,
            broken: false,
        };
        w.arm_ticks().ok()?;
        w.ring.submit().ok()?;
        // A kernel that cannot poll that way fails the request at once.
        w.reap();
        w.ticking.then_some(w)
    }

    /// Queues the timer's multishot poll.
    fn arm_ticks(&mut self) -> io::Result<()> {
        let poll = tick_entry(&self.tick, TICK);
        // SAFETY: a poll names no buffer.
        unsafe { self.ring.submission().push(&poll) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        self.ticking = true;
        Ok(())
    }

    /// Sends `out` (if any) and receives into `buf` in one system call; the bytes received (0:
    /// the server closed the connection). `TimedOut` when no reply came within the read
    /// timeout; then, and after any other failure of the ring, the ring is done for.
    pub(super) fn round_trip(
        &mut self,
        out: Option<&[u8]>,
        buf: &mut [MaybeUninit<u8>],
    ) -> io::Result<usize> {
        if self.broken {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the connection's io_uring failed earlier",
            ));
        }
        let file = types::Fixed(0);
        let recv = reply_entry(file, buf, out.is_some(), REPLY);
        // Ticks from before this call do not count towards its timeout.
        self.reap();
        if !self.ticking {
            self.arm_ticks()?;
        }
        let pushed = match out {
            Some(out) => {
                let send = request_entry(file, out, SEND);
                // SAFETY: `out` and `buf` outlive the requests: this returns only when the
                // receive's completion (which follows the send's) was reaped.
                unsafe { self.ring.submission().push_multiple(&[send, recv]) }
            }
            // SAFETY: as above.
            None => unsafe { self.ring.submission().push(&recv) },
        };
        if pushed.is_err() {
            return Err(io::Error::other("io_uring submission queue full"));
        }
        let mut first_tick: Option<Instant> = None;
        loop {
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => {
                    self.broken = true;
                    if self.ring.submission().is_empty() {
                        let _ = self.give_up();
                    }
                    return Err(e);
                }
            }
            let (reply, send, ticks) = self.reap();
            // A send that failed posts its completion and none for the receive linked after
            // it, which the kernel cancels without ever starting it.
            match (send, reply) {
                (Some(e), _) if e < 0 => return Err(io::Error::from_raw_os_error(-e)),
                (_, Some(res)) if res < 0 => return Err(io::Error::from_raw_os_error(-res)),
                (_, Some(n)) => return Ok(n as usize),
                _ => {}
            }
            if ticks > 0 && self.tick.expired(&mut first_tick) {
                return self.give_up();
            }
        }
    }

    /// Reaps every completion: the receive's result, a failed send's, and the ticks seen.
    fn reap(&mut self) -> (Option<i32>, Option<i32>, u32) {
        let (mut reply, mut send, mut ticks) = (None, None, 0);
        for c in self.ring.completion() {
            match c.user_data() {
                REPLY => reply = Some(c.result()),
                SEND => send = Some(c.result()),
                TICK => {
                    ticks += 1;
                    self.ticking &= c.result() >= 0 && cqueue::more(c.flags());
                    self.tick.drain();
                }
                _ => {}
            }
        }
        (reply, send, ticks)
    }

    /// Cancels the requests in flight, waits until the kernel has let go of them and returns
    /// `TimedOut`; the ring takes no more requests.
    fn give_up(&mut self) -> io::Result<usize> {
        self.broken = true;
        let cancel = |of| opcode::AsyncCancel::new(of).build().user_data(CANCEL);
        // SAFETY: cancellations name no buffer.
        let mut ok = unsafe {
            self.ring
                .submission()
                .push_multiple(&[cancel(SEND), cancel(REPLY)])
        }
        .is_ok();
        while ok {
            let (reply, send, _) = self.reap();
            if reply.is_some() || send.is_some_and(|e| e < 0) {
                break;
            }
            ok = match self.ring.submit_and_wait(1) {
                Ok(_) => true,
                Err(e) => e.raw_os_error() == Some(libc::EINTR),
            };
        }
        if !ok {
            // The receive may still be in flight into a buffer the caller will free: the
            // process cannot go on safely.
            crate::sys::log::say!("io_uring could not cancel a receive in flight; stopping");
            std::process::abort();
        }
        Err(timed_out(self.tick.timeout()))
    }
}
