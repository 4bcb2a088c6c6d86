//! sysbench 1.0's random numbers: xoroshiro128+ per worker, the uniform / gaussian / special /
//! pareto distributions (`--rand-type` and its knobs), `sb_rand_str` templates and the shared
//! `sysbench.rand.unique()` sequence. Formulas follow `sb_rand.c` of sysbench 1.0.20.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU32, Ordering};

/// The distribution behind `sysbench.rand.default` (`--rand-type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RandType {
    Uniform,
    Gaussian,
    Special,
    Pareto,
}

impl RandType {
    /// Every distribution's name, in sysbench's order.
    pub const NAMES: &'static [&'static str] = &["uniform", "gaussian", "special", "pareto"];

    /// The distribution named `name` (`uniform`, `gaussian`, `special`, `pareto`).
    pub fn parse(name: &str) -> Result<Self, String> {
        crate::units::from_word(name.trim()).ok_or_else(|| {
            format!("'{name}' is not a distribution: use uniform, gaussian, special or pareto")
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            RandType::Uniform => "uniform",
            RandType::Gaussian => "gaussian",
            RandType::Special => "special",
            RandType::Pareto => "pareto",
        }
    }
}

/// Random-number options, with sysbench 1.0.20's defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RandConfig {
    /// `--rand-type` (default `special`, as in sysbench 1.0).
    pub kind: RandType,
    /// `--rand-spec-iter`: uniform draws summed for the gaussian part (12).
    pub spec_iter: u32,
    /// `--rand-spec-pct`: width of the hot band, percent of the range (1).
    pub spec_pct: u32,
    /// `--rand-spec-res`: percent of values that fall in the hot band (75).
    pub spec_res: u32,
    /// `--rand-pareto-h` (0.2).
    pub pareto_h: f64,
    /// `--rand-seed`: 0 = seed from the current time (sysbench's default).
    pub seed: u64,
}

impl Default for RandConfig {
    fn default() -> Self {
        RandConfig {
            kind: RandType::Special,
            spec_iter: 12,
            spec_pct: 1,
            spec_res: 75,
            pareto_h: 0.2,
            seed: 0,
        }
    }
}

/// Precomputed constants of a [`RandConfig`] (as `sb_rand_init` does).
#[derive(Clone, Copy, Debug)]
pub struct Dist {
    kind: RandType,
    iter: u32,
    iter_mult: f64,
    pct_mult: f64,
    pct_2_mult: f64,
    res_mult: f64,
    pareto_power: f64,
}

impl Dist {
    pub fn new(cfg: &RandConfig) -> Self {
        let iter = cfg.spec_iter.max(1);
        Dist {
            kind: cfg.kind,
            iter,
            iter_mult: 1.0 / iter as f64,
            pct_mult: cfg.spec_pct as f64 / 100.0,
            pct_2_mult: cfg.spec_pct as f64 / 200.0,
            res_mult: 100.0 / (100.0 - cfg.spec_res.min(99) as f64),
            pareto_power: cfg.pareto_h.ln() / (1.0 - cfg.pareto_h).ln(),
        }
    }
}

/// One worker's generator: the crate's xoroshiro128+ ([`crate::rng::Rng`], sysbench's PRNG)
/// with the run's `--rand-type` distribution.
#[derive(Clone, Debug)]
pub struct Rng {
    rng: crate::rng::Rng,
    dist: Dist,
}

pub use crate::rng::time_seed;

impl Rng {
    /// A generator for worker `stream` of a run seeded with `seed` (distinct, reproducible streams).
    pub fn new(seed: u64, stream: u64, dist: Dist) -> Self {
        Rng {
            rng: crate::rng::Rng::stream(seed, stream),
            dist,
        }
    }

    /// Uniform double in [0, 1), built from the top 52 bits as sysbench does.
    #[inline]
    pub fn uniform_double(&mut self) -> f64 {
        self.rng.uniform_double()
    }

    /// `sb_rand_uniform(a, b)`.
    #[inline]
    pub fn uniform(&mut self, a: u32, b: u32) -> u32 {
        self.rng.uniform(a, b)
    }

    /// `sb_rand_default(a, b)`: the `--rand-type` distribution.
    #[inline]
    pub fn default(&mut self, a: u32, b: u32) -> u32 {
        match self.dist.kind {
            RandType::Uniform => self.uniform(a, b),
            RandType::Gaussian => self.gaussian(a, b),
            RandType::Special => self.special(a, b),
            RandType::Pareto => self.pareto(a, b),
        }
    }

    pub fn gaussian(&mut self, a: u32, b: u32) -> u32 {
        let t = b as f64 - a as f64 + 1.0;
        let mut sum = 0.0;
        for _ in 0..self.dist.iter {
            sum += self.uniform_double() * t;
        }
        a.wrapping_add((sum * self.dist.iter_mult) as u32)
    }

