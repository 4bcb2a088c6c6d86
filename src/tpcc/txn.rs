//! The five transactions on one connection: the prepared statements (tpcc-mysql's `main.c`
//! list, with the differences the module documentation names) and what each transaction
//! executes, in tpcc-mysql's order. A transaction returns [`Done`] or the error that stopped it;
//! retrying, counting and timing are the run loop's business.

use super::deck::{CustomerKey, Input, NewOrder, OrderStatus, Payment, StockLevel};
use super::neworder as no;
use super::{rowwise, Statements};
use crate::db::{describe_error, ConnectionConfig};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Params, Row, Statement, Value};

/// The statements, one prepared statement each per connection.
#[derive(Clone, Copy)]
enum Q {
    NoCustomer,
    NoDistrictUpdate,
    NoOrder,
    NoNewOrder,
    PyWarehouseUpdate,
    PyDistrictUpdate,
    PyByName,
    PyCustomerUpdate,
    PyHistory,
    OsByName,
    OsCustomer,
    OsOrder,
    OsLines,
    SlDistrict,
    SlCount,
    Commit,
    Rollback,
}

const SQL: [&str; 17] = [
    "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?",
    "UPDATE district SET d_next_o_id = (@spindle_o_id := d_next_o_id) + 1 WHERE d_id = ? AND d_w_id = ?",
    "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (@spindle_o_id, ?, ?, ?, NOW(), ?, ?)",
    "INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (@spindle_o_id, ?, ?)",
    "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
    "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
    "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
    "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = IF(c_credit = 'BC', LEFT(CONCAT(?, c_data), 500), c_data) WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) SELECT ?, ?, ?, ?, ?, NOW(), ?, CONCAT(w_name, '    ', d_name) FROM warehouse, district WHERE w_id = ? AND d_w_id = w_id AND d_id = ?",
    "SELECT c_balance, c_first, c_middle, c_last, c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
    "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "SELECT o_id, o_entry_d, COALESCE(o_carrier_id,0) FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? AND o_id = (SELECT MAX(o_id) FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ?)",
    "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    "SELECT d_next_o_id FROM district WHERE d_id = ? AND d_w_id = ?",
    "SELECT COUNT(DISTINCT(s_i_id)) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
    "COMMIT",
    "ROLLBACK",
];

/// Positional parameters.
macro_rules! p {
    ($($v:expr),* $(,)?) => { Params::Positional(vec![$(Value::from($v)),*]) };
}

/// How a transaction ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Done {
    Committed,
    /// New-Order with an unused item: rolled back on purpose (the 1 %).
    RolledBack,
}

/// Why a transaction stopped.
#[derive(Debug)]
pub(crate) enum TxError {
    Sql(mysql_async::Error),
    /// A row TPC-C guarantees is not there: the data is not a consistent TPC-C database.
    Missing(String),
}

impl From<mysql_async::Error> for TxError {
    fn from(e: mysql_async::Error) -> Self {
        TxError::Sql(e)
    }
}

pub(crate) fn missing(what: String) -> TxError {
    TxError::Missing(what)
}

/// The batched statements (`--statements batched`).
pub(super) struct Batch {
    /// New-Order's (see `neworder`): the items, the stock rows of one warehouse per district
    /// (its S_DIST_xx), their update, the order lines per count.
    pub items: Statement,
    pub stock: Vec<Statement>,
    pub stock_update: Statement,
    pub lines: Vec<Statement>,
    /// Delivery's (see `delivery`).
    pub dl: Vec<Statement>,
}

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

