//! The pieces of MySQL's client/server protocol that [`super::wire`] reads and writes:
//! length-encoded integers, OK and ERR packets, and the errors a reply that cannot be read
//! becomes (a lost connection, as mysql_async reports it).

use mysql_async::{Error, IoError, ServerError};
use std::io;

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
