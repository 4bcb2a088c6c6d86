//! The SLC-cache cliff: where a sustained sequential write's speed fell and stayed down, found by
//! change-point detection on its 1 s throughput series.
//!
//! Method: binary segmentation of the per-sample rates minimising the within-segment squared
//! error. A split is kept when it lowers the error by more than a penalty of
//! `PENALTY × σ² × ln n` (σ estimated from the median absolute difference of neighbouring
//! samples, so a level change does not inflate it) and leaves at least `min_segment` samples on
//! each side. Neighbouring segments whose levels differ by less than `min_drop` are merged
//! again, so every boundary left is a change of at least that much. A fall is a cliff when the
//! speed never comes back: no later segment reaches `1 − min_drop` of the level before it. A
//! short dip (fewer than `min_segment` samples, or a recovery afterwards) and a rise are not
//! cliffs. The first two cliffs are reported.
//!
//! Where a fall sits inside its 1 s sample is interpolated: the sample at the boundary that is
//! between the two levels is split in the ratio its rate implies, so the position is not rounded
//! to a second's worth of bytes (a fast disk writes a GiB in one).
//!
//! Units: positions in bytes (shown as GiB = 2³⁰ bytes), speeds in MB/s with MB = 10⁶ bytes, as
//! disk makers print them. Pure: the series comes in as [`WriteSample`]s.

use serde::{Deserialize, Serialize};

/// One interval of the write: its end (seconds since the start) and the bytes written in it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WriteSample {
    pub t_s: f64,
    pub bytes: u64,
}

/// One cliff: where the speed fell and the levels around it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cliff {
    /// Bytes written when the speed fell.
    pub at_bytes: u64,
    /// Seconds since the start when it fell.
    pub at_s: f64,
    /// The mean speed of the segment before, MB/s (10⁶ bytes).
    pub before_mb_s: f64,
    /// The mean speed of the segment after, MB/s.
    pub after_mb_s: f64,
}

/// What the series showed: up to two cliffs, or none up to `written_bytes`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CliffFinding {
    /// The cliffs in the order they came (at most two).
    #[serde(default)]
    pub cliffs: Vec<Cliff>,
    /// Bytes the series covers.
    #[serde(default)]
    pub written_bytes: u64,
    /// Seconds the series covers.
    #[serde(default)]
    pub seconds: f64,
    /// The mean speed over the whole series, MB/s.
    #[serde(default)]
    pub mean_mb_s: f64,
    /// The series has fewer samples than two levels need (2 × `min_segment`): no cliff could
    /// have been found, so none is claimed absent either.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub too_short: bool,
}

/// The detector's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CliffRules {
    /// Fewest samples a level must last (5: a 5 s level).
    pub min_segment: usize,
    /// The smallest relative fall that counts (0.30: 30 %).
    pub min_drop: f64,
}

impl Default for CliffRules {
    fn default() -> Self {
        CliffRules {
            min_segment: 5,
            min_drop: 0.30,
        }
    }
}

/// The penalty per split, in units of σ² ln n (a BIC-like choice, conservative).
const PENALTY: f64 = 3.0;
/// Cliffs reported at most.
const MAX_CLIFFS: usize = 2;
/// A last sample shorter than this (a time limit that cut a second) is left out.
const SHORTEST_SAMPLE_S: f64 = 0.5;
pub const GIB: f64 = (1u64 << 30) as f64;

impl Cliff {
    /// `at 1.00 GiB (12 s): 412 MB/s → 61 MB/s`.
    pub fn describe(&self) -> String {
        format!(
            "at {:.2} GiB ({:.0} s): {:.0} MB/s → {:.0} MB/s",
            self.at_bytes as f64 / GIB,
            self.at_s,
            self.before_mb_s,
            self.after_mb_s
        )
    }
}

