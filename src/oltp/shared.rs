//! What an OLTP run's threads share: the live counters the interval sampler reads
//! ([`Live`]), the stop/abort flags and the one-time error ([`Shared`], in the client threads'
//! `db::clients::ClientRun`), and what a worker hands back ([`WorkerOut`]). Below the driver
//! (`run.rs`) and the numbers (`numbers.rs`), which both read it.

use super::rand::UniqueSeq;
use super::workload::Tally;
use super::OltpConfig;
use crate::db::clients::ClientRun;
use crate::engine::LiveLatencies;
use crate::stats::LatencyRecorder;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::Instant;

/// Counters one worker publishes while it runs.
pub(super) struct Live {
    pub(super) events: AtomicU64,
    pub(super) reads: AtomicU64,
    pub(super) writes: AtomicU64,
    pub(super) other: AtomicU64,
    pub(super) errors: AtomicU64,
    pub(super) reconnects: AtomicU64,
    /// This interval's transaction latencies (taken by the reporter).
    pub(super) latencies: LiveLatencies,
}

impl Live {
    pub(super) fn new() -> Self {
        Live {
            events: AtomicU64::new(0),
            reads: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            other: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            reconnects: AtomicU64::new(0),
            latencies: LiveLatencies::new(),
        }
    }

    pub(super) fn add_tally(&self, t: &Tally) {
        if t.reads > 0 {
            self.reads.fetch_add(t.reads, Relaxed);
        }
        if t.writes > 0 {
            self.writes.fetch_add(t.writes, Relaxed);
        }
        if t.other > 0 {
            self.other.fetch_add(t.other, Relaxed);
        }
    }
}

pub(super) struct Shared {
    pub(super) cfg: OltpConfig,
    pub(super) start: OnceLock<Instant>,
    pub(super) deadline: OnceLock<Option<Instant>>,
    /// The client threads' common state: connection options, stop flags, the run's error, how
    /// the connections waited for replies (for the result's notes).
    pub(super) run: ClientRun,
    pub(super) tickets: AtomicU64,
    pub(super) running: AtomicU32,
    pub(super) live: Vec<Live>,
    pub(super) unique: UniqueSeq,
    /// Some connection sends BEGIN as text because the server would not prepare it.
    pub(super) begin_as_text: AtomicBool,
}

impl Shared {
    pub(super) fn stopping(&self) -> bool {
        self.run.stopping()
    }

    pub(super) fn past_deadline(&self) -> bool {
        self.past(Instant::now())
    }

    /// Whether `now` is at or after the `--time` deadline.
    pub(super) fn past(&self, now: Instant) -> bool {
        matches!(self.deadline.get(), Some(Some(d)) if now >= *d)
    }

    pub(super) fn set_fatal(&self, msg: String) {
        self.run.set_fatal(msg);
    }
}

/// What one worker hands back.
pub(super) struct WorkerOut {
    pub(super) idx: usize,
    pub(super) recorder: LatencyRecorder,
    pub(super) errors_by_code: BTreeMap<u16, u64>,
}
