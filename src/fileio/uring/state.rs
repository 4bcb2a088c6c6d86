//! One async worker's state: its ring, the slots of its requests in flight and their buffers,
//! what is registered with the ring. The worker loop (`mod.rs`) and the registration
//! (`register.rs`) both work on it.

use super::super::files::AlignedBuf;
use super::super::generator::Request;
use super::super::shared::Shared;
use super::nowait::Blocking;
use crate::rng::Rng;
use io_uring::IoUring;
use std::os::unix::io::RawFd;
use std::time::Instant;

/// One request in flight and its buffers (kept between requests; made on first use, or before
/// the run when they are registered with the ring).
pub(super) struct Slot {
    pub(super) req: Request,
    /// When the request was submitted.
    pub(super) t0: Instant,
    pub(super) busy: bool,
    /// `--file-fsync-all`: the write has completed, its fsync is in flight.
    pub(super) syncing: bool,
    /// `--validate`: the read lands here, the checksummed write comes from here.
    pub(super) buf: Option<AlignedBuf>,
    /// Random-fill writes come from here (never read into).
    pub(super) wbuf: Option<AlignedBuf>,
}

/// One async worker's state. The ring is the first field, so it is closed (and the kernel lets
/// go of the registered buffers) before the buffers are freed.
pub(super) struct Worker<'s, 'a> {
    pub(super) ring: IoUring,
    pub(super) shared: &'s Shared<'a>,
    pub(super) reg: Registered,
    pub(super) fds: Vec<RawFd>,
    pub(super) slots: Vec<Slot>,
    pub(super) free: Vec<usize>,
    /// Slots pushed since the last submission (their clock starts at the next one).
    pub(super) pending: Vec<usize>,
    pub(super) writes_in_flight: u32,
    /// A generated request that must wait: an fsync behind this worker's writes in flight, or a
    /// checksummed sequential request overlapping one in flight.
    pub(super) deferred: Option<Request>,
    /// Blocks finished since the generator was last asked (`--validate`).
    pub(super) released: Vec<(u32, u64)>,
    pub(super) batch: Vec<Request>,
    /// Completions to account: (slot, result, when it completed).
    pub(super) cqes: Vec<(usize, i32, Instant)>,
    /// Per file: which requests run at submission (`probe_blocking`).
    pub(super) blocking: &'s [Blocking],
    /// Requests that ran at submission, not yet accounted.
    pub(super) inline_done: Vec<(usize, i32, Instant)>,
    /// Where every read lands without `--validate` (its bytes are never looked at).
    pub(super) scratch: AlignedBuf,
    /// Source of the random-fill writes that run at submission: each is done before the next
    /// starts, so one buffer serves them all and stays in the cache. Never read into, so its
    /// bytes stay random.
    pub(super) inline_wbuf: AlignedBuf,
    /// Source of zero-fill writes (its bytes never change, so writes in flight share it).
    pub(super) zeros: AlignedBuf,
    pub(super) rng: Rng,
    pub(super) req_size: usize,
    /// Checksummed sequential mode: requests must not overlap this worker's in flight.
    pub(super) seq_validate: bool,
    /// The generator said stop, or the run ended: take no new requests.
    pub(super) finished: bool,
    pub(super) now: Instant,
}

/// What a worker registered with its ring: the files (a request names the file's index) and
/// its request buffers (a request names the buffer's index). Buffers are numbered in this
/// order: every `Slot::buf`, every `Slot::wbuf`, `Worker::zeros`, `Worker::scratch` — those of
/// them that ring requests of this test use.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Registered {
    pub(super) files: bool,
    /// Index of slot 0's `buf`; slot i's is `buf + i`.
    pub(super) buf: Option<u16>,
    /// Index of slot 0's `wbuf`.
    pub(super) wbuf: Option<u16>,
    pub(super) zeros: Option<u16>,
    pub(super) scratch: Option<u16>,
}

impl Registered {
    pub(super) fn slot(base: Option<u16>, i: usize) -> Option<u16> {
        base.map(|b| b + i as u16)
    }
}
