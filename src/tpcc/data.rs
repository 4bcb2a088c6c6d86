//! The initial database population of TPC-C clause 4.3.3.1, as row generators: one
//! [`RowSource`] per table and warehouse, writing rows either in LOAD DATA's text format or as
//! SQL value tuples (the INSERT fallback), so both load paths produce the same rows.
//!
//! Every source draws from its own random stream (seed, warehouse, table), so the data depends
//! on the seed only, not on how many connections load it or in which order. Sizes per
//! warehouse: 10 districts, 30 000 customers and history rows, 30 000 orders of 5–15 lines, the
//! last 900 orders of each district undelivered (in NEW-ORDER, no carrier, lines without
//! delivery date and with a random amount), 100 000 stock rows; 100 000 items in all.

use super::random::{self, NuConstants};
use crate::rng::Rng;
use std::io::Write as _;

/// Rows in ITEM.
pub const ITEMS: u32 = 100_000;
/// Districts per warehouse.
pub const DISTRICTS: u32 = 10;
/// Customers per district.
pub const CUSTOMERS: u32 = 3_000;
/// Orders per district at load time.
pub const ORDERS: u32 = 3_000;
/// The first undelivered order id of each district at load time (2101..=3000 are new orders).
pub const FIRST_NEW_ORDER: u32 = 2_101;

/// How rows are spelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// LOAD DATA's defaults: tab-separated fields, `\N` for NULL, one line per row.
    Tsv,
    /// `(1, 'abc', NULL)` tuples for a multi-row INSERT (the caller puts commas between rows).
    Sql,
}

/// Writes the fields of one row.
pub struct RowWriter<'a> {
    out: &'a mut Vec<u8>,
    syntax: Syntax,
    first: bool,
}

impl<'a> RowWriter<'a> {
    pub fn begin(out: &'a mut Vec<u8>, syntax: Syntax) -> Self {
        if syntax == Syntax::Sql {
            out.push(b'(');
        }
        RowWriter {
            out,
            syntax,
            first: true,
        }
    }

    fn sep(&mut self) {
        if !self.first {
            match self.syntax {
                Syntax::Tsv => self.out.push(b'\t'),
                Syntax::Sql => self.out.extend_from_slice(b", "),
            }
        }
        self.first = false;
    }

    pub fn int(&mut self, v: i64) -> &mut Self {
        self.sep();
        let _ = write!(self.out, "{v}");
        self
    }

    /// A DECIMAL with two digits from a number of hundredths (`-1000` → `-10.00`).
    pub fn cents(&mut self, v: i64) -> &mut Self {
        self.sep();
        write_cents(self.out, v);
        self
    }

    pub fn null(&mut self) -> &mut Self {
        self.sep();
        match self.syntax {
            Syntax::Tsv => self.out.extend_from_slice(b"\\N"),
            Syntax::Sql => self.out.extend_from_slice(b"NULL"),
        }
        self
    }

    /// A text field whose bytes `fill` appends. Generated text is letters, digits, spaces and
    /// `-:` only, so it needs no escaping in either syntax.
    pub fn text(&mut self, fill: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        self.sep();
        let q = self.syntax == Syntax::Sql;
        if q {
            self.out.push(b'\'');
        }
        fill(self.out);
        if q {
            self.out.push(b'\'');
        }
        self
    }

    pub fn end(self) {
        match self.syntax {
            Syntax::Tsv => self.out.push(b'\n'),
            Syntax::Sql => self.out.push(b')'),
        }
    }
}

/// Appends `v` hundredths as a decimal with two digits.
pub fn write_cents(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    let a = v.unsigned_abs();
    let _ = write!(out, "{}.{:02}", a / 100, a % 100);
}

/// The rows of one table (for one warehouse), generated on demand.
pub trait RowSource: Send + Sync + 'static {
    /// Appends the next row; `false` when there are no more rows.
    fn next_row(&mut self, syntax: Syntax, out: &mut Vec<u8>) -> bool;
}

