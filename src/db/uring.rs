//! The socket of a single-connection client thread during the measured loop: one `send(2)` and
//! one `io_uring_enter(2)` per statement (submit the receive, sleep until it completes).
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

use io_uring::{opcode, types, IoUring};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// user_data of the one request in flight, and of its cancellation.
const REQUEST: u64 = 1;
const CANCEL: u64 = 2;

/// A connection's socket, read through its own ring. Used from one thread.
pub struct UringSocket {
    fd: OwnedFd,
    ring: IoUring,
    timeout: Duration,
    /// Set when a request may still be in the kernel's hands or the ring failed: no more I/O.
    broken: bool,
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

    /// The socket `fd` (non-blocking, out of any reactor) read through this ring.
    pub fn attach(self, fd: OwnedFd, timeout: Duration) -> UringSocket {
        UringSocket {
            fd,
            ring: self.0,
            timeout,
            broken: false,
        }
    }
}

fn last_errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

impl UringSocket {
    /// Submits `entry` (user_data [`REQUEST`]) and waits for its completion: its result, or
    /// `TimedOut` when none came within the timeout (the request is then cancelled and its
    /// completion awaited, so no buffer it names is written after this returns).
    fn run(&mut self, entry: io_uring::squeue::Entry) -> io::Result<i32> {
        if self.broken {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the connection's io_uring failed earlier",
            ));
        }
        // SAFETY: the ring is empty between calls (every request is reaped before `run`
        // returns) and the buffers `entry` names outlive the request (see above).
        if unsafe { self.ring.submission().push(&entry.user_data(REQUEST)) }.is_err() {
            return Err(io::Error::other("io_uring submission queue full"));
        }
        let deadline = Instant::now() + self.timeout;
        loop {
            if let Some(res) = self.reap() {
                return Ok(res);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return self.cancel();
            }
            let ts = types::Timespec::from(left);
            let args = types::SubmitArgs::new().timespec(&ts);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR)) => {}
                Err(e) => {
                    // Submitted already (the queue is empty): it must not outlive this call.
                    if self.ring.submission().is_empty() {
                        let _ = self.cancel();
                    }
                    self.broken = true;
                    return Err(e);
                }
            }
        }
    }

    /// The result of the completed request, if it has completed.
    fn reap(&mut self) -> Option<i32> {
        let mut res = None;
        for cqe in self.ring.completion() {
            if cqe.user_data() == REQUEST {
                res = Some(cqe.result());
            }
        }
        res
    }

    /// Cancels the request in flight and waits until the kernel has let go of it; `TimedOut`
    /// (or its result, if it completed meanwhile).
    fn cancel(&mut self) -> io::Result<i32> {
        let c = opcode::AsyncCancel::new(REQUEST).build().user_data(CANCEL);
        // SAFETY: a cancellation names no buffer.
        let mut ok = unsafe { self.ring.submission().push(&c) }.is_ok();
        while ok {
            if let Some(res) = self.reap() {
                if res != -libc::ECANCELED {
                    return Ok(res);
                }
                break;
            }
            ok = match self.ring.submit_and_wait(1) {
                Ok(_) => true,
                Err(e) => e.raw_os_error() == Some(libc::EINTR),
            };
        }
        // Not cancelled: the request may still be in flight, so this socket is done for.
        self.broken |= !ok;
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "no reply from the server within {} s (read timeout)",
                self.timeout.as_secs_f64()
            ),
        ))
    }

    /// Waits until the socket is readable (`POLLIN`) or has room for a send (`POLLOUT`), or the
    /// timeout.
    fn wait_for(&mut self, events: libc::c_short) -> io::Result<()> {
        let fd = types::Fd(self.fd.as_raw_fd());
        let res = self.run(opcode::PollAdd::new(fd, events as u32).build())?;
        if res < 0 {
            return Err(io::Error::from_raw_os_error(-res));
        }
        Ok(())
    }
}

// SAFETY: `read` returns `Ok(n)` only for a completed receive of `n <= buf.len()` bytes into
// `buf`, and no receive into `buf` is in flight when it returns (`run`).
unsafe impl mysql_async::BlockingIo for UringSocket {
    fn read(&mut self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        let fd = types::Fd(self.fd.as_raw_fd());
        let len = buf.len().min(u32::MAX as usize) as u32;
        let recv = opcode::Recv::new(fd, buf.as_mut_ptr().cast::<u8>(), len).build();
        loop {
            match self.run(recv.clone())? {
                n if n >= 0 => return Ok(n as usize),
                e if e == -libc::EINTR => continue,
                // Only if this kernel's io_uring took the socket's O_NONBLOCK as "do not wait".
                e if e == -libc::EAGAIN => self.wait_for(libc::POLLIN)?,
                e => return Err(io::Error::from_raw_os_error(-e)),
            }
        }
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        loop {
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
                return Ok(n as usize);
            }
            match last_errno() {
                libc::EINTR => continue,
                libc::EAGAIN => self.wait_for(libc::POLLOUT)?,
                e => return Err(io::Error::from_raw_os_error(e)),
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn shutdown(&mut self) -> io::Result<()> {
        // SAFETY: shutdown(2) on the socket this owns.
        if unsafe { libc::shutdown(self.fd.as_raw_fd(), libc::SHUT_WR) } == 0 {
            return Ok(());
        }
        match last_errno() {
            libc::ENOTCONN => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }

    fn check(&mut self) -> io::Result<()> {
        let mut b = [0u8; 1];
        // SAFETY: a one-byte peek into `b`.
        let n = unsafe {
            libc::recv(
                self.fd.as_raw_fd(),
                b.as_mut_ptr().cast(),
                1,
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        match n {
            0 => Err(io::Error::new(io::ErrorKind::BrokenPipe, "broken pipe")),
            n if n > 0 => Err(io::Error::other("stream should be empty")),
            _ if last_errno() == libc::EAGAIN => Ok(()),
            _ => Err(io::Error::last_os_error()),
        }
    }
}
