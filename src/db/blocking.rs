//! The socket under the direct client ([`super::wire`]): made blocking with the read timeout,
//! plain `send`/`recv` calls on it, the epoll and timer descriptors the client threads wait
//! with, and the [`BlockingSocket`] through which mysql_async keeps using the same descriptor.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

pub(super) fn last_errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Shuts the write side of socket `fd` down (`BlockingIo::shutdown`); a socket already
/// disconnected is not an error.
pub(super) fn shutdown_write(fd: RawFd) -> io::Result<()> {
    // SAFETY: shutdown(2) reads no memory of ours; `fd` is a socket the caller owns.
    if unsafe { libc::shutdown(fd, libc::SHUT_WR) } == 0 {
        return Ok(());
    }
    match last_errno() {
        libc::ENOTCONN => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// `Ok` when socket `fd` is still connected and nothing unread waits in it
/// (`BlockingIo::check`).
pub(super) fn check_idle(fd: RawFd) -> io::Result<()> {
    let peek = libc::MSG_PEEK | libc::MSG_DONTWAIT;
    match recv(fd, &mut [MaybeUninit::uninit()], peek) {
        Ok(0) => Err(io::Error::new(io::ErrorKind::BrokenPipe, "broken pipe")),
        Ok(_) => Err(io::Error::other("stream should be empty")),
        Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Makes `fd` blocking, with `timeout` for every receive and send.
pub(super) fn make_blocking(fd: RawFd, timeout: Duration) -> io::Result<()> {
    // SAFETY: fcntl/setsockopt on a socket this process owns, with a valid timeval.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
        let tv = libc::timeval {
            tv_sec: timeout.as_secs() as _,
            tv_usec: timeout.subsec_micros() as _,
        };
        for opt in [libc::SO_RCVTIMEO, libc::SO_SNDTIMEO] {
            if libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            ) < 0
            {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

pub(super) fn timed_out(timeout: Duration) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "no reply from the server within {} s (read timeout)",
            timeout.as_secs_f64()
        ),
    )
}

/// One receive into `buf` with `flags`, retried when a signal interrupts it: `Ok(0)` when the
/// peer closed; `EAGAIN` as the error when nothing came (`MSG_DONTWAIT`, or the socket's
/// receive timeout: [`or_timed_out`]).
pub(super) fn recv(fd: RawFd, buf: &mut [MaybeUninit<u8>], flags: i32) -> io::Result<usize> {
    loop {
        // SAFETY: recv(2) writes at most `buf.len()` bytes into `buf`, which is valid for them.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), flags) };
        if n >= 0 {
            return Ok(n as usize);
        }
        match last_errno() {
            libc::EINTR => {}
            e => return Err(io::Error::from_raw_os_error(e)),
        }
    }
}

/// [`recv`] into `buf`'s spare capacity (the caller makes room), the bytes received appended.
pub(super) fn recv_append(fd: RawFd, buf: &mut Vec<u8>, flags: i32) -> io::Result<usize> {
    let n = recv(fd, buf.spare_capacity_mut(), flags)?;
    // SAFETY: recv(2) initialised the first `n` bytes of the spare capacity.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}

/// A blocking receive's `EAGAIN`: the socket's receive timeout, `timeout`, passed.
pub(super) fn or_timed_out(e: io::Error, timeout: Duration) -> io::Error {
    match e.raw_os_error() {
        Some(libc::EAGAIN) => timed_out(timeout),
        _ => e,
    }
}

/// The whole of `buf`, blocking while the socket buffer is full.
pub(super) fn send_all(fd: RawFd, mut buf: &[u8], timeout: Duration) -> io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: send(2) reads `buf.len()` bytes of `buf`.
        let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) };
        if n >= 0 {
            buf = &buf[n as usize..];
            continue;
        }
        match last_errno() {
            libc::EINTR => {}
            libc::EAGAIN => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the server took no data for {} s (read timeout)",
                        timeout.as_secs_f64()
                    ),
                ))
            }
            e => return Err(io::Error::from_raw_os_error(e)),
        }
    }
    Ok(())
}

/// The connection's socket as mysql_async sees it after [`super::wire::attach`]: plain
/// blocking reads and writes on the descriptor the measured loop's [`super::wire::Wire`]
/// shares.
#[derive(Debug)]
pub struct BlockingSocket {
    pub(super) fd: Arc<OwnedFd>,
    pub(super) timeout: Duration,
}

