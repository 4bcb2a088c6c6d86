//! How one OLTP statement reaches the server: prepared (or, where the server will not prepare
//! it, as text, as sysbench's MySQL driver falls back), executed through the connection's wire
//! (`db::wire`) or mysql_async, and the values inlined into SQL text for the text protocol.

use crate::db::Param as Arg;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Params, Statement, Value};
use std::fmt::Write as _;

/// MySQL's ER_UNSUPPORTED_PS: "This command is not supported in the prepared statement
/// protocol yet" (MySQL and Percona refuse BEGIN and START TRANSACTION, MariaDB prepares them).
const ER_UNSUPPORTED_PS: u16 = 1295;

/// `sql` prepared on the server, or `None` when the server refuses to prepare that command
/// (error 1295): the caller sends it as text, as sysbench's MySQL driver falls back ("using
/// emulation") for exactly this error. Any other error is the caller's.
pub(super) async fn prepare_or_text(
    conn: &mut Conn,
    sql: &str,
) -> Result<Option<Statement>, mysql_async::Error> {
    match conn.prep(sql).await {
        Ok(stmt) => Ok(Some(stmt)),
        Err(mysql_async::Error::Server(e)) if e.code == ER_UNSUPPORTED_PS => Ok(None),
        Err(e) => Err(e),
    }
}

/// Executes prepared `stmt` with `args`, its result dropped: through the connection's wire
/// (`db::wire`) when it has one, else through mysql_async (`exec_drop_unboxed`, `exec_drop`
/// without its three boxed futures, vendor/README.md).
pub(super) async fn run_prepared(
    conn: &mut Conn,
    wire: &mut Option<crate::db::Wire>,
    stmt: &Statement,
    args: &[Arg<'_>],
) -> Result<(), mysql_async::Error> {
    match wire {
        Some(w) if args.len() == stmt.num_params() as usize => w.exec(stmt.id(), args).await,
        _ => {
            let values = args.iter().map(|a| match *a {
                Arg::Int(i) => Value::Int(i),
                Arg::Str(s) => Value::Bytes(s.to_vec()),
            });
            let params = Params::Positional(values.collect());
            conn.exec_drop_unboxed(stmt, params).await
        }
    }
}

/// Runs `sql` as a text query, its result dropped, through the wire when there is one.
pub(super) async fn run_sql(
    conn: &mut Conn,
    wire: &mut Option<crate::db::Wire>,
    sql: &str,
) -> Result<(), mysql_async::Error> {
    match wire {
        Some(w) => w.query(sql).await,
        None => conn.query_drop(sql).await,
    }
}

/// Our generated strings are ASCII digits and dashes; anything else is escaped on the way in.
pub(super) fn ascii(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or("")
}

pub(super) fn push_arg(out: &mut String, a: &Arg<'_>) {
    match *a {
        Arg::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Arg::Str(s) => {
            out.push('\'');
            for &b in s {
                match b {
                    b'\'' => out.push_str("''"),
                    b'\\' => out.push_str("\\\\"),
                    _ => out.push(b as char),
                }
            }
            out.push('\'');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_mode_inlines_and_escapes_values() {
        let mut s = String::new();
        push_arg(&mut s, &Arg::Int(-5));
        push_arg(&mut s, &Arg::Str(b"a'b\\"));
        assert_eq!(s, "-5'a''b\\\\'");
    }
}
