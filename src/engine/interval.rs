//! One `--report-interval` snapshot, the same for every engine: the latencies a worker
//! publishes during the interval ([`LiveLatencies`]: sysbench's 1024 buckets and the largest
//! time in relaxed atomics, or a plain histogram a worker keeps under its lock), gathered and
//! reset by the reporting thread ([`IntervalLatencies`]), and the [`IntervalSample`] built from
//! them ([`IntervalSample::new`]). The engines add their own counters and rates.

use super::measurement::{IntervalRates, IntervalSample};
use crate::stats::SysbenchHistogram;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The latencies of one worker's transactions in the current interval, as relaxed atomics the
/// reporting thread swaps to zero.
pub struct LiveLatencies {
    /// sysbench's buckets ([`SysbenchHistogram::BUCKETS`]).
    buckets: Box<[AtomicU64]>,
    max_ns: AtomicU64,
}

impl Default for LiveLatencies {
    fn default() -> Self {
        Self::new()
    }
}

impl LiveLatencies {
    pub fn new() -> Self {
        LiveLatencies {
            buckets: (0..SysbenchHistogram::BUCKETS)
                .map(|_| AtomicU64::new(0))
                .collect(),
            max_ns: AtomicU64::new(0),
        }
    }

    /// Counts one latency of `ns` whose bucket is `bucket` (from
    /// [`SysbenchHistogram::bucket_of`]).
    #[inline]
    pub fn record(&self, bucket: usize, ns: u64) {
        self.buckets[bucket.min(self.buckets.len() - 1)].fetch_add(1, Relaxed);
        self.max_ns.fetch_max(ns, Relaxed);
    }
}

/// How an interval's percentiles relate to its largest time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Percentiles {
    /// The bucket's value, as sysbench prints it (it may lie above the largest time).
    BucketValue,
    /// Never above the largest time (TPC-C's per-type figures).
    AtMostMax,
}

/// The latency columns of one interval, milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IntervalLatency {
    /// The run's percentile (0 when it is off).
    pub pct_ms: f64,
    pub max_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
}

/// One interval's latencies gathered from every worker by the reporting thread.
#[derive(Default)]
pub struct IntervalLatencies {
    hist: SysbenchHistogram,
    max_ns: u64,
}

impl IntervalLatencies {
    /// Takes a worker's share published in atomics, leaving them at zero.
    pub fn take(&mut self, live: &LiveLatencies) {
        for (b, c) in live.buckets.iter().enumerate() {
            let n = c.swap(0, Relaxed);
            if n > 0 {
                self.hist.record_bucket_n(b, n);
            }
        }
        self.max_ns = self.max_ns.max(live.max_ns.swap(0, Relaxed));
    }

    /// Takes a worker's share kept as a histogram and its largest time, leaving them empty.
    pub fn take_histogram(&mut self, hist: &mut SysbenchHistogram, max_ns: &mut u64) {
        self.hist.merge(hist);
        hist.reset();
        self.max_ns = self.max_ns.max(*max_ns);
        *max_ns = 0;
    }

    /// The interval's figures: `percentile` (none: 0), the 95th and 99th, the largest time.
    pub fn figures(&self, percentile: Option<f64>, percentiles: Percentiles) -> IntervalLatency {
        let max_ms = self.max_ns as f64 / 1e6;
        let p = |pct: f64| match percentiles {
            Percentiles::BucketValue => self.hist.percentile_ms(pct),
            Percentiles::AtMostMax => self.hist.percentile_ms(pct).min(max_ms),
        };
        IntervalLatency {
            pct_ms: percentile.map(p).unwrap_or(0.0),
            max_ms,
            p95_ms: p(95.0),
            p99_ms: p(99.0),
        }
    }
}

impl IntervalSample {
    /// The sample of the interval that ends `time_s` after the start: `events` completed by
    /// `threads`, their `latency`, the engine's `rates`.
    pub fn new(
        time_s: f64,
        threads: u32,
        events: u64,
        latency: IntervalLatency,
        rates: IntervalRates,
    ) -> Self {
        IntervalSample {
            time_s,
            threads,
            events,
            latency_pct_ms: latency.pct_ms,
            latency_max_ms: latency.max_ms,
            p95_ms: latency.p95_ms,
            p99_ms: latency.p99_ms,
            rates,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_and_resets_both_kinds_of_share() {
        let h = SysbenchHistogram::new();
        let live = LiveLatencies::new();
        for ms in [1.0, 2.0, 29.14] {
            let ns = (ms * 1e6) as u64;
            live.record(h.bucket_of(ns), ns);
        }
        let mut kept = SysbenchHistogram::new();
        kept.record(3_000_000);
        let mut kept_max = 3_000_000;
        let mut i = IntervalLatencies::default();
        i.take(&live);
        i.take_histogram(&mut kept, &mut kept_max);
        assert_eq!((kept.count(), kept_max), (0, 0));
        let f = i.figures(Some(50.0), Percentiles::BucketValue);
        assert!((f.max_ms - 29.14).abs() < 1e-9);
        // The top bucket's value (29.19) lies above the largest time unless clamped.
        assert!(f.p99_ms > f.max_ms);
        let c = i.figures(None, Percentiles::AtMostMax);
        assert_eq!((c.pct_ms, c.p99_ms), (0.0, f.max_ms));
        assert!((f.pct_ms - 2.0).abs() / 2.0 < 0.02, "{}", f.pct_ms);
        // Taken: the next interval starts empty.
        let mut next = IntervalLatencies::default();
        next.take(&live);
        assert_eq!(
            next.figures(Some(95.0), Percentiles::BucketValue),
            IntervalLatency::default()
        );
    }
}
