//! Per-worker latency recording and the summaries stored in result documents.

use super::SysbenchHistogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest latency the HDR histogram tracks exactly: one hour. Longer events are clamped.
const HDR_MAX_NS: u64 = 3_600 * 1_000_000_000;

/// Records event latencies (nanoseconds) into both histograms plus exact min/max/sum.
#[derive(Clone, Debug)]
pub struct LatencyRecorder {
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    sysbench: SysbenchHistogram,
    hdr: Histogram<u64>,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        Self::new()
    }
}

/// Latency of a test, as stored in the result document. Microseconds unless the name says so.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Number of events measured.
    pub count: u64,
    pub min_us: f64,
    pub avg_us: f64,
    pub max_us: f64,
    /// Sum of all event latencies in milliseconds (sysbench's `sum:` line).
    pub sum_ms: f64,
    /// Exact percentiles from the HDR histogram (3 significant digits).
    pub p50_us: f64,
    pub p90_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    pub p99_99_us: f64,
    /// The `--percentile` asked for (0 = disabled), and its value computed with sysbench's
    /// 1024-bucket method, in milliseconds, so it matches what sysbench would print.
    pub sysbench_percentile: f64,
    pub sysbench_percentile_ms: f64,
}

/// Both histograms in a portable form, so results can be re-analysed or merged offline.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramData {
    /// HdrHistogram V2 encoding, base64, values in nanoseconds.
    pub hdr_v2_base64: String,
    /// sysbench's 1024 log buckets (0.001 ms … 100 s): non-empty (index, count) pairs.
    pub sysbench_buckets: Vec<(u16, u64)>,
}

impl HistogramData {
    /// Decodes the HDR histogram (for `report compare`, merging runs, tests).
    pub fn hdr(&self) -> anyhow::Result<Histogram<u64>> {
        use base64_decode as b64;
        let bytes = b64(&self.hdr_v2_base64)?;
        let mut de = Deserializer::new();
        Ok(de.deserialize(&mut &bytes[..])?)
    }
}

/// Threads fairness, sysbench's last report block.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    pub events_avg: f64,
    pub events_stddev: f64,
    /// Busy time (sum of event latencies) per thread, seconds.
    pub exec_time_avg_s: f64,
    pub exec_time_stddev_s: f64,
    /// Per-thread events and busy time, in thread order.
    pub per_thread: Vec<ThreadShare>,
}

/// One worker's share of the work.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadShare {
    pub events: u64,
    pub busy_s: f64,
}

/// Computes sysbench's fairness figures (population standard deviations).
pub fn fairness(per_thread: Vec<ThreadShare>) -> Fairness {
    let n = per_thread.len().max(1) as f64;
    let ev_avg = per_thread.iter().map(|t| t.events as f64).sum::<f64>() / n;
    let ev_var = per_thread
        .iter()
        .map(|t| (t.events as f64 - ev_avg).powi(2))
        .sum::<f64>()
        / n;
    let t_avg = per_thread.iter().map(|t| t.busy_s).sum::<f64>() / n;
    let t_var = per_thread
        .iter()
        .map(|t| (t.busy_s - t_avg).powi(2))
        .sum::<f64>()
        / n;
    Fairness {
        events_avg: ev_avg,
        events_stddev: ev_var.sqrt(),
        exec_time_avg_s: t_avg,
        exec_time_stddev_s: t_var.sqrt(),
        per_thread,
    }
}

impl LatencyRecorder {
    pub fn new() -> Self {
        LatencyRecorder {
            count: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sysbench: SysbenchHistogram::new(),
            hdr: Histogram::new_with_bounds(1, HDR_MAX_NS, 3).expect("static HDR bounds are valid"),
        }
    }

