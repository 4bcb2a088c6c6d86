//! Request generation, exactly as sysbench: one generator behind one mutex, global counters.
//!
//! * Random modes: offsets uniform over the concatenation of all files, rounded down to the
//!   block size; rndrw reads when (reads_done+1)/(writes_done+1) < rw_ratio (completed ops).
//!   In async mode the rule counts requests as they are issued: completed counts lag by up to
//!   the backlog, so the rule would issue runs of up to a backlog of reads, then of writes, and
//!   periodic fsync rounds whose 100 requests hold no write would be skipped. Counted at issue,
//!   the mix and the fsync rounds are the same as in sync mode.
//! * Sequential modes: one shared cursor; 1.0 wraps to file 0 after the last file, 0.4 makes
//!   a single pass.
//! * Periodic fsync: when `fsync_freq` ≠ 0, a write has dirtied the set and the request
//!   counter is a multiple of `fsync_freq`, the next `file_num` events are one fsync per file
//!   (the counter does not advance meanwhile). Sequential modes only check before writes.
//! * Limits: 1.0 counts every event against `--events`; 0.4 counts I/O requests of random modes
//!   and, when the limit (or the single pass) is reached, emits one fsync per file for write
//!   modes, then stops. 0.4's sequential modes ignore the limit (only `file_get_rnd_request`
//!   checks it): seed 003's seqrd with `--max-requests=1000000` read all 5 241 600 blocks.
//! * `--validate` in random modes: a block some worker is reading or writing is not handed out
//!   again until it is released (sysbench re-draws); when every block is busy the worker is told
//!   to wait ([`Request::Busy`]) instead of spinning here with the lock held.

use super::config::{Compat, FileioConfig, IoMode, TestMode};
use crate::rng::Rng;
use std::collections::HashSet;

/// One event for a worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    Read {
        file: u32,
        pos: u64,
        len: u32,
    },
    Write {
        file: u32,
        pos: u64,
        len: u32,
    },
    Fsync {
        file: u32,
    },
    /// Every block is in use by some worker (`--validate` only): finish one and ask again.
    /// Not an event.
    Busy,
    /// No more events: the worker finishes.
    Stop,
}

/// Generator state (lives behind the run's mutex).
pub struct Generator {
    mode: TestMode,
    compat: Compat,
    file_num: u32,
    file_size: u64,
    total: u64,
    block: u64,
    seq_req: u64,
    fsync_freq: u64,
    rw_ratio: f64,
    /// `--events` (1.0: events; 0.4: I/O requests); 0 = unlimited.
    limit: u64,
    rng: Rng,
    req_performed: u64,
    events_issued: u64,
    /// rndrw's rule uses the reads and writes issued (async mode), not those completed.
    ratio_on_issue: bool,
    reads_issued: u64,
    writes_issued: u64,
    dirty: bool,
    fsync_next: u32,
    /// 0.4: emit one fsync per file as events when the limit or the pass is reached.
    end_round: bool,
    /// Emitting that final round now.
    final_round: bool,
    finished: bool,
    seq_file: u32,
    seq_pos: u64,
    /// With --validate: the blocks workers are reading or writing now (no two at once, as
    /// sysbench; in async mode a worker has up to its backlog of them).
    busy: Option<HashSet<(u32, u64)>>,
    /// How many distinct blocks random requests address (a `busy` set this full means wait).
    blocks: u64,
}

impl Generator {
    pub fn new(cfg: &FileioConfig, mode: TestMode) -> Self {
        Generator {
            mode,
            compat: cfg.compat,
            file_num: cfg.file_num,
            file_size: cfg.file_size(),
            total: cfg.effective_total(),
            block: cfg.block_size,
            seq_req: cfg.seq_request_size(),
            fsync_freq: if cfg.fsync_all { 0 } else { cfg.fsync_freq },
            rw_ratio: cfg.rw_ratio,
            limit: cfg.events,
            rng: Rng::new(cfg.rand_seed),
            req_performed: 0,
            events_issued: 0,
            ratio_on_issue: cfg.io_mode == IoMode::Async,
            reads_issued: 0,
            writes_issued: 0,
            dirty: false,
            fsync_next: 0,
            end_round: cfg.fsync_end && !cfg.fsync_all,
            final_round: false,
            finished: false,
            seq_file: 0,
            seq_pos: 0,
            busy: cfg.validate.then(HashSet::new),
            blocks: cfg.effective_total().div_ceil(cfg.block_size.max(1)),
        }
    }

