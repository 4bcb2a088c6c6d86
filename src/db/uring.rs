//! The socket of a single-connection client thread during the measured loop: one
//! `io_uring_enter(2)` per statement. What mysql_async writes is held back and submitted with
//! the next receive as a linked send (IORING_FEAT_CQE_SKIP, Linux 5.17: a send that worked posts
//! no completion), and the same call sleeps until the reply has been received. Bytes with no
//! reply to wait for (COM_STMT_CLOSE, COM_QUIT) go out with the next receive, at `shutdown` or
//! when the socket is dropped; requests over 64 KiB, kernels without the feature and
//! `--client-io=uring-send` use one `send(2)` and one `io_uring_enter(2)` instead.
//!
//! Why not a blocking `recv(2)`: on a unix stream socket the kernel wakes a reader sleeping in
//! `recv` each time the *peer* consumes data the reader sent (`unix_write_space` wakes every
//! sleeper of the socket, with no event mask), so every statement woke the client twice: once
//! when the server read the request (for nothing), once for the reply (1.85 voluntary context
//! switches per round trip against 0.98 for poll + recv on this kernel, measured with a socket
//! pair). That is why an earlier blocking-`read(2)` attempt cost more CPU per query than
//! epoll. io_uring waits for the reply through a poll entry that only EPOLLIN wakes, and
//! receives it in the same system call. `epoll_wait` + `recv` (tokio's reactor) is also two
//! calls for the receive, plus the reactor's bookkeeping in user space.
//!
//! A reply that does not come within the read timeout is an I/O error (`TimedOut`), which
//! mysql_async treats as a lost connection: the engines count it as 2013 and reconnect, as for
//! a server that went away. The socket stays non-blocking; a send that meets a full buffer
//! waits for room through the ring, with the same timeout.

use io_uring::{opcode, squeue, types, IoUring};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// user_data of the receive (or poll) a call waits for, of a send linked before it, and of
/// cancellations.
const REQUEST: u64 = 1;
const SEND: u64 = 2;
const CANCEL: u64 = 3;

/// Requests written by mysql_async up to this size wait for the next receive and go out in
/// its `io_uring_enter`; larger ones are sent at once.
const HOLD_MAX: usize = 64 * 1024;

/// A connection's socket, read through its own ring. Used from one thread.
pub struct UringSocket {
    fd: OwnedFd,
    ring: IoUring,
    timeout: Duration,
    /// Set when a request may still be in the kernel's hands or the ring failed: no more I/O.
    broken: bool,
    /// Hold written bytes back and send them linked to the next receive (the kernel skips the
    /// completion of a send that worked: IORING_FEAT_CQE_SKIP, Linux 5.17).
    link: bool,
    /// Written and not sent yet.
    held: Vec<u8>,
    /// The result of a linked send that failed (its completion), while a call runs.
    send_failed: Option<i32>,
}

impl std::fmt::Debug for UringSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringSocket")
            .field("fd", &self.fd)
            .field("timeout", &self.timeout)
            .field("broken", &self.broken)
            .finish()
    }
}

/// A ring for one connection (without its socket yet). Tries the cheapest setup first (one
/// submitter, completions run only when this thread waits: kernel 6.1+), then older kernels'.
pub struct Ring(IoUring);