// SAFETY: `read` returns `Ok(n)` only after recv(2) wrote `n <= buf.len()` bytes into `buf`.
unsafe impl mysql_async::BlockingIo for BlockingSocket {
    fn read(&mut self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        recv(self.fd.as_raw_fd(), buf, 0).map_err(|e| or_timed_out(e, self.timeout))
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        send_all(self.fd.as_raw_fd(), buf, self.timeout)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn shutdown(&mut self) -> io::Result<()> {
        shutdown_write(self.fd.as_raw_fd())
    }

    fn check(&mut self) -> io::Result<()> {
        check_idle(self.fd.as_raw_fd())
    }
}

impl AsRawFd for Ticker {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// How far apart the ticks of a thread's timer ([`Ticker::for_thread`]) are at most.
pub(super) const THREAD_TICK_MAX: Duration = Duration::from_millis(100);

/// A new epoll instance; `None` if the kernel refuses one.
pub(super) fn epoll_instance() -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: epoll_create1 returns a new descriptor, owned by nothing else, or -1 (refused).
    unsafe {
        let ep = libc::epoll_create1(libc::EPOLL_CLOEXEC);
        (ep >= 0).then(|| OwnedFd::from_raw_fd(ep))
    }
}

/// `epoll_ctl(2)` on instance `ep`: operation `op` for `fd`, with `events` and `data`.
pub(super) fn epoll_ctl(ep: RawFd, op: i32, fd: RawFd, events: u32, data: u64) -> io::Result<()> {
    let mut ev = libc::epoll_event { events, u64: data };
    // SAFETY: a valid event struct; the kernel checks the descriptors.
    match unsafe { libc::epoll_ctl(ep, op, fd, &mut ev) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// A non-blocking timerfd that expires every eighth of the read timeout (at least every
/// millisecond) for as long as it is open: the clock of a wait that passes no timeout to the
/// kernel (in a thread's epoll instance or io_uring), and the rule such a wait applies to its
/// ticks. An `epoll_wait` given a timeout arms and cancels a kernel hrtimer on every statement
/// (0.99 `timer:hrtimer_start` per point_select against sysbench's 0.007; the client's CPU
/// per query fell to 0.91x without, BENCHMARKS.md).
#[derive(Debug)]
pub(super) struct Ticker {
    fd: OwnedFd,
}

impl Ticker {
    /// `None` if the kernel refuses a timerfd.
    pub(super) fn new(timeout: Duration) -> Option<Ticker> {
        use std::os::fd::FromRawFd;
        let every = (timeout / 8).max(Duration::from_millis(1));
        let period = libc::timespec {
            tv_sec: every.as_secs() as _,
            tv_nsec: every.subsec_nanos() as _,
        };
        let spec = libc::itimerspec {
            it_interval: period,
            it_value: period,
        };
        // SAFETY: timerfd_create returns a new descriptor this takes ownership of;
        // timerfd_settime gets a valid struct.
        let fd = unsafe {
            let fd = libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_CLOEXEC | libc::TFD_NONBLOCK,
            );
            if fd < 0 {
                return None;
            }
            let fd = OwnedFd::from_raw_fd(fd);
            if libc::timerfd_settime(fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) != 0 {
                return None;
            }
            fd
        };
        Some(Ticker { fd })
    }

    /// The timer of a thread's connections, whose waits each measure their own read timeout:
    /// every eighth of `timeout` (the first connection's), at most [`THREAD_TICK_MAX`] apart.
    pub(super) fn for_thread(timeout: Duration) -> Option<Ticker> {
        Ticker::new(timeout.min(THREAD_TICK_MAX * 8))
    }

    pub(super) fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Takes the expirations counted so far (non-blocking), so the timer reads as not
    /// expired until its next tick.
    pub(super) fn drain(&self) {
        let mut expirations = [0u8; 8];
        // SAFETY: reads the timerfd's 8-byte count into `expirations` (non-blocking).
        unsafe { libc::read(self.fd.as_raw_fd(), expirations.as_mut_ptr().cast(), 8) };
    }
}

/// A wait saw its thread timer's ticks now; `first`: when it saw its first (`None` before).
/// True when it has seen ticks its read timeout `timeout` apart: the wait gives up. Never early
/// (its first tick came after it began), at most one tick late.
pub(super) fn ticks_apart(first: &mut Option<std::time::Instant>, timeout: Duration) -> bool {
    let now = std::time::Instant::now();
    match *first {
        None => {
            *first = Some(now);
            false
        }
        Some(t) => now.duration_since(t) >= timeout,
    }
}