    pub fn special(&mut self, a: u32, b: u32) -> u32 {
        let t = b as f64 - a as f64;
        let range_size = t * self.dist.res_mult;
        let rnd = self.uniform_double();
        let res = rnd * range_size;
        if res < t {
            let mut sum = 0.0;
            for _ in 0..self.dist.iter {
                sum += self.uniform_double();
            }
            return (a as f64 + sum * t * self.dist.iter_mult) as u32;
        }
        let d = t * self.dist.pct_mult;
        let mut res = rnd * (d + 1.0);
        res += t / 2.0 - t * self.dist.pct_2_mult;
        a.wrapping_add(res as u32)
    }

    pub fn pareto(&mut self, a: u32, b: u32) -> u32 {
        let t = b as f64 - a as f64 + 1.0;
        a.wrapping_add((t * self.uniform_double().powf(self.dist.pareto_power)) as u32)
    }

    /// `sb_rand_str`: `#` → digit, `@` → lowercase letter, anything else copied. Appends to `out`.
    #[inline]
    pub fn fill_template(&mut self, template: &[u8], out: &mut Vec<u8>) {
        out.reserve(template.len());
        for &c in template {
            out.push(match c {
                b'#' => self.uniform(b'0' as u32, b'9' as u32) as u8,
                b'@' => self.uniform(b'a' as u32, b'z' as u32) as u8,
                other => other,
            });
        }
    }
}

/// `c` column template: 10 groups of 11 digits joined by '-' (119 characters).
pub const C_TEMPLATE: &[u8] = b"###########-###########-###########-###########-###########-###########-###########-###########-###########-###########";
/// `pad` column template: 5 groups of 11 digits (59 characters).
pub const PAD_TEMPLATE: &[u8] = b"###########-###########-###########-###########-###########";

/// `sysbench.rand.unique()`: a shared, non-repeating 32-bit sequence (preshing's permutation).
#[derive(Debug)]
pub struct UniqueSeq {
    index: AtomicU32,
    offset: u32,
}

fn permute(x: u32) -> u32 {
    const PRIME: u32 = 4_294_967_291;
    if x >= PRIME {
        return x;
    }
    let residue = ((x as u64 * x as u64) % PRIME as u64) as u32;
    if x <= PRIME / 2 {
        residue
    } else {
        PRIME - residue
    }
}

impl UniqueSeq {
    pub fn new(seed: u64) -> Self {
        let index = seed as u32;
        let offset = (seed >> 32) as u32 ^ 0x9E37_79B9;
        UniqueSeq {
            index: AtomicU32::new(permute(permute(index).wrapping_add(0x682f_0161))),
            offset: permute(permute(offset).wrapping_add(0x4679_0905)),
        }
    }

    pub fn next(&self) -> u32 {
        let i = self.index.fetch_add(1, Ordering::Relaxed);
        permute(permute(i).wrapping_add(self.offset) ^ 0x5bf0_3635)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(kind: RandType) -> Rng {
        let cfg = RandConfig {
            kind,
            ..Default::default()
        };
        Rng::new(42, 0, Dist::new(&cfg))
    }

    #[test]
    fn all_distributions_stay_in_range() {
        for kind in [
            RandType::Uniform,
            RandType::Gaussian,
            RandType::Special,
            RandType::Pareto,
        ] {
            let mut r = rng(kind);
            for _ in 0..100_000 {
                let v = r.default(1, 1000);
                assert!((1..=1000).contains(&v), "{kind:?} gave {v}");
            }
        }
    }

    #[test]
    fn special_puts_three_quarters_in_the_middle_percent() {
        let mut r = rng(RandType::Special);
        let n = 200_000;
        // Band: 1 % of [1, 100000] around the middle, i.e. about 49500..=50500.
        let hot = (0..n)
            .map(|_| r.default(1, 100_000))
            .filter(|v| (49_499..=50_502).contains(v))
            .count();
        let share = hot as f64 / n as f64;
        assert!((0.74..0.79).contains(&share), "hot share {share}");
    }

    #[test]
    fn templates_produce_digit_groups() {
        let mut r = rng(RandType::Uniform);
        let mut out = Vec::new();
        r.fill_template(C_TEMPLATE, &mut out);
        assert_eq!(out.len(), 119);
        let s = String::from_utf8(out).unwrap();
        let groups: Vec<&str> = s.split('-').collect();
        assert_eq!(groups.len(), 10);
        assert!(groups
            .iter()
            .all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit())));
        let mut out = Vec::new();
        r.fill_template(b"@@@@", &mut out);
        assert!(out.iter().all(|b| b.is_ascii_lowercase()));
    }

    #[test]
    fn unique_sequence_does_not_repeat() {
        let u = UniqueSeq::new(7);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100_000 {
            assert!(seen.insert(u.next()));
        }
    }
}
