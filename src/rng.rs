//! The one PRNG: xoroshiro128+ (the generator sysbench 1.0 uses, with its 55/14/36 constants),
//! seeded through splitmix64. Fast, small, reproducible per seed and stream; not cryptographic.
//! fileio offsets and blocks, OLTP's distributions and TPC-C's data and inputs all draw from it.

/// xoroshiro128+.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 2],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seed from the clock and the process id: what sysbench's `--rand-seed=0` means.
pub fn time_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x5EED)
        ^ (std::process::id() as u64) << 32
}

impl Rng {
    /// Seeds from `seed`, or from the clock when `seed` is 0 (sysbench's `--rand-seed=0`).
    pub fn new(seed: u64) -> Self {
        Self::stream(if seed == 0 { time_seed() } else { seed }, 0)
    }

    /// Stream `stream` of a run seeded with `seed`: distinct, reproducible sequences per worker.
    pub fn stream(seed: u64, stream: u64) -> Self {
        let mut x = seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F);
        let mut s = [splitmix64(&mut x), splitmix64(&mut x)];
        if s == [0, 0] {
            s[0] = 1;
        }
        Rng { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s[0];
        let mut s1 = self.s[1];
        let result = s0.wrapping_add(s1);
        s1 ^= s0;
        self.s[0] = s0.rotate_left(55) ^ s1 ^ (s1 << 14);
        self.s[1] = s1.rotate_left(36);
        result
    }

    /// Uniform double in [0, 1) from the top 53 bits.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform double in [0, 1) built from the top 52 bits, exactly as sysbench's
    /// `sb_rand_uniform_double` (so integer draws round the same way).
    #[inline]
    pub fn uniform_double(&mut self) -> f64 {
        let x = self.next_u64();
        f64::from_bits((0x3FFu64 << 52) | (x >> 12)) - 1.0
    }

    /// Uniform integer in `a..=b` (sysbench's `sb_rand_uniform`).
    #[inline]
    pub fn uniform(&mut self, a: u32, b: u32) -> u32 {
        (a as f64 + self.uniform_double() * (b as f64 - a as f64 + 1.0)) as u32
    }

    /// Uniform integer in `0..n` (`n > 0`), without modulo bias worth measuring.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Fills `buf` with random bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for c in &mut chunks {
            c.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        let last = self.next_u64().to_le_bytes();
        let n = rest.len();
        rest.copy_from_slice(&last[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_uniform_range() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        let mut sum = 0.0;
        for _ in 0..10_000 {
            let x = a.next_f64();
            assert_eq!(x, b.next_f64());
            assert!((0.0..1.0).contains(&x));
            sum += x;
        }
        let mean = sum / 10_000.0;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
    }

    #[test]
    fn streams_differ_and_draws_stay_in_range() {
        let mut a = Rng::stream(7, 0);
        let mut b = Rng::stream(7, 1);
        assert_ne!(a.next_u64(), b.next_u64());
        for _ in 0..10_000 {
            let u = a.uniform(5, 15);
            assert!((5..=15).contains(&u));
            assert!(a.below(3) < 3);
            let d = a.uniform_double();
            assert!((0.0..1.0).contains(&d));
        }
        let mut buf = [0u8; 13];
        a.fill(&mut buf);
        assert!(buf.iter().any(|&x| x != 0));
    }
}
