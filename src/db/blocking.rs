//! The socket under the direct client ([`super::wire`]): made blocking with the read timeout,
//! plain `send`/`recv` calls on it, the epoll instance the measured loop waits in, and the
//! [`BlockingSocket`] through which mysql_async keeps using the same descriptor. The io_uring
//! socket ([`super::uring`]) shares the shutdown and idle check.

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
    // SAFETY: shutdown(2) on a socket the caller owns.
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
    let mut b = [0u8; 1];
    // SAFETY: a one-byte peek into `b`.
    let n = unsafe {
        libc::recv(
            fd,
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
/// receive timeout).
pub(super) fn recv_with(fd: RawFd, buf: &mut [MaybeUninit<u8>], flags: i32) -> io::Result<usize> {
    loop {
        // SAFETY: recv(2) writes at most `buf.len()` bytes into `buf`.
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

/// One blocking receive into `buf`: `Ok(0)` when the peer closed, `TimedOut` after the socket's
/// receive timeout.
pub(super) fn recv(fd: RawFd, buf: &mut [MaybeUninit<u8>], timeout: Duration) -> io::Result<usize> {
    recv_with(fd, buf, 0).map_err(|e| match e.raw_os_error() {
        Some(libc::EAGAIN) => timed_out(timeout),
        _ => e,
    })
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
        recv(self.fd.as_raw_fd(), buf, self.timeout)
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

/// An epoll instance with `fd` registered for EPOLLIN (level-triggered); `None` if the kernel
/// refuses (the reply is then awaited in `recv`).
pub(super) fn watch(fd: &OwnedFd) -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: epoll_create1 returns a new descriptor this takes ownership of; epoll_ctl gets a
    // valid event struct.
    unsafe {
        let ep = libc::epoll_create1(libc::EPOLL_CLOEXEC);
        if ep < 0 {
            return None;
        }
        let ep = OwnedFd::from_raw_fd(ep);
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: 0,
        };
        (libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, fd.as_raw_fd(), &mut ev) == 0)
            .then_some(ep)
    }
}
