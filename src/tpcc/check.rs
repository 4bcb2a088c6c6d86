//! `check`: TPC-C's consistency conditions 3.3.2.1–3.3.2.12, per warehouse.
//!
//! A handful of grouped queries gather the facts of every warehouse at once ([`Facts`]); a pure
//! evaluation turns them into one [`ConditionResult`] per condition and warehouse, with the
//! offending values when it fails. Row-by-row conditions (5, 6, 7, 10, 12) count the offending
//! rows per warehouse and describe the first (window functions: MariaDB 10.2+, MySQL 8.0+).
//!
//! Condition 3.3.2.11 (count(ORDER) − count(NEW-ORDER) = 2100 per district) holds only on
//! freshly loaded data: every Delivery breaks it. spindle's marker table `spindle_tpcc` counts
//! the runs started since `prepare`; 11 is checked when that count is 0 and reported as
//! SKIPPED otherwise, or when there is no marker (data loaded by another tool).

use super::schema;
use super::session::cents;
use super::TpccConfig;
use crate::db::describe_error;
use crate::engine::{Controller, Observer};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

/// The outcome of one condition for one warehouse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Passed,
    Failed,
    /// Does not apply (3.3.2.11 after a run).
    Skipped,
}

impl CheckStatus {
    pub fn word(self) -> &'static str {
        match self {
            CheckStatus::Passed => "PASSED",
            CheckStatus::Failed => "FAILED",
            CheckStatus::Skipped => "SKIPPED",
        }
    }
}

/// One condition checked on one warehouse.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConditionResult {
    /// 1..=12: clause 3.3.2.N.
    pub condition: u8,
    pub warehouse: u32,
    pub status: CheckStatus,
    /// What was compared, with the offending values when it failed; why it was skipped.
    pub detail: String,
}

impl ConditionResult {
    /// `3.3.2.N`.
    pub fn clause(&self) -> String {
        format!("3.3.2.{}", self.condition)
    }
}

/// What `check` found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    pub database: String,
    pub warehouses: u32,
    /// Runs started on the data since `prepare` (spindle's marker); `None` without a marker.
    pub runs_since_prepare: Option<u32>,
    /// Per warehouse, conditions 1..=12 in order.
    pub results: Vec<ConditionResult>,
    pub elapsed_s: f64,
}

impl CheckReport {
    /// No condition failed.
    pub fn passed(&self) -> bool {
        self.results.iter().all(|r| r.status != CheckStatus::Failed)
    }

    pub fn failures(&self) -> impl Iterator<Item = &ConditionResult> {
        self.results
            .iter()
            .filter(|r| r.status == CheckStatus::Failed)
    }
}

/// What each condition compares, for the report lines.
pub fn condition_text(n: u8) -> &'static str {
    match n {
        1 => "W_YTD = sum(D_YTD)",
        2 => "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
        3 => "max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW-ORDER) per district",
        4 => "sum(O_OL_CNT) = count(ORDER-LINE) per district",
        5 => "O_CARRIER_ID is null exactly for orders in NEW-ORDER",
        6 => "O_OL_CNT = number of ORDER-LINE rows of the order",
        7 => "OL_DELIVERY_D is null exactly when O_CARRIER_ID is null",
        8 => "W_YTD = sum(H_AMOUNT)",
        9 => "D_YTD = sum(H_AMOUNT) per district",
        10 => "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)",
        11 => "count(ORDER) - count(NEW-ORDER) = 2100 per district",
        12 => "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)",
        _ => "",
    }
}

/// Per-district figures (amounts in hundredths).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DistrictFacts {
    pub ytd: i64,
    pub next_o_id: i64,
    pub orders: i64,
    pub max_o_id: Option<i64>,
    pub sum_ol_cnt: i64,
    pub new_orders: i64,
    pub min_no: Option<i64>,
    pub max_no: Option<i64>,
    pub order_lines: i64,
    pub history_sum: i64,
}

