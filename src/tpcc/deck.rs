//! What each connection runs next: the deck of 23 cards (10 New-Order, 10 Payment, 1 each of
//! Order-Status, Delivery and Stock-Level; tpcc-mysql's `sequence.c`), and the inputs of each
//! transaction drawn as tpcc-mysql's `driver.c` draws them (TPC-C clauses 2.4.1, 2.5.1, 2.6.1,
//! 2.7.1, 2.8.1). Pure: the run loop only executes what this module decides.
//! The run keeps one deck behind a mutex that every connection deals from, as tpcc-mysql does,
//! so the mix of any window of the run is exact up to the deck in progress at each end.

use super::data::{CUSTOMERS, DISTRICTS, ITEMS};
use super::random::{self, NuConstants};
use crate::rng::Rng;
use serde::{Deserialize, Serialize};

/// The five TPC-C transactions, in tpcc-mysql's order (its `[0]`…`[4]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxKind {
    NewOrder = 0,
    Payment = 1,
    OrderStatus = 2,
    Delivery = 3,
    StockLevel = 4,
}

impl TxKind {
    pub const ALL: [TxKind; 5] = [
        TxKind::NewOrder,
        TxKind::Payment,
        TxKind::OrderStatus,
        TxKind::Delivery,
        TxKind::StockLevel,
    ];

    /// tpcc-mysql's label (`New-Order`, …).
    pub fn label(self) -> &'static str {
        match self {
            TxKind::NewOrder => "New-Order",
            TxKind::Payment => "Payment",
            TxKind::OrderStatus => "Order-Status",
            TxKind::Delivery => "Delivery",
            TxKind::StockLevel => "Stock-Level",
        }
    }

    /// The name used in result documents (`new_order`, …).
    pub fn name(self) -> &'static str {
        match self {
            TxKind::NewOrder => "new_order",
            TxKind::Payment => "payment",
            TxKind::OrderStatus => "order_status",
            TxKind::Delivery => "delivery",
            TxKind::StockLevel => "stock_level",
        }
    }

    /// Cards of this kind in the deck of 23.
    pub fn cards(self) -> usize {
        match self {
            TxKind::NewOrder | TxKind::Payment => 10,
            _ => 1,
        }
    }
}

/// Cards in one deck.
pub const DECK_SIZE: usize = 23;

/// A shuffled deck of the 23 cards; reshuffled when all are dealt.
#[derive(Clone, Debug)]
pub struct Deck {
    cards: [TxKind; DECK_SIZE],
    next: usize,
}

impl Default for Deck {
    fn default() -> Self {
        Self::new()
    }
}

impl Deck {
    pub fn new() -> Self {
        let mut cards = [TxKind::NewOrder; DECK_SIZE];
        let mut i = 0;
        for k in TxKind::ALL {
            for _ in 0..k.cards() {
                cards[i] = k;
                i += 1;
            }
        }
        Deck {
            cards,
            next: DECK_SIZE,
        }
    }

    /// The next transaction to run.
    pub fn deal(&mut self, rng: &mut Rng) -> TxKind {
        if self.next >= DECK_SIZE {
            for i in (1..DECK_SIZE).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                self.cards.swap(i, j);
            }
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

/// How a customer is selected (Payment, Order-Status).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CustomerKey {
    Id(u32),
    /// C_LAST: the middle one (ordered by C_FIRST) of the customers with this name.
    LastName(String),
}

/// One order line of a New-Order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    pub item: u32,
    pub supply_w: u32,
    pub quantity: u32,
}

