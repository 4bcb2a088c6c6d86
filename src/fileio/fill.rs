//! `--file-fill=random`: incompressible write data at no measurable CPU cost.
//!
//! A write buffer is filled with random bytes once (per thread, or per request slot in async
//! mode). Before each write only the first 8 bytes of every 512-byte sector get a fresh random
//! value (a "stamp"): 32 words for a 16 KiB request instead of 16 KiB of new random bytes (fio's
//! default does the same: random buffers made once, scrambled per I/O). So every block a
//! controller sees is random (nothing to compress) and no two written sectors are equal
//! (nothing to deduplicate). A file compressor reading a whole file after a write run does find
//! the buffer's bytes again from one request to the next; a disk does not compress across
//! requests. Prepare writes fresh random bytes throughout: it is not timed, and a prepared file
//! then does not compress at all.
//!
//! Reads never land in a random write buffer, so reads cannot turn it back into zeros.

use crate::rng::Rng;

/// Bytes between two stamps.
pub const SECTOR: usize = 512;

/// Fills `buf` with fresh random bytes (a write buffer when it is made; prepare's chunks).
/// Four generators side by side, seeded from `rng`, so the CPU overlaps their steps: about
/// twice `Rng::fill`'s speed, which matters to prepare on a fast disk and a slow CPU.
pub fn randomize(buf: &mut [u8], rng: &mut Rng) {
    let seed = rng.next_u64();
    let mut lanes = [1, 2, 3, 4].map(|n| Rng::stream(seed, n));
    let mut chunks = buf.chunks_exact_mut(32);
    for c in &mut chunks {
        for (word, lane) in c.chunks_exact_mut(8).zip(lanes.iter_mut()) {
            word.copy_from_slice(&lane.next_u64().to_le_bytes());
        }
    }
    rng.fill(chunks.into_remainder());
}

/// Makes `buf` differ from every earlier write: a fresh random word at the start of each
/// 512-byte sector (a buffer shorter than 8 bytes gets fresh bytes throughout).
#[inline]
pub fn stamp(buf: &mut [u8], rng: &mut Rng) {
    if buf.len() < 8 {
        rng.fill(buf);
        return;
    }
    for chunk in buf.chunks_mut(SECTOR) {
        let n = chunk.len().min(8);
        chunk[..n].copy_from_slice(&rng.next_u64().to_le_bytes()[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_change_every_sector_and_nothing_else() {
        let mut rng = Rng::new(3);
        let mut buf = vec![0u8; 4 * SECTOR + 100];
        randomize(&mut buf, &mut rng);
        let before = buf.clone();
        stamp(&mut buf, &mut rng);
        for (i, (a, b)) in before.chunks(SECTOR).zip(buf.chunks(SECTOR)).enumerate() {
            assert_ne!(a[..8], b[..8], "sector {i} stamped");
            assert_eq!(a[8..], b[8..], "sector {i} body kept");
        }
        let mut tiny = [0u8; 5];
        stamp(&mut tiny, &mut rng);
        assert_ne!(tiny, [0u8; 5]);
    }

    #[test]
    fn randomize_fills_every_byte_and_differs_each_time() {
        let mut rng = Rng::new(9);
        let mut a = vec![0u8; 4096 + 7];
        let mut b = a.clone();
        randomize(&mut a, &mut rng);
        randomize(&mut b, &mut rng);
        assert_ne!(a, b);
        // Every 8-byte word is filled (a zero word would be a 2^-64 accident).
        assert!(a[..4096].chunks(8).all(|w| w != [0u8; 8]));
        assert_ne!(a[4096..], [0u8; 7]);
    }
}
