//! The measured loop's statements written and read by spindle itself (`ClientIo::Direct`, the
//! default of OLTP and TPC-C, and `DirectEpoll`).
//!
//! mysql_async connects, authenticates and prepares; then the socket leaves tokio's reactor
//! (`Conn::set_blocking_io`, a vendored patch) and is made blocking, with the read timeout as
//! `SO_RCVTIMEO`/`SO_SNDTIMEO`. A statement (COM_STMT_EXECUTE with integer and string
//! parameters, or COM_QUERY) is encoded into one buffer; its reply is received into one buffer
//! (16 KiB of room, as libmysqlclient reads), framed in place (`packets`), its rows skipped
//! (OLTP) or decoded by mysql_common into mysql_async's rows (TPC-C, [`super::Link`]).
//!
//! Each reply is awaited in the client thread's own place ([`Waiting`], one variant per way):
//! its io_uring, the request queued linked before the receive of its reply ([`RingSlot`]), or
//! where the kernel refuses that ring (and with `--client-io=direct-epoll`) its epoll
//! instance after one `send(2)` ([`EpollSlot`]); the thread's other sessions go on meanwhile
//! ([`super::ringdrive`]). The rest of a reply whose start came is read with `recv(2)`.
//!
//! Everything else on the connection (the drop's COM_QUIT, a test's own queries) goes through
//! mysql_async and [`BlockingSocket`] on the same descriptor; each side reads the whole reply
//! of every command it starts, so neither finds the other's bytes in the socket.
//!
//! Errors are mysql_async's: an ERR packet is `Error::Server` (the engines retry deadlocks and
//! lock waits); a closed socket, no reply within the read timeout (`TimedOut`) or a reply out
//! of step is `Error::Io`, a lost connection (2013, the engines reconnect), and marks the wire
//! broken: nothing more is sent on it.

use super::blocking::{make_blocking, or_timed_out, recv_append, send_all, BlockingSocket};
use super::packets::{lost, put_lenenc, Collect, Replies, MAX_PAYLOAD, READ_ROOM};
use super::sharedring::{RingSlot, LINK_MAX};
use super::threadepoll::EpollSlot;
use mysql_async::{Column, Error, Row, Value};
use mysql_common::packets::ComStmtExecuteRequestBuilder;
use mysql_common::proto::MySerialize;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

/// A parameter of one statement.
#[derive(Clone, Copy, Debug)]
pub enum Param<'a> {
    Int(i64),
    Str(&'a [u8]),
}

const COM_QUERY: u8 = 0x03;
const COM_STMT_EXECUTE: u8 = 0x17;
const MYSQL_TYPE_LONGLONG: u8 = 0x08;
const MYSQL_TYPE_VAR_STRING: u8 = 0xfd;