impl CliffFinding {
    /// One line: `cliff at 1.00 GiB (12 s): 412 MB/s → 61 MB/s; second cliff at …`,
    /// `no cliff up to 1.80 GiB (412 MB/s …)` or `too short to find a cliff: …`.
    pub fn describe(&self) -> String {
        match self.cliffs.as_slice() {
            [] if self.too_short => format!(
                "too short to find a cliff: {:.2} GiB in {:.0} s at {:.0} MB/s (a level must last {} s)",
                self.written_bytes as f64 / GIB,
                self.seconds,
                self.mean_mb_s,
                CliffRules::default().min_segment
            ),
            [] => format!(
                "no cliff up to {:.2} GiB ({:.0} MB/s over {:.0} s)",
                self.written_bytes as f64 / GIB,
                self.mean_mb_s,
                self.seconds
            ),
            [one] => format!("cliff {}", one.describe()),
            [one, two, ..] => format!("cliff {}; second cliff {}", one.describe(), two.describe()),
        }
    }
}

/// The rates (bytes per second) and durations of the usable samples.
fn rates(samples: &[WriteSample]) -> (Vec<f64>, Vec<f64>) {
    let mut prev = 0.0;
    let mut r = Vec::with_capacity(samples.len());
    let mut d = Vec::with_capacity(samples.len());
    for (i, s) in samples.iter().enumerate() {
        let dur = s.t_s - prev;
        prev = s.t_s;
        let last = i + 1 == samples.len();
        if dur <= 0.0 || (last && dur < SHORTEST_SAMPLE_S) {
            continue;
        }
        r.push(s.bytes as f64 / dur);
        d.push(dur);
    }
    (r, d)
}

/// Sum of squared deviations from the mean of `x[a..b]`, from prefix sums.
fn sse(p1: &[f64], p2: &[f64], a: usize, b: usize) -> f64 {
    let n = (b - a) as f64;
    let s = p1[b] - p1[a];
    (p2[b] - p2[a] - s * s / n).max(0.0)
}

fn mean(x: &[f64], a: usize, b: usize) -> f64 {
    x[a..b].iter().sum::<f64>() / (b - a) as f64
}

/// σ from the median absolute difference of neighbours (robust to the level changes).
fn noise_sigma(x: &[f64]) -> f64 {
    let mut d: Vec<f64> = x.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    if d.is_empty() {
        return 0.0;
    }
    d.sort_by(f64::total_cmp);
    d[d.len() / 2] / (0.6745 * std::f64::consts::SQRT_2)
}

/// Binary segmentation: the boundaries (index of the first sample of each later segment).
fn segment(x: &[f64], rules: &CliffRules) -> Vec<usize> {
    let n = x.len();
    let mut p1 = vec![0.0; n + 1];
    let mut p2 = vec![0.0; n + 1];
    for (i, v) in x.iter().enumerate() {
        p1[i + 1] = p1[i] + v;
        p2[i + 1] = p2[i] + v * v;
    }
    // A floor of 1 % of the median level: a perfectly flat series has σ = 0.
    let mut sorted = x.to_vec();
    sorted.sort_by(f64::total_cmp);
    let floor = sorted.get(n / 2).copied().unwrap_or(0.0) * 0.01;
    let sigma = noise_sigma(x).max(floor);
    let penalty = PENALTY * sigma * sigma * (n.max(2) as f64).ln();
    let m = rules.min_segment.max(1);
    let mut bounds = Vec::new();
    let mut todo = vec![(0usize, n)];
    while let Some((a, b)) = todo.pop() {
        if b - a < 2 * m {
            continue;
        }
        let whole = sse(&p1, &p2, a, b);
        let best = (a + m..=b - m)
            .map(|k| (k, sse(&p1, &p2, a, k) + sse(&p1, &p2, k, b)))
            .min_by(|l, r| l.1.total_cmp(&r.1));
        if let Some((k, cost)) = best {
            if whole - cost > penalty {
                bounds.push(k);
                todo.push((a, k));
                todo.push((k, b));
            }
        }
    }
    bounds.sort_unstable();
    bounds
}

