//! A reply awaited in the client thread's tokio reactor: how a connection that shares its thread
//! with others (two per thread, with `--client-io=direct-reactor` or where the thread can have
//! neither an io_uring nor an epoll instance of its own) waits without holding the thread. The socket is
//! registered for EPOLLIN only (a unix socket signals EPOLLOUT each time the server reads a
//! request, see [`super::sockets`]), beside a timerfd of the connection's own that ticks every
//! eighth of the read timeout, so no kernel timer is armed per wait ([`Ticker`]'s rule decides
//! when the wait gives up). The thread sleeps in the reactor's `epoll_wait` once for every reply
//! that came while it worked; the connection's task then takes its reply in one receive.

use super::blocking::{recv_with, timed_out, Ticker};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;
use tokio::io::unix::{AsyncFd, AsyncFdReadyGuard};
use tokio::io::Interest;

/// A connection's registrations in its thread's reactor.
#[derive(Debug)]
pub(super) struct ReactorWait {
    sock: AsyncFd<Arc<OwnedFd>>,
    tick: AsyncFd<Ticker>,
}

/// What woke a wait.
enum Woken<'a> {
    Socket(io::Result<AsyncFdReadyGuard<'a, Arc<OwnedFd>>>),
    Tick(io::Result<AsyncFdReadyGuard<'a, Ticker>>),
}

impl ReactorWait {
    /// Registers socket `fd` and a new ticker for read timeout `timeout` in the current
    /// runtime's reactor. `None` outside a runtime or when the kernel refuses.
    pub(super) fn new(fd: &Arc<OwnedFd>, timeout: Duration) -> Option<ReactorWait> {
        tokio::runtime::Handle::try_current().ok()?;
        let tick = Ticker::new(timeout)?;
        // SAFETY: both descriptors stay open and the same for the registrations' lives: the
        // socket is held by the Arc the AsyncFd owns, the timerfd by the Ticker it owns.
        unsafe {
            Some(ReactorWait {
                sock: AsyncFd::register_with_interest(fd.clone(), Interest::READABLE).ok()?,
                tick: AsyncFd::register_with_interest(tick, Interest::READABLE).ok()?,
            })
        }
    }

    /// Waits until the socket is readable and receives what has come into `buf`'s spare
    /// capacity (the caller makes room): `Ok(0)` when the peer closed, `TimedOut` after the read
    /// timeout without a byte. The thread's other tasks run meanwhile.
    pub(super) async fn receive(&self, buf: &mut Vec<u8>) -> io::Result<usize> {
        let fd = self.sock.get_ref().as_raw_fd();
        let mut first_tick = None;
        loop {
            let woken = std::future::poll_fn(|cx| {
                if let Poll::Ready(g) = self.sock.poll_read_ready(cx) {
                    return Poll::Ready(Woken::Socket(g));
                }
                if let Poll::Ready(g) = self.tick.poll_read_ready(cx) {
                    return Poll::Ready(Woken::Tick(g));
                }
                Poll::Pending
            })
            .await;
            match woken {
                Woken::Socket(g) => {
                    let mut g = g?;
                    let spare = buf.spare_capacity_mut();
                    let room = spare.len();
                    match recv_with(fd, spare, libc::MSG_DONTWAIT) {
                        Ok(n) => {
                            // Less than the room: the socket is drained and the next reply
                            // brings a new edge (tokio's own rule for its streams), so the next
                            // wait sleeps rather than trying a receive that finds nothing.
                            if n < room {
                                g.clear_ready();
                            }
                            // SAFETY: recv wrote `n` bytes into the spare capacity.
                            unsafe { buf.set_len(buf.len() + n) };
                            return Ok(n);
                        }
                        Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => g.clear_ready(),
                        Err(e) => return Err(e),
                    }
                }
                Woken::Tick(g) => {
                    let mut g = g?;
                    let tick = self.tick.get_ref();
                    tick.drain();
                    g.clear_ready();
                    if tick.expired(&mut first_tick) {
                        return Err(timed_out(tick.timeout()));
                    }
                }
            }
        }
    }
}