/// Everything the conditions need, for all warehouses.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Facts {
    /// W_YTD per warehouse (hundredths).
    pub w_ytd: BTreeMap<u32, i64>,
    pub districts: BTreeMap<(u32, u32), DistrictFacts>,
    /// Offending rows of the row-by-row conditions: (condition, warehouse) → how many, and
    /// the first one described.
    pub bad_rows: BTreeMap<(u8, u32), (u64, String)>,
}

/// Checks the database `cfg.connection` names. `Err` when it cannot be checked (no server, no
/// tables); failed conditions are in the report.
pub fn check(
    cfg: &TpccConfig,
    controller: &Controller,
    observer: &dyn Observer,
) -> anyhow::Result<CheckReport> {
    let t0 = Instant::now();
    let rt = super::load::runtime()?;
    rt.block_on(async {
        let mut conn = cfg.connection.connect(true).await?;
        schema::require_tables(&mut conn, &cfg.connection.database).await?;
        let marker = schema::read_marker(&mut conn)
            .await
            .map_err(|e| anyhow::anyhow!("reading spindle_tpcc: {}", describe_error(&e)))?;
        let facts = gather(&mut conn, controller, observer).await?;
        let _ = conn.disconnect().await;
        let runs = marker.map(|m| m.runs);
        Ok(CheckReport {
            database: cfg.connection.database.clone(),
            warehouses: facts.w_ytd.len() as u32,
            runs_since_prepare: runs,
            results: evaluate(&facts, runs),
            elapsed_s: t0.elapsed().as_secs_f64(),
        })
    })
}

/// (warehouse, district, count, and two optional aggregates).
type Grouped = (u32, u32, i64, Option<i64>, Option<i64>);

/// Runs the grouped queries.
async fn gather(
    conn: &mut Conn,
    controller: &Controller,
    observer: &dyn Observer,
) -> anyhow::Result<Facts> {
    let mut f = Facts::default();
    let q = |what: &'static str| move |e| anyhow::anyhow!("check ({what}): {}", describe_error(&e));
    let rows: Vec<(u32, f64)> = conn
        .query("SELECT w_id, w_ytd FROM warehouse")
        .await
        .map_err(q("warehouse"))?;
    f.w_ytd = rows.into_iter().map(|(w, y)| (w, cents(y))).collect();
    let rows: Vec<(u32, u32, f64, i64)> = conn
        .query("SELECT d_w_id, d_id, d_ytd, d_next_o_id FROM district")
        .await
        .map_err(q("district"))?;
    for (w, d, ytd, next) in rows {
        let e = f.districts.entry((w, d)).or_default();
        e.ytd = cents(ytd);
        e.next_o_id = next;
    }
    observer.message("Checking orders and new orders...");
    let rows: Vec<Grouped> = conn
        .query("SELECT o_w_id, o_d_id, COUNT(*), MAX(o_id), SUM(o_ol_cnt) FROM orders GROUP BY o_w_id, o_d_id")
        .await
        .map_err(q("orders"))?;
    for (w, d, n, max, sum) in rows {
        let e = f.districts.entry((w, d)).or_default();
        (e.orders, e.max_o_id, e.sum_ol_cnt) = (n, max, sum.unwrap_or(0));
    }
    let rows: Vec<Grouped> = conn
        .query("SELECT no_w_id, no_d_id, COUNT(*), MIN(no_o_id), MAX(no_o_id) FROM new_orders GROUP BY no_w_id, no_d_id")
        .await
        .map_err(q("new_orders"))?;
    for (w, d, n, min, max) in rows {
        let e = f.districts.entry((w, d)).or_default();
        (e.new_orders, e.min_no, e.max_no) = (n, min, max);
    }
    let rows: Vec<(u32, u32, i64)> = conn
        .query("SELECT ol_w_id, ol_d_id, COUNT(*) FROM order_line GROUP BY ol_w_id, ol_d_id")
        .await
        .map_err(q("order_line"))?;
    for (w, d, n) in rows {
        f.districts.entry((w, d)).or_default().order_lines = n;
    }
    let rows: Vec<(u32, u32, Option<f64>)> = conn
        .query("SELECT h_w_id, h_d_id, SUM(h_amount) FROM history GROUP BY h_w_id, h_d_id")
        .await
        .map_err(q("history"))?;
    for (w, d, s) in rows {
        f.districts.entry((w, d)).or_default().history_sum = cents(s.unwrap_or(0.0));
    }
    if controller.stop_requested() {
        anyhow::bail!("the check was stopped");
    }
    observer.message("Checking every order and order line...");
    row_conditions(conn, &mut f).await?;
    if controller.stop_requested() {
        anyhow::bail!("the check was stopped");
    }
    observer.message("Checking every customer's balance...");
    customer_conditions(conn, &mut f).await?;
    Ok(f)
}