/// Merges neighbouring segments whose levels differ by less than `min_drop`, the smallest
/// difference first, until every boundary left is a large change.
fn merge_small(x: &[f64], mut bounds: Vec<usize>, min_drop: f64) -> Vec<usize> {
    loop {
        let edges: Vec<usize> = std::iter::once(0)
            .chain(bounds.iter().copied())
            .chain(std::iter::once(x.len()))
            .collect();
        let means: Vec<f64> = edges.windows(2).map(|w| mean(x, w[0], w[1])).collect();
        let smallest = means
            .windows(2)
            .enumerate()
            .map(|(i, w)| (i, relative_change(w[0], w[1])))
            .filter(|(_, c)| *c < min_drop)
            .min_by(|l, r| l.1.total_cmp(&r.1));
        match smallest {
            Some((i, _)) => {
                bounds.remove(i);
            }
            None => return bounds,
        }
    }
}

fn relative_change(a: f64, b: f64) -> f64 {
    let hi = a.max(b);
    if hi <= 0.0 {
        0.0
    } else {
        (a - b).abs() / hi
    }
}

/// Finds up to two cliffs in the series.
pub fn find_cliffs(samples: &[WriteSample], rules: &CliffRules) -> CliffFinding {
    let written: u64 = samples.iter().map(|s| s.bytes).sum();
    let seconds = samples.last().map_or(0.0, |s| s.t_s);
    let mut finding = CliffFinding {
        cliffs: Vec::new(),
        written_bytes: written,
        seconds,
        mean_mb_s: if seconds > 0.0 {
            written as f64 / seconds / 1e6
        } else {
            0.0
        },
        too_short: false,
    };
    let (x, dur) = rates(samples);
    finding.too_short = x.len() < 2 * rules.min_segment.max(1);
    let bounds = merge_small(&x, segment(&x, rules), rules.min_drop);
    let edges: Vec<usize> = std::iter::once(0)
        .chain(bounds.iter().copied())
        .chain(std::iter::once(x.len()))
        .collect();
    let means: Vec<f64> = edges.windows(2).map(|w| mean(&x, w[0], w[1])).collect();
    for (i, &k) in bounds.iter().enumerate() {
        let (before, after) = (means[i], means[i + 1]);
        let recovers = means[i + 1..]
            .iter()
            .any(|&m| m >= before * (1.0 - rules.min_drop));
        if after >= before || recovers {
            continue;
        }
        let (at_bytes, at_s) = position(&x, &dur, (edges[i], k, edges[i + 2]));
        finding.cliffs.push(Cliff {
            at_bytes,
            at_s,
            before_mb_s: before / 1e6,
            after_mb_s: after / 1e6,
        });
        if finding.cliffs.len() == MAX_CLIFFS {
            break;
        }
    }
    finding
}

/// A level and its spread, robustly: the median of `x` and 1.4826 × its median absolute
/// deviation (σ for normal noise), at least 1 % of the level.
fn level(x: &[f64]) -> (f64, f64) {
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let m = median(&mut x.to_vec());
    let mad = median(&mut x.iter().map(|v| (v - m).abs()).collect());
    (m, (1.4826 * mad).max(0.01 * m.abs()))
}