/// Takes `conn`'s socket out of tokio's reactor and makes it blocking with `timeout`;
/// mysql_async goes on through [`BlockingSocket`], the measured loop through the returned
/// [`Wire`], which awaits replies in the thread's io_uring or epoll instance
/// ([`super::ringdrive::install`]). `Ok(None)`: not a plain TCP or unix socket (TLS), or no
/// slot for it in the thread's ring or epoll instance; the connection goes on through
/// mysql_async. On `Err` the connection may be closed.
pub fn attach(conn: &mut mysql_async::Conn, timeout: Duration) -> io::Result<Option<Wire>> {
    let mut shared: Option<Arc<OwnedFd>> = None;
    let mut failed: Option<io::Error> = None;
    let moved = conn.set_blocking_io(|fd| {
        if let Err(e) = make_blocking(fd.as_raw_fd(), timeout) {
            failed = Some(e);
        }
        let fd = Arc::new(fd);
        shared = Some(fd.clone());
        Box::new(BlockingSocket { fd, timeout })
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(match (moved, shared) {
        (true, Some(fd)) => Wire::new(fd, timeout),
        _ => None,
    })
}

/// Where a wire awaits each reply: one implementation per way.
#[derive(Debug)]
enum Waiting {
    /// A slot in the thread's io_uring: the request linked before the reply's receive.
    Ring(RingSlot),
    /// A slot in the thread's epoll instance: a send, the wait, a receive.
    Epoll(EpollSlot),
}

/// The measured loop's side of a connection: requests encoded into one buffer and sent whole,
/// replies framed in place and skipped.
#[derive(Debug)]
pub struct Wire {
    timeout: Duration,
    out: Vec<u8>,
    /// Received bytes, read as replies.
    rx: Replies,
    broken: bool,
    /// `out` holds a request that goes out with the receive of its reply (through the ring).
    held: bool,
    waiting: Waiting,
    /// Last: closed after the wait above lets go of it.
    fd: Arc<OwnedFd>,
}

impl Wire {
    /// A wire on socket `fd` that awaits replies in this thread's io_uring or epoll instance;
    /// `None` if the thread has neither or no slot is free.
    fn new(fd: Arc<OwnedFd>, timeout: Duration) -> Option<Wire> {
        let raw = fd.as_raw_fd();
        let waiting = match RingSlot::attach(raw, timeout) {
            Some(slot) => Waiting::Ring(slot),
            None => Waiting::Epoll(EpollSlot::attach(raw, timeout)?),
        };
        Some(Wire {
            waiting,
            held: false,
            fd,
            timeout,
            out: Vec::with_capacity(256),
            rx: Replies {
                inb: Vec::with_capacity(2 * READ_ROOM),
                ..Replies::default()
            },
            broken: false,
        })
    }

    /// Whether replies are awaited in the thread's io_uring ([`RingSlot`]).
    pub fn shares_ring(&self) -> bool {
        matches!(self.waiting, Waiting::Ring(_))
    }

    /// Sends a held request and waits until the reply begins, in the thread's ring or epoll
    /// instance (its other connections run meanwhile), receiving what has come.
    async fn await_reply(&mut self) -> io::Result<()> {
        if self.rx.pos < self.rx.inb.len() {
            return Ok(()); // bytes are waiting already (a test's server may send first)
        }
        self.rx.inb.reserve(READ_ROOM);
        let send = std::mem::take(&mut self.held);
        let (out, inb) = (&mut self.out, &mut self.rx.inb);
        match &self.waiting {
            Waiting::Ring(slot) => slot.round_trip(out, send, inb).await.map(drop),
            Waiting::Epoll(slot) => slot.receive(inb).await.map(drop),
        }
    }

    /// Rows changed by the last statement (its OK packet), as `Conn::affected_rows`.
    pub fn affected_rows(&self) -> u64 {
        self.rx.affected
    }

    /// Executes prepared statement `id` (`params` its `?`s, in order) and drops its result.
    pub async fn exec(&mut self, id: u32, params: &[Param<'_>]) -> Result<(), Error> {
        let out = &mut self.out;
        out.clear();
        out.extend_from_slice(&[0, 0, 0, 0, COM_STMT_EXECUTE]);
        out.extend_from_slice(&id.to_le_bytes());
        out.push(0); // CURSOR_TYPE_NO_CURSOR
        out.extend_from_slice(&1u32.to_le_bytes()); // iteration count
        if !params.is_empty() {
            out.resize(out.len() + params.len().div_ceil(8), 0); // no NULLs
            out.push(1); // types follow
            for p in params {
                let ty = match p {
                    Param::Int(_) => MYSQL_TYPE_LONGLONG,
                    Param::Str(_) => MYSQL_TYPE_VAR_STRING,
                };
                out.extend_from_slice(&[ty, 0]);
            }
            for p in params {
                match p {
                    Param::Int(v) => out.extend_from_slice(&v.to_le_bytes()),
                    Param::Str(s) => {
                        put_lenenc(out, s.len() as u64);
                        out.extend_from_slice(s);
                    }
                }
            }
        }
        self.round_trip(None).await
    }

    /// Executes prepared statement `id` with `params`, mysql_async's values encoded by
    /// mysql_common as mysql_async encodes them, and drops its result.
    pub async fn exec_values(&mut self, id: u32, params: &[Value]) -> Result<(), Error> {
        self.encode_values(id, params)?;
        self.round_trip(None).await
    }

    /// Executes prepared statement `id` with `params` and returns its rows, decoded with
    /// `columns` (the statement's column definitions from its prepare) unless the reply
    /// carries definitions of its own.
    pub async fn exec_rows(
        &mut self,
        id: u32,
        params: &[Value],
        columns: Arc<[Column]>,
    ) -> Result<Vec<Row>, Error> {
        self.encode_values(id, params)?;
        let mut rows = Vec::new();
        let collect = Collect {
            columns,
            rows: &mut rows,
        };
        self.round_trip(Some(collect)).await?;
        Ok(rows)
    }

    fn encode_values(&mut self, id: u32, params: &[Value]) -> Result<(), Error> {
        let (req, long_data) = ComStmtExecuteRequestBuilder::new(id).build(params);
        if long_data {
            // Parameters over 16 MiB go as COM_STMT_SEND_LONG_DATA, which no benchmark statement
            // needs; refused before anything is sent, so the connection stays in step.
            return Err(Error::Other(
                "a statement's parameters over 16 MiB cannot go through spindle's direct client"
                    .into(),
            ));
        }
        self.out.clear();
        self.out.extend_from_slice(&[0, 0, 0, 0]);
        req.serialize(&mut self.out);
        Ok(())
    }

    /// Runs `sql` as a text query and drops its result.
    pub async fn query(&mut self, sql: &str) -> Result<(), Error> {
        self.out.clear();
        self.out.extend_from_slice(&[0, 0, 0, 0, COM_QUERY]);
        self.out.extend_from_slice(sql.as_bytes());
        self.round_trip(None).await
    }

    /// Sends `out`, awaits the reply's start and reads the whole reply.
    async fn round_trip(&mut self, collect: Option<Collect<'_>>) -> Result<(), Error> {
        if self.broken {
            return Err(lost(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the connection failed earlier",
            )));
        }
        if self.rx.pos == self.rx.inb.len() {
            self.rx.inb.clear();
            self.rx.pos = 0;
        }
        let mut r = self.send();
        if r.is_ok() {
            // Broken until the reply is read (a caller that drops this future leaves it behind).
            self.broken = true;
            r = self.await_reply().await.map_err(lost);
        }
        // The rest of a reply whose start came ([`Wire::await_reply`]).
        let (fd, t) = (self.fd.as_raw_fd(), self.timeout);
        let mut more = |b: &mut Vec<u8>| recv_append(fd, b, 0).map_err(|e| or_timed_out(e, t));
        let r = r.and_then(|()| self.rx.reply(&mut more, collect));
        self.broken = matches!(r, Err(Error::Io(_)));
        r
    }

    /// Frames `out[4..]` as packets (sequence 0, 1, …) and sends them.
    fn send(&mut self) -> Result<(), Error> {
        let payload = self.out.len() - 4;
        if payload < MAX_PAYLOAD {
            self.out[..3].copy_from_slice(&(payload as u32).to_le_bytes()[..3]);
            self.out[3] = 0;
            self.rx.seq = 1;
        } else {
            // Longer than one packet (not a benchmark statement): split it.
            let body = self.out.split_off(4);
            self.out.clear();
            let mut seq = 0u8;
            let mut chunks = body.chunks(MAX_PAYLOAD).peekable();
            while let Some(c) = chunks.next() {
                self.out
                    .extend_from_slice(&(c.len() as u32).to_le_bytes()[..3]);
                self.out.push(seq);
                self.out.extend_from_slice(c);
                seq = seq.wrapping_add(1);
                if chunks.peek().is_none() && c.len() == MAX_PAYLOAD {
                    self.out.extend_from_slice(&[0, 0, 0, seq]);
                    seq = seq.wrapping_add(1);
                }
            }
            self.rx.seq = seq;
        }
        // Held for the receive of its reply, unless bytes are waiting already (a server never
        // sends before the request; a test's may), which may hold the whole reply.
        if self.shares_ring() && self.out.len() <= LINK_MAX && self.rx.pos == self.rx.inb.len() {
            self.held = true;
            return Ok(());
        }
        send_all(self.fd.as_raw_fd(), &self.out, self.timeout).map_err(lost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;

    use crate::db::ringdrive;

    /// How a test's wires wait: in the thread's io_uring or in its epoll instance.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Way {
        ThreadRing,
        ThreadEpoll,
    }
    const EVERY_WAY: [Way; 2] = [Way::ThreadRing, Way::ThreadEpoll];

    thread_local! {
        /// The test thread's runtime.
        static RT: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
    }

    /// Runs `test` with its wires waiting in the thread's io_uring and in its epoll instance.
    fn every_way(test: impl Fn()) {
        for way in EVERY_WAY {
            set_way(way);
            test();
        }
        ringdrive::remove();
    }

    /// The thread's wires made from now on wait `way`.
    fn set_way(way: Way) {
        ringdrive::remove();
        assert!(
            ringdrive::install(Duration::from_secs(5), way == Way::ThreadRing),
            "no epoll instance or timerfd for the thread"
        );
        assert!(
            ringdrive::in_ring() == (way == Way::ThreadRing),
            "this kernel gave the thread no io_uring (Linux 6.1)"
        );
    }

    /// `f` run to its end on the test thread's runtime under [`ringdrive::drive`], as a client
    /// thread's sessions are.
    fn run<F: std::future::Future>(f: F) -> F::Output {
        RT.with(|rt| ringdrive::drive(rt, vec![Box::pin(f)]).pop().unwrap())
    }

    /// A wire on one end of a socket pair; the test plays the server on the other.
    fn pair() -> (Wire, UnixStream) {
        pair_with(Duration::from_secs(5))
    }

    /// A wire with read timeout `timeout` and the server's end of its socket.
    fn pair_with(timeout: Duration) -> (Wire, UnixStream) {
        let (a, b) = UnixStream::pair().unwrap();
        let fd = Arc::new(OwnedFd::from(a));
        make_blocking(fd.as_raw_fd(), timeout).unwrap();
        let w = Wire::new(fd, timeout).expect("no slot in the thread's ring or epoll instance");
        assert_eq!(w.shares_ring(), ringdrive::in_ring());
        (w, b)
    }

    /// Packets with sequence numbers from 1, as a server's reply.
    fn reply(payloads: &[&[u8]]) -> Vec<u8> {
        let mut v = Vec::new();
        for (i, p) in payloads.iter().enumerate() {
            v.extend_from_slice(&(p.len() as u32).to_le_bytes()[..3]);
            v.push(i as u8 + 1);
            v.extend_from_slice(p);
        }
        v
    }

    fn request(server: &mut UnixStream) -> Vec<u8> {
        let mut h = [0u8; 4];
        server.read_exact(&mut h).unwrap();
        assert_eq!(h[3], 0, "a request starts at sequence 0");
        let mut body = vec![0u8; u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize];
        server.read_exact(&mut body).unwrap();
        body
    }

    const OK_3_ROWS: &[u8] = &[0x00, 3, 0, 0x02, 0, 0, 0];
    const EOF: &[u8] = &[0xfe, 0, 0, 0x02, 0];
    const EOF_MORE: &[u8] = &[0xfe, 0, 0, 0x0a, 0];
    const DEPRECATE_EOF_OK: &[u8] = &[0xfe, 0, 0, 0x02, 0, 0, 0];

    #[test]
    fn encodes_a_statement_execute_as_mysql_common_does() {
        every_way(|| {
            let (mut w, mut srv) = pair();
            srv.write_all(&reply(&[OK_3_ROWS])).unwrap();
            run(w.exec(7, &[Param::Int(-2), Param::Str(b"ab")])).unwrap();
            assert_eq!(w.affected_rows(), 3);
            let mut want = vec![0x17, 7, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0x08, 0, 0xfd, 0];
            want.extend_from_slice(&(-2i64).to_le_bytes());
            want.extend_from_slice(&[2, b'a', b'b']);
            assert_eq!(request(&mut srv), want);
            // Without parameters: no NULL bitmap and no types.
            srv.write_all(&reply(&[OK_3_ROWS])).unwrap();
            run(w.exec(9, &[])).unwrap();
            assert_eq!(request(&mut srv), vec![0x17, 9, 0, 0, 0, 0, 1, 0, 0, 0]);
        });
    }

    #[test]
    fn mysql_values_encode_as_the_wires_own_parameters_and_rows_decode() {
        every_way(|| {
            use mysql_async::consts::{ColumnFlags, ColumnType};
            let (mut w, mut srv) = pair();
            // Values encoded by mysql_common: the same bytes as the wire's own encoding.
            srv.write_all(&reply(&[OK_3_ROWS])).unwrap();
            srv.write_all(&reply(&[OK_3_ROWS])).unwrap();
            run(w.exec(7, &[Param::Int(-2), Param::Str(b"ab")])).unwrap();
            run(w.exec_values(7, &[Value::Int(-2), Value::Bytes(b"ab".to_vec())])).unwrap();
            assert_eq!(w.affected_rows(), 3);
            assert_eq!(request(&mut srv), request(&mut srv));

            // Rows of a prepared statement whose definitions the reply leaves out (MariaDB's
            // cached metadata): decoded with the prepare's columns, a NULL through the bitmap.
            let cols: Arc<[Column]> = vec![
                Column::new(ColumnType::MYSQL_TYPE_LONGLONG),
                Column::new(ColumnType::MYSQL_TYPE_VAR_STRING),
                Column::new(ColumnType::MYSQL_TYPE_DOUBLE),
            ]
            .into();
            let mut r1 = vec![0x00, 0x00];
            r1.extend_from_slice(&7i64.to_le_bytes());
            r1.extend_from_slice(&[2, b'a', b'b']);
            r1.extend_from_slice(&1.5f64.to_le_bytes());
            let mut r2 = vec![0x00, 0x10]; // the third column (bit 2 + 2) is NULL
            r2.extend_from_slice(&(-1i64).to_le_bytes());
            r2.push(0);
            srv.write_all(&reply(&[&[3, 0], &r1, &r2, DEPRECATE_EOF_OK]))
                .unwrap();
            let rows = run(w.exec_rows(2, &[Value::UInt(5)], cols.clone())).unwrap();
            let mut req = request(&mut srv);
            assert_eq!(req.drain(..5).collect::<Vec<_>>(), [0x17, 2, 0, 0, 0]);
            assert_eq!(req[7..9], [0x08, 0x80], "UInt goes as an unsigned LONGLONG");
            type R = (i64, Vec<u8>, Option<f64>);
            let got: Vec<R> = rows.into_iter().map(mysql_async::from_row).collect();
            assert_eq!(
                got,
                vec![(7, b"ab".to_vec(), Some(1.5)), (-1, Vec::new(), None)]
            );

            // Definitions in the reply (the old protocol, EOF after them) win over the prepare's.
            let mut def = Vec::new();
            Column::new(ColumnType::MYSQL_TYPE_LONG)
                .with_flags(ColumnFlags::UNSIGNED_FLAG)
                .serialize(&mut def);
            let mut r = vec![0x00, 0x00];
            r.extend_from_slice(&4_000_000_000u32.to_le_bytes());
            srv.write_all(&reply(&[&[1, 1], &def, EOF, &r, &r, EOF]))
                .unwrap();
            let rows = run(w.exec_rows(3, &[], cols)).unwrap();
            let _ = request(&mut srv);
            let got: Vec<u32> = rows.into_iter().map(mysql_async::from_row).collect();
            assert_eq!(got, vec![4_000_000_000, 4_000_000_000]);
            // An OK in place of a result: no rows, affected rows kept.
            srv.write_all(&reply(&[OK_3_ROWS])).unwrap();
            assert!(run(w.exec_rows(3, &[], Vec::new().into()))
                .unwrap()
                .is_empty());
            assert_eq!(w.affected_rows(), 3);
        });
    }

    #[test]
    fn skips_rows_with_and_without_deprecate_eof_and_follows_more_results() {
        every_way(|| {
            let (mut w, mut srv) = pair();
            let col: &[u8] = &[
                3, b'd', b'e', b'f', 0, 0, 0, 1, b'c', 0, 0x0c, 8, 0, 0, 0, 0, 0xfd,
            ];
            let row: &[u8] = &[1, b'x'];
            // Old protocol: columns, EOF, rows, EOF (more results), then an OK; no rows at all in
            // a second set (EOF right after EOF).
            let old = reply(&[
                &[1],
                col,
                EOF,
                row,
                row,
                EOF_MORE,
                &[1],
                col,
                EOF,
                EOF_MORE,
                OK_3_ROWS,
            ]);
            srv.write_all(&old).unwrap();
            run(w.query("CALL p()")).unwrap();
            assert_eq!(request(&mut srv), b"\x03CALL p()".to_vec());
            assert_eq!(w.affected_rows(), 3);
            // CLIENT_DEPRECATE_EOF: columns, rows, an OK-shaped 0xFE terminator; and none.
            srv.write_all(&reply(&[&[1], col, row, DEPRECATE_EOF_OK]))
                .unwrap();
            run(w.query("SELECT c")).unwrap();
            srv.write_all(&reply(&[&[1], col, DEPRECATE_EOF_OK]))
                .unwrap();
            run(w.query("SELECT c")).unwrap();
            // MariaDB's cached metadata: a column count with "metadata follows" 0, no definitions.
            srv.write_all(&reply(&[&[2, 0], row, DEPRECATE_EOF_OK]))
                .unwrap();
            run(w.exec(4, &[])).unwrap();
            srv.write_all(&reply(&[&[1, 1], col, row, DEPRECATE_EOF_OK]))
                .unwrap();
            run(w.exec(4, &[])).unwrap();
            // The socket is in step: the next reply is read whole.
            srv.write_all(&reply(&[&[0, 1, 0, 2, 0, 0, 0]])).unwrap();
            run(w.query("UPDATE")).unwrap();
            assert_eq!(w.affected_rows(), 1);
        });
    }

    #[test]
    fn an_err_packet_is_the_servers_error_and_the_connection_goes_on() {
        every_way(|| {
            let (mut w, mut srv) = pair();
            let mut err = vec![0xff, 0xbd, 0x04, b'#'];
            err.extend_from_slice(b"40001Deadlock found");
            // A progress report (code 0xFFFF) first is skipped.
            let progress: &[u8] = &[0xff, 0xff, 0xff, 1, 1, 0, 0, 0];
            srv.write_all(&reply(&[progress, &err])).unwrap();
            let e = run(w.exec(1, &[Param::Int(1)])).unwrap_err();
            match e {
                Error::Server(s) => {
                    assert_eq!((s.code, s.state.as_str()), (1213, "40001"));
                    assert_eq!(s.message, "Deadlock found");
                }
                other => panic!("{other:?}"),
            }
            // An error in place of a row ends the result too.
            let col: &[u8] = &[3, b'd', b'e', b'f'];
            srv.write_all(&reply(&[&[1], col, &[1, b'x'], &err]))
                .unwrap();
            assert!(matches!(run(w.query("SELECT")), Err(Error::Server(_))));
            srv.write_all(&reply(&[OK_3_ROWS])).unwrap();
            run(w.query("ROLLBACK")).unwrap();
        });
    }

    #[test]
    fn a_reply_out_of_step_or_cut_short_is_a_lost_connection_and_the_socket_is_done() {
        every_way(|| {
            let (mut w, mut srv) = pair();
            // Sequence 2 where 1 was due.
            srv.write_all(&[7, 0, 0, 2]).unwrap();
            srv.write_all(OK_3_ROWS).unwrap();
            let e = run(w.query("SELECT 1")).unwrap_err();
            assert!(e.to_string().contains("out of order"), "{e}");
            let e = run(w.query("SELECT 1")).unwrap_err();
            assert!(e.to_string().contains("failed earlier"), "{e}");
            // The server closes mid-reply.
            let (mut w, mut srv) = pair();
            srv.write_all(&reply(&[&[1]])).unwrap();
            drop(srv);
            let e = run(w.query("SELECT 1")).unwrap_err();
            assert!(matches!(e, Error::Io(_)), "{e}");
            // The server is gone before the request: the send fails.
            let (mut w, srv) = pair();
            drop(srv);
            let e = run(w.query("SELECT 1")).unwrap_err();
            assert!(matches!(e, Error::Io(_)), "{e}");
            assert!(e.to_string().contains("pipe"), "{e}");
        });
    }

    #[test]
    fn a_missing_reply_times_out_and_large_rows_are_skipped() {
        every_way(|| {
            let (mut w, srv) = pair_with(Duration::from_millis(300));
            // The waiter's timer ticks while no wait runs: a tick left pending from then must not
            // shorten the next wait.
            std::thread::sleep(Duration::from_millis(450));
            let started = std::time::Instant::now();
            let e = run(w.query("SELECT SLEEP(9)")).unwrap_err();
            assert!(e.to_string().contains("read timeout"), "{e}");
            let waited = started.elapsed();
            assert!(
                waited >= Duration::from_millis(300),
                "gave up early: {waited:?}"
            );
            // At most one tick (an eighth of the timeout) late; the rest is room for a slow machine.
            assert!(
                waited < Duration::from_millis(1500),
                "gave up late: {waited:?}"
            );
            // A reply that takes several ticks but less than the timeout is read.
            let (mut w, mut srv2) = pair_with(Duration::from_millis(800));
            let writer = std::thread::spawn(move || {
                let _ = request(&mut srv2);
                std::thread::sleep(Duration::from_millis(400));
                srv2.write_all(&reply(&[OK_3_ROWS])).unwrap();
                srv2
            });
            run(w.query("SELECT SLEEP(0.4)")).unwrap();
            assert_eq!(w.affected_rows(), 3);
            drop(writer.join().unwrap());
            // A row of 16 MiB + 10 bytes: two packets, the first of the maximal length.
            let (mut w, srv2) = pair();
            drop(srv);
            let mut srv = srv2;
            let col: &[u8] = &[3, b'd', b'e', b'f'];
            let big = vec![b'x'; MAX_PAYLOAD];
            let mut bytes = reply(&[&[1], col]);
            bytes.extend_from_slice(&[0xff, 0xff, 0xff, 3]);
            bytes.extend_from_slice(&big);
            bytes.extend_from_slice(&[10, 0, 0, 4]);
            bytes.extend_from_slice(&[0xfe; 10]); // continuation bytes that look like a terminator
            bytes.extend_from_slice(&[7, 0, 0, 5]);
            bytes.extend_from_slice(DEPRECATE_EOF_OK);
            let writer = std::thread::spawn(move || {
                srv.write_all(&bytes).unwrap();
                srv
            });
            run(w.query("SELECT big")).unwrap();
            let mut srv = writer.join().unwrap();
            let _ = request(&mut srv);
            // Nothing of that reply is left: the next one is read in step.
            srv.write_all(&reply(&[OK_3_ROWS])).unwrap();
            run(w.query("DELETE")).unwrap();
            assert_eq!(w.affected_rows(), 3);
        });
    }

    #[test]
    fn wires_sharing_a_thread_wait_for_their_replies_together() {
        for way in EVERY_WAY {
            set_way(way);
            sharing_a_thread(way);
        }
        ringdrive::remove();
    }

    fn sharing_a_thread(way: Way) {
        let (mut slow, mut slow_srv) = pair();
        let (mut fast, mut fast_srv) = pair();
        let server = std::thread::spawn(move || {
            let _ = request(&mut slow_srv);
            let _ = request(&mut fast_srv);
            fast_srv.write_all(&reply(&[OK_3_ROWS])).unwrap();
            std::thread::sleep(Duration::from_millis(300));
            slow_srv.write_all(&reply(&[OK_3_ROWS])).unwrap();
            (slow_srv, fast_srv)
        });
        let started = std::time::Instant::now();
        let (slow_took, fast_took) = run(async {
            let slow_done = async {
                slow.query("SELECT SLEEP(0.3)").await.unwrap();
                started.elapsed()
            };
            let fast_done = async {
                fast.query("SELECT 1").await.unwrap();
                started.elapsed()
            };
            tokio::join!(slow_done, fast_done)
        });
        // The slow statement went out first; waiting for its reply did not hold the other
        // connection's statement back (a wire waiting alone would have: 300 ms and more).
        assert!(
            slow_took >= Duration::from_millis(300),
            "{way:?}: {slow_took:?}"
        );
        assert!(
            fast_took < Duration::from_millis(250),
            "{way:?}: {fast_took:?}"
        );
        assert_eq!((slow.affected_rows(), fast.affected_rows()), (3, 3));
        // Both go on in step on one thread, one after the other.
        let (mut slow_srv, mut fast_srv) = server.join().unwrap();
        for (w, srv) in [(&mut slow, &mut slow_srv), (&mut fast, &mut fast_srv)] {
            let writer = std::thread::spawn({
                let mut srv = srv.try_clone().unwrap();
                move || {
                    let _ = request(&mut srv);
                    srv.write_all(&reply(&[OK_3_ROWS])).unwrap();
                }
            });
            run(w.query("COMMIT")).unwrap();
            writer.join().unwrap();
        }
    }

    #[test]
    fn a_shared_wait_given_up_by_its_caller_leaves_the_wire_broken() {
        for way in EVERY_WAY {
            set_way(way);
            let (mut w, mut srv) = pair();
            let (mut other, mut other_srv) = pair();
            // A session that waits for a reply and a timer at once: in the thread's ring, the
            // timer still fires (tokio gets the thread at every tick of the ring's timer).
            let started = std::time::Instant::now();
            let given_up = run(async {
                tokio::time::timeout(Duration::from_millis(100), w.query("SELECT SLEEP(1)")).await
            });
            assert!(given_up.is_err(), "{way:?}: the reply cannot have come");
            let took = started.elapsed();
            assert!(
                took < Duration::from_millis(1000),
                "{way:?}: gave up after {took:?}"
            );
            // Its reply may still come: nothing more goes out on this connection, and the
            // reply does not land in another wire's buffer.
            let _ = request(&mut srv);
            srv.write_all(&reply(&[OK_3_ROWS])).unwrap();
            let e = run(w.query("SELECT 1")).unwrap_err();
            assert!(e.to_string().contains("failed earlier"), "{way:?}: {e}");
            let writer = std::thread::spawn(move || {
                let _ = request(&mut other_srv);
                other_srv.write_all(&reply(&[OK_3_ROWS])).unwrap();
                other_srv
            });
            run(other.query("COMMIT")).unwrap();
            assert_eq!(other.affected_rows(), 3, "{way:?}");
            drop(writer.join().unwrap());
        }
        ringdrive::remove();
    }

    #[test]
    fn a_thread_ring_or_epoll_runs_its_sessions_while_one_waits_for_tokio() {
        for way in EVERY_WAY {
            set_way(way);
            waiting_for_tokio(way);
        }
        ringdrive::remove();
    }

    fn waiting_for_tokio(way: Way) {
        let (mut w, mut srv) = pair();
        let server = std::thread::spawn(move || {
            let _ = request(&mut srv);
            std::thread::sleep(Duration::from_millis(300));
            srv.write_all(&reply(&[OK_3_ROWS])).unwrap();
            srv
        });
        let started = std::time::Instant::now();
        let sessions: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = Duration>>>> = vec![
            Box::pin(async {
                w.query("SELECT SLEEP(0.3)").await.unwrap();
                started.elapsed()
            }),
            // A pause between reconnects: tokio's timer, while the other waits in the ring.
            Box::pin(async {
                tokio::time::sleep(Duration::from_millis(700)).await;
                started.elapsed()
            }),
        ];
        let took = RT.with(|rt| ringdrive::drive(rt, sessions));
        // The thread slept in tokio's reactor, and the reply woke it there (the reactor watches
        // the ring's eventfd or the epoll instance), well before the timer did.
        let within = |t: Duration, from: u64, to: u64| {
            let range = Duration::from_millis(from)..Duration::from_millis(to);
            assert!(range.contains(&t), "{way:?}: {t:?} not in {range:?}");
        };
        within(took[0], 300, 600);
        within(took[1], 700, 1500);
        assert_eq!(w.affected_rows(), 3);
        drop(server.join().unwrap());
    }
}
