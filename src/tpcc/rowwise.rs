//! The five transactions in tpcc-mysql's statements (`--statements tpcc-mysql`, the default):
//! one statement per row operation, in `tpcc_start`'s order, so the server parses, plans and
//! executes what it does under tpcc-mysql and a TpmC lines up with a published one.
//!
//! Statements per transaction, as `tpcc_start` sends them (each a prepared statement, the
//! commit or rollback one more):
//! - New-Order: 5 (customer and warehouse, the district locked, its next order id, ORDER,
//!   NEW-ORDER) + 4 per line (the item, its stock row locked, the stock update, the line) + 1;
//!   an order with the unused item stops at that item's SELECT and rolls back.
//! - Payment: 4 (warehouse and district, each updated then read) + 2 by last name (count,
//!   then the ids) + 1 (customer locked) + 1 more for a "BC" customer (its C_DATA) + 1 update
//!   + 1 history + 1.
//! - Order-Status: 1 by id or 2 by last name, the last order, its lines, 1.
//! - Delivery: per district, the oldest new order, then for one found its delete, the order's
//!   customer, the carrier, the lines' date, their sum, the customer's credit and a commit.
//! - Stock-Level: the district's next order id, the distinct items of its last 20 orders, one
//!   count per item, 1.
//!
//! Where the statements differ from tpcc-mysql's text (same statements, same rows): the stock
//! update also adds S_YTD, S_ORDER_CNT and S_REMOTE_CNT, the Payment customer update
//! C_YTD_PAYMENT and C_PAYMENT_CNT (TPC-C 2.4.2.2, 2.5.2.2, which tpcc-mysql skips, breaking
//! consistency condition 3.3.2.12); Order-Status by last name also reads C_ID with the
//! customers (tpcc-mysql then reads the last order of the customer id it drew, not of the
//! customer it found); dates are the server's NOW() instead of a client string; a
//! Delivery whose DELETE removes no row (another Delivery took that order meanwhile; tpcc-mysql
//! reads the oldest order without a lock and would deliver it twice) skips that district.

use super::data::DISTRICTS;
use super::deck::{CustomerKey, Delivery, NewOrder, OrderStatus, Payment, StockLevel};
use super::session::{bc_prefix, cents, middle, missing, Done, Session, TxError};
use mysql_async::prelude::FromRow;
use mysql_async::{Params, Row, Value};

/// tpcc-mysql's statements (`main.c`, `stmt[t_num][0..35]`), in its numbering.
pub(crate) const SQL: [&str; 35] = [
    // New-Order
    "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?",
    "SELECT d_next_o_id, d_tax FROM district WHERE d_id = ? AND d_w_id = ? FOR UPDATE",
    "UPDATE district SET d_next_o_id = ? + 1 WHERE d_id = ? AND d_w_id = ?",
    "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, NOW(), ?, ?)",
    "INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
    "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?",
    "SELECT s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE",
    "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
    "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    // Payment
    "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
    "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = ?",
    "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
    "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = ? AND d_id = ?",
    "SELECT count(c_id) FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?",
    "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
    "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE",
    "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "UPDATE customer SET c_balance = ?, c_data = ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "UPDATE customer SET c_balance = ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, NOW(), ?, ?)",
    // Order-Status
    "SELECT count(c_id) FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?",
    "SELECT c_balance, c_first, c_middle, c_last, c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
    "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "SELECT o_id, o_entry_d, COALESCE(o_carrier_id,0) FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? AND o_id = (SELECT MAX(o_id) FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ?)",
    "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    // Delivery
    "SELECT COALESCE(MIN(no_o_id),0) FROM new_orders WHERE no_d_id = ? AND no_w_id = ?",
    "DELETE FROM new_orders WHERE no_o_id = ? AND no_d_id = ? AND no_w_id = ?",
    "SELECT o_c_id FROM orders WHERE o_id = ? AND o_d_id = ? AND o_w_id = ?",
    "UPDATE orders SET o_carrier_id = ? WHERE o_id = ? AND o_d_id = ? AND o_w_id = ?",
    "UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_o_id = ? AND ol_d_id = ? AND ol_w_id = ?",
    "SELECT SUM(ol_amount) FROM order_line WHERE ol_o_id = ? AND ol_d_id = ? AND ol_w_id = ?",
    "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_id = ? AND c_d_id = ? AND c_w_id = ?",
    // Stock-Level
    "SELECT d_next_o_id FROM district WHERE d_id = ? AND d_w_id = ?",
    "SELECT DISTINCT ol_i_id FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= (? - 20)",
    "SELECT count(*) FROM stock WHERE s_w_id = ? AND s_i_id = ? AND s_quantity < ?",
];

/// Positional parameters.
macro_rules! p {
    ($($v:expr),* $(,)?) => { Params::Positional(vec![$(Value::from($v)),*]) };
}

impl Session {
    async fn rw_drop(&mut self, i: usize, params: Params) -> Result<(), TxError> {
        Ok(self.link.exec_drop(&self.rw[i], params).await?)
    }

