//! One TPC-C connection and what every statement shape shares, below the transactions of
//! each shape (`rowwise`, `neworder`, `delivery`, and the batched ones in `txn`): the
//! statements tpcc-mysql's `main.c` prepares for every shape (`SQL`), the session that holds
//! them with the shape's own, how a transaction ended or failed, and the helpers the shapes
//! share. Which statements a session prepares and which transaction runs is `txn`'s business.

use super::deck::NewOrder;
use crate::db::Link;
use mysql_async::{Params, Statement, Value};

/// The statements, one prepared statement each per connection.
#[derive(Clone, Copy)]
pub(super) enum Q {
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

pub(super) const SQL: [&str; 17] = [
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
pub(super) use p;

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

/// One connection with its prepared statements: those of the shape it runs only.
pub(crate) struct Session {
    /// The connection; its statements go through spindle's direct client when the thread's
    /// way of waiting gave one (`ClientIo::Direct`).
    pub link: Link,
    pub(super) st: Vec<Statement>,
    /// `Some` for the batched shape.
    pub(super) batch: Option<Batch>,
    /// tpcc-mysql's statements (`rowwise::SQL`), for its shape.
    pub(super) rw: Vec<Statement>,
}

impl Session {
    pub(super) async fn drop_(&mut self, q: Q, params: Params) -> Result<(), mysql_async::Error> {
        self.link.exec_drop(&self.st[q as usize], params).await
    }

    pub(super) async fn first<T>(
        &mut self,
        q: Q,
        params: Params,
    ) -> Result<Option<T>, mysql_async::Error>
    where
        T: mysql_async::prelude::FromRow + Send + 'static,
    {
        self.link.exec_first(&self.st[q as usize], params).await
    }

    pub async fn commit(&mut self) -> Result<(), mysql_async::Error> {
        self.drop_(Q::Commit, Params::Empty).await
    }

    pub async fn rollback(&mut self) -> Result<(), mysql_async::Error> {
        self.drop_(Q::Rollback, Params::Empty).await
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
        if self.link.affected_rows() == 0 {
            return Err(missing(format!("no district {d} in warehouse {w}")));
        }
        let count = o.lines.len() as u32;
        self.drop_(Q::NoOrder, p![d, w, c, count, o.all_local as u32])
            .await?;
        self.drop_(Q::NoNewOrder, p![d, w]).await?;
        Ok(())
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