/// Where the fall at boundary `k` (segments `a..k` and `k..b`) happened, in bytes and seconds:
/// inside the boundary sample that lies between the two levels, in the ratio its rate implies;
/// else at the boundary. The levels are the segments' medians without the two boundary samples,
/// and of those two the one further from its own level, in units of that level's spread, is the
/// sample the fall is in — so a slow second just before a fall inside the next is not taken
/// for it.
fn position(x: &[f64], dur: &[f64], (a, k, b): (usize, usize, usize)) -> (u64, f64) {
    let inner = |from: usize, to: usize| if to - from > 1 { (from, to) } else { (a, b) };
    let (fa, fb) = inner(a, k - 1);
    let (sa, sb) = inner(k + 1, b);
    let (fast, fast_spread) = level(&x[fa..fb]);
    let (slow, slow_spread) = level(&x[sa..sb]);
    let cum_bytes = |i: usize| -> f64 { (0..i).map(|j| x[j] * dur[j]).sum() };
    let cum_s = |i: usize| -> f64 { dur[..i].iter().sum() };
    let span = fast - slow;
    let last_fast = (fast - x[k - 1]) / fast_spread;
    let first_slow = (x[k] - slow) / slow_spread;
    if span <= 0.0 || last_fast.max(first_slow) <= 0.0 {
        return (cum_bytes(k) as u64, cum_s(k));
    }
    let mixed = if last_fast >= first_slow { k - 1 } else { k };
    // The share of the mixed sample's time spent at the fast level.
    let f = ((x[mixed] - slow) / span).clamp(0.0, 1.0);
    let t = f * dur[mixed];
    ((cum_bytes(mixed) + t * fast) as u64, cum_s(mixed) + t)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: f64 = 1e6;

    /// One sample per second at these rates (MB/s).
    fn series(rates_mb_s: &[f64]) -> Vec<WriteSample> {
        rates_mb_s
            .iter()
            .enumerate()
            .map(|(i, r)| WriteSample {
                t_s: (i + 1) as f64,
                bytes: (r * MB) as u64,
            })
            .collect()
    }

    /// A repeatable ±`amp` wobble (a fixed pseudo-random sequence).
    fn noisy(level: f64, n: usize, amp: f64, seed: u64) -> Vec<f64> {
        let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (s >> 33) as f64 / (1u64 << 31) as f64; // 0..1
                level * (1.0 + amp * (2.0 * u - 1.0))
            })
            .collect()
    }

    fn find(r: &[f64]) -> CliffFinding {
        find_cliffs(&series(r), &CliffRules::default())
    }

    #[test]
    fn one_cliff_is_found_at_its_byte_and_with_its_levels() {
        let mut r = noisy(400.0, 20, 0.05, 1);
        r.extend(noisy(60.0, 30, 0.05, 2));
        let f = find(&r);
        assert_eq!(f.cliffs.len(), 1, "{f:?}");
        let c = f.cliffs[0];
        let expected: f64 = r[..20].iter().sum::<f64>() * MB;
        assert!(
            (c.at_bytes as f64 - expected).abs() < 0.02 * expected,
            "{c:?}"
        );
        assert!((c.before_mb_s - 400.0).abs() < 10.0, "{c:?}");
        assert!((c.after_mb_s - 60.0).abs() < 3.0, "{c:?}");
        assert!((c.at_s - 20.0).abs() < 1.0, "{c:?}");
        assert!(f.describe().starts_with("cliff at "), "{}", f.describe());
    }

    #[test]
    fn a_fall_inside_a_second_is_placed_inside_it() {
        // 10 s at 1000 MB/s, then a second that fell a quarter of the way in, then 100 MB/s.
        let mut r = vec![1000.0; 10];
        r.push(0.25 * 1000.0 + 0.75 * 100.0);
        r.extend(vec![100.0; 10]);
        let c = find(&r).cliffs[0];
        let expected = 10_250.0 * MB;
        assert!(
            (c.at_bytes as f64 - expected).abs() < 0.01 * expected,
            "{c:?}"
        );
        assert!((c.at_s - 10.25).abs() < 0.05, "{c:?}");
    }

    #[test]
    fn a_slow_second_before_a_fall_inside_the_next_does_not_move_the_fall() {
        // 150 MB/s with a hiccup (120) in the last fast second, then a second that fell a
        // twelfth of the way in (34 = 150/12 + 25 × 11/12 ≈ 35.4), then 25 MB/s.
        let mut r = noisy(150.0, 6, 0.01, 17);
        r.push(120.0);
        r.push(150.0 / 12.0 + 25.0 * 11.0 / 12.0);
        r.extend(noisy(25.0, 14, 0.005, 18));
        let c = find(&r).cliffs[0];
        let expected = (r[..7].iter().sum::<f64>() + 150.0 / 12.0) * MB;
        let error = (c.at_bytes as f64 - expected) / expected;
        assert!(error.abs() < 0.005, "{:+.2} %: {c:?}", error * 100.0);
    }

    #[test]
    fn two_cliffs_are_both_reported_in_order() {
        let mut r = noisy(500.0, 15, 0.05, 3);
        r.extend(noisy(200.0, 15, 0.05, 4));
        r.extend(noisy(50.0, 15, 0.05, 5));
        let f = find(&r);
        assert_eq!(f.cliffs.len(), 2, "{f:?}");
        assert!(f.cliffs[0].at_bytes < f.cliffs[1].at_bytes);
        assert!((f.cliffs[0].before_mb_s - 500.0).abs() < 15.0);
        assert!((f.cliffs[1].before_mb_s - 200.0).abs() < 10.0);
        assert!((f.cliffs[1].after_mb_s - 50.0).abs() < 3.0);
        assert!(f.describe().contains("second cliff"), "{}", f.describe());
    }

    #[test]
    fn a_drive_folding_its_cache_after_the_cliff_is_one_low_level() {
        // SLC full: the drive writes the cache out to TLC/QLC and the speed swings between
        // 40 and 180 MB/s every few seconds — still one cliff, the mean after it ≈ 110.
        let mut r = noisy(420.0, 40, 0.08, 16);
        let swings = [
            40.0, 40.0, 180.0, 180.0, 170.0, 45.0, 60.0, 175.0, 50.0, 160.0,
        ];
        for k in 0..8 {
            r.extend(swings.iter().map(|v| v * (1.0 + 0.02 * (k % 3) as f64)));
        }
        let f = find(&r);
        assert_eq!(f.cliffs.len(), 1, "{f:?}");
        let c = f.cliffs[0];
        assert!((c.at_s - 40.0).abs() < 1.0, "{c:?}");
        assert!((c.after_mb_s - 110.0).abs() < 15.0, "{c:?}");
    }

    #[test]
    fn a_noisy_flat_series_has_no_cliff() {
        for seed in 0..20 {
            let f = find(&noisy(300.0, 60, 0.15, seed));
            assert!(f.cliffs.is_empty(), "seed {seed}: {f:?}");
            assert!(f.describe().starts_with("no cliff up to "));
        }
    }

    #[test]
    fn a_short_dip_is_not_a_cliff() {
        // 3 s at a third of the speed (a garbage collection pause), then back.
        let mut r = noisy(300.0, 20, 0.05, 6);
        r.extend(noisy(100.0, 3, 0.05, 7));
        r.extend(noisy(300.0, 20, 0.05, 8));
        assert!(find(&r).cliffs.is_empty());
        // A longer dip the speed recovers from is not a cliff either.
        let mut r = noisy(300.0, 20, 0.05, 9);
        r.extend(noisy(100.0, 10, 0.05, 10));
        r.extend(noisy(290.0, 20, 0.05, 11));
        assert!(find(&r).cliffs.is_empty(), "{:?}", find(&r));
    }

    #[test]
    fn a_rise_is_not_a_cliff_nor_is_a_small_fall() {
        let mut r = noisy(100.0, 20, 0.05, 12);
        r.extend(noisy(300.0, 20, 0.05, 13));
        assert!(find(&r).cliffs.is_empty());
        let mut r = noisy(300.0, 20, 0.03, 14);
        r.extend(noisy(240.0, 20, 0.03, 15)); // 20 %: below the 30 % rule
        assert!(find(&r).cliffs.is_empty());
    }

    #[test]
    fn a_short_or_empty_series_has_no_cliff_and_a_cut_last_second_is_left_out() {
        assert!(find(&[]).cliffs.is_empty());
        let short = find(&[400.0, 400.0, 50.0]);
        assert!(short.cliffs.is_empty() && short.too_short);
        assert!(
            short.describe().starts_with("too short to find a cliff: "),
            "{}",
            short.describe()
        );
        assert!(!find(&[300.0; 10]).too_short);
        let mut s = series(&[300.0; 12]);
        s.push(WriteSample {
            t_s: 12.1,
            bytes: (3.0 * MB) as u64, // 30 MB/s over the last 0.1 s
        });
        assert!(find_cliffs(&s, &CliffRules::default()).cliffs.is_empty());
    }
}
