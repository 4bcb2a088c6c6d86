//! A measured connection whose statements go through the [`Wire`] when the client thread's way
//! of waiting gave one (`ClientIo::Direct`), and through mysql_async otherwise: the same calls
//! either way, rows converted as mysql_async converts them. TPC-C's transactions run on it;
//! OLTP's loop, which drops every result, uses the wire's own calls.

use super::wire::Wire;
use mysql_async::prelude::{FromRow, Queryable};
use mysql_async::{Conn, Error, Params, Row, Statement, Value};

/// A connection and, in direct mode, the wire on its socket. Anything not routed here (status
/// queries, the disconnect) uses `conn`, which reads the same socket through
/// `BlockingSocket`.
pub struct Link {
    pub conn: Conn,
    pub wire: Option<Wire>,
}

impl Link {
    pub fn new(conn: Conn) -> Link {
        Link { conn, wire: None }
    }

    /// Executes `st` with `params` and drops its result.
    pub async fn exec_drop(&mut self, st: &Statement, params: Params) -> Result<(), Error> {
        match &mut self.wire {
            Some(w) => w.exec_values(st.id(), positional(&params)?).await,
            None => self.conn.exec_drop(st, params).await,
        }
    }

    /// Executes `st` with `params`: its rows as `T`.
    pub async fn exec<T: FromRow + Send + 'static>(
        &mut self,
        st: &Statement,
        params: Params,
    ) -> Result<Vec<T>, Error> {
        match &mut self.wire {
            Some(w) => w
                .exec_rows(st.id(), positional(&params)?, st.columns())
                .await?
                .into_iter()
                .map(convert)
                .collect(),
            None => self.conn.exec(st, params).await,
        }
    }

    /// Executes `st` with `params`: its first row as `T`, the rest read and dropped.
    pub async fn exec_first<T: FromRow + Send + 'static>(
        &mut self,
        st: &Statement,
        params: Params,
    ) -> Result<Option<T>, Error> {
        if self.wire.is_none() {
            return self.conn.exec_first(st, params).await;
        }
        Ok(self.exec(st, params).await?.into_iter().next())
    }

    /// Rows changed by the last statement.
    pub fn affected_rows(&self) -> u64 {
        match &self.wire {
            Some(w) => w.affected_rows(),
            None => self.conn.affected_rows(),
        }
    }
}

fn positional(params: &Params) -> Result<&[Value], Error> {
    match params {
        Params::Empty => Ok(&[]),
        Params::Positional(v) => Ok(v),
        Params::Named(_) => Err(Error::Other(
            "named parameters cannot go through spindle's direct client".into(),
        )),
    }
}

/// A row as `T`; one that does not fit is an error naming its values, where mysql_async's own
/// `exec_first` would panic.
fn convert<T: FromRow>(row: Row) -> Result<T, Error> {
    mysql_async::from_row_opt(row).map_err(|e| {
        let values = e.0.unwrap();
        Error::Other(
            format!(
                "a row of the reply does not fit the type read ({} columns: {values:?})",
                values.len()
            )
            .into(),
        )
    })
}
