//! What a TPC-C run's connections share ([`Shared`]: the window, the deck, the stop flags and
//! the run's error in the client threads' `db::clients::ClientRun`, the recorders) and the
//! New-Order records they hand to a transaction log. Below the driver (`run.rs`) and the worker
//! (`worker.rs`), which both use it.

use super::deck::{Deck, TxKind};
use super::live::Live;
use super::TpccConfig;
use crate::db::clients::ClientRun;
use crate::rng::Rng;
use crate::stats::LatencyRecorder;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Instant, SystemTime};

/// One New-Order as tpcc-mysql's `-f` (report) and `-t` (trx) files record it; ramp-up and
/// the time after the end included, as there.
#[derive(Clone, Debug, PartialEq)]
pub struct NewOrderRecord {
    /// Connection number (tpcc-mysql's `t_num`, from 0).
    pub connection: u32,
    /// tpcc-mysql's `time_count`: the seconds of the last interval line when it completed
    /// (0 during ramp-up).
    pub time_count: u64,
    /// Response time, milliseconds.
    pub rt_ms: f64,
    /// Wall-clock start and end.
    pub start: SystemTime,
    pub finish: SystemTime,
    /// Ended by the intended rollback (tpcc-mysql writes no trx line for these).
    pub rolled_back: bool,
}

/// Receives every New-Order from the connections' threads (for the `-f`/`-t` files).
pub trait TransactionLog: Send + Sync {
    fn new_order(&self, record: &NewOrderRecord);
}

/// What the connections share.
pub(crate) struct Shared {
    pub cfg: TpccConfig,
    pub live: Vec<Live>,
    pub log: Option<Arc<dyn TransactionLog>>,
    /// Response-time limits in nanoseconds.
    pub rt_limits_ns: [f64; 5],
    pub(super) window: OnceLock<(Instant, Instant)>,
    /// The client threads' common state: connection options, stop flags, the run's error, how
    /// the connections waited for replies (for the result's notes).
    pub run: ClientRun,
    /// Response times of the counted transactions, per type (connections add theirs in
    /// batches).
    pub recorders: Mutex<[LatencyRecorder; 5]>,
    /// Maps a response time to its interval-histogram bucket.
    pub buckets: crate::stats::SysbenchHistogram,
    /// The one deck every connection deals from, as tpcc-mysql's `seq_get`.
    pub(super) deck: Mutex<(Deck, Rng)>,
}

impl Shared {
    /// Whether every connection should stop now (fatal error, stop or abort asked).
    pub fn stopping(&self) -> bool {
        self.run.stopping()
    }

    pub fn external_stop(&self) -> bool {
        self.run.controller().stop_requested()
    }

    pub(super) fn window(&self) -> (Instant, Instant) {
        *self
            .window
            .get()
            .expect("the window is set before the start")
    }

    pub fn past_end(&self, now: Instant) -> bool {
        now >= self.window().1
    }

    /// Whether `t` lies in the measured window.
    pub fn in_window(&self, t: Instant) -> bool {
        let (a, b) = self.window();
        t >= a && t < b
    }

    /// tpcc-mysql's `time_count` at `t`.
    pub fn time_count(&self, t: Instant) -> u64 {
        let (a, _) = self.window();
        let i = self.cfg.report_interval_s;
        if t < a || i == 0 {
            return 0;
        }
        let s = t.duration_since(a).as_secs();
        (s / i * i).min(self.cfg.measured_s() / i * i)
    }

    /// The next transaction type from the shared deck of 23.
    pub fn deal(&self) -> TxKind {
        let mut d = self.deck.lock().unwrap_or_else(|p| p.into_inner());
        let (deck, rng) = &mut *d;
        deck.deal(rng)
    }

    pub fn set_fatal(&self, msg: String) {
        self.run.set_fatal(msg);
    }

    pub(super) fn fatal(&self) -> Option<String> {
        self.run.fatal()
    }
}