/// What every source of one load shares.
#[derive(Clone, Debug)]
pub struct LoadParams {
    pub seed: u64,
    /// NURand constants of the load (C_LAST of customers 1001..3000).
    pub nu: NuConstants,
    /// The load's date and time (`YYYY-MM-DD HH:MM:SS`) for C_SINCE, H_DATE, O_ENTRY_D and the
    /// delivered order lines' OL_DELIVERY_D.
    pub now: String,
}

/// The random stream of table `table` (a small number) of warehouse `w` (0 for ITEM).
fn stream(p: &LoadParams, w: u32, table: u64) -> Rng {
    Rng::stream(p.seed, (w as u64) << 8 | table)
}

/// Appends street 1, street 2, city, state and zip (clause 4.3.3.1's address fields).
fn address(rng: &mut Rng, row: &mut RowWriter<'_>) {
    row.text(|o| {
        random::alnum(rng, 10, 20, o);
    })
    .text(|o| {
        random::alnum(rng, 10, 20, o);
    })
    .text(|o| {
        random::alnum(rng, 10, 20, o);
    })
    .text(|o| {
        for _ in 0..2 {
            o.push(b'A' + rng.below(26) as u8);
        }
    })
    .text(|o| random::zip(rng, o));
}

/// The rows of ITEM or of one warehouse's STOCK: ids 1..=100 000, each row ending in a data
/// field of which a 10 % chosen up front contain "ORIGINAL".
struct ItemRows {
    rng: Rng,
    next: u32,
    original: Vec<bool>,
}

impl ItemRows {
    fn new(p: &LoadParams, w: u32, table: u64) -> Self {
        let mut rng = stream(p, w, table);
        let original = random::choose(&mut rng, ITEMS as usize, ITEMS as usize / 10);
        ItemRows {
            rng,
            next: 1,
            original,
        }
    }