impl Ring {
    /// Must be called on the thread that will use the socket (single-issuer rings belong to it).
    pub fn new() -> io::Result<Ring> {
        type Setup = fn(&mut io_uring::Builder);
        let setups: [Setup; 3] = [
            |b| {
                b.setup_single_issuer().setup_defer_taskrun();
            },
            |b| {
                b.setup_coop_taskrun();
            },
            |_| {},
        ];
        let mut last = io::Error::from_raw_os_error(libc::EINVAL);
        for setup in setups {
            let mut b = IoUring::builder();
            setup(&mut b);
            match b.build(4) {
                // EXT_ARG (5.11): the wait takes a timeout; without it there is no read timeout.
                Ok(ring) if ring.params().is_feature_ext_arg() => return Ok(Ring(ring)),
                Ok(_) => return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "this kernel's io_uring has no timed wait (IORING_FEAT_EXT_ARG, Linux 5.11)",
                )),
                // EINVAL: this kernel does not know a setup flag; try the next setup.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = e,
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    /// Whether requests can go out linked to the receive: the kernel skips the completion of
    /// a send that worked (IORING_FEAT_CQE_SKIP, Linux 5.17).
    pub fn can_link(&self) -> bool {
        self.0.params().is_feature_skip_cqe_on_success()
    }

    /// The socket `fd` (non-blocking, out of any reactor) read through this ring, each reply
    /// within `timeout`; `link` (only where [`Ring::can_link`]): requests go out with the next
    /// receive.
    pub fn attach(self, fd: OwnedFd, timeout: Duration, link: bool) -> UringSocket {
        UringSocket {
            fd,
            ring: self.0,
            timeout,
            broken: false,
            link,
            held: Vec::new(),
            send_failed: None,
        }
    }
}

use super::blocking::last_errno;

impl UringSocket {
    /// Submits `entries` (the last one waited for, user_data [`REQUEST`]; a send linked before
    /// it has user_data [`SEND`]) and waits for the last one's completion: its result, or
    /// `TimedOut` when none came within the timeout (the requests are then cancelled and the
    /// last one's completion awaited, so no buffer they name is used after this returns).
    fn run(&mut self, entries: &[squeue::Entry]) -> io::Result<i32> {
        if self.broken {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the connection's io_uring failed earlier",
            ));
        }
        self.send_failed = None;
        // SAFETY: the ring is empty between calls (every request is reaped before `run`
        // returns) and the buffers the entries name outlive the requests (see above).
        if unsafe { self.ring.submission().push_multiple(entries) }.is_err() {
            return Err(io::Error::other("io_uring submission queue full"));
        }
        // The clock is read only when a signal ends a wait early: the rest of the timeout then
        // counts from the signal.
        let mut deadline: Option<Instant> = None;
        let mut left = self.timeout;
        loop {
            if let Some(res) = self.reap() {
                return Ok(res);
            }
            // A linked send that failed posts its completion and none for the receive after
            // it, which the kernel cancels without starting it ([`Self::receive`] reports it).
            if self.send_failed.is_some_and(|e| e < 0) {
                return Ok(-libc::ECANCELED);
            }
            if left.is_zero() {
                return self.cancel();
            }
            let ts = types::Timespec::from(left);
            let args = types::SubmitArgs::new().timespec(&ts);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::ETIME) => left = Duration::ZERO,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {
                    let now = Instant::now();
                    let end = *deadline.get_or_insert(now + left);
                    left = end.saturating_duration_since(now);
                }
                Err(e) => {
                    // Submitted already (the queue is empty): they must not outlive this call.
                    if self.ring.submission().is_empty() {
                        let _ = self.cancel();
                    }
                    self.broken = true;
                    return Err(e);
                }
            }
        }
    }

    /// The result of the awaited request, if it has completed (and a failed linked send's).
    fn reap(&mut self) -> Option<i32> {
        let mut res = None;
        for cqe in self.ring.completion() {
            match cqe.user_data() {
                REQUEST => res = Some(cqe.result()),
                SEND => self.send_failed = Some(cqe.result()),
                _ => {}
            }
        }
        res
    }

    /// Cancels the requests in flight and waits until the kernel has let go of them; `TimedOut`
    /// (or the awaited result, if it completed meanwhile).
    fn cancel(&mut self) -> io::Result<i32> {
        let cancel = |of| opcode::AsyncCancel::new(of).build().user_data(CANCEL);
        // SAFETY: cancellations name no buffer.
        let mut ok = unsafe {
            self.ring
                .submission()
                .push_multiple(&[cancel(SEND), cancel(REQUEST)])
        }
        .is_ok();
        while ok {
            if let Some(res) = self.reap() {
                if res != -libc::ECANCELED {
                    return Ok(res);
                }
                break;
            }
            if self.send_failed.is_some_and(|e| e < 0) {
                break;
            }
            ok = match self.ring.submit_and_wait(1) {
                Ok(_) => true,
                Err(e) => e.raw_os_error() == Some(libc::EINTR),
            };
        }
        // Not cancelled: a request may still be in flight, so this socket is done for.
        self.broken |= !ok;
        Err(super::blocking::timed_out(self.timeout))
    }

    /// Waits until the socket is readable (`POLLIN`) or has room for a send (`POLLOUT`), or the
    /// timeout.
    fn wait_for(&mut self, events: libc::c_short) -> io::Result<()> {
        let fd = types::Fd(self.fd.as_raw_fd());
        let poll = opcode::PollAdd::new(fd, events as u32).build();
        match self.run(&[poll.user_data(REQUEST)])? {
            res if res < 0 => Err(io::Error::from_raw_os_error(-res)),
            _ => Ok(()),
        }
    }

    /// The whole of `buf` with send(2), waiting for room when the socket buffer is full.
    fn send_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            // SAFETY: send(2) reads `buf.len()` bytes of `buf`.
            let n = unsafe {
                libc::send(
                    self.fd.as_raw_fd(),
                    buf.as_ptr().cast(),
                    buf.len(),
                    libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
                )
            };
            if n >= 0 {
                buf = &buf[n as usize..];
                continue;
            }
            match last_errno() {
                libc::EINTR => {}
                libc::EAGAIN => self.wait_for(libc::POLLOUT)?,
                e => return Err(io::Error::from_raw_os_error(e)),
            }
        }
        Ok(())
    }

    /// Sends what was held back.
    fn send_held(&mut self) -> io::Result<()> {
        let held = std::mem::take(&mut self.held);
        let sent = self.send_all(&held);
        self.held = held;
        self.held.clear();
        sent
    }

    /// One receive into `buf`, with the held bytes sent before it in the same system call.
    fn receive(&mut self, buf: &mut [MaybeUninit<u8>]) -> io::Result<i32> {
        let fd = types::Fd(self.fd.as_raw_fd());
        let len = buf.len().min(u32::MAX as usize) as u32;
        let recv = opcode::Recv::new(fd, buf.as_mut_ptr().cast::<u8>(), len)
            .build()
            .user_data(REQUEST);
        if self.held.is_empty() {
            return self.run(&[recv]);
        }
        let send = opcode::Send::new(fd, self.held.as_ptr(), self.held.len() as u32)
            .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
            .build()
            .flags(squeue::Flags::IO_LINK | squeue::Flags::SKIP_SUCCESS)
            .user_data(SEND);
        let res = self.run(&[send, recv]);
        self.held.clear();
        match (res, self.send_failed.take()) {
            (Ok(_), Some(e)) if e < 0 => Err(io::Error::from_raw_os_error(-e)),
            (Ok(_), Some(_)) => Err(io::Error::new(io::ErrorKind::WriteZero, "short send")),
            (res, _) => res,
        }
    }
}