/// Wraps `inner` (offending rows, first column the warehouse `w`, then the columns `order`
/// sorts by) so that each warehouse returns its first offending row and how many there are
/// (`n`, last column).
fn first_per_warehouse(inner: &str, cols: &str, order: &str) -> String {
    format!(
        "SELECT {cols}, n FROM (SELECT x.*, COUNT(*) OVER (PARTITION BY w) n, \
         ROW_NUMBER() OVER (PARTITION BY w ORDER BY {order}) r FROM ({inner}) x) y WHERE r = 1"
    )
}

/// Conditions 5, 6 and 7: orders and order lines that disagree, counted per warehouse.
async fn row_conditions(conn: &mut Conn, f: &mut Facts) -> anyhow::Result<()> {
    let q = |what: &'static str| move |e| anyhow::anyhow!("check ({what}): {}", describe_error(&e));
    let inner = "SELECT o.o_w_id w, o.o_d_id d, o.o_id o, o.o_carrier_id carrier, n.no_o_id no \
         FROM orders o LEFT JOIN new_orders n ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id \
         AND n.no_o_id = o.o_id WHERE (o.o_carrier_id IS NULL) <> (n.no_o_id IS NOT NULL)";
    type Carrier = (u32, u32, i64, Option<i64>, Option<i64>, u64);
    let rows: Vec<Carrier> = conn
        .query(first_per_warehouse(inner, "w, d, o, carrier, no", "d, o"))
        .await
        .map_err(q("condition 5"))?;
    for (w, d, o, carrier, no, n) in rows {
        let what = match (carrier, no) {
            (None, None) => "no carrier and not in NEW-ORDER".to_string(),
            (Some(c), _) => format!("carrier {c} but in NEW-ORDER"),
            (None, Some(_)) => "no carrier and in NEW-ORDER".to_string(),
        };
        bad(f, 5, w, n, format!("order {o} of district {d}: {what}"));
    }
    let inner = "SELECT o.o_w_id w, o.o_d_id d, o.o_id o, o.o_ol_cnt cnt, COUNT(l.ol_o_id) nlines \
         FROM orders o LEFT JOIN order_line l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id \
         AND l.ol_o_id = o.o_id GROUP BY o.o_w_id, o.o_d_id, o.o_id, o.o_ol_cnt \
         HAVING COUNT(l.ol_o_id) <> o.o_ol_cnt";
    let rows: Vec<(u32, u32, i64, i64, i64, u64)> = conn
        .query(first_per_warehouse(inner, "w, d, o, cnt, nlines", "d, o"))
        .await
        .map_err(q("condition 6"))?;
    for (w, d, o, cnt, lines, n) in rows {
        let what = format!("order {o} of district {d}: O_OL_CNT {cnt}, {lines} lines");
        bad(f, 6, w, n, what);
    }
    let inner = "SELECT l.ol_w_id w, l.ol_d_id d, l.ol_o_id o, l.ol_number num, \
         o.o_carrier_id IS NULL no_carrier FROM order_line l JOIN orders o \
         ON o.o_w_id = l.ol_w_id AND o.o_d_id = l.ol_d_id AND o.o_id = l.ol_o_id \
         WHERE (l.ol_delivery_d IS NULL) <> (o.o_carrier_id IS NULL)";
    let rows: Vec<(u32, u32, i64, i64, i64, u64)> = conn
        .query(first_per_warehouse(
            inner,
            "w, d, o, num, no_carrier",
            "d, o, num",
        ))
        .await
        .map_err(q("condition 7"))?;
    for (w, d, o, num, no_carrier, n) in rows {
        let what = if no_carrier == 1 {
            "delivery date but no carrier"
        } else {
            "carrier but no delivery date"
        };
        bad(
            f,
            7,
            w,
            n,
            format!("line {num} of order {o} of district {d}: {what}"),
        );
    }
    Ok(())
}

