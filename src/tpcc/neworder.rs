//! New-Order (TPC-C 2.4.2) batched (`--statements batched`): nine round trips instead of
//! tpcc-mysql's 5 + 4 per line + 1 (`rowwise`).
//!
//! tpcc-mysql reads, locks and updates the order's items and stock rows one line at a time
//! (lines sorted by supply warehouse and item, so locks are taken in one global order). spindle
//! does the same reads, locks and writes on the same rows in the same order, batched: one
//! SELECT of all the items, per supply warehouse (nearly always one) one `SELECT … FOR UPDATE`
//! of its stock rows (an ascending index range, so the locks come in the same order) and one
//! UPDATE, then one multi-row INSERT of the order lines. An item appearing on two lines updates
//! its stock row twice, as line after line would. The 1 % with an unused item roll back as soon
//! as the items are read (tpcc-mysql rolls back when it reaches that line); either way nothing
//! of the order remains.
//!
//! The statements take 15 values (the most lines an order has); shorter lists repeat their last
//! value, which changes neither an IN list nor a CASE.

use super::deck::NewOrder;
use super::session::{cents, missing, Done, Session, TxError};
use mysql_async::{Params, Value};
use std::fmt::Write as _;

/// Most lines of one order.
pub(crate) const MAX_LINES: usize = 15;

fn placeholders(n: usize) -> String {
    vec!["?"; n].join(",")
}

/// All items of an order.
pub(crate) fn items_sql() -> String {
    format!(
        "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ({})",
        placeholders(MAX_LINES)
    )
}

/// The stock rows of one supply warehouse, locked, with district `d`'s S_DIST_xx only.
pub(crate) fn stock_select_sql(d: u32) -> String {
    format!(
        "SELECT s_i_id, s_quantity, s_data, s_dist_{d:02} FROM stock WHERE s_w_id = ? AND s_i_id IN ({}) FOR UPDATE",
        placeholders(MAX_LINES)
    )
}

/// New quantity, S_YTD, S_ORDER_CNT and S_REMOTE_CNT of the stock rows of one warehouse.
pub(crate) fn stock_update_sql() -> String {
    let case = |col: &str, add: bool| {
        let mut s = format!("{col} = ");
        if add {
            let _ = write!(s, "{col} + ");
        }
        s.push_str("CASE s_i_id");
        for _ in 0..MAX_LINES {
            s.push_str(" WHEN ? THEN ?");
        }
        s.push_str(" END");
        s
    };
    format!(
        "UPDATE stock SET {}, {}, {}, {} WHERE s_w_id = ? AND s_i_id IN ({})",
        case("s_quantity", false),
        case("s_ytd", true),
        case("s_order_cnt", true),
        case("s_remote_cnt", true),
        placeholders(MAX_LINES)
    )
}

/// The INSERT of `n` order lines.
pub(crate) fn lines_sql(n: usize) -> String {
    let row = "(@spindle_o_id, ?, ?, ?, ?, ?, ?, ?, ?)";
    format!(
        "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES {}",
        vec![row; n].join(", ")
    )
}

/// `values` padded to [`MAX_LINES`] by repeating the last one.
fn padded(values: impl Iterator<Item = u32>) -> Vec<Value> {
    let mut v: Vec<Value> = values.map(Value::from).collect();
    let last = v.last().cloned().unwrap_or(Value::from(0u32));
    v.resize(MAX_LINES, last);
    v
}

/// What one stock row ends as after the order's lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StockChange {
    pub w: u32,
    pub item: u32,
    pub quantity: i64,
    pub ytd: i64,
    pub orders: i64,
    pub remote: i64,
}

/// Applies the lines, in order, to the stock quantities `before` ((warehouse, item) →
/// S_QUANTITY): S_QUANTITY − OL_QUANTITY when that leaves at least 10, else + 91 (TPC-C
/// 2.4.2.2). One change per distinct row, in line order.
pub(crate) fn stock_changes(o: &NewOrder, before: &[((u32, u32), i64)]) -> Vec<StockChange> {
    let mut out: Vec<StockChange> = Vec::with_capacity(o.lines.len());
    for l in &o.lines {
        let key = (l.supply_w, l.item);
        let pos = out.iter().position(|c| (c.w, c.item) == key);
        let c = match pos {
            Some(i) => &mut out[i],
            None => {
                let q = before
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map(|(_, q)| *q)
                    .unwrap_or(0);
                out.push(StockChange {
                    w: l.supply_w,
                    item: l.item,
                    quantity: q,
                    ytd: 0,
                    orders: 0,
                    remote: 0,
                });
                out.last_mut().expect("just pushed")
            }
        };
        let qty = l.quantity as i64;
        c.quantity = if c.quantity >= qty + 10 {
            c.quantity - qty
        } else {
            c.quantity - qty + 91
        };
        c.ytd += qty;
        c.orders += 1;
        c.remote += (l.supply_w != o.w) as i64;
    }
    out
}

/// The UPDATE parameters for the changes of one warehouse (at most [`MAX_LINES`]).
fn update_params(w: u32, changes: &[&StockChange]) -> Params {
    let mut v = Vec::with_capacity(4 * 2 * MAX_LINES + 1 + MAX_LINES);
    let pick = |i: usize| changes[i.min(changes.len() - 1)];
    for field in 0..4 {
        for i in 0..MAX_LINES {
            let c = pick(i);
            v.push(Value::from(c.item));
            v.push(Value::from(match field {
                0 => c.quantity,
                1 => c.ytd,
                2 => c.orders,
                _ => c.remote,
            }));
        }
    }
    v.push(Value::from(w));
    v.extend(padded(changes.iter().map(|c| c.item)));
    Params::Positional(v)
}