impl Drop for UringSocket {
    fn drop(&mut self) {
        // A command without a reply (COM_STMT_CLOSE, COM_QUIT) may still be held: best effort.
        if !self.held.is_empty() && !self.broken {
            // SAFETY: send(2) reads `held.len()` bytes of `held`.
            unsafe {
                libc::send(
                    self.fd.as_raw_fd(),
                    self.held.as_ptr().cast(),
                    self.held.len(),
                    libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
                )
            };
        }
    }
}

// SAFETY: `read` returns `Ok(n)` only for a completed receive of `n <= buf.len()` bytes into
// `buf`, and no receive into `buf` is in flight when it returns (`run`).
unsafe impl mysql_async::BlockingIo for UringSocket {
    fn read(&mut self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        loop {
            match self.receive(buf)? {
                n if n >= 0 => return Ok(n as usize),
                e if e == -libc::EINTR => continue,
                // Only if this kernel's io_uring took the socket's O_NONBLOCK as "do not wait".
                e if e == -libc::EAGAIN => self.wait_for(libc::POLLIN)?,
                e => return Err(io::Error::from_raw_os_error(-e)),
            }
        }
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.link && self.held.len() + buf.len() <= HOLD_MAX {
            self.held.extend_from_slice(buf);
            return Ok(buf.len());
        }
        self.send_held()?;
        self.send_all(buf)?;
        Ok(buf.len())
    }

    /// Held bytes stay held: the next `read` sends them (every command with a reply is
    /// followed by one), `shutdown` or the drop otherwise.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn shutdown(&mut self) -> io::Result<()> {
        self.send_held()?;
        super::blocking::shutdown_write(self.fd.as_raw_fd())
    }

    fn check(&mut self) -> io::Result<()> {
        super::blocking::check_idle(self.fd.as_raw_fd())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mysql_async::BlockingIo;
    use std::os::unix::net::UnixStream;

    /// A request to a server that is gone: the linked send fails, and the receive after it is
    /// cancelled with no completion of its own; the read reports the send's error at once, not
    /// after the read timeout.
    #[test]
    fn a_failed_linked_send_ends_the_read_at_once() {
        let ring = Ring::new().expect("io_uring");
        assert!(
            ring.can_link(),
            "this kernel cannot link a send (Linux 5.17)"
        );
        let (a, b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let mut s = ring.attach(OwnedFd::from(a), Duration::from_secs(20), true);
        drop(b);
        assert_eq!(s.write(b"\x01\x00\x00\x00\x0e").unwrap(), 5);
        let started = Instant::now();
        let mut buf = [MaybeUninit::<u8>::uninit(); 64];
        let e = s.read(&mut buf).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EPIPE), "{e}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
}
