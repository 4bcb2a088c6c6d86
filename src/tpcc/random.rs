//! TPC-C's random functions (clause 2.1.6 and 4.3.2): NURand with its run-time constants, the
//! C_LAST syllables, random a-strings and n-strings, zip codes, "ORIGINAL" marking and the
//! customer permutation of the ORDER rows. Pure: every draw comes from a [`crate::rng::Rng`].

use crate::rng::Rng;
use serde::{Deserialize, Serialize};

/// The ten syllables C_LAST is built from (clause 4.3.2.3).
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// Characters of a random a-string (tpcc-mysql's alphabet: digits and both cases).
const ALNUM: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The run-time constants C of NURand(A, x, y), one per A (clause 2.1.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NuConstants {
    /// C for A = 255 (C_LAST).
    pub c_last: u32,
    /// C for A = 1023 (C_ID).
    pub c_id: u32,
    /// C for A = 8191 (OL_I_ID).
    pub ol_i_id: u32,
}

impl NuConstants {
    /// Constants for loading the database: each uniform in [0, A].
    pub fn draw(rng: &mut Rng) -> Self {
        NuConstants {
            c_last: rng.uniform(0, 255),
            c_id: rng.uniform(0, 1023),
            ol_i_id: rng.uniform(0, 8191),
        }
    }

    /// Constants for a run against data loaded with `load` (clause 2.1.6.1): C_ID and OL_I_ID
    /// drawn afresh; C_LAST so that |C_run − C_load| is in [65, 119] and neither 96 nor 112.
    pub fn for_run(load: &NuConstants, rng: &mut Rng) -> Self {
        let c_last = loop {
            let c = rng.uniform(0, 255);
            if c_last_delta_ok(c, load.c_last) {
                break c;
            }
        };
        NuConstants {
            c_last,
            c_id: rng.uniform(0, 1023),
            ol_i_id: rng.uniform(0, 8191),
        }
    }
}

/// Clause 2.1.6.1's rule for the C_LAST constants of a run and of the load.
pub fn c_last_delta_ok(run: u32, load: u32) -> bool {
    let d = run.abs_diff(load);
    (65..=119).contains(&d) && d != 96 && d != 112
}

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x.
#[inline]
pub fn nurand(rng: &mut Rng, a: u32, x: u32, y: u32, c: u32) -> u32 {
    (((rng.uniform(0, a) | rng.uniform(x, y)) + c) % (y - x + 1)) + x
}

/// Appends the last name for `num` in 0..=999 (three syllables, one per decimal digit).
pub fn last_name(num: u32, out: &mut Vec<u8>) {
    let num = num.min(999) as usize;
    out.extend_from_slice(SYLLABLES[num / 100].as_bytes());
    out.extend_from_slice(SYLLABLES[num / 10 % 10].as_bytes());
    out.extend_from_slice(SYLLABLES[num % 10].as_bytes());
}

/// Appends a random a-string of length uniform in [min, max]; returns its length.
pub fn alnum(rng: &mut Rng, min: u32, max: u32, out: &mut Vec<u8>) -> usize {
    let len = rng.uniform(min, max) as usize;
    let mut left = len;
    // Four characters from each 64-bit draw (16 bits each, scaled to 0..62).
    while left > 0 {
        let mut x = rng.next_u64();
        for _ in 0..left.min(4) {
            out.push(ALNUM[(((x & 0xFFFF) * 62) >> 16) as usize]);
            x >>= 16;
        }
        left = left.saturating_sub(4);
    }
    len
}

/// Appends a random n-string (digits) of length uniform in [min, max].
pub fn numeric(rng: &mut Rng, min: u32, max: u32, out: &mut Vec<u8>) {
    let len = rng.uniform(min, max);
    for _ in 0..len {
        out.push(b'0' + rng.below(10) as u8);
    }
}

/// Appends a zip code: four random digits followed by "11111" (clause 4.3.2.7).
pub fn zip(rng: &mut Rng, out: &mut Vec<u8>) {
    numeric(rng, 4, 4, out);
    out.extend_from_slice(b"11111");
}

/// Appends an a-string of length in [min, max]; when `original`, "ORIGINAL" replaces eight
/// characters at a random position (clause 4.3.3.1, I_DATA and S_DATA).
pub fn data_string(rng: &mut Rng, min: u32, max: u32, original: bool, out: &mut Vec<u8>) {
    let start = out.len();
    let len = alnum(rng, min, max, out);
    if original && len >= 8 {
        let pos = start + rng.uniform(0, len as u32 - 8) as usize;
        out[pos..pos + 8].copy_from_slice(b"ORIGINAL");
    }
}

/// Exactly `k` of `n` positions chosen at random (Floyd's algorithm), as a mask.
pub fn choose(rng: &mut Rng, n: usize, k: usize) -> Vec<bool> {
    let mut mask = vec![false; n];
    let k = k.min(n);
    for j in n - k..n {
        let t = rng.below(j as u64 + 1) as usize;
        if mask[t] {
            mask[j] = true;
        } else {
            mask[t] = true;
        }
    }
    mask
}

/// A random permutation of 1..=n (the O_C_ID of a district's orders, clause 4.3.3.1).
pub fn permutation(rng: &mut Rng, n: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (1..=n).collect();
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_follow_the_syllable_table() {
        let name = |n| {
            let mut v = Vec::new();
            last_name(n, &mut v);
            String::from_utf8(v).unwrap()
        };
        assert_eq!(name(0), "BARBARBAR");
        assert_eq!(name(371), "PRICALLYOUGHT");
        assert_eq!(name(999), "EINGEINGEING");
    }

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut rng = Rng::new(5);
        let mut hits = vec![0u32; 3001];
        for _ in 0..300_000 {
            let v = nurand(&mut rng, 1023, 1, 3000, 259);
            assert!((1..=3000).contains(&v));
            hits[v as usize] += 1;
        }
        // Non-uniform: the most frequent id is drawn far more often than the mean (100).
        let max = *hits.iter().max().unwrap();
        assert!(max > 300, "max {max}");
    }

    #[test]
    fn run_constants_respect_the_delta_rule() {
        let mut rng = Rng::new(9);
        for _ in 0..200 {
            let load = NuConstants::draw(&mut rng);
            let run = NuConstants::for_run(&load, &mut rng);
            let d = run.c_last.abs_diff(load.c_last);
            assert!((65..=119).contains(&d) && d != 96 && d != 112, "{d}");
            assert!(run.c_last <= 255 && run.c_id <= 1023 && run.ol_i_id <= 8191);
        }
        assert!(!c_last_delta_ok(100, 4)); // delta 96
        assert!(c_last_delta_ok(0, 65));
    }

    #[test]
    fn strings_have_the_asked_lengths_and_alphabets() {
        let mut rng = Rng::new(1);
        for _ in 0..1000 {
            let mut v = Vec::new();
            let n = alnum(&mut rng, 8, 16, &mut v);
            assert_eq!(n, v.len());
            assert!((8..=16).contains(&n));
            assert!(v.iter().all(|c| c.is_ascii_alphanumeric()));
            let mut z = Vec::new();
            zip(&mut rng, &mut z);
            assert_eq!(z.len(), 9);
            assert!(z.ends_with(b"11111") && z.iter().all(u8::is_ascii_digit));
        }
        let mut v = Vec::new();
        data_string(&mut rng, 26, 50, true, &mut v);
        assert!(v.windows(8).any(|w| w == b"ORIGINAL"), "{v:?}");
    }

    #[test]
    fn choose_picks_exactly_k_and_permutation_is_one() {
        let mut rng = Rng::new(3);
        let m = choose(&mut rng, 100_000, 10_000);
        assert_eq!(m.iter().filter(|&&b| b).count(), 10_000);
        let mut p = permutation(&mut rng, 3000);
        assert_ne!(p[..10], (1..=10).collect::<Vec<_>>()[..]);
        p.sort_unstable();
        assert_eq!(p, (1..=3000).collect::<Vec<_>>());
    }
}