    /// The next row: its id, what `fields` writes, and the data field; false after the last.
    fn next_row(
        &mut self,
        syntax: Syntax,
        out: &mut Vec<u8>,
        fields: impl FnOnce(&mut RowWriter<'_>, &mut Rng),
    ) -> bool {
        if self.next > ITEMS {
            return false;
        }
        let (id, rng) = (self.next, &mut self.rng);
        let orig = self.original[id as usize - 1];
        let mut row = RowWriter::begin(out, syntax);
        row.int(id as i64);
        fields(&mut row, rng);
        row.text(|o| random::data_string(rng, 26, 50, orig, o));
        row.end();
        self.next += 1;
        true
    }
}

/// ITEM: ids 1..=100 000, 10 % of I_DATA containing "ORIGINAL".
pub struct Items(ItemRows);

impl Items {
    pub fn new(p: &LoadParams) -> Self {
        Items(ItemRows::new(p, 0, 1))
    }
}

impl RowSource for Items {
    fn next_row(&mut self, syntax: Syntax, out: &mut Vec<u8>) -> bool {
        self.0.next_row(syntax, out, |row, rng| {
            row.int(rng.uniform(1, 10_000) as i64)
                .text(|o| {
                    random::alnum(rng, 14, 24, o);
                })
                .cents(rng.uniform(100, 10_000) as i64);
        })
    }
}

/// WAREHOUSE: one row, W_YTD 300 000.00.
pub struct Warehouses {
    rng: Rng,
    w: u32,
    done: bool,
}

impl Warehouses {
    pub fn new(p: &LoadParams, w: u32) -> Self {
        Warehouses {
            rng: stream(p, w, 2),
            w,
            done: false,
        }
    }
}

impl RowSource for Warehouses {
    fn next_row(&mut self, syntax: Syntax, out: &mut Vec<u8>) -> bool {
        if self.done {
            return false;
        }
        self.done = true;
        let rng = &mut self.rng;
        let mut row = RowWriter::begin(out, syntax);
        row.int(self.w as i64).text(|o| {
            random::alnum(rng, 6, 10, o);
        });
        address(rng, &mut row);
        row.cents(rng.uniform(0, 20) as i64).cents(30_000_000);
        row.end();
        true
    }
}

/// DISTRICT: ten rows, D_YTD 30 000.00, D_NEXT_O_ID 3001.
pub struct Districts {
    rng: Rng,
    w: u32,
    next: u32,
}

impl Districts {
    pub fn new(p: &LoadParams, w: u32) -> Self {
        Districts {
            rng: stream(p, w, 3),
            w,
            next: 1,
        }
    }
}

impl RowSource for Districts {
    fn next_row(&mut self, syntax: Syntax, out: &mut Vec<u8>) -> bool {
        if self.next > DISTRICTS {
            return false;
        }
        let rng = &mut self.rng;
        let mut row = RowWriter::begin(out, syntax);
        row.int(self.next as i64).int(self.w as i64).text(|o| {
            random::alnum(rng, 6, 10, o);
        });
        address(rng, &mut row);
        row.cents(rng.uniform(0, 20) as i64)
            .cents(3_000_000)
            .int(ORDERS as i64 + 1);
        row.end();
        self.next += 1;
        true
    }
}

/// STOCK: 100 000 rows per warehouse, 10 % of S_DATA containing "ORIGINAL".
pub struct Stock {
    rows: ItemRows,
    w: u32,
}

impl Stock {
    pub fn new(p: &LoadParams, w: u32) -> Self {
        Stock {
            rows: ItemRows::new(p, w, 4),
            w,
        }
    }
}

impl RowSource for Stock {
    fn next_row(&mut self, syntax: Syntax, out: &mut Vec<u8>) -> bool {
        let w = self.w;
        self.rows.next_row(syntax, out, |row, rng| {
            row.int(w as i64).int(rng.uniform(10, 100) as i64);
            for _ in 0..10 {
                row.text(|o| {
                    random::alnum(rng, 24, 24, o);
                });
            }
            row.int(0).int(0).int(0);
        })
    }
}

/// Steps (district, customer) on to the warehouse's next customer.
fn next_customer(d: &mut u32, c: &mut u32) {
    *c += 1;
    if *c > CUSTOMERS {
        *c = 1;
        *d += 1;
    }
}

/// CUSTOMER: 3 000 per district; C_LAST from the syllables of 0..999 for the first 1 000,
/// NURand(255, 0, 999) after; 10 % "BC" credit; C_BALANCE −10.00, C_YTD_PAYMENT 10.00.
pub struct Customers {
    rng: Rng,
    w: u32,
    d: u32,
    c: u32,
    nu: NuConstants,
    now: String,
}

impl Customers {
    pub fn new(p: &LoadParams, w: u32) -> Self {
        Customers {
            rng: stream(p, w, 5),
            w,
            d: 1,
            c: 1,
            nu: p.nu,
            now: p.now.clone(),
        }
    }
}

impl RowSource for Customers {
    fn next_row(&mut self, syntax: Syntax, out: &mut Vec<u8>) -> bool {
        if self.d > DISTRICTS {
            return false;
        }
        let (c, rng) = (self.c, &mut self.rng);
        let last = if c <= 1000 {
            c - 1
        } else {
            random::nurand(rng, 255, 0, 999, self.nu.c_last)
        };
        let mut row = RowWriter::begin(out, syntax);
        row.int(c as i64)
            .int(self.d as i64)
            .int(self.w as i64)
            .text(|o| {
                random::alnum(rng, 8, 16, o);
            })
            .text(|o| o.extend_from_slice(b"OE"))
            .text(|o| random::last_name(last, o));
        address(rng, &mut row);
        let bad = rng.below(10) == 0;
        row.text(|o| random::numeric(rng, 16, 16, o))
            .text(|o| o.extend_from_slice(self.now.as_bytes()))
            .text(|o| o.extend_from_slice(if bad { b"BC" } else { b"GC" }))
            .int(50_000)
            .cents(rng.uniform(0, 50) as i64)
            .cents(-1_000)
            .cents(1_000)
            .int(1)
            .int(0)
            .text(|o| {
                random::alnum(rng, 300, 500, o);
            });
        row.end();
        next_customer(&mut self.d, &mut self.c);
        true
    }
}

/// HISTORY: one row per customer, H_AMOUNT 10.00.
pub struct History {
    rng: Rng,
    w: u32,
    d: u32,
    c: u32,
    now: String,
}

impl History {
    pub fn new(p: &LoadParams, w: u32) -> Self {
        History {
            rng: stream(p, w, 6),
            w,
            d: 1,
            c: 1,
            now: p.now.clone(),
        }
    }
}

impl RowSource for History {
    fn next_row(&mut self, syntax: Syntax, out: &mut Vec<u8>) -> bool {
        if self.d > DISTRICTS {
            return false;
        }
        let rng = &mut self.rng;
        let mut row = RowWriter::begin(out, syntax);
        row.int(self.c as i64)
            .int(self.d as i64)
            .int(self.w as i64)
            .int(self.d as i64)
            .int(self.w as i64)
            .text(|o| o.extend_from_slice(self.now.as_bytes()))
            .cents(1_000)
            .text(|o| {
                random::alnum(rng, 12, 24, o);
            });
        row.end();
        next_customer(&mut self.d, &mut self.c);
        true
    }
}

/// The orders of one warehouse, shared by the ORDER, NEW-ORDER and ORDER-LINE sources (each
/// rebuilds it from the same stream): per district and order, the customer (a permutation of
/// 1..3000), the carrier (1..10) and the number of lines (5..15).
#[derive(Clone, Debug)]
pub struct OrderPlan {
    /// Index `(d − 1) × 3000 + (o − 1)`: (O_C_ID, O_CARRIER_ID, O_OL_CNT).
    orders: Vec<(u16, u8, u8)>,
}

impl OrderPlan {
    pub fn new(p: &LoadParams, w: u32) -> Self {
        let mut rng = stream(p, w, 7);
        let mut orders = Vec::with_capacity((DISTRICTS * ORDERS) as usize);
        for _ in 0..DISTRICTS {
            let perm = random::permutation(&mut rng, CUSTOMERS);
            for c in perm.into_iter().take(ORDERS as usize) {
                let carrier = rng.uniform(1, 10) as u8;
                let lines = rng.uniform(5, 15) as u8;
                orders.push((c as u16, carrier, lines));
            }
        }
        OrderPlan { orders }
    }

