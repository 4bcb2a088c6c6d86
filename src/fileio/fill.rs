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

/// Fills `buf` with random bytes (once, when a write buffer is made).
pub fn randomize(buf: &mut [u8], rng: &mut Rng) {
    rng.fill(buf);
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
}