    async fn rw_first<T: FromRow + Send + 'static>(
        &mut self,
        i: usize,
        params: Params,
    ) -> Result<Option<T>, TxError> {
        Ok(self.link.exec_first(&self.rw[i], params).await?)
    }

    async fn rw_all<T: FromRow + Send + 'static>(
        &mut self,
        i: usize,
        params: Params,
    ) -> Result<Vec<T>, TxError> {
        Ok(self.link.exec(&self.rw[i], params).await?)
    }
}

/// S_QUANTITY after a line of `qty` (TPC-C 2.4.2.2: − qty when that leaves at least 10, else
/// + 91).
pub(crate) fn next_quantity(quantity: i64, qty: i64) -> i64 {
    if quantity >= qty + 10 {
        quantity - qty
    } else {
        quantity - qty + 91
    }
}

/// New-Order, line after line.
pub(crate) async fn new_order(s: &mut Session, o: &NewOrder) -> Result<Done, TxError> {
    let (w, d, c) = (o.w, o.d, o.c);
    let no_customer = || missing(format!("no customer {c} in district {d} of warehouse {w}"));
    let _cust: Row = s.rw_first(0, p![w, d, c]).await?.ok_or_else(no_customer)?;
    let (o_id, _tax): (u32, f64) = s
        .rw_first(1, p![d, w])
        .await?
        .ok_or_else(|| missing(format!("no district {d} in warehouse {w}")))?;
    s.rw_drop(2, p![o_id, d, w]).await?;
    let count = o.lines.len() as u32;
    s.rw_drop(3, p![o_id, d, w, c, count, o.all_local as u32])
        .await?;
    s.rw_drop(4, p![o_id, d, w]).await?;
    for (n, l) in o.lines.iter().enumerate() {
        let item: Option<(f64, Vec<u8>, Vec<u8>)> = s.rw_first(5, p![l.item]).await?;
        let Some((price, _name, _data)) = item else {
            s.rollback().await?;
            return Ok(Done::RolledBack);
        };
        let stock: Row = s
            .rw_first(6, p![l.item, l.supply_w])
            .await?
            .ok_or_else(|| {
                missing(format!(
                    "no stock of item {} in warehouse {}",
                    l.item, l.supply_w
                ))
            })?;
        let quantity: i64 = stock.get(0).unwrap_or(0);
        let dist: Vec<u8> = stock.get(1 + d as usize).unwrap_or_default();
        let qty = l.quantity as i64;
        let remote = (l.supply_w != w) as u32;
        s.rw_drop(
            7,
            p![
                next_quantity(quantity, qty),
                qty,
                remote,
                l.item,
                l.supply_w
            ],
        )
        .await?;
        let amount = (qty * cents(price)) as f64 / 100.0;
        s.rw_drop(
            8,
            p![
                o_id,
                d,
                w,
                n as u32 + 1,
                l.item,
                l.supply_w,
                l.quantity,
                amount,
                dist
            ],
        )
        .await?;
    }
    s.commit().await?;
    Ok(Done::Committed)
}

/// The customer a Payment or Order-Status names: by id, or the middle one of those with the
/// last name after counting them (statements `count` and `list`; the id is column `id_col`).
async fn by_name(
    s: &mut Session,
    (count, list, id_col): (usize, usize, usize),
    (w, d): (u32, u32),
    name: &str,
) -> Result<u32, TxError> {
    let _n: Option<i64> = s.rw_first(count, p![w, d, name]).await?;
    let rows: Vec<Row> = s.rw_all(list, p![w, d, name]).await?;
    middle(&rows)
        .and_then(|r| r.get::<u32, _>(id_col))
        .ok_or_else(|| {
            missing(format!(
                "no customer named {name} in district {d} of warehouse {w}"
            ))
        })
}

/// Payment.
pub(crate) async fn payment(s: &mut Session, p: &Payment) -> Result<Done, TxError> {
    let (w, d, c_w, c_d) = (p.w, p.d, p.c_w, p.c_d);
    let amount = p.amount_cents as f64 / 100.0;
    s.rw_drop(9, p![amount, w]).await?;
    let wh: Row = s
        .rw_first(10, p![w])
        .await?
        .ok_or_else(|| missing(format!("no warehouse {w}")))?;
    s.rw_drop(11, p![amount, w, d]).await?;
    let di: Row = s
        .rw_first(12, p![w, d])
        .await?
        .ok_or_else(|| missing(format!("no district {d} in warehouse {w}")))?;
    let c = match &p.customer {
        CustomerKey::Id(c) => *c,
        // Statement 14 returns only c_id.
        CustomerKey::LastName(name) => by_name(s, (13, 14, 0), (c_w, c_d), name).await?,
    };
    let cust: Row = s.rw_first(15, p![c_w, c_d, c]).await?.ok_or_else(|| {
        missing(format!(
            "no customer {c} in district {c_d} of warehouse {c_w}"
        ))
    })?;
    let credit: Vec<u8> = cust.get(9).unwrap_or_default();
    let balance = cents(cust.get::<f64, _>(12).unwrap_or(0.0)) - p.amount_cents;
    let balance = balance as f64 / 100.0;
    if credit.starts_with(b"BC") {
        let data: Option<Vec<u8>> = s.rw_first(16, p![c_w, c_d, c]).await?;
        let mut new = bc_prefix(c, c_d, c_w, d, w, p.amount_cents).into_bytes();
        new.extend(data.unwrap_or_default());
        new.truncate(500);
        s.rw_drop(17, p![balance, new, amount, c_w, c_d, c]).await?;
    } else {
        s.rw_drop(18, p![balance, amount, c_w, c_d, c]).await?;
    }
    let mut h_data: Vec<u8> = wh.get(5).unwrap_or_default();
    h_data.extend_from_slice(b"    ");
    h_data.extend(di.get::<Vec<u8>, _>(5).unwrap_or_default());
    s.rw_drop(19, p![c_d, c_w, c, d, w, amount, h_data]).await?;
    s.commit().await?;
    Ok(Done::Committed)
}