    /// (O_C_ID, O_CARRIER_ID, O_OL_CNT) of order `o` of district `d`.
    pub fn order(&self, d: u32, o: u32) -> (u32, u32, u32) {
        let (c, carrier, lines) = self.orders[((d - 1) * ORDERS + (o - 1)) as usize];
        (c as u32, carrier as u32, lines as u32)
    }

    /// Order lines of the whole warehouse.
    pub fn total_lines(&self) -> u64 {
        self.orders.iter().map(|o| o.2 as u64).sum()
    }
}

/// Steps through (district, order) pairs 1..=10 × `from..=3000`.
#[derive(Clone, Copy)]
struct Cursor {
    d: u32,
    o: u32,
    from: u32,
}

impl Cursor {
    fn new(from: u32) -> Self {
        Cursor {
            d: 1,
            o: from,
            from,
        }
    }
    fn done(&self) -> bool {
        self.d > DISTRICTS
    }
    fn advance(&mut self) {
        self.o += 1;
        if self.o > ORDERS {
            self.o = self.from;
            self.d += 1;
        }
    }
}

/// ORDER: 3 000 per district; O_CARRIER_ID NULL for the undelivered ones.
pub struct Orders {
    plan: OrderPlan,
    w: u32,
    at: Cursor,
    now: String,
}

impl Orders {
    pub fn new(p: &LoadParams, w: u32) -> Self {
        Orders {
            plan: OrderPlan::new(p, w),
            w,
            at: Cursor::new(1),
            now: p.now.clone(),
        }
    }
}

impl RowSource for Orders {
    fn next_row(&mut self, syntax: Syntax, out: &mut Vec<u8>) -> bool {
        if self.at.done() {
            return false;
        }
        let (d, o) = (self.at.d, self.at.o);
        let (c, carrier, lines) = self.plan.order(d, o);
        let mut row = RowWriter::begin(out, syntax);
        row.int(o as i64)
            .int(d as i64)
            .int(self.w as i64)
            .int(c as i64)
            .text(|x| x.extend_from_slice(self.now.as_bytes()));
        if o < FIRST_NEW_ORDER {
            row.int(carrier as i64);
        } else {
            row.null();
        }
        row.int(lines as i64).int(1);
        row.end();
        self.at.advance();
        true
    }
}

/// NEW-ORDER: orders 2101..=3000 of each district.
pub struct NewOrders {
    w: u32,
    at: Cursor,
}

impl NewOrders {
    pub fn new(w: u32) -> Self {
        NewOrders {
            w,
            at: Cursor::new(FIRST_NEW_ORDER),
        }
    }
}

impl RowSource for NewOrders {
    fn next_row(&mut self, syntax: Syntax, out: &mut Vec<u8>) -> bool {
        if self.at.done() {
            return false;
        }
        let mut row = RowWriter::begin(out, syntax);
        row.int(self.at.o as i64)
            .int(self.at.d as i64)
            .int(self.w as i64);
        row.end();
        self.at.advance();
        true
    }
}

/// ORDER-LINE: O_OL_CNT lines per order; delivered ones dated with amount 0.00, undelivered
/// ones without date and with an amount in [0.01, 9 999.99]; OL_QUANTITY 5.
pub struct OrderLines {
    plan: OrderPlan,
    rng: Rng,
    w: u32,
    at: Cursor,
    line: u32,
    now: String,
}

impl OrderLines {
    pub fn new(p: &LoadParams, w: u32) -> Self {
        OrderLines {
            plan: OrderPlan::new(p, w),
            rng: stream(p, w, 8),
            w,
            at: Cursor::new(1),
            line: 1,
            now: p.now.clone(),
        }
    }
}

impl RowSource for OrderLines {
    fn next_row(&mut self, syntax: Syntax, out: &mut Vec<u8>) -> bool {
        if self.at.done() {
            return false;
        }
        let (d, o) = (self.at.d, self.at.o);
        let lines = self.plan.order(d, o).2;
        let rng = &mut self.rng;
        let delivered = o < FIRST_NEW_ORDER;
        let mut row = RowWriter::begin(out, syntax);
        row.int(o as i64)
            .int(d as i64)
            .int(self.w as i64)
            .int(self.line as i64)
            .int(rng.uniform(1, ITEMS) as i64)
            .int(self.w as i64);
        if delivered {
            row.text(|x| x.extend_from_slice(self.now.as_bytes()));
        } else {
            row.null();
        }
        row.int(5);
        if delivered {
            row.cents(0);
        } else {
            row.cents(rng.uniform(1, 999_999) as i64);
        }
        row.text(|x| {
            random::alnum(rng, 24, 24, x);
        });
        row.end();
        self.line += 1;
        if self.line > lines {
            self.line = 1;
            self.at.advance();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> LoadParams {
        let mut rng = Rng::new(11);
        LoadParams {
            seed: 42,
            nu: NuConstants::draw(&mut rng),
            now: "2024-01-02 03:04:05".into(),
        }
    }

    /// All rows of `src` as TSV lines split into fields.
    fn rows(mut src: impl RowSource) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        while src.next_row(Syntax::Tsv, &mut out) {}
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| l.split('\t').map(str::to_string).collect())
            .collect()
    }