/// Every customer's balance, payments and delivered order-line amounts (hundredths).
const CUSTOMER_SUMS: &str = "SELECT c.c_w_id w, c.c_d_id d, c.c_id c, c.c_balance bal, \
     c.c_ytd_payment ytd, COALESCE(ol.s, 0) ol, COALESCE(h.s, 0) h FROM customer c \
     LEFT JOIN (SELECT o.o_w_id w, o.o_d_id d, o.o_c_id cid, SUM(l.ol_amount) s \
       FROM orders o JOIN order_line l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id \
       AND l.ol_o_id = o.o_id WHERE l.ol_delivery_d IS NOT NULL \
       GROUP BY o.o_w_id, o.o_d_id, o.o_c_id) ol \
     ON ol.w = c.c_w_id AND ol.d = c.c_d_id AND ol.cid = c.c_id \
     LEFT JOIN (SELECT h_c_w_id w, h_c_d_id d, h_c_id cid, SUM(h_amount) s FROM history \
       GROUP BY h_c_w_id, h_c_d_id, h_c_id) h \
     ON h.w = c.c_w_id AND h.d = c.c_d_id AND h.cid = c.c_id";

/// Conditions 10 and 12: customers whose balance does not match their orders and payments,
/// counted per warehouse (one pass over the customers for both).
async fn customer_conditions(conn: &mut Conn, f: &mut Facts) -> anyhow::Result<()> {
    let sql = format!(
        "SELECT w, d, c, bal, ytd, ol, h, n10, n12, b10 AND r10 = 1, b12 AND r12 = 1 FROM \
         (SELECT x.*, SUM(b10) OVER (PARTITION BY w) n10, SUM(b12) OVER (PARTITION BY w) n12, \
          ROW_NUMBER() OVER (PARTITION BY w, b10 ORDER BY d, c) r10, \
          ROW_NUMBER() OVER (PARTITION BY w, b12 ORDER BY d, c) r12 \
          FROM (SELECT s.*, bal <> ol - h b10, bal + ytd <> ol b12 FROM ({CUSTOMER_SUMS}) s \
          WHERE bal <> ol - h OR bal + ytd <> ol) x) y \
         WHERE (b10 AND r10 = 1) OR (b12 AND r12 = 1)"
    );
    type Row = (u32, u32, u32, f64, f64, f64, f64, u64, u64, i64, i64);
    let rows: Vec<Row> = conn
        .query(sql)
        .await
        .map_err(|e| anyhow::anyhow!("check (conditions 10, 12): {}", describe_error(&e)))?;
    for (w, d, c, bal, ytd, ol, h, n10, n12, first10, first12) in rows {
        let (bal, ytd, ol, h) = (cents(bal), cents(ytd), cents(ol), cents(h));
        let who = format!("customer {c} of district {d}");
        if first10 == 1 {
            let what = format!(
                "{who}: C_BALANCE {}, delivered OL_AMOUNT {} - H_AMOUNT {} = {}",
                money(bal),
                money(ol),
                money(h),
                money(ol - h)
            );
            bad(f, 10, w, n10, what);
        }
        if first12 == 1 {
            let what = format!(
                "{who}: C_BALANCE {} + C_YTD_PAYMENT {} = {}, delivered OL_AMOUNT {}",
                money(bal),
                money(ytd),
                money(bal + ytd),
                money(ol)
            );
            bad(f, 12, w, n12, what);
        }
    }
    Ok(())
}