/// Order-Status.
pub(crate) async fn order_status(s: &mut Session, o: &OrderStatus) -> Result<Done, TxError> {
    let (w, d) = (o.w, o.d);
    let c = match &o.customer {
        CustomerKey::Id(c) => {
            let row: Option<Row> = s.rw_first(22, p![w, d, *c]).await?;
            row.ok_or_else(|| {
                missing(format!("no customer {c} in district {d} of warehouse {w}"))
            })?;
            *c
        }
        // Statement 21 returns C_ID as its fifth column.
        CustomerKey::LastName(name) => by_name(s, (20, 21, 4), (w, d), name).await?,
    };
    let order: Option<(u32, Value, u32)> = s.rw_first(23, p![w, d, c, w, d, c]).await?;
    if let Some((o_id, _, _)) = order {
        let _lines: Vec<Row> = s.rw_all(24, p![w, d, o_id]).await?;
    }
    s.commit().await?;
    Ok(Done::Committed)
}

/// Delivery: district after district, each its own transaction (tpcc-mysql's commit per
/// district).
pub(crate) async fn delivery(s: &mut Session, dl: &Delivery) -> Result<Done, TxError> {
    let w = dl.w;
    for d in 1..=DISTRICTS {
        let oldest: Option<i64> = s.rw_first(25, p![d, w]).await?;
        let o_id = oldest.unwrap_or(0);
        if o_id == 0 {
            continue;
        }
        s.rw_drop(26, p![o_id, d, w]).await?;
        if s.link.affected_rows() == 0 {
            s.commit().await?;
            continue;
        }
        let c: u32 = s
            .rw_first(27, p![o_id, d, w])
            .await?
            .ok_or_else(|| missing(format!("no order {o_id} in district {d} of warehouse {w}")))?;
        s.rw_drop(28, p![dl.carrier, o_id, d, w]).await?;
        s.rw_drop(29, p![o_id, d, w]).await?;
        let sum: Option<Option<f64>> = s.rw_first(30, p![o_id, d, w]).await?;
        let sum = cents(sum.flatten().unwrap_or(0.0)) as f64 / 100.0;
        s.rw_drop(31, p![sum, c, d, w]).await?;
        s.commit().await?;
    }
    Ok(Done::Committed)
}

/// Stock-Level: one count per distinct item of the district's last 20 orders.
pub(crate) async fn stock_level(s: &mut Session, sl: &StockLevel) -> Result<Done, TxError> {
    let (w, d) = (sl.w, sl.d);
    let next: u32 = s
        .rw_first(32, p![d, w])
        .await?
        .ok_or_else(|| missing(format!("no district {d} in warehouse {w}")))?;
    let items: Vec<u32> = s.rw_all(33, p![w, d, next, next]).await?;
    for item in items {
        let _count: Option<i64> = s.rw_first(34, p![w, item, sl.threshold]).await?;
    }
    s.commit().await?;
    Ok(Done::Committed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_tpcc_mysqls_numbering() {
        let params: Vec<usize> = SQL.iter().map(|s| s.matches('?').count()).collect();
        // tpcc-mysql's bind counts, less its client-side dates (orders 7 → 6, history 8 → 7,
        // order_line date 4 → 3) and plus the counters the stock and customer updates add.
        assert_eq!(
            params,
            [
                3, 2, 3, 6, 3, 1, 2, 5, 9, 2, 1, 3, 2, 3, 3, 3, 3, 6, 5, 7, 3, 3, 3, 6, 3, 2, 3, 3,
                4, 3, 3, 4, 2, 4, 3
            ]
        );
        assert!(SQL[6].ends_with("FOR UPDATE") && SQL[15].ends_with("FOR UPDATE"));
        assert!(SQL[7].contains("s_ytd = s_ytd + ?") && SQL[18].contains("c_ytd_payment"));
        assert!(SQL[21].contains("c_id FROM customer"));
    }

    #[test]
    fn stock_quantity_follows_clause_2_4_2_2() {
        assert_eq!(next_quantity(50, 5), 45);
        assert_eq!(next_quantity(15, 5), 10);
        assert_eq!(next_quantity(14, 5), 100);
    }
}
