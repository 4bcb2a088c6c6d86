// Copyright (c) 2019 Anatoly Ikorsky
//
// Licensed under the Apache License, Version 2.0
// <LICENSE-APACHE or http://www.apache.org/licenses/LICENSE-2.0> or the MIT
// license <LICENSE-MIT or http://opensource.org/licenses/MIT>, at your
// option. All files in the project carrying such notice may not be copied,
// modified, or distributed except according to those terms.

#![cfg(unix)]

use tokio::io::{Error, ErrorKind::Interrupted, ReadBuf};

use std::{
    io::{self, Read, Write},
    mem::{ManuallyDrop, MaybeUninit},
    os::fd::{AsRawFd, FromRawFd},
    path::Path,
    pin::Pin,
    task::{Context, Poll},
};
use tokio::io::{AsyncRead, AsyncWrite};

/// Unix domain socket connection on unix, or named pipe connection on windows.
#[derive(Debug)]
pub(crate) struct Socket {
    #[cfg(unix)]
    inner: tokio::net::UnixStream,
    /// spindle patch: see [`Socket::set_blocking`].
    blocking: bool,
}

impl Socket {
    /// Connects a new socket.
    #[cfg(unix)]
    pub async fn new<P: AsRef<Path>>(path: P) -> Result<Socket, io::Error> {
        Ok(Socket {
            inner: tokio::net::UnixStream::connect(path).await?,
            blocking: false,
        })
    }

    /// spindle patch: from now on reads and writes are plain blocking read(2)/write(2) calls
    /// on the socket, past tokio's reactor: a request/response round trip costs one write and
    /// one read, no readiness bookkeeping and no epoll_wait. Only for a connection that is the
    /// only thing its thread drives: while a reply is awaited the thread sleeps in read(2).
    pub(crate) fn set_blocking(&mut self) -> io::Result<()> {
        socket2::SockRef::from(&self.inner).set_nonblocking(false)?;
        self.blocking = true;
        Ok(())
    }

    /// The socket as a `File` that is never closed (the fd stays owned by `inner`).
    fn raw(&self) -> ManuallyDrop<std::fs::File> {
        // SAFETY: the fd is open for as long as `self.inner` lives; ManuallyDrop never closes it.
        ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(self.inner.as_raw_fd()) })
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<Result<(), Error>> {
        if self.blocking {
            // SAFETY: read(2) only writes initialized bytes into the unfilled part, and exactly
            // `n` of them are marked initialized and filled.
            let dst = unsafe { &mut *(buf.unfilled_mut() as *mut [MaybeUninit<u8>] as *mut [u8]) };
            return loop {
                match self.raw().read(dst) {
                    Ok(n) => {
                        unsafe { buf.assume_init(n) };
                        buf.advance(n);
                        break Poll::Ready(Ok(()));
                    }
                    Err(e) if e.kind() == Interrupted => continue,
                    Err(e) => break Poll::Ready(Err(e)),
                }
            };
        }
        with_interrupted!(Pin::new(&mut self.inner).poll_read(cx, buf))
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context,
        buf: &[u8],
    ) -> Poll<Result<usize, Error>> {
        if self.blocking {
            return loop {
                match self.raw().write(buf) {
                    Err(e) if e.kind() == Interrupted => continue,
                    r => break Poll::Ready(r),
                }
            };
        }
        with_interrupted!(Pin::new(&mut self.inner).poll_write(cx, buf))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context) -> Poll<Result<(), Error>> {
        if self.blocking {
            return Poll::Ready(Ok(()));
        }
        with_interrupted!(Pin::new(&mut self.inner).poll_flush(cx))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context) -> Poll<Result<(), Error>> {
        with_interrupted!(Pin::new(&mut self.inner).poll_shutdown(cx))
    }
}
