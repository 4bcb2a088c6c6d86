//! The five transactions on one connection: the prepared statements (tpcc-mysql's `main.c`
//! list, with the differences the module documentation names) and what each transaction
//! executes, in tpcc-mysql's order. A transaction returns [`Done`] or the error that stopped it;
//! retrying, counting and timing are the run loop's business.

use super::deck::{CustomerKey, Input, OrderStatus, Payment, StockLevel};
use super::neworder as no;
use super::session::{bc_prefix, middle, missing, p, Batch, Q, SQL};
pub(crate) use super::session::{Done, Session, TxError};
use super::{rowwise, Statements};
use crate::db::{describe_error, ConnectionConfig, Link};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Params, Row, Value};

impl Batch {
    async fn prepare(conn: &mut Conn) -> Result<Batch, mysql_async::Error> {
        let mut stock = Vec::with_capacity(10);
        for d in 1..=10 {
            stock.push(conn.prep(no::stock_select_sql(d)).await?);
        }
        let mut lines = Vec::with_capacity(no::MAX_LINES);
        for n in 1..=no::MAX_LINES {
            lines.push(conn.prep(no::lines_sql(n)).await?);
        }
        let mut dl = Vec::with_capacity(5);
        for sql in super::delivery::statements() {
            dl.push(conn.prep(sql).await?);
        }
        Ok(Batch {
            items: conn.prep(no::items_sql()).await?,
            stock,
            stock_update: conn.prep(no::stock_update_sql()).await?,
            lines,
            dl,
        })
    }
}

impl Session {
    /// Turns autocommit off (tpcc-mysql's `mysql_autocommit(ctx, 0)`) and prepares the
    /// statements of `shape`.
    pub async fn new(mut conn: Conn, shape: Statements) -> Result<Session, mysql_async::Error> {
        conn.query_drop("SET autocommit = 0").await?;
        let mut st = Vec::with_capacity(SQL.len());
        for sql in SQL {
            st.push(conn.prep(sql).await?);
        }
        let (batch, rw) = match shape {
            Statements::Batched => (Some(Batch::prepare(&mut conn).await?), Vec::new()),
            Statements::TpccMysql => {
                let mut rw = Vec::with_capacity(rowwise::SQL.len());
                for sql in rowwise::SQL {
                    rw.push(conn.prep(sql).await?);
                }
                (None, rw)
            }
        };
        Ok(Session {
            link: Link::new(conn),
            st,
            batch,
            rw,
        })
    }

    /// Runs one transaction in the statements this session prepared.
    pub async fn execute(&mut self, input: &Input) -> Result<Done, TxError> {
        if self.batch.is_none() {
            return match input {
                Input::NewOrder(o) => rowwise::new_order(self, o).await,
                Input::Payment(p) => rowwise::payment(self, p).await,
                Input::OrderStatus(o) => rowwise::order_status(self, o).await,
                Input::Delivery(d) => rowwise::delivery(self, d).await,
                Input::StockLevel(s) => rowwise::stock_level(self, s).await,
            };
        }
        match input {
            Input::NewOrder(o) => no::new_order(self, o).await,
            Input::Payment(p) => self.payment(p).await,
            Input::OrderStatus(o) => self.order_status(o).await,
            Input::Delivery(d) => super::delivery::delivery(self, d).await,
            Input::StockLevel(s) => self.stock_level(s).await,
        }
    }

