//! Delivery (TPC-C 2.7.4) batched (`--statements batched`): all ten districts in one
//! transaction of six round trips.
//!
//! tpcc-mysql delivers district after district (seven statements and a commit each, seventy in
//! all). TPC-C lets the ten deliveries be one database transaction (2.7.4.2); spindle runs each
//! step for all districts at once, touching the same rows:
//! 1. the oldest new order of each district (ten MIN subqueries, each an index dive, no lock);
//! 2. those NEW-ORDER rows locked (`FOR UPDATE` on ten primary-key points): a row another
//!    Delivery removed meanwhile is not returned, and that district is skipped, so no order is
//!    ever delivered twice;
//! 3. the locked rows deleted; 4. their lines dated; 5. their orders given the carrier and their
//!    customers credited with the lines' sum (one multi-table UPDATE); 6. COMMIT.
//!
//! The district/order pairs are passed as ten `(d = ? AND o = ?)` terms; fewer pairs repeat the
//! last one, which changes nothing.

use super::data::DISTRICTS;
use super::deck::Delivery;
use super::session::{missing, Done, Session, TxError};
use mysql_async::{Params, Value};

const N: usize = DISTRICTS as usize;

/// `(a = ? AND b = ?) OR …` with ten terms.
fn pairs(a: &str, b: &str) -> String {
    vec![format!("({a} = ? AND {b} = ?)"); N].join(" OR ")
}

/// The oldest new order of every district of one warehouse.
pub(crate) fn oldest_sql() -> String {
    let subs: Vec<String> = (1..=N)
        .map(|d| {
            format!("(SELECT MIN(no_o_id) FROM new_orders WHERE no_w_id = ? AND no_d_id = {d})")
        })
        .collect();
    format!("SELECT {}", subs.join(", "))
}

pub(crate) fn lock_sql() -> String {
    format!(
        "SELECT no_d_id, no_o_id FROM new_orders WHERE no_w_id = ? AND ({}) FOR UPDATE",
        pairs("no_d_id", "no_o_id")
    )
}

pub(crate) fn delete_sql() -> String {
    format!(
        "DELETE FROM new_orders WHERE no_w_id = ? AND ({})",
        pairs("no_d_id", "no_o_id")
    )
}

pub(crate) fn lines_sql() -> String {
    format!(
        "UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = ? AND ({})",
        pairs("ol_d_id", "ol_o_id")
    )
}

pub(crate) fn orders_customers_sql() -> String {
    format!(
        "UPDATE orders o JOIN customer c ON c.c_w_id = o.o_w_id AND c.c_d_id = o.o_d_id \
         AND c.c_id = o.o_c_id SET o.o_carrier_id = ?, \
         c.c_balance = c.c_balance + (SELECT COALESCE(SUM(l.ol_amount), 0) FROM order_line l \
         WHERE l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id), \
         c.c_delivery_cnt = c.c_delivery_cnt + 1 WHERE o.o_w_id = ? AND ({})",
        pairs("o.o_d_id", "o.o_id")
    )
}

/// The (district, order) pairs to deliver from the oldest order per district (`None`: the
/// district has no undelivered order).
pub(crate) fn to_deliver(oldest: &[Option<u32>]) -> Vec<(u32, u32)> {
    oldest
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.map(|o| (i as u32 + 1, o)))
        .collect()
}

/// `head`, then the pairs padded to ten by repeating the last.
fn pair_params(head: &[Value], pairs: &[(u32, u32)]) -> Params {
    let mut v = head.to_vec();
    for i in 0..N {
        let (d, o) = pairs[i.min(pairs.len() - 1)];
        v.push(Value::from(d));
        v.push(Value::from(o));
    }
    Params::Positional(v)
}

type Oldest = (
    Option<u32>,
    Option<u32>,
    Option<u32>,
    Option<u32>,
    Option<u32>,
    Option<u32>,
    Option<u32>,
    Option<u32>,
    Option<u32>,
    Option<u32>,
);

/// Runs one Delivery on `s`.
pub(crate) async fn delivery(s: &mut Session, dl: &Delivery) -> Result<Done, TxError> {
    let Some(b) = s.batch.as_ref() else {
        return Err(missing("the batched statements are not prepared".into()));
    };
    let w = Value::from(dl.w);
    let params = Params::Positional(vec![w.clone(); N]);
    let oldest: Option<Oldest> = s.link.exec_first(&b.dl[0], params).await?;
    let o = oldest.unwrap_or_default();
    let candidates = to_deliver(&[o.0, o.1, o.2, o.3, o.4, o.5, o.6, o.7, o.8, o.9]);
    if !candidates.is_empty() {
        let locked: Vec<(u32, u32)> = s
            .link
            .exec(&b.dl[1], pair_params(std::slice::from_ref(&w), &candidates))
            .await?;
        if !locked.is_empty() {
            s.link
                .exec_drop(&b.dl[2], pair_params(std::slice::from_ref(&w), &locked))
                .await?;
            s.link
                .exec_drop(&b.dl[3], pair_params(std::slice::from_ref(&w), &locked))
                .await?;
            let head = [Value::from(dl.carrier), w];
            s.link
                .exec_drop(&b.dl[4], pair_params(&head, &locked))
                .await?;
        }
    }
    s.commit().await?;
    Ok(Done::Committed)
}

/// The statements, in the order [`delivery`] uses them (`Session::dl`).
pub(crate) fn statements() -> [String; 5] {
    [
        oldest_sql(),
        lock_sql(),
        delete_sql(),
        lines_sql(),
        orders_customers_sql(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn districts_without_new_orders_are_skipped() {
        let mut oldest = [Some(2101); 10];
        oldest[2] = None;
        oldest[9] = Some(3000);
        let p = to_deliver(&oldest);
        assert_eq!(p.len(), 9);
        assert_eq!(p[2], (4, 2101));
        assert_eq!(p[8], (10, 3000));
        assert!(to_deliver(&[None; 10]).is_empty());
    }

    #[test]
    fn statements_take_ten_pairs() {
        assert_eq!(oldest_sql().matches('?').count(), 10);
        assert_eq!(lock_sql().matches('?').count(), 21);
        assert_eq!(delete_sql().matches('?').count(), 21);
        assert_eq!(lines_sql().matches('?').count(), 21);
        assert_eq!(orders_customers_sql().matches('?').count(), 22);
        let Params::Positional(v) = pair_params(&[Value::from(1u32)], &[(3, 7)]) else {
            panic!()
        };
        assert_eq!(v.len(), 21);
        assert_eq!(v[19], Value::from(3u32));
        assert_eq!(v[20], Value::from(7u32));
    }
}