    #[test]
    fn row_counts_and_column_counts_per_warehouse() {
        let p = params();
        type Case<'a> = (Box<dyn Fn() -> Vec<Vec<String>> + 'a>, usize, usize);
        let cases: Vec<Case> = vec![
            (Box::new(|| rows(Items::new(&p))), 100_000, 5),
            (Box::new(|| rows(Warehouses::new(&p, 2))), 1, 9),
            (Box::new(|| rows(Districts::new(&p, 2))), 10, 11),
            (Box::new(|| rows(Stock::new(&p, 2))), 100_000, 17),
            (Box::new(|| rows(Customers::new(&p, 2))), 30_000, 21),
            (Box::new(|| rows(History::new(&p, 2))), 30_000, 8),
            (Box::new(|| rows(Orders::new(&p, 2))), 30_000, 8),
            (Box::new(|| rows(NewOrders::new(2))), 9_000, 3),
        ];
        for (i, (f, n, cols)) in cases.iter().enumerate() {
            let r = f();
            assert_eq!(r.len(), *n, "case {i}");
            assert!(r.iter().all(|row| row.len() == *cols), "case {i}");
        }
        let lines = rows(OrderLines::new(&p, 2));
        assert_eq!(lines.len() as u64, OrderPlan::new(&p, 2).total_lines());
        assert!((250_000..350_000).contains(&lines.len()), "{}", lines.len());
    }

