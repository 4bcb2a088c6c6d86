//! The pieces of MySQL's client/server protocol that [`super::wire`] reads and writes:
//! length-encoded integers, OK and ERR packets, the errors an unreadable reply becomes (a lost
//! connection, as mysql_async reports it), and [`Replies`]: packets framed, results' rows
//! skipped or collected, from a buffer that a [`More`] (a socket, a test's bytes) adds to.

use mysql_async::{Column, Error, IoError, Row, ServerError};
use mysql_common::io::ParseBuf;
use mysql_common::row::RowDeserializer;
use mysql_common::value::ServerSide;
use std::io;
use std::sync::Arc;

/// A payload of this length is continued in the next packet.
pub(super) const MAX_PAYLOAD: usize = 0xff_ffff;
/// Room made before each receive (libmysqlclient reads 16 KiB).
pub(super) const READ_ROOM: usize = 16 * 1024;
const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;

/// An I/O error as mysql_async's: a lost connection.
pub(super) fn lost(e: io::Error) -> Error {
    Error::Io(IoError::Io(e))
}

/// A reply that cannot be read: a lost connection.
pub(super) fn malformed() -> Error {
    lost(io::Error::new(
        io::ErrorKind::InvalidData,
        "a malformed packet in the server's reply",
    ))
}

/// `v` as a length-encoded integer.
pub(super) fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=250 => out.push(v as u8),
        251..=0xffff => {
            out.push(0xfc);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xff_ffff => {
            out.push(0xfd);
            out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xfe);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// A length-encoded integer at the front of `p`, consumed.
pub(super) fn lenenc(p: &mut &[u8]) -> Option<u64> {
    let (&first, rest) = p.split_first()?;
    let (n, rest) = match first {
        0..=250 => return Some(u64::from(first)).inspect(|_| *p = rest),
        0xfc => (2, rest),
        0xfd => (3, rest),
        0xfe => (8, rest),
        _ => return None,
    };
    let bytes = rest.get(..n)?;
    let mut v = [0u8; 8];
    v[..n].copy_from_slice(bytes);
    *p = &rest[n..];
    Some(u64::from_le_bytes(v))
}

/// (affected rows, status flags) of an OK packet (header 0x00, or 0xFE ending a result set).
pub(super) fn ok_packet(p: &[u8]) -> Option<(u64, u16)> {
    let mut r = p.get(1..)?;
    let affected = lenenc(&mut r)?;
    lenenc(&mut r)?; // last insert id
    let status = r.get(..2)?;
    Some((affected, u16::from_le_bytes([status[0], status[1]])))
}

/// An ERR packet as mysql_async's error; `None` for a MariaDB progress report (code 0xFFFF).
pub(super) fn err_packet(p: &[u8]) -> Option<Error> {
    let code = match p.get(1..3) {
        Some(c) => u16::from_le_bytes([c[0], c[1]]),
        None => return Some(malformed()),
    };
    if code == 0xffff {
        return None;
    }
    let rest = &p[3..];
    let (state, message) = match rest.split_first() {
        Some((b'#', r)) if r.len() >= 5 => (&r[..5], &r[5..]),
        _ => (&b"HY000"[..], rest),
    };
    Some(Error::Server(ServerError {
        code,
        message: String::from_utf8_lossy(message).into_owned(),
        state: String::from_utf8_lossy(state).into_owned(),
    }))
}

/// Where more of a reply comes from: one receive appended to the buffer (the framing has made
/// at least [`READ_ROOM`] of room), its length; `Ok(0)` when the peer closed.
pub(super) trait More: FnMut(&mut Vec<u8>) -> io::Result<usize> {}
impl<F: FnMut(&mut Vec<u8>) -> io::Result<usize>> More for F {}

/// A connection's received bytes (`inb[pos..]` not consumed yet), read as replies.
#[derive(Debug, Default)]
pub(super) struct Replies {
    pub(super) inb: Vec<u8>,
    pub(super) pos: usize,
    /// The sequence number the next packet of the reply must carry.
    pub(super) seq: u8,
    /// Rows changed by the last statement (its OK packet).
    pub(super) affected: u64,
}

/// Where a reply's rows go when they are read, not skipped.
pub(super) struct Collect<'a> {
    pub(super) columns: Arc<[Column]>,
    pub(super) rows: &'a mut Vec<Row>,
}

