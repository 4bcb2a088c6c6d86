//! Counters each connection publishes while it runs (relaxed atomics, one set per connection),
//! and the interval sample the reporting thread builds from them: per type the transactions
//! completed in the interval, the late ones, the 95th/99th percentile (sysbench-style 1024-bucket
//! histogram of the interval, never above the largest time) and the largest response time. The
//! latencies are published and taken through `engine::interval`, as every engine's.

use super::deck::TxKind;
use crate::engine::{IntervalLatencies, IntervalLatency, IntervalRates, IntervalSample};
use crate::engine::{LiveLatencies, Percentiles};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One transaction type's counters of one connection (measured window only).
pub(crate) struct LiveType {
    pub success: AtomicU64,
    pub late: AtomicU64,
    pub retries: AtomicU64,
    pub failures: AtomicU64,
    pub rollbacks: AtomicU64,
    /// This interval's response times (taken by the reporter).
    latencies: LiveLatencies,
}

impl LiveType {
    fn new() -> Self {
        LiveType {
            success: AtomicU64::new(0),
            late: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            rollbacks: AtomicU64::new(0),
            latencies: LiveLatencies::new(),
        }
    }

    pub fn completed(&self) -> u64 {
        self.success.load(Relaxed) + self.late.load(Relaxed)
    }
}

/// One connection's counters.
pub(crate) struct Live {
    pub types: [LiveType; 5],
    pub reconnects: AtomicU64,
}

impl Live {
    pub fn new() -> Self {
        Live {
            types: std::array::from_fn(|_| LiveType::new()),
            reconnects: AtomicU64::new(0),
        }
    }

    /// Counts one completed transaction of `kind` (response time `ns`, histogram bucket
    /// `bucket`).
    pub fn completed(&self, kind: TxKind, ns: u64, bucket: usize, late: bool, rolled_back: bool) {
        let t = &self.types[kind as usize];
        if late {
            t.late.fetch_add(1, Relaxed);
        } else {
            t.success.fetch_add(1, Relaxed);
        }
        if rolled_back {
            t.rollbacks.fetch_add(1, Relaxed);
        }
        t.latencies.record(bucket, ns);
    }
}

/// Totals at the previous interval boundary.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Snapshot {
    completed: [u64; 5],
    late: [u64; 5],
    retries: u64,
    reconnects: u64,
}

/// The sample of the interval that ends now, `secs` long, `time_s` after measuring started.
pub(crate) fn interval_sample(
    lives: &[Live],
    prev: &mut Snapshot,
    time_s: f64,
    secs: f64,
    connections: u32,
) -> IntervalSample {
    let mut cur = Snapshot::default();
    let mut figures = [Default::default(); 5];
    for k in TxKind::ALL {
        let i = k as usize;
        let mut latencies = IntervalLatencies::default();
        for l in lives {
            let t = &l.types[i];
            cur.completed[i] += t.completed();
            cur.late[i] += t.late.load(Relaxed);
            if i == 0 {
                cur.reconnects += l.reconnects.load(Relaxed);
            }
            cur.retries += t.retries.load(Relaxed);
            latencies.take(&t.latencies);
        }
        // A bucket's value can lie above the largest time in it: never report p > max.
        figures[i] = latencies.figures(Some(95.0), Percentiles::AtMostMax);
    }
    let d = |a: [u64; 5], b: [u64; 5]| -> [u64; 5] { std::array::from_fn(|i| a[i] - b[i]) };
    let completed = d(cur.completed, prev.completed);
    let late = d(cur.late, prev.late);
    let events = completed.iter().sum();
    let per_type = |f: fn(&IntervalLatency) -> f64| figures.each_ref().map(f);
    // The sample's latencies are New-Order's: the transaction TpmC counts.
    let sample = IntervalSample::new(
        time_s,
        connections,
        events,
        figures[0],
        IntervalRates::Tpcc {
            new_orders: completed[0],
            payments: completed[1],
            order_status: completed[2],
            deliveries: completed[3],
            stock_levels: completed[4],
            late,
            p95_ms: per_type(|f| f.p95_ms),
            p99_ms: per_type(|f| f.p99_ms),
            max_ms: per_type(|f| f.max_ms),
            tpmc: completed[0] as f64 * 60.0 / secs.max(1e-9),
            retries: cur.retries - prev.retries,
            reconnects: cur.reconnects - prev.reconnects,
        },
    );
    *prev = cur;
    sample
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::SysbenchHistogram;

    #[test]
    fn interval_sample_counts_deltas_and_resets_histograms() {
        let lives = vec![Live::new(), Live::new()];
        let h = SysbenchHistogram::new();
        let ms = |x: f64| (x * 1e6) as u64;
        for (i, l) in lives.iter().enumerate() {
            for _ in 0..100 {
                l.completed(
                    TxKind::NewOrder,
                    ms(2.0),
                    h.bucket_of(ms(2.0)),
                    false,
                    false,
                );
            }
            for _ in 0..10 {
                l.completed(
                    TxKind::NewOrder,
                    ms(9.0 + i as f64),
                    h.bucket_of(ms(9.0)),
                    true,
                    true,
                );
            }
            l.completed(
                TxKind::Delivery,
                ms(30.0),
                h.bucket_of(ms(30.0)),
                false,
                false,
            );
        }
        // One Order-Status of 29.14 ms: its bucket's value (29.19) lies above it.
        lives[0].completed(
            TxKind::OrderStatus,
            29_140_000,
            h.bucket_of(29_140_000),
            false,
            false,
        );
        lives[1].types[1].retries.fetch_add(3, Relaxed);
        let mut prev = Snapshot::default();
        let s = interval_sample(&lives, &mut prev, 10.0, 10.0, 8);
        let IntervalRates::Tpcc {
            new_orders,
            deliveries,
            late,
            p99_ms,
            max_ms,
            tpmc,
            retries,
            ..
        } = s.rates
        else {
            panic!("not a TPC-C sample")
        };
        assert_eq!((new_orders, deliveries, s.events), (220, 2, 223));
        assert!(h.bucket_value_ms(h.bucket_of(29_140_000)) > 29.14);
        assert!((p99_ms[2] - 29.14).abs() < 1e-9, "{}", p99_ms[2]);
        assert_eq!(late, [20, 0, 0, 0, 0]);
        assert!((max_ms[0] - 10.0).abs() < 1e-9);
        assert!((p99_ms[0] - 9.0).abs() / 9.0 < 0.02, "{}", p99_ms[0]);
        assert!((tpmc - 1320.0).abs() < 1e-9);
        assert_eq!(retries, 3);
        // Nothing new: zero counts, zero percentiles, never NaN.
        let s = interval_sample(&lives, &mut prev, 20.0, 10.0, 8);
        let IntervalRates::Tpcc {
            new_orders, p95_ms, ..
        } = s.rates
        else {
            panic!()
        };
        assert_eq!(new_orders, 0);
        assert_eq!(p95_ms, [0.0; 5]);
    }
}