/// One connection with its prepared statements: those of the shape it runs only.
pub(crate) struct Session {
    pub conn: Conn,
    st: Vec<Statement>,
    /// `Some` for the batched shape.
    pub(super) batch: Option<Batch>,
    /// tpcc-mysql's statements (`rowwise::SQL`), for its shape.
    pub(super) rw: Vec<Statement>,
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
            conn,
            st,
            batch,
            rw,
        })
    }

    async fn drop_(&mut self, q: Q, params: Params) -> Result<(), mysql_async::Error> {
        self.conn.exec_drop(&self.st[q as usize], params).await
    }

    async fn first<T>(&mut self, q: Q, params: Params) -> Result<Option<T>, mysql_async::Error>
    where
        T: mysql_async::prelude::FromRow + Send + 'static,
    {
        self.conn.exec_first(&self.st[q as usize], params).await
    }

    pub async fn commit(&mut self) -> Result<(), mysql_async::Error> {
        self.drop_(Q::Commit, Params::Empty).await
    }

    pub async fn rollback(&mut self) -> Result<(), mysql_async::Error> {
        self.drop_(Q::Rollback, Params::Empty).await
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

    /// New-Order's first four statements: customer and warehouse read, the district's next
    /// order id taken (the row locked by the UPDATE, the id kept server-side in
    /// `@spindle_o_id` for the inserts, as the UPDATE cannot return it), ORDER and NEW-ORDER rows.
    pub(super) async fn new_order_head(&mut self, o: &NewOrder) -> Result<(), TxError> {
        let (w, d, c) = (o.w, o.d, o.c);
        let _cust: (f64, Vec<u8>, Vec<u8>, f64) = self
            .first(Q::NoCustomer, p![w, d, c])
            .await?
            .ok_or_else(|| missing(format!("no customer {c} in district {d} of warehouse {w}")))?;
        self.drop_(Q::NoDistrictUpdate, p![d, w]).await?;
        if self.conn.affected_rows() == 0 {
            return Err(missing(format!("no district {d} in warehouse {w}")));
        }
        let count = o.lines.len() as u32;
        self.drop_(Q::NoOrder, p![d, w, c, count, o.all_local as u32])
            .await?;
        self.drop_(Q::NoNewOrder, p![d, w]).await?;
        Ok(())
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
                    .conn
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
        if self.conn.affected_rows() == 0 {
            return Err(missing(format!(
                "no customer {c} in district {c_d} of warehouse {c_w}"
            )));
        }
        self.drop_(Q::PyHistory, p![c_d, c_w, c, d, w, amount, w, d])
            .await?;
        if self.conn.affected_rows() == 0 {
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
                    .conn
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
        &mut self.0.conn
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

/// The row at position ⌈n/2⌉ of `n` rows (TPC-C 2.5.2.2: the midpoint customer).
pub(crate) fn middle<T>(rows: &[T]) -> Option<&T> {
    if rows.is_empty() {
        None
    } else {
        rows.get(rows.len().div_ceil(2) - 1)
    }
}

/// A DECIMAL read as f64, in hundredths.
pub(crate) fn cents(v: f64) -> i64 {
    (v * 100.0).round() as i64
}

/// What goes in front of a "BC" customer's C_DATA (TPC-C 2.5.2.2: the payment's ids and
/// amount; the UPDATE keeps the first 500 characters).
pub(crate) fn bc_prefix(c: u32, c_d: u32, c_w: u32, d: u32, w: u32, cents: i64) -> String {
    format!(
        "{c} {c_d} {c_w} {d} {w} {}.{:02} | ",
        cents / 100,
        cents % 100
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_table_matches_the_enum() {
        assert_eq!(SQL[Q::Rollback as usize], "ROLLBACK");
        assert_eq!(SQL[Q::Commit as usize], "COMMIT");
        assert!(SQL[Q::SlCount as usize].contains("COUNT(DISTINCT(s_i_id))"));
        assert!(SQL[Q::NoCustomer as usize].starts_with("SELECT c_discount"));
        for s in SQL {
            let n = s.matches('?').count();
            assert!(n <= 9, "{s}");
        }
    }

    #[test]
    fn middle_customer_is_the_rounded_up_half() {
        assert_eq!(middle::<u32>(&[]), None);
        assert_eq!(middle(&[1]), Some(&1));
        assert_eq!(middle(&[1, 2]), Some(&1));
        assert_eq!(middle(&[1, 2, 3]), Some(&2));
        assert_eq!(middle(&[1, 2, 3, 4]), Some(&2));
        assert_eq!(middle(&[1, 2, 3, 4, 5]), Some(&3));
    }

    #[test]
    fn bc_prefix_names_the_payment() {
        assert_eq!(bc_prefix(12, 3, 1, 4, 1, 123_456), "12 3 1 4 1 1234.56 | ");
        assert!(SQL[Q::PyCustomerUpdate as usize].contains("LEFT(CONCAT(?, c_data), 500)"));
        assert_eq!(cents(0.1 + 0.2), 30);
        assert_eq!(cents(99.99), 9999);
    }
}