    /// I/O requests generated so far (sysbench's `req_performed`).
    #[cfg(test)]
    pub fn requests(&self) -> u64 {
        self.req_performed
    }

    /// Next event, given the completed read/write counts.
    pub fn next(&mut self, reads_done: u64, writes_done: u64) -> Request {
        if self.finished {
            return Request::Stop;
        }
        if self.final_round {
            return self.next_final_fsync();
        }
        if self.compat == Compat::V1_0 && self.limit > 0 && self.events_issued >= self.limit {
            self.finished = true;
            return Request::Stop;
        }
        if self.compat == Compat::V0_4
            && self.limit > 0
            && self.req_performed >= self.limit
            && self.mode.is_random()
        {
            return self.begin_final_round();
        }
        let req = if self.mode.is_random() {
            self.next_random(reads_done, writes_done)
        } else {
            self.next_sequential()
        };
        if !matches!(req, Request::Stop | Request::Busy) {
            self.events_issued += 1;
        }
        req
    }

    /// A worker finished its request on `block` (file, position); only tracked with --validate.
    pub fn release(&mut self, block: (u32, u64)) {
        if let Some(b) = self.busy.as_mut() {
            b.remove(&block);
        }
    }

    fn periodic_fsync(&mut self) -> Option<Request> {
        if self.fsync_freq != 0 && self.dirty && self.req_performed.is_multiple_of(self.fsync_freq)
        {
            let file = self.fsync_next;
            self.fsync_next += 1;
            if self.fsync_next == self.file_num {
                self.fsync_next = 0;
                self.dirty = false;
            }
            return Some(Request::Fsync { file });
        }
        None
    }

    fn begin_final_round(&mut self) -> Request {
        if self.mode.writes() && self.end_round {
            self.final_round = true;
            self.fsync_next = 0;
            self.next_final_fsync()
        } else {
            self.finished = true;
            Request::Stop
        }
    }

    fn next_final_fsync(&mut self) -> Request {
        if self.fsync_next >= self.file_num {
            self.finished = true;
            return Request::Stop;
        }
        let file = self.fsync_next;
        self.fsync_next += 1;
        self.events_issued += 1;
        Request::Fsync { file }
    }

    fn next_random(&mut self, reads_done: u64, writes_done: u64) -> Request {
        let (reads_done, writes_done) = if self.ratio_on_issue {
            (self.reads_issued, self.writes_issued)
        } else {
            (reads_done, writes_done)
        };
        let write = match self.mode {
            TestMode::Rndrd => false,
            TestMode::Rndwr => true,
            _ => ((reads_done + 1) as f64 / (writes_done + 1) as f64) >= self.rw_ratio,
        };
        if let Some(f) = self.periodic_fsync() {
            return f;
        }
        if self
            .busy
            .as_ref()
            .is_some_and(|b| b.len() as u64 >= self.blocks)
        {
            return Request::Busy;
        }
        let (file, pos) = loop {
            let mut off = (self.rng.next_f64() * self.total as f64) as u64;
            off -= off % self.block;
            let file = (off / self.file_size) as u32;
            let pos = off % self.file_size;
            if let Some(b) = self.busy.as_mut() {
                if !b.insert((file, pos)) {
                    continue;
                }
            }
            break (file, pos);
        };
        let len = self.block.min(self.file_size - pos) as u32;
        self.req_performed += 1;
        if write {
            self.dirty = true;
            self.writes_issued += 1;
            Request::Write { file, pos, len }
        } else {
            self.reads_issued += 1;
            Request::Read { file, pos, len }
        }
    }