    /// Records one event's latency.
    #[inline]
    /// Records one latency; returns its sysbench histogram bucket.
    pub fn record(&mut self, ns: u64) -> usize {
        self.count += 1;
        self.sum_ns += ns as u128;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.hdr.saturating_record(ns.clamp(1, HDR_MAX_NS));
        self.sysbench.record(ns)
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Sum of latencies in nanoseconds (a thread's busy time).
    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    pub fn sysbench(&self) -> &SysbenchHistogram {
        &self.sysbench
    }

    pub fn merge(&mut self, other: &LatencyRecorder) {
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sysbench.merge(&other.sysbench);
        self.hdr.add(&other.hdr).expect("histograms share bounds");
    }

    /// Summary with exact percentiles and sysbench's `pct` percentile (0 = disabled).
    pub fn summary(&self, pct: f64) -> LatencySummary {
        if self.count == 0 {
            return LatencySummary {
                sysbench_percentile: pct,
                ..Default::default()
            };
        }
        let q = |p: f64| self.hdr.value_at_quantile(p / 100.0) as f64 / 1e3;
        LatencySummary {
            count: self.count,
            min_us: self.min_ns as f64 / 1e3,
            avg_us: self.sum_ns as f64 / self.count as f64 / 1e3,
            max_us: self.max_ns as f64 / 1e3,
            sum_ms: self.sum_ns as f64 / 1e6,
            p50_us: q(50.0),
            p90_us: q(90.0),
            p95_us: q(95.0),
            p99_us: q(99.0),
            p99_9_us: q(99.9),
            p99_99_us: q(99.99),
            sysbench_percentile: pct,
            sysbench_percentile_ms: if pct > 0.0 {
                self.sysbench.percentile_ms(pct)
            } else {
                0.0
            },
        }
    }

    /// Both histograms in their portable form.
    pub fn histogram_data(&self) -> HistogramData {
        let mut bytes = Vec::new();
        V2Serializer::new()
            .serialize(&self.hdr, &mut bytes)
            .expect("serialising into memory cannot fail");
        HistogramData {
            hdr_v2_base64: base64_encode(&bytes),
            sysbench_buckets: self.sysbench.nonempty(),
        }
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (small and dependency-free).
fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        out.push(B64[(n >> 18) as usize & 63] as char);
        out.push(B64[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            B64[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            B64[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

fn base64_decode(s: &str) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes().filter(|c| !c.is_ascii_whitespace() && *c != b'=') {
        let v = B64.iter().position(|&x| x == c).ok_or_else(|| {
            anyhow::anyhow!("invalid base64 character {:?} in histogram", c as char)
        })?;
        acc = acc << 6 | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_has_exact_percentiles_and_sysbench_value() {
        let mut r = LatencyRecorder::new();
        for i in 1..=1000u64 {
            r.record(i * 1_000); // 1 µs … 1 ms
        }
        let s = r.summary(95.0);
        assert_eq!(s.count, 1000);
        assert!((s.min_us - 1.0).abs() < 1e-9);
        assert!((s.max_us - 1000.0).abs() < 1e-9);
        assert!((s.avg_us - 500.5).abs() < 1e-9);
        assert!((s.p50_us - 500.0).abs() <= 1.0, "{}", s.p50_us);
        assert!((s.p99_us - 990.0).abs() <= 1.0, "{}", s.p99_us);
        assert!((s.sysbench_percentile_ms - 0.95).abs() / 0.95 < 0.02);
    }

    #[test]
    fn histogram_data_round_trips() {
        let mut r = LatencyRecorder::new();
        for ns in [100u64, 2_000, 3_000_000, 9_000_000_000] {
            r.record(ns);
        }
        let data = r.histogram_data();
        let h = data.hdr().unwrap();
        assert_eq!(h.len(), 4);
        assert_eq!(h.max(), h.highest_equivalent(9_000_000_000));
    }

    #[test]
    fn base64_round_trips() {
        for len in 0..10 {
            let data: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            assert_eq!(base64_decode(&base64_encode(&data)).unwrap(), data);
        }
    }

    #[test]
    fn fairness_uses_population_stddev() {
        let f = fairness(vec![
            ThreadShare {
                events: 10,
                busy_s: 1.0,
            },
            ThreadShare {
                events: 20,
                busy_s: 3.0,
            },
        ]);
        assert_eq!(f.events_avg, 15.0);
        assert_eq!(f.events_stddev, 5.0);
        assert_eq!(f.exec_time_avg_s, 2.0);
        assert_eq!(f.exec_time_stddev_s, 1.0);
    }
}