    #[test]
    fn ten_percent_original_exactly() {
        let p = params();
        let items = rows(Items::new(&p));
        let n = items.iter().filter(|r| r[4].contains("ORIGINAL")).count();
        assert_eq!(n, 10_000);
        let stock = rows(Stock::new(&p, 1));
        let n = stock.iter().filter(|r| r[16].contains("ORIGINAL")).count();
        assert_eq!(n, 10_000);
        assert!(stock.iter().all(|r| r[1] == "1"));
    }

    #[test]
    fn customers_follow_clause_4_3_3_1() {
        let p = params();
        let c = rows(Customers::new(&p, 1));
        // The first 1000 customers of each district carry the 1000 names in order.
        let mut name = Vec::new();
        random::last_name(371, &mut name);
        assert_eq!(c[371][5], String::from_utf8(name).unwrap());
        assert_eq!(c[3000][0], "1");
        assert_eq!(c[3000][1], "2");
        let bc = c.iter().filter(|r| r[13] == "BC").count();
        assert!((2_500..3_500).contains(&bc), "{bc}");
        assert!(c.iter().all(|r| r[16] == "-10.00" && r[17] == "10.00"));
        assert!(c.iter().all(|r| (300..=500).contains(&r[20].len())));
        assert_eq!(c[5][12], "2024-01-02 03:04:05");
    }

    #[test]
    fn orders_lines_and_new_orders_agree() {
        let p = params();
        let orders = rows(Orders::new(&p, 1));
        let lines = rows(OrderLines::new(&p, 1));
        let new = rows(NewOrders::new(1));
        // Per district: each customer exactly once.
        let mut cust: Vec<u32> = orders[..3000]
            .iter()
            .map(|r| r[3].parse().unwrap())
            .collect();
        cust.sort_unstable();
        assert_eq!(cust, (1..=3000).collect::<Vec<_>>());
        // Carrier NULL exactly for the undelivered orders, which are the new orders.
        for r in &orders {
            let o: u32 = r[0].parse().unwrap();
            assert_eq!(r[5] == "\\N", o >= FIRST_NEW_ORDER, "{r:?}");
            let cnt: u32 = r[6].parse().unwrap();
            assert!((5..=15).contains(&cnt));
        }
        assert_eq!(new.first().unwrap(), &["2101", "1", "1"]);
        assert_eq!(new.last().unwrap(), &["3000", "10", "1"]);
        // Lines: numbered 1..cnt, dated with amount 0 exactly when delivered.
        let total: u64 = orders.iter().map(|r| r[6].parse::<u64>().unwrap()).sum();
        assert_eq!(lines.len() as u64, total);
        for l in &lines {
            let o: u32 = l[0].parse().unwrap();
            let delivered = o < FIRST_NEW_ORDER;
            assert_eq!(l[6] != "\\N", delivered, "{l:?}");
            assert_eq!(l[8] == "0.00", delivered, "{l:?}");
            assert_eq!(l[9].len(), 24);
        }
    }

    #[test]
    fn sql_syntax_spells_the_same_row() {
        let p = params();
        let (mut a, mut b) = (Orders::new(&p, 1), Orders::new(&p, 1));
        let (mut tsv, mut sql) = (Vec::new(), Vec::new());
        for _ in 0..2101 {
            tsv.clear();
            sql.clear();
            a.next_row(Syntax::Tsv, &mut tsv);
            b.next_row(Syntax::Sql, &mut sql);
        }
        let tsv = String::from_utf8(tsv).unwrap();
        let sql = String::from_utf8(sql).unwrap();
        let from_sql = sql
            .trim_matches(|c| c == '(' || c == ')')
            .replace('\'', "")
            .replace(", ", "\t")
            .replace("NULL", "\\N");
        assert_eq!(tsv.trim_end(), from_sql);
        assert!(sql.contains("NULL"), "{sql}");
        let mut v = Vec::new();
        write_cents(&mut v, -1005);
        assert_eq!(v, b"-10.05");
    }
}
