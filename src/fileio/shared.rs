//! What a fileio run's workers share and how they count: the run's [`Shared`] state (files,
//! generator, stop flags), per-worker [`WorkerStats`], and the accounting of one finished
//! request. Below the synchronous driver (`run.rs`) and the io_uring worker (`uring/`).

use super::config::{Compat, FileioConfig, TestMode};
use super::files::TestFiles;
use super::generator::{Generator, Request};
use crate::engine::Controller;
use crate::rng::Rng;
use crate::stats::{LatencyRecorder, SysbenchHistogram};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

pub(super) const MIB: f64 = 1024.0 * 1024.0;

/// Counters one worker keeps; the interval part is reset at every report.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) reads: u64,
    pub(super) writes: u64,
    pub(super) fsyncs: u64,
    pub(super) bytes_read: u64,
    pub(super) bytes_written: u64,
    pub(super) events: u64,
}

impl Tally {
    pub(super) fn add(&mut self, o: &Tally) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.fsyncs += o.fsyncs;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.events += o.events;
    }
}

pub(super) struct WorkerStats {
    pub(super) total: Tally,
    pub(super) interval: Tally,
    pub(super) interval_hist: SysbenchHistogram,
    pub(super) interval_max_ns: u64,
    pub(super) latency: LatencyRecorder,
    pub(super) validated_blocks: u64,
}

impl WorkerStats {
    pub(super) fn new() -> Self {
        WorkerStats {
            total: Tally::default(),
            interval: Tally::default(),
            interval_hist: SysbenchHistogram::new(),
            interval_max_ns: 0,
            latency: LatencyRecorder::new(),
            validated_blocks: 0,
        }
    }
}

/// What every worker of a run shares.
pub(super) struct Shared<'a> {
    pub cfg: &'a FileioConfig,
    pub mode: TestMode,
    pub files: TestFiles,
    pub gen: Mutex<Generator>,
    /// Completed reads and writes (rndrw's ratio rule reads them).
    pub reads_done: AtomicU64,
    pub writes_done: AtomicU64,
    pub controller: &'a Controller,
    pub deadline: Option<Instant>,
    /// Async mode: per file, which requests run at submission (see `uring::probe_blocking`).
    pub blocking: Vec<super::uring::Blocking>,
    /// Async mode: what a worker could not register with its ring, and why (the first one).
    pub unregistered: Mutex<Option<String>>,
    pub(super) error: Mutex<Option<String>>,
    /// Set with `error`, read by workers on every event (an atomic, not the mutex).
    pub(super) failed: AtomicBool,
}

impl Shared<'_> {
    /// True when the worker must stop taking new requests (`now`: a recent clock reading).
    #[inline]
    pub fn should_stop(&self, now: Instant) -> bool {
        self.controller.stop_requested()
            || self.failed.load(Ordering::Relaxed)
            || self.deadline.is_some_and(|d| now >= d)
    }
}

/// The worker's per-thread random stream (seeded runs are reproducible per thread).
pub(super) fn worker_rng(cfg: &FileioConfig, t: usize) -> Rng {
    Rng::new(if cfg.rand_seed == 0 {
        0
    } else {
        cfg.rand_seed ^ (t as u64 + 1) << 40
    })
}

pub(super) fn record_error(shared: &Shared, msg: String) {
    let mut e = shared.error.lock().unwrap();
    if e.is_none() {
        *e = Some(msg);
    }
    // Other workers stop at their next event.
    shared.failed.store(true, Ordering::Relaxed);
}

/// Adds one finished event (`ns`: its latency) to the worker's statistics and the run's
/// completed read/write counts.
#[inline]
pub(super) fn account(shared: &Shared, s: &mut WorkerStats, req: Request, ns: u64, validated: u64) {
    let cfg = shared.cfg;
    if cfg.compat == Compat::V0_4 {
        if let Request::Fsync { .. } = req {
            // 0.4 counts fsyncs as "Other" operations, not as timed events.
            s.interval.fsyncs += 1;
            return;
        }
    }
    let bucket = s.latency.record(ns);
    s.interval_hist.record_bucket(bucket);
    s.interval_max_ns = s.interval_max_ns.max(ns);
    s.validated_blocks += validated;
    let it = &mut s.interval;
    it.events += 1;
    match req {
        Request::Read { len, .. } => {
            it.reads += 1;
            it.bytes_read += len as u64;
            shared.reads_done.fetch_add(1, Ordering::Relaxed);
        }
        Request::Write { len, .. } => {
            it.writes += 1;
            it.bytes_written += len as u64;
            if cfg.fsync_all {
                it.fsyncs += 1;
            }
            shared.writes_done.fetch_add(1, Ordering::Relaxed);
        }
        Request::Fsync { .. } => it.fsyncs += 1,
        Request::Busy | Request::Stop => {}
    }
}
