//! `--validate` block format (sysbench 1.0): random payload, then a 4-byte CRC32 of the
//! payload and the 8-byte offset of the block within its file, both little-endian.
//!
//! A request may span several blocks (merged sequential requests) or end in a short block (a
//! file size that is not a multiple of the block size); every piece between two block-size
//! boundaries of the file carries its own trailer, so prepare, writes and reads always agree.

use crate::rng::Rng;

const CRC_LEN: usize = 4;
const OFFSET_LEN: usize = 8;
/// Bytes of trailer at the end of each block.
pub const TRAILER: usize = CRC_LEN + OFFSET_LEN;

/// What a failed verification found.
#[derive(Debug, PartialEq, Eq)]
pub enum Mismatch {
    Checksum {
        offset: u64,
        stored: u32,
        computed: u32,
    },
    Offset {
        offset: u64,
        stored: u64,
    },
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mismatch::Checksum { offset, stored, computed } => write!(
                f,
                "Checksum mismatch in block at offset {offset}: calculated value 0x{computed:08x}, stored value 0x{stored:08x}"
            ),
            Mismatch::Offset { offset, stored } => write!(
                f,
                "Offset mismatch in block at offset {offset}: stored offset {stored}"
            ),
        }
    }
}

/// Calls `f(range_in_buf, file_offset)` for each block piece of a request at `pos` of `len`.
fn pieces(pos: u64, len: usize, block: u64, mut f: impl FnMut(std::ops::Range<usize>, u64)) {
    let mut done = 0usize;
    while done < len {
        let off = pos + done as u64;
        let to_boundary = (block - off % block) as usize;
        let n = to_boundary.min(len - done);
        f(done..done + n, off);
        done += n;
    }
}

/// Fills `buf` (a request at file offset `pos`) with checksummed blocks.
pub fn fill(buf: &mut [u8], pos: u64, block: u64, rng: &mut Rng) {
    let len = buf.len();
    pieces(pos, len, block, |r, off| {
        let piece = &mut buf[r];
        if piece.len() <= TRAILER {
            rng.fill(piece);
            return;
        }
        let payload = piece.len() - TRAILER;
        rng.fill(&mut piece[..payload]);
        let crc = crc32fast::hash(&piece[..payload]);
        piece[payload..payload + CRC_LEN].copy_from_slice(&crc.to_le_bytes());
        piece[payload + CRC_LEN..].copy_from_slice(&off.to_le_bytes());
    });
}

/// Verifies a request read from file offset `pos`; returns the number of blocks checked.
pub fn verify(buf: &[u8], pos: u64, block: u64) -> Result<u64, Mismatch> {
    let mut checked = 0;
    let mut err = None;
    pieces(pos, buf.len(), block, |r, off| {
        if err.is_some() {
            return;
        }
        let piece = &buf[r];
        if piece.len() <= TRAILER {
            return;
        }
        let payload = piece.len() - TRAILER;
        let stored = u32::from_le_bytes(piece[payload..payload + CRC_LEN].try_into().unwrap());
        let computed = crc32fast::hash(&piece[..payload]);
        if stored != computed {
            err = Some(Mismatch::Checksum {
                offset: off,
                stored,
                computed,
            });
            return;
        }
        let stored_off = u64::from_le_bytes(piece[payload + CRC_LEN..].try_into().unwrap());
        if stored_off != off {
            err = Some(Mismatch::Offset {
                offset: off,
                stored: stored_off,
            });
            return;
        }
        checked += 1;
    });
    match err {
        Some(e) => Err(e),
        None => Ok(checked),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_blocks_verify_and_corruption_is_found() {
        let mut rng = Rng::new(7);
        let mut buf = vec![0u8; 4 * 4096];
        fill(&mut buf, 8192, 4096, &mut rng);
        assert_eq!(verify(&buf, 8192, 4096), Ok(4));
        // Read back at the wrong place: offset mismatch.
        assert!(matches!(
            verify(&buf, 0, 4096),
            Err(Mismatch::Offset { .. })
        ));
        buf[5000] ^= 0xFF;
        assert!(matches!(
            verify(&buf, 8192, 4096),
            Err(Mismatch::Checksum { offset: 12288, .. })
        ));
    }

    #[test]
    fn request_split_at_block_boundaries_and_short_tail() {
        let mut rng = Rng::new(1);
        // A file of 10000 bytes with 4096-byte blocks: pieces 4096, 4096, 1808.
        let mut whole = vec![0u8; 10_000];
        fill(&mut whole, 0, 4096, &mut rng);
        assert_eq!(verify(&whole, 0, 4096), Ok(3));
        assert_eq!(verify(&whole[8192..], 8192, 4096), Ok(1));
    }
}