/// Records `n` offending rows of condition `cond` on warehouse `w`, the first described.
fn bad(f: &mut Facts, cond: u8, w: u32, n: u64, first: String) {
    f.bad_rows.insert((cond, w), (n, first));
}

/// Hundredths as `123.45`.
fn money(c: i64) -> String {
    let mut v = Vec::new();
    super::data::write_cents(&mut v, c);
    String::from_utf8(v).unwrap_or_default()
}

/// Judges every condition for every warehouse.
pub fn evaluate(f: &Facts, runs_since_prepare: Option<u32>) -> Vec<ConditionResult> {
    let mut out = Vec::with_capacity(f.w_ytd.len() * 12);
    for (&w, &w_ytd) in &f.w_ytd {
        let ds: Vec<(u32, &DistrictFacts)> = f
            .districts
            .range((w, 0)..=(w, u32::MAX))
            .map(|(&(_, d), x)| (d, x))
            .collect();
        for cond in 1..=12u8 {
            let (status, detail) = match cond {
                1 => {
                    let sum: i64 = ds.iter().map(|(_, x)| x.ytd).sum();
                    equal(w_ytd, sum, || {
                        format!("W_YTD {} <> sum(D_YTD) {}", money(w_ytd), money(sum))
                    })
                }
                8 => {
                    let sum: i64 = ds.iter().map(|(_, x)| x.history_sum).sum();
                    equal(w_ytd, sum, || {
                        format!("W_YTD {} <> sum(H_AMOUNT) {}", money(w_ytd), money(sum))
                    })
                }
                5 | 6 | 7 | 10 | 12 => rows_ok(f.bad_rows.get(&(cond, w))),
                11 if runs_since_prepare != Some(0) => (
                    CheckStatus::Skipped,
                    match runs_since_prepare {
                        None => "applies only right after prepare; no spindle marker says when the data was loaded".into(),
                        Some(n) => format!("applies only right after prepare; {n} run(s) since"),
                    },
                ),
                _ => districts_ok(cond, &ds),
            };
            out.push(ConditionResult {
                condition: cond,
                warehouse: w,
                status,
                detail,
            });
        }
    }
    out
}

fn equal(a: i64, b: i64, why: impl FnOnce() -> String) -> (CheckStatus, String) {
    if a == b {
        (CheckStatus::Passed, String::new())
    } else {
        (CheckStatus::Failed, why())
    }
}

fn rows_ok(bad: Option<&(u64, String)>) -> (CheckStatus, String) {
    match bad {
        None => (CheckStatus::Passed, String::new()),
        Some((n, first)) => (CheckStatus::Failed, format!("{n} row(s), e.g. {first}")),
    }
}

/// Conditions 2, 3, 4, 9, 11: one test per district; the first offending district is named.
fn districts_ok(cond: u8, ds: &[(u32, &DistrictFacts)]) -> (CheckStatus, String) {
    let mut bad = Vec::new();
    for &(d, x) in ds {
        let why = match cond {
            2 => {
                let ok = x.max_o_id == Some(x.next_o_id - 1)
                    && x.max_no.is_none_or(|m| m == x.next_o_id - 1);
                (!ok).then(|| {
                    format!(
                        "D_NEXT_O_ID - 1 = {}, max(O_ID) = {}, max(NO_O_ID) = {}",
                        x.next_o_id - 1,
                        opt(x.max_o_id),
                        opt(x.max_no)
                    )
                })
            }
            3 => match (x.min_no, x.max_no) {
                (Some(a), Some(b)) if b - a + 1 != x.new_orders => Some(format!(
                    "max(NO_O_ID) - min(NO_O_ID) + 1 = {}, count = {}",
                    b - a + 1,
                    x.new_orders
                )),
                _ => None,
            },
            4 => (x.sum_ol_cnt != x.order_lines).then(|| {
                format!(
                    "sum(O_OL_CNT) = {}, order lines = {}",
                    x.sum_ol_cnt, x.order_lines
                )
            }),
            9 => (x.ytd != x.history_sum).then(|| {
                format!(
                    "D_YTD {} <> sum(H_AMOUNT) {}",
                    money(x.ytd),
                    money(x.history_sum)
                )
            }),
            11 => (x.orders - x.new_orders != 2100).then(|| {
                format!(
                    "count(ORDER) {} - count(NEW-ORDER) {} = {}",
                    x.orders,
                    x.new_orders,
                    x.orders - x.new_orders
                )
            }),
            _ => None,
        };
        if let Some(why) = why {
            bad.push(format!("district {d}: {why}"));
        }
    }
    match bad.len() {
        0 => (CheckStatus::Passed, String::new()),
        1 => (CheckStatus::Failed, bad.remove(0)),
        n => (
            CheckStatus::Failed,
            format!("{} (and {} more district(s))", bad[0], n - 1),
        ),
    }
}