/// The first packet of a reply: an OK, or a result set with this many column definitions to
/// skip before its rows.
enum Head {
    Ok { affected: u64, status: u16 },
    Rows(u64),
}

impl Replies {
    /// Reads the whole reply: every result set's rows skipped, or decoded into `collect`'s rows
    /// (a binary-protocol result), the OK's affected rows kept, the first ERR returned.
    pub(super) fn reply(
        &mut self,
        more: &mut impl More,
        mut collect: Option<Collect<'_>>,
    ) -> Result<(), Error> {
        loop {
            let status = match self.head(more)? {
                Head::Ok { affected, status } => {
                    self.affected = affected;
                    status
                }
                Head::Rows(columns) => {
                    match collect.as_mut() {
                        Some(c) if columns > 0 => c.columns = self.columns(more, columns)?,
                        _ => {
                            for _ in 0..columns {
                                self.skip_packet(more)?;
                            }
                        }
                    }
                    self.rows(more, collect.as_mut())?
                }
            };
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(());
            }
        }
    }

    /// `n` column definitions, parsed.
    fn columns(&mut self, more: &mut impl More, n: u64) -> Result<Arc<[Column]>, Error> {
        let mut v = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let (start, len) = self.packet(more)?;
            if len == MAX_PAYLOAD {
                return Err(malformed());
            }
            let mut buf = ParseBuf(&self.inb[start..start + len]);
            v.push(buf.parse::<Column>(()).map_err(|_| malformed())?);
        }
        Ok(v.into())
    }

    /// The packet that starts a result: OK, a column count, or ERR (returned as the error).
    fn head(&mut self, more: &mut impl More) -> Result<Head, Error> {
        loop {
            let (start, len) = self.packet(more)?;
            let p = &self.inb[start..start + len];
            match p.first() {
                Some(0x00) => {
                    let (affected, status) = ok_packet(p).ok_or_else(malformed)?;
                    return Ok(Head::Ok { affected, status });
                }
                Some(0xff) => match err_packet(p) {
                    None => continue, // a progress report
                    Some(e) => return Err(e),
                },
                Some(0xfb) => {
                    return Err(lost(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "the server asked for a LOCAL INFILE file",
                    )))
                }
                Some(_) => {
                    let mut r = p;
                    let n = lenenc(&mut r).ok_or_else(malformed)?;
                    // MariaDB with MARIADB_CLIENT_CACHE_METADATA (mysql_async asks for it) adds
                    // a byte: 0 when the column definitions are left out (a prepared
                    // statement's, known to the client since the prepare).
                    let defs = if r.first() == Some(&0) { 0 } else { n };
                    return Ok(Head::Rows(defs));
                }
                None => return Err(malformed()),
            }
        }
    }

    /// Skips rows up to the result set's terminator (EOF, or OK with CLIENT_DEPRECATE_EOF) and
    /// returns its status flags; an ERR in place of a row is the error. Without
    /// CLIENT_DEPRECATE_EOF an EOF also separates the column definitions from the rows: it comes
    /// first and is five bytes long, while a terminating OK is at least seven, so the two are
    /// told apart without knowing the capability. A row never starts with 0xFE unless it is
    /// 16 MiB long (a length-encoded 8-byte length in the text protocol, 0x00 in the binary).
    /// With `collect`, each row is decoded (binary protocol) with its columns; a row of 16 MiB
    /// or more is then refused as malformed (no benchmark reads one).
    fn rows(
        &mut self,
        more: &mut impl More,
        mut collect: Option<&mut Collect<'_>>,
    ) -> Result<u16, Error> {
        let mut first = true;
        let mut continued = false;
        loop {
            let (start, len) = self.packet(more)?;
            let (was_first, was_continued) = (first, continued);
            first = false;
            continued = len == MAX_PAYLOAD;
            if was_continued {
                continue;
            }
            let p = &self.inb[start..start + len];
            match p.first() {
                Some(0xfe) if len < MAX_PAYLOAD => {
                    if len == 5 {
                        if was_first {
                            continue;
                        }
                        return Ok(u16::from_le_bytes([p[3], p[4]]));
                    }
                    let (_, status) = ok_packet(p).ok_or_else(malformed)?;
                    return Ok(status);
                }
                Some(0xff) => match err_packet(p) {
                    None => continue,
                    Some(e) => return Err(e),
                },
                _ => {}
            }
            if let Some(c) = collect.as_deref_mut() {
                if len == MAX_PAYLOAD {
                    return Err(malformed());
                }
                let mut buf = ParseBuf(p);
                let row = buf
                    .parse::<RowDeserializer<ServerSide, mysql_common::proto::Binary>>(
                        c.columns.clone(),
                    )
                    .map_err(|_| malformed())?;
                c.rows.push(row.into());
            }
        }
    }

    /// Skips one whole packet (a column definition).
    fn skip_packet(&mut self, more: &mut impl More) -> Result<(), Error> {
        let (_, len) = self.packet(more)?;
        if len == MAX_PAYLOAD {
            return self.skip_packet(more);
        }
        Ok(())
    }

    /// The next packet of the reply, whole in `inb`: (payload start, payload length). Checks
    /// its sequence number.
    fn packet(&mut self, more: &mut impl More) -> Result<(usize, usize), Error> {
        self.fill(more, 4)?;
        let h = &self.inb[self.pos..self.pos + 4];
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        if h[3] != self.seq {
            return Err(lost(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "packet out of order (sequence {} where {} was due)",
                    h[3], self.seq
                ),
            )));
        }
        self.seq = self.seq.wrapping_add(1);
        self.fill(more, 4 + len)?;
        let start = self.pos + 4;
        self.pos = start + len;
        Ok((start, len))
    }

    /// Asks `more` until `inb[pos..]` holds at least `need` bytes.
    fn fill(&mut self, more: &mut impl More, need: usize) -> Result<(), Error> {
        while self.inb.len() - self.pos < need {
            if self.pos > 0
                && (self.pos == self.inb.len() || self.inb.capacity() - self.inb.len() < READ_ROOM)
            {
                self.inb.drain(..self.pos);
                self.pos = 0;
            }
            let want = (need - (self.inb.len() - self.pos)).max(READ_ROOM);
            self.inb.reserve(want);
            if more(&mut self.inb).map_err(lost)? == 0 {
                return Err(lost(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packets with sequence numbers from `seq`, as a server's reply.
    fn packets(seq: u8, payloads: &[&[u8]]) -> Vec<u8> {
        let mut v = Vec::new();
        for (i, p) in payloads.iter().enumerate() {
            v.extend_from_slice(&(p.len() as u32).to_le_bytes()[..3]);
            v.push(seq.wrapping_add(i as u8));
            v.extend_from_slice(p);
        }
        v
    }

    fn reply(payloads: &[&[u8]]) -> Vec<u8> {
        packets(1, payloads)
    }

    /// What reading one reply from `bytes` gave, handed over at most `chunk` bytes a receive.
    struct Read {
        result: Result<(), Error>,
        replies: Replies,
        /// Bytes handed over, receives made.
        given: usize,
        receives: usize,
    }

    fn read(bytes: &[u8], chunk: usize, collect: Option<Collect<'_>>) -> Read {
        let mut replies = Replies {
            seq: 1,
            ..Replies::default()
        };
        let (mut given, mut receives) = (0, 0);
        let mut more = |inb: &mut Vec<u8>| -> io::Result<usize> {
            let room = inb.capacity() - inb.len();
            assert!(
                room >= READ_ROOM,
                "the framing makes room before each receive"
            );
            let n = chunk.min(room).min(bytes.len() - given);
            inb.extend_from_slice(&bytes[given..given + n]);
            given += n;
            receives += 1;
            Ok(n)
        };
        let result = replies.reply(&mut more, collect);
        Read {
            result,
            replies,
            given,
            receives,
        }
    }

    /// `bytes` read whole as one reply, in step: nothing asked for past its end.
    fn read_whole(bytes: &[u8], chunk: usize) -> Replies {
        let r = read(bytes, chunk, None);
        r.result.unwrap();
        assert_eq!(r.given, bytes.len(), "the whole reply was read");
        assert_eq!(r.replies.pos, r.replies.inb.len(), "and nothing more");
        r.replies
    }

    const OK_3_ROWS: &[u8] = &[0x00, 3, 0, 0x02, 0, 0, 0];
    const OK_1_ROW_MORE: &[u8] = &[0x00, 1, 0, 0x0a, 0, 0, 0];
    const EOF: &[u8] = &[0xfe, 0, 0, 0x02, 0];
    const EOF_MORE: &[u8] = &[0xfe, 0, 0, 0x0a, 0];
    const DEPRECATE_EOF_OK: &[u8] = &[0xfe, 0, 0, 0x02, 0, 0, 0];
    const DEPRECATE_EOF_OK_MORE: &[u8] = &[0xfe, 0, 0, 0x0a, 0, 0, 0];
    const COL: &[u8] = &[
        3, b'd', b'e', b'f', 0, 0, 0, 1, b'c', 0, 0x0c, 8, 0, 0, 0, 0, 0xfd,
    ];
    const ROW: &[u8] = &[1, b'x'];

    fn deadlock() -> Vec<u8> {
        let mut err = vec![0xff, 0xbd, 0x04, b'#'];
        err.extend_from_slice(b"40001Deadlock found");
        err
    }

    #[test]
    fn rows_are_skipped_with_and_without_deprecate_eof() {
        let cases: [&[&[u8]]; 7] = [
            // Without CLIENT_DEPRECATE_EOF: an EOF after the definitions and after the rows.
            &[&[1], COL, EOF, ROW, ROW, EOF],
            &[&[1], COL, EOF, EOF],
            // With it: rows, then an OK-shaped 0xFE terminator.
            &[&[1], COL, ROW, ROW, DEPRECATE_EOF_OK],
            &[&[1], COL, DEPRECATE_EOF_OK],
            // Two columns; and MariaDB's cached metadata (definitions left out).
            &[&[2], COL, COL, ROW, DEPRECATE_EOF_OK],
            &[&[2, 0], ROW, ROW, DEPRECATE_EOF_OK],
            &[&[2, 0], ROW, EOF],
        ];
        for payloads in cases {
            let r = read_whole(&reply(payloads), READ_ROOM);
            assert_eq!(r.affected, 0, "{payloads:?}: no OK, no affected rows");
            assert_eq!(r.seq as usize, payloads.len() + 1, "{payloads:?}");
        }
        assert_eq!(read_whole(&reply(&[OK_3_ROWS]), READ_ROOM).affected, 3);
    }

    #[test]
    fn more_results_are_followed_to_the_last() {
        let bytes = reply(&[
            &[1],
            COL,
            EOF,
            ROW,
            EOF_MORE,
            &[1],
            COL,
            DEPRECATE_EOF_OK_MORE,
            OK_1_ROW_MORE,
            &[2, 0],
            ROW,
            EOF_MORE,
            OK_3_ROWS,
        ]);
        assert_eq!(read_whole(&bytes, READ_ROOM).affected, 3);
        // A set without SERVER_MORE_RESULTS_EXISTS ends the reply: what follows is not read.
        let mut bytes = reply(&[&[1], COL, EOF, ROW, EOF]);
        let end = bytes.len();
        bytes.extend_from_slice(&packets(6, &[OK_3_ROWS]));
        let r = read(&bytes, 1, None);
        r.result.unwrap();
        assert_eq!((r.given, r.replies.affected), (end, 0));
    }

    #[test]
    fn an_err_packet_mid_stream_ends_the_reply_as_the_servers_error() {
        let err = deadlock();
        let progress: &[u8] = &[0xff, 0xff, 0xff, 1, 1, 0, 0, 0];
        let cases: [&[&[u8]]; 4] = [
            &[&[1], COL, EOF, ROW, ROW, &err],
            &[&[1], COL, ROW, progress, &err],
            &[progress, &err],
            &[OK_1_ROW_MORE, &[1], COL, EOF, &err],
        ];
        for payloads in cases {
            let bytes = reply(payloads);
            let r = read(&bytes, READ_ROOM, None);
            match r.result {
                Err(Error::Server(s)) => {
                    assert_eq!((s.code, s.state.as_str()), (1213, "40001"));
                    assert_eq!(s.message, "Deadlock found");
                }
                other => panic!("{payloads:?}: {other:?}"),
            }
            assert_eq!(
                r.replies.pos,
                bytes.len(),
                "{payloads:?}: read up to the ERR"
            );
        }
    }

    #[test]
    fn a_packet_split_across_receives_is_framed_whole() {
        let bytes = reply(&[
            &[1],
            COL,
            EOF,
            ROW,
            ROW,
            EOF_MORE,
            OK_1_ROW_MORE,
            &[2, 0],
            ROW,
            DEPRECATE_EOF_OK_MORE,
            OK_3_ROWS,
        ]);
        for chunk in [1, 2, 3, 5, 7, 4096] {
            let r = read(&bytes, chunk, None);
            r.result.unwrap();
            assert_eq!(r.replies.affected, 3, "{chunk}");
            assert_eq!(r.given, bytes.len(), "{chunk}");
            assert_eq!(r.receives, bytes.len().div_ceil(chunk), "{chunk}");
        }
    }

    #[test]
    fn a_row_of_16_mib_or_more_spans_packets_and_is_skipped_as_one() {
        let big = vec![b'x'; MAX_PAYLOAD];
        // 16 MiB - 1 + 10 bytes: a continuation whose bytes look like a terminator.
        let bytes = reply(&[&[1], COL, &big, &[0xfe; 10], ROW, DEPRECATE_EOF_OK]);
        let r = read_whole(&bytes, 64 * 1024);
        assert_eq!(r.seq, 7);
        // Exactly 16 MiB - 1: an empty packet ends it; then an EOF-terminated set.
        let bytes = reply(&[&[1], COL, EOF, &big, &[], EOF]);
        read_whole(&bytes, 1 << 20);
        // A column definition as long is skipped whole too.
        read_whole(&reply(&[&[1], &big, &[1], EOF, EOF]), 1 << 20);
        // Collected rows (binary protocol) that long are refused.
        let mut rows = Vec::new();
        let columns: Arc<[Column]> = Vec::new().into();
        let collect = Collect {
            columns,
            rows: &mut rows,
        };
        let bytes = reply(&[&[1, 0], &big, &[], EOF]);
        let r = read(&bytes, 1 << 20, Some(collect));
        assert!(r.result.unwrap_err().to_string().contains("malformed"));
    }

    #[test]
    fn a_reply_out_of_step_or_cut_short_is_a_lost_connection() {
        let mut bytes = reply(&[&[1], COL]);
        bytes.extend_from_slice(&packets(4, &[EOF]));
        let e = read(&bytes, READ_ROOM, None).result.unwrap_err();
        assert!(matches!(e, Error::Io(_)), "{e}");
        assert!(e.to_string().contains("sequence 4 where 3 was due"), "{e}");
        // The peer closes within a packet's header, and within its payload.
        let bytes = reply(&[&[1], COL, ROW]);
        for cut in [bytes.len() - 4, bytes.len() - 1] {
            let e = read(&bytes[..cut], 1, None).result.unwrap_err();
            assert!(
                e.to_string().contains("closed the connection"),
                "{cut}: {e}"
            );
        }
    }
}