    async fn payment(&mut self, p: &Payment) -> Result<Done, TxError> {
        let (w, d) = (p.w, p.d);
        let amount = p.amount_cents as f64 / 100.0;
        self.drop_(Q::PyWarehouseUpdate, p![amount, w]).await?;
        self.drop_(Q::PyDistrictUpdate, p![amount, w, d]).await?;
        let (c_w, c_d) = (p.c_w, p.c_d);
        let c = match &p.customer {
            CustomerKey::Id(c) => *c,
            CustomerKey::LastName(name) => {
                let ids: Vec<u32> = self
                    .link
                    .exec(&self.st[Q::PyByName as usize], p![c_w, c_d, name.as_str()])
                    .await?;
                middle(&ids).copied().ok_or_else(|| {
                    missing(format!(
                        "no customer named {name} in district {c_d} of warehouse {c_w}"
                    ))
                })?
            }
        };
        // The customer's C_DATA grows by the payment only for bad credit ("BC"), decided in
        // the UPDATE itself: the customer row is read and written once.
        let prefix = bc_prefix(c, c_d, c_w, d, w, p.amount_cents);
        self.drop_(Q::PyCustomerUpdate, p![amount, amount, prefix, c_w, c_d, c])
            .await?;
        if self.link.affected_rows() == 0 {
            return Err(missing(format!(
                "no customer {c} in district {c_d} of warehouse {c_w}"
            )));
        }
        self.drop_(Q::PyHistory, p![c_d, c_w, c, d, w, amount, w, d])
            .await?;
        if self.link.affected_rows() == 0 {
            return Err(missing(format!("no district {d} in warehouse {w}")));
        }
        self.commit().await?;
        Ok(Done::Committed)
    }

    async fn order_status(&mut self, o: &OrderStatus) -> Result<Done, TxError> {
        let (w, d) = (o.w, o.d);
        let c = match &o.customer {
            CustomerKey::Id(c) => {
                let row: Option<Row> = self.first(Q::OsCustomer, p![w, d, *c]).await?;
                row.ok_or_else(|| {
                    missing(format!("no customer {c} in district {d} of warehouse {w}"))
                })?;
                *c
            }
            CustomerKey::LastName(name) => {
                type ByName = (f64, Vec<u8>, Vec<u8>, Vec<u8>, u32);
                let rows: Vec<ByName> = self
                    .link
                    .exec(&self.st[Q::OsByName as usize], p![w, d, name.as_str()])
                    .await?;
                middle(&rows).map(|r| r.4).ok_or_else(|| {
                    missing(format!(
                        "no customer named {name} in district {d} of warehouse {w}"
                    ))
                })?
            }
        };
        let order: Option<(u32, Value, u32)> = self.first(Q::OsOrder, p![w, d, c, w, d, c]).await?;
        if let Some((o_id, _, _)) = order {
            self.drop_(Q::OsLines, p![w, d, o_id]).await?;
        }
        self.commit().await?;
        Ok(Done::Committed)
    }

    async fn stock_level(&mut self, s: &StockLevel) -> Result<Done, TxError> {
        let (w, d) = (s.w, s.d);
        let next: u32 = self
            .first(Q::SlDistrict, p![d, w])
            .await?
            .ok_or_else(|| missing(format!("no district {d} in warehouse {w}")))?;
        let low = next.saturating_sub(20);
        let _count: Option<i64> = self
            .first(Q::SlCount, p![w, d, next, low, w, s.threshold])
            .await?;
        self.commit().await?;
        Ok(Done::Committed)
    }
}

/// One connection running single transactions in one statement shape, for tests and
/// benchmarks that count at the server what a transaction sends (`SHOW SESSION STATUS` on
/// [`Probe::conn`] between two transactions).
pub struct Probe(Session);

impl Probe {
    /// Connects as a run's connection does (no client-side statement cache, which would
    /// close statements it evicts), turns autocommit off and prepares the statements of
    /// `shape`.
    pub async fn new(connection: &ConnectionConfig, shape: Statements) -> anyhow::Result<Probe> {
        let conn = connection.connect(true).await?;
        let session = Session::new(conn, shape).await.map_err(|e| {
            anyhow::anyhow!(
                "could not prepare the TPC-C statements: {}",
                describe_error(&e)
            )
        })?;
        Ok(Probe(session))
    }

    /// The connection, for status queries between transactions.
    pub fn conn(&mut self) -> &mut Conn {
        &mut self.0.link.conn
    }

    /// Runs one transaction: `Ok(true)` committed, `Ok(false)` rolled back on purpose (a
    /// New-Order with the unused item); an error says what stopped it.
    pub async fn execute(&mut self, input: &Input) -> Result<bool, String> {
        match self.0.execute(input).await {
            Ok(Done::Committed) => Ok(true),
            Ok(Done::RolledBack) => Ok(false),
            Err(TxError::Sql(e)) => Err(describe_error(&e)),
            Err(TxError::Missing(what)) => Err(what),
        }
    }
}