fn opt(v: Option<i64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "none".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Facts of one freshly loaded warehouse.
    fn fresh() -> Facts {
        let mut f = Facts::default();
        f.w_ytd.insert(1, 30_000_000);
        for d in 1..=10 {
            f.districts.insert(
                (1, d),
                DistrictFacts {
                    ytd: 3_000_000,
                    next_o_id: 3001,
                    orders: 3000,
                    max_o_id: Some(3000),
                    sum_ol_cnt: 30_000,
                    new_orders: 900,
                    min_no: Some(2101),
                    max_no: Some(3000),
                    order_lines: 30_000,
                    history_sum: 3_000_000,
                },
            );
        }
        f
    }

    #[test]
    fn fresh_data_passes_all_twelve() {
        let r = evaluate(&fresh(), Some(0));
        assert_eq!(r.len(), 12);
        assert!(r.iter().all(|c| c.status == CheckStatus::Passed), "{r:?}");
        let r = evaluate(&fresh(), Some(2));
        assert_eq!(r[10].status, CheckStatus::Skipped);
        assert!(r[10].detail.contains("2 run(s)"), "{}", r[10].detail);
    }

    #[test]
    fn failures_name_the_values() {
        let mut f = fresh();
        *f.w_ytd.get_mut(&1).unwrap() += 1;
        f.districts.get_mut(&(1, 3)).unwrap().next_o_id = 3005;
        f.districts.get_mut(&(1, 4)).unwrap().new_orders = 899;
        bad(&mut f, 12, 1, 3, "customer 7 of district 2: ...".into());
        let r = evaluate(&f, Some(0));
        let by = |c: u8| r.iter().find(|x| x.condition == c).unwrap();
        assert_eq!(by(1).status, CheckStatus::Failed);
        assert_eq!(by(1).detail, "W_YTD 300000.01 <> sum(D_YTD) 300000.00");
        assert_eq!(by(8).status, CheckStatus::Failed);
        assert!(by(2)
            .detail
            .starts_with("district 3: D_NEXT_O_ID - 1 = 3004"));
        assert!(by(3).detail.contains("district 4"), "{}", by(3).detail);
        assert!(by(11).detail.contains("district 4"), "{}", by(11).detail);
        assert!(by(12).detail.starts_with("3 row(s), e.g. customer 7"));
        assert_eq!(by(9).status, CheckStatus::Passed);
        assert_eq!(by(12).clause(), "3.3.2.12");
    }

    #[test]
    fn a_district_whose_new_orders_were_all_delivered_passes_2_and_3() {
        let mut f = fresh();
        let d = f.districts.get_mut(&(1, 1)).unwrap();
        (d.new_orders, d.min_no, d.max_no) = (0, None, None);
        let r = evaluate(&f, Some(1));
        assert_eq!(r[1].status, CheckStatus::Passed);
        assert_eq!(r[2].status, CheckStatus::Passed);
    }
}