/// Item id that does not exist: the 1 % of New-Orders that roll back use it on their last line.
pub const UNUSED_ITEM: u32 = ITEMS + 1;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewOrder {
    pub w: u32,
    pub d: u32,
    pub c: u32,
    /// In execution order: sorted by (supply warehouse, item) as tpcc-mysql does to avoid
    /// deadlocks; OL_NUMBER is the position in this list.
    pub lines: Vec<Line>,
    pub all_local: bool,
    /// Whether the last drawn line uses [`UNUSED_ITEM`] (the transaction will roll back).
    pub rollback: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payment {
    pub w: u32,
    pub d: u32,
    pub c_w: u32,
    pub c_d: u32,
    pub customer: CustomerKey,
    /// H_AMOUNT in hundredths: 1.00 … 5 000.00.
    pub amount_cents: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderStatus {
    pub w: u32,
    pub d: u32,
    pub customer: CustomerKey,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub w: u32,
    pub carrier: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StockLevel {
    pub w: u32,
    pub d: u32,
    pub threshold: u32,
}

/// One transaction with its inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    NewOrder(NewOrder),
    Payment(Payment),
    OrderStatus(OrderStatus),
    Delivery(Delivery),
    StockLevel(StockLevel),
}

impl Input {
    pub fn kind(&self) -> TxKind {
        match self {
            Input::NewOrder(_) => TxKind::NewOrder,
            Input::Payment(_) => TxKind::Payment,
            Input::OrderStatus(_) => TxKind::OrderStatus,
            Input::Delivery(_) => TxKind::Delivery,
            Input::StockLevel(_) => TxKind::StockLevel,
        }
    }
}

/// Draws transaction inputs for one connection.
#[derive(Clone, Debug)]
pub struct InputGen {
    pub warehouses: u32,
    /// The connection's fixed home warehouse, or `None`: random per transaction.
    pub home: Option<u32>,
    pub nu: NuConstants,
}

impl InputGen {
    fn home_w(&self, rng: &mut Rng) -> u32 {
        self.home
            .unwrap_or_else(|| rng.uniform(1, self.warehouses.max(1)))
    }

    /// A warehouse other than `home` (or `home` when there is only one).
    fn other_w(&self, home: u32, rng: &mut Rng) -> u32 {
        if self.warehouses <= 1 {
            return home;
        }
        let w = rng.uniform(1, self.warehouses - 1);
        if w >= home {
            w + 1
        } else {
            w
        }
    }

    fn customer(&self, rng: &mut Rng) -> CustomerKey {
        let c = random::nurand(rng, 1023, 1, CUSTOMERS, self.nu.c_id);
        let n = random::nurand(rng, 255, 0, 999, self.nu.c_last);
        if rng.uniform(1, 100) <= 60 {
            let mut name = Vec::with_capacity(16);
            random::last_name(n, &mut name);
            CustomerKey::LastName(String::from_utf8(name).unwrap_or_default())
        } else {
            CustomerKey::Id(c)
        }
    }

    /// The inputs of one transaction of `kind`.
    pub fn draw(&self, kind: TxKind, rng: &mut Rng) -> Input {
        match kind {
            TxKind::NewOrder => Input::NewOrder(self.new_order(rng)),
            TxKind::Payment => {
                let w = self.home_w(rng);
                let d = rng.uniform(1, DISTRICTS);
                let customer = self.customer(rng);
                let amount_cents = rng.uniform(100, 500_000) as i64;
                let (c_w, c_d) = if rng.uniform(1, 100) <= 85 {
                    (w, d)
                } else {
                    (self.other_w(w, rng), rng.uniform(1, DISTRICTS))
                };
                Input::Payment(Payment {
                    w,
                    d,
                    c_w,
                    c_d,
                    customer,
                    amount_cents,
                })
            }
            TxKind::OrderStatus => {
                let w = self.home_w(rng);
                let d = rng.uniform(1, DISTRICTS);
                Input::OrderStatus(OrderStatus {
                    w,
                    d,
                    customer: self.customer(rng),
                })
            }
            TxKind::Delivery => Input::Delivery(Delivery {
                w: self.home_w(rng),
                carrier: rng.uniform(1, 10),
            }),
            TxKind::StockLevel => Input::StockLevel(StockLevel {
                w: self.home_w(rng),
                d: rng.uniform(1, DISTRICTS),
                threshold: rng.uniform(10, 20),
            }),
        }
    }

    fn new_order(&self, rng: &mut Rng) -> NewOrder {
        let w = self.home_w(rng);
        let d = rng.uniform(1, DISTRICTS);
        let c = random::nurand(rng, 1023, 1, CUSTOMERS, self.nu.c_id);
        let count = rng.uniform(5, 15);
        let rollback = rng.uniform(1, 100) == 1;
        let mut all_local = true;
        let mut lines = Vec::with_capacity(count as usize);
        for i in 0..count {
            let mut item = random::nurand(rng, 8191, 1, ITEMS, self.nu.ol_i_id);
            if rollback && i == count - 1 {
                item = UNUSED_ITEM;
            }
            let supply_w = if rng.uniform(1, 100) != 1 {
                w
            } else {
                let o = self.other_w(w, rng);
                all_local &= o == w;
                o
            };
            lines.push(Line {
                item,
                supply_w,
                quantity: rng.uniform(1, 10),
            });
        }
        lines.sort_by_key(|l| (l.supply_w, l.item));
        NewOrder {
            w,
            d,
            c,
            lines,
            all_local,
            rollback,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(warehouses: u32, home: Option<u32>) -> InputGen {
        InputGen {
            warehouses,
            home,
            nu: NuConstants {
                c_last: 100,
                c_id: 200,
                ol_i_id: 300,
            },
        }
    }

    #[test]
    fn every_23_cards_hold_the_exact_mix() {
        let mut rng = Rng::new(1);
        let mut deck = Deck::new();
        for _ in 0..50 {
            let mut n = [0usize; 5];
            for _ in 0..DECK_SIZE {
                n[deck.deal(&mut rng) as usize] += 1;
            }
            assert_eq!(n, [10, 10, 1, 1, 1]);
        }
    }

    #[test]
    fn decks_are_shuffled() {
        let mut rng = Rng::new(2);
        let mut deck = Deck::new();
        let a: Vec<TxKind> = (0..DECK_SIZE).map(|_| deck.deal(&mut rng)).collect();
        let b: Vec<TxKind> = (0..DECK_SIZE).map(|_| deck.deal(&mut rng)).collect();
        assert_ne!(a, b);
        assert_ne!(a[..10], [TxKind::NewOrder; 10]);
    }

    #[test]
    fn new_orders_follow_clause_2_4_1() {
        let g = gen(4, None);
        let mut rng = Rng::new(3);
        let (mut rollbacks, mut remote, mut lines_n, mut orders) = (0, 0, 0, 0);
        for _ in 0..20_000 {
            let Input::NewOrder(o) = g.draw(TxKind::NewOrder, &mut rng) else {
                unreachable!()
            };
            orders += 1;
            assert!((1..=4).contains(&o.w) && (1..=10).contains(&o.d));
            assert!((1..=3000).contains(&o.c));
            assert!((5..=15).contains(&o.lines.len()));
            let keys: Vec<_> = o.lines.iter().map(|l| (l.supply_w, l.item)).collect();
            let mut sorted = keys.clone();
            sorted.sort();
            assert_eq!(keys, sorted);
            let unused = o.lines.iter().filter(|l| l.item == UNUSED_ITEM).count();
            assert_eq!(unused, o.rollback as usize);
            rollbacks += o.rollback as u32;
            for l in &o.lines {
                assert!((1..=10).contains(&l.quantity));
                remote += (l.supply_w != o.w) as u32;
                lines_n += 1;
            }
            assert_eq!(o.all_local, o.lines.iter().all(|l| l.supply_w == o.w));
        }
        let pct = |n: u32, of: u32| 100.0 * n as f64 / of as f64;
        assert!((0.7..1.3).contains(&pct(rollbacks, orders)), "{rollbacks}");
        assert!((0.8..1.2).contains(&pct(remote, lines_n)), "{remote}");
    }

    #[test]
    fn payments_and_order_status_follow_clauses_2_5_1_and_2_6_1() {
        let g = gen(3, None);
        let mut rng = Rng::new(4);
        let (mut by_name, mut remote) = (0, 0);
        for _ in 0..10_000 {
            let Input::Payment(p) = g.draw(TxKind::Payment, &mut rng) else {
                unreachable!()
            };
            assert!((100..=500_000).contains(&p.amount_cents));
            if p.c_w != p.w {
                remote += 1;
            }
            if let CustomerKey::LastName(n) = &p.customer {
                by_name += 1;
                assert!(n.len() >= 9, "{n}");
            }
        }
        assert!((5_700..6_300).contains(&by_name), "{by_name}");
        // 15 % remote; with 3 warehouses the other one is always a different warehouse.
        assert!((1_300..1_700).contains(&remote), "{remote}");
        let Input::OrderStatus(o) = g.draw(TxKind::OrderStatus, &mut rng) else {
            unreachable!()
        };
        assert!((1..=3).contains(&o.w));
    }

    #[test]
    fn a_fixed_home_warehouse_is_kept() {
        let g = gen(8, Some(5));
        let mut rng = Rng::new(5);
        for k in TxKind::ALL {
            for _ in 0..200 {
                let w = match g.draw(k, &mut rng) {
                    Input::NewOrder(o) => o.w,
                    Input::Payment(p) => p.w,
                    Input::OrderStatus(o) => o.w,
                    Input::Delivery(d) => d.w,
                    Input::StockLevel(s) => {
                        assert!((10..=20).contains(&s.threshold));
                        s.w
                    }
                };
                assert_eq!(w, 5);
            }
        }
        let single = gen(1, None);
        assert_eq!(single.other_w(1, &mut rng), 1);
    }
}