/// Runs one New-Order on `s`.
pub(crate) async fn new_order(s: &mut Session, o: &NewOrder) -> Result<Done, TxError> {
    s.new_order_head(o).await?;
    let Some(b) = s.batch.as_ref() else {
        return Err(missing("the batched statements are not prepared".into()));
    };
    let (w, d) = (o.w, o.d);
    type Item = (u32, f64, Vec<u8>, Vec<u8>);
    let items: Vec<Item> = s
        .link
        .exec(
            &b.items,
            Params::Positional(padded(o.lines.iter().map(|l| l.item))),
        )
        .await?;
    if o.lines.iter().any(|l| !items.iter().any(|i| i.0 == l.item)) {
        s.rollback().await?;
        return Ok(Done::RolledBack);
    }
    // Lines are sorted by (supply warehouse, item): each warehouse's lines are contiguous.
    let mut before = Vec::with_capacity(o.lines.len());
    let mut dists: Vec<((u32, u32), Vec<u8>)> = Vec::with_capacity(o.lines.len());
    for group in o.lines.chunk_by(|a, b| a.supply_w == b.supply_w) {
        let sw = group[0].supply_w;
        let mut params = vec![Value::from(sw)];
        params.extend(padded(group.iter().map(|l| l.item)));
        type Stock = (u32, i64, Vec<u8>, Vec<u8>);
        let rows: Vec<Stock> = s
            .link
            .exec(&b.stock[d as usize - 1], Params::Positional(params))
            .await?;
        for l in group {
            if !rows.iter().any(|r| r.0 == l.item) {
                return Err(missing(format!(
                    "no stock of item {} in warehouse {sw}",
                    l.item
                )));
            }
        }
        for (item, qty, _data, dist) in rows {
            before.push(((sw, item), qty));
            dists.push(((sw, item), dist));
        }
    }
    let changes = stock_changes(o, &before);
    for group in changes.chunk_by(|a, b| a.w == b.w) {
        let refs: Vec<&StockChange> = group.iter().collect();
        let params = update_params(group[0].w, &refs);
        s.link.exec_drop(&b.stock_update, params).await?;
    }
    let mut params = Vec::with_capacity(9 * o.lines.len());
    for (n, l) in o.lines.iter().enumerate() {
        let price = items
            .iter()
            .find(|i| i.0 == l.item)
            .map(|i| i.1)
            .unwrap_or(0.0);
        let amount = (l.quantity as i64 * cents(price)) as f64 / 100.0;
        let dist = dists
            .iter()
            .find(|(k, _)| *k == (l.supply_w, l.item))
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        params.extend([
            Value::from(d),
            Value::from(w),
            Value::from(n as u32 + 1),
            Value::from(l.item),
            Value::from(l.supply_w),
            Value::from(l.quantity),
            Value::from(amount),
            Value::from(dist),
        ]);
    }
    let stmt = &b.lines[o.lines.len() - 1];
    s.link.exec_drop(stmt, Params::Positional(params)).await?;
    s.commit().await?;
    Ok(Done::Committed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpcc::deck::Line;

    fn order(lines: &[(u32, u32, u32)]) -> NewOrder {
        NewOrder {
            w: 1,
            d: 1,
            c: 1,
            lines: lines
                .iter()
                .map(|&(supply_w, item, quantity)| Line {
                    item,
                    supply_w,
                    quantity,
                })
                .collect(),
            all_local: lines.iter().all(|l| l.0 == 1),
            rollback: false,
        }
    }

    #[test]
    fn stock_changes_apply_each_line_in_order() {
        // Item 7 twice: 20 − 5 = 15 (≥ 10 left), then 15 − 8 = 7 < 10 → 15 − 8 + 91 = 98.
        let o = order(&[(1, 3, 2), (1, 7, 5), (1, 7, 8), (2, 9, 4)]);
        let before = [((1, 3), 50), ((1, 7), 20), ((2, 9), 12)];
        let c = stock_changes(&o, &before);
        assert_eq!(c.len(), 3);
        assert_eq!(
            (c[0].item, c[0].quantity, c[0].ytd, c[0].orders),
            (3, 48, 2, 1)
        );
        assert_eq!(
            (c[1].item, c[1].quantity, c[1].ytd, c[1].orders),
            (7, 98, 13, 2)
        );
        // Warehouse 2 supplies a remote line: 12 − 4 = 8 < 10 → 99.
        assert_eq!((c[2].w, c[2].quantity, c[2].remote), (2, 99, 1));
    }

    #[test]
    fn statements_take_fifteen_values() {
        assert_eq!(items_sql().matches('?').count(), 15);
        assert_eq!(stock_select_sql(3).matches('?').count(), 16);
        assert!(stock_select_sql(3).contains("s_dist_03"));
        assert_eq!(stock_update_sql().matches('?').count(), 4 * 30 + 1 + 15);
        assert_eq!(lines_sql(5).matches('?').count(), 40);
        let c = StockChange {
            w: 1,
            item: 4,
            quantity: 1,
            ytd: 2,
            orders: 1,
            remote: 0,
        };
        let Params::Positional(p) = update_params(1, &[&c]) else {
            panic!()
        };
        assert_eq!(p.len(), 136);
        assert_eq!(padded([5u32, 6].into_iter())[14], Value::from(6u32));
    }
}