    fn next_sequential(&mut self) -> Request {
        let write = self.mode.writes();
        if write && self.compat == Compat::V1_0 {
            if let Some(f) = self.periodic_fsync() {
                return f;
            }
        }
        if self.seq_file >= self.file_num {
            // Only reached in 0.4 mode: the single pass is over.
            return self.begin_final_round();
        }
        let file = self.seq_file;
        let pos = self.seq_pos;
        let len = self.seq_req.min(self.file_size - pos);
        self.seq_pos += len;
        if self.seq_pos >= self.file_size {
            self.seq_pos = 0;
            self.seq_file += 1;
            if self.seq_file >= self.file_num && self.compat == Compat::V1_0 {
                self.seq_file = 0;
            }
        }
        self.req_performed += 1;
        if write {
            self.dirty = true;
            Request::Write {
                file,
                pos,
                len: len as u32,
            }
        } else {
            Request::Read {
                file,
                pos,
                len: len as u32,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(mode: TestMode) -> FileioConfig {
        FileioConfig {
            file_num: 4,
            total_size: 4 * 64 * 1024,
            block_size: 16 * 1024,
            test_mode: Some(mode),
            rand_seed: 1,
            ..Default::default()
        }
    }

    /// Drives the generator single-threaded, completing each request immediately.
    fn drive(g: &mut Generator, n: usize) -> Vec<Request> {
        let (mut r, mut w) = (0, 0);
        let mut out = Vec::new();
        for _ in 0..n {
            let q = g.next(r, w);
            match q {
                Request::Read { .. } => r += 1,
                Request::Write { .. } => w += 1,
                Request::Stop => {
                    out.push(q);
                    break;
                }
                _ => {}
            }
            out.push(q);
        }
        out
    }

    /// How many reads, writes and fsyncs `reqs` holds.
    fn tally(reqs: &[Request]) -> (usize, usize, usize) {
        let count = |f: fn(&Request) -> bool| reqs.iter().filter(|q| f(q)).count();
        (
            count(|q| matches!(q, Request::Read { .. })),
            count(|q| matches!(q, Request::Write { .. })),
            count(|q| matches!(q, Request::Fsync { .. })),
        )
    }

    #[test]
    fn rndrw_is_deterministic_60_40_with_fsync_rounds_every_100() {
        let c = cfg(TestMode::Rndrw);
        let mut g = Generator::new(&c, TestMode::Rndrw);
        let reqs = drive(&mut g, 10_400);
        let (reads, writes, fsyncs) = tally(&reqs);
        assert_eq!(reads + writes, 10_000);
        assert_eq!(reads, 6_000);
        assert_eq!(fsyncs, 400, "4 files × 100 rounds");
        // The first round comes right after the 100th I/O.
        assert!(matches!(reqs[100], Request::Fsync { file: 0 }));
        assert!(matches!(reqs[103], Request::Fsync { file: 3 }));
    }

    #[test]
    fn async_mode_counts_the_ratio_at_issue() {
        let c = FileioConfig {
            io_mode: IoMode::Async,
            ..cfg(TestMode::Rndrw)
        };
        let mut g = Generator::new(&c, TestMode::Rndrw);
        // Nothing has completed yet (a full queue): still 60/40 with a round every 100.
        let reqs: Vec<Request> = (0..1040).map(|_| g.next(0, 0)).collect();
        assert_eq!(tally(&reqs), (600, 400, 40));
    }

    #[test]
    fn validate_never_hands_out_a_busy_block_and_says_when_all_are() {
        let c = FileioConfig {
            file_num: 1,
            total_size: 4 * 16384,
            validate: true,
            ..cfg(TestMode::Rndrd)
        };
        let mut g = Generator::new(&c, TestMode::Rndrd);
        let mut held = Vec::new();
        for _ in 0..4 {
            match g.next(0, 0) {
                Request::Read { file, pos, .. } => held.push((file, pos)),
                other => panic!("{other:?}"),
            }
        }
        held.sort();
        held.dedup();
        assert_eq!(held.len(), 4, "four distinct blocks");
        assert_eq!(g.next(0, 0), Request::Busy);
        g.release(held[2]);
        assert_eq!(
            g.next(0, 0),
            Request::Read {
                file: 0,
                pos: held[2].1,
                len: 16384
            }
        );
        assert_eq!(g.requests(), 5, "Busy is not a request");
    }

    #[test]
    fn random_offsets_are_block_aligned_and_cover_every_file() {
        let c = cfg(TestMode::Rndrd);
        let mut g = Generator::new(&c, TestMode::Rndrd);
        let mut seen = [0u32; 4];
        for q in drive(&mut g, 4000) {
            match q {
                Request::Read { file, pos, len } => {
                    assert_eq!(pos % c.block_size, 0);
                    assert_eq!(len as u64, c.block_size);
                    seen[file as usize] += 1;
                }
                other => panic!("rndrd generated {other:?}"),
            }
        }
        assert!(seen.iter().all(|&n| n > 800), "{seen:?}");
    }

    #[test]
    fn sequential_wraps_in_1_0_and_stops_after_one_pass_in_0_4() {
        let c = cfg(TestMode::Seqrd);
        let mut g = Generator::new(&c, TestMode::Seqrd);
        let reqs = drive(&mut g, 40);
        // 4 files × 4 blocks = 16 per pass; the 17th request is file 0 again.
        assert_eq!(
            reqs[16],
            Request::Read {
                file: 0,
                pos: 0,
                len: 16384
            }
        );
        assert!(!reqs.iter().any(|q| matches!(q, Request::Fsync { .. })));

        let c4 = FileioConfig {
            compat: Compat::V0_4,
            ..cfg(TestMode::Seqrewr)
        };
        let mut g = Generator::new(&c4, TestMode::Seqrewr);
        let reqs = drive(&mut g, 100);
        let (_, writes, fsyncs) = tally(&reqs);
        assert_eq!((writes, fsyncs), (16, 4));
        assert_eq!(*reqs.last().unwrap(), Request::Stop);
    }

    #[test]
    fn events_limit_counts_fsync_events_in_1_0_and_requests_in_0_4() {
        let c = FileioConfig {
            events: 150,
            ..cfg(TestMode::Rndwr)
        };
        let mut g = Generator::new(&c, TestMode::Rndwr);
        let reqs = drive(&mut g, 1000);
        assert_eq!(reqs.len(), 151); // 150 events + Stop
        assert_eq!(g.requests(), 146); // 4 of the 150 were the fsync round

        let c4 = FileioConfig {
            events: 150,
            compat: Compat::V0_4,
            ..cfg(TestMode::Rndwr)
        };
        let mut g = Generator::new(&c4, TestMode::Rndwr);
        let reqs = drive(&mut g, 1000);
        let (_, _, fsyncs) = tally(&reqs);
        assert_eq!(g.requests(), 150);
        assert_eq!(fsyncs, 4 + 4, "one periodic round at 100, one final round");
    }

    #[test]
    fn the_0_4_request_limit_leaves_sequential_modes_to_their_single_pass() {
        let c4 = FileioConfig {
            events: 10,
            compat: Compat::V0_4,
            ..cfg(TestMode::Seqrd)
        };
        let mut g = Generator::new(&c4, TestMode::Seqrd);
        let reqs = drive(&mut g, 10_000);
        let per_pass = c4.file_num as u64 * c4.file_size().div_ceil(c4.block_size);
        assert_eq!(reqs.len() as u64, per_pass + 1, "one whole pass, then Stop");
        assert_eq!(*reqs.last().unwrap(), Request::Stop);
    }

    #[test]
    fn merged_requests_and_short_last_block() {
        let c = FileioConfig {
            file_num: 1,
            total_size: 40_000,
            block_size: 16_384,
            merged_requests: 2,
            rand_seed: 3,
            ..Default::default()
        };
        let mut g = Generator::new(&c, TestMode::Seqrd);
        let reqs = drive(&mut g, 2);
        assert_eq!(
            reqs[0],
            Request::Read {
                file: 0,
                pos: 0,
                len: 32_768
            }
        );
        assert_eq!(
            reqs[1],
            Request::Read {
                file: 0,
                pos: 32_768,
                len: 7_232
            }
        );
    }
}
