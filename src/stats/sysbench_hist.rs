//! sysbench 1.0's latency histogram: 1024 logarithmic buckets from 0.001 ms to 100 000 ms.
//!
//! Bucket index = round((ln(v_ms) − ln(0.001)) × M), M = 1023 / ln(10^8), clamped to [0, 1023].
//! A percentile walks the buckets to rank floor(N·p/100 + 0.5) and reports the bucket's
//! representative value exp(i/M + ln 0.001) — exactly what sysbench prints, quirks included
//! (the value may print below `min` or above `max`, and is capped at 100 000 ms).

/// Number of buckets in sysbench's histogram.
pub const BUCKETS: usize = 1024;
const RANGE_MIN_MS: f64 = 0.001;
const RANGE_MAX_MS: f64 = 100_000.0;

fn multiplier() -> f64 {
    (BUCKETS as f64 - 1.0) / (RANGE_MAX_MS.ln() - RANGE_MIN_MS.ln())
}

/// A sysbench-compatible latency histogram. Values are recorded in nanoseconds.
#[derive(Clone, Debug)]
pub struct SysbenchHistogram {
    counts: Box<[u64; BUCKETS]>,
    total: u64,
    /// Cached `M`, so recording costs one `ln` and a multiply.
    mult: f64,
    ln_min: f64,
}

impl Default for SysbenchHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl SysbenchHistogram {
    /// Number of buckets (sysbench's 1024).
    pub const BUCKETS: usize = BUCKETS;

    pub fn new() -> Self {
        SysbenchHistogram {
            counts: Box::new([0; BUCKETS]),
            total: 0,
            mult: multiplier(),
            ln_min: RANGE_MIN_MS.ln(),
        }
    }

    /// The bucket a latency of `ns` nanoseconds falls in.
    pub fn bucket_of(&self, ns: u64) -> usize {
        let ms = ns as f64 / 1e6;
        if ms <= RANGE_MIN_MS {
            return 0;
        }
        let idx = ((ms.ln() - self.ln_min) * self.mult).round();
        if idx >= (BUCKETS - 1) as f64 {
            BUCKETS - 1
        } else if idx <= 0.0 {
            0
        } else {
            idx as usize
        }
    }

    /// The representative value of bucket `i`, in milliseconds.
    pub fn bucket_value_ms(&self, i: usize) -> f64 {
        (i as f64 / self.mult + self.ln_min).exp()
    }

    #[inline]
    /// Counts `ns`; returns its bucket.
    pub fn record(&mut self, ns: u64) -> usize {
        let b = self.bucket_of(ns);
        self.record_bucket(b);
        b
    }

    /// Counts one value whose bucket (from [`SysbenchHistogram::bucket_of`]) is known.
    #[inline]
    pub fn record_bucket(&mut self, bucket: usize) {
        self.record_bucket_n(bucket, 1);
    }

    /// Counts `n` values of one bucket.
    #[inline]
    pub fn record_bucket_n(&mut self, bucket: usize, n: u64) {
        self.counts[bucket.min(BUCKETS - 1)] += n;
        self.total += n;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn merge(&mut self, other: &SysbenchHistogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += *b;
        }
        self.total += other.total;
    }

    pub fn reset(&mut self) {
        self.counts.fill(0);
        self.total = 0;
    }

    /// sysbench's percentile in milliseconds; 0.0 when the histogram is empty (as sysbench).
    pub fn percentile_ms(&self, pct: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let target = ((self.total as f64) * pct / 100.0 + 0.5).floor() as u64;
        let mut acc = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= target {
                return self.bucket_value_ms(i);
            }
        }
        self.bucket_value_ms(BUCKETS - 1)
    }

    /// Non-empty buckets as (index, count), the compact form stored in result documents.
    pub fn nonempty(&self) -> Vec<(u16, u64)> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (i as u16, c))
            .collect()
    }

    /// Rebuilds a histogram from its compact form (as read back from a result document).
    pub fn from_nonempty(buckets: &[(u16, u64)]) -> Self {
        let mut h = Self::new();
        for &(i, c) in buckets {
            let i = (i as usize).min(BUCKETS - 1);
            h.counts[i] += c;
            h.total += c;
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_edges_match_sysbench_range() {
        let h = SysbenchHistogram::new();
        assert_eq!(h.bucket_of(0), 0);
        assert_eq!(h.bucket_of(1_000), 0); // 0.001 ms
        assert_eq!(h.bucket_of(100_000 * 1_000_000), BUCKETS - 1);
        assert_eq!(h.bucket_of(u64::MAX / 2), BUCKETS - 1);
        assert!((h.bucket_value_ms(0) - 0.001).abs() < 1e-12);
        assert!((h.bucket_value_ms(BUCKETS - 1) - 100_000.0).abs() < 1e-6);
    }

    #[test]
    fn neighbouring_buckets_differ_by_about_1_8_percent() {
        let h = SysbenchHistogram::new();
        let ratio = h.bucket_value_ms(501) / h.bucket_value_ms(500);
        assert!((ratio - 1.018).abs() < 0.001, "ratio {ratio}");
    }

    #[test]
    fn percentile_uses_rank_rule_and_bucket_value() {
        let mut h = SysbenchHistogram::new();
        for _ in 0..95 {
            h.record(1_000_000); // 1 ms
        }
        for _ in 0..5 {
            h.record(10_000_000); // 10 ms
        }
        let p95 = h.percentile_ms(95.0);
        assert!((p95 - 1.0).abs() / 1.0 < 0.01, "p95 {p95}");
        let p96 = h.percentile_ms(96.0);
        assert!((p96 - 10.0).abs() / 10.0 < 0.01, "p96 {p96}");
        assert_eq!(SysbenchHistogram::new().percentile_ms(95.0), 0.0);
    }

    #[test]
    fn compact_form_round_trips() {
        let mut h = SysbenchHistogram::new();
        for ns in [5_000u64, 50_000, 50_000, 7_000_000] {
            h.record(ns);
        }
        let back = SysbenchHistogram::from_nonempty(&h.nonempty());
        assert_eq!(back.count(), 4);
        assert_eq!(back.percentile_ms(99.0), h.percentile_ms(99.0));
    }
}
