//! The contract every benchmark engine (fileio, OLTP, TPC-C) follows, so the CLI, the suite and
//! the appliance drive them the same way:
//!
//! - each step (`prepare`, `run`, `cleanup`, TPC-C's `check`) takes the engine's plain config, a
//!   [`Controller`] and an [`Observer`], and blocks until it is done;
//! - `run` returns a [`Measurement`] (`measurement.rs`, with its [`Counters`] and
//!   [`IntervalSample`]s, each built by `interval.rs` from the latencies the workers publish
//!   during the interval): the numbers, with `error` set when the run
//!   ended early (the numbers are then partial), and whether it reached a steady state
//!   (`steady.rs`, fio's `ss` on those samples); other failures are `Err` values whose text
//!   names what failed in the engine's own words (a directory, a table, a server), never a
//!   command-line flag the caller may not have typed: the CLI adds the flag, the suite the
//!   profile key;
//! - engines never print and never write result files: progress lines and interval samples go
//!   to the observer, results to the caller, which renders them (`report`) and writes them.

pub mod interval;
pub mod measurement;
pub mod steady;

pub use interval::*;
pub use measurement::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
pub use steady::{SteadyCriterion, SteadySettings, SteadyState};

/// Ends a step from another thread (a signal, the abort button, the suite stopping).
///
/// - [`ask_to_stop`](Controller::ask_to_stop): finish the request or transaction in progress,
///   then report what was done. The result is valid, only shorter.
/// - [`abort`](Controller::abort): stop now; in-flight work is abandoned (a query cancelled by
///   dropping its connection, a load left half done and cleaned up). Implies stop.
///
/// Clones share the same flags.
#[derive(Clone, Debug, Default)]
pub struct Controller {
    flags: Arc<Flags>,
}

#[derive(Debug, Default)]
struct Flags {
    stop: AtomicBool,
    abort: AtomicBool,
}

impl Controller {
    pub fn new() -> Self {
        Self::default()
    }

    /// Finish the current request and report.
    pub fn ask_to_stop(&self) {
        self.flags.stop.store(true, Ordering::SeqCst);
    }

    /// Stop now.
    pub fn abort(&self) {
        self.flags.abort.store(true, Ordering::SeqCst);
        self.flags.stop.store(true, Ordering::SeqCst);
    }

    /// Whether the step should end (stop or abort asked). Cheap: one relaxed load.
    #[inline]
    pub fn stop_requested(&self) -> bool {
        self.flags.stop.load(Ordering::Relaxed)
    }

    /// Whether in-flight work should be abandoned.
    #[inline]
    pub fn abort_requested(&self) -> bool {
        self.flags.abort.load(Ordering::Relaxed)
    }

    /// A controller that follows the process's signals: the first SIGINT/SIGTERM asks to stop,
    /// a second one aborts (see [`crate::sys::signals`]).
    pub fn on_signals() -> Self {
        let c = Controller::new();
        crate::sys::signals::install(Box::new(c.clone()));
        c
    }
}

impl crate::sys::signals::SignalTarget for Controller {
    fn stop(&self) {
        self.ask_to_stop();
    }
    fn abort(&self) {
        Controller::abort(self);
    }
}

/// Receives what an engine would print. Called from the engine's threads.
pub trait Observer: Send + Sync {
    /// One progress line in the reference tool's wording (`Creating table 'sbtest1'...`).
    fn message(&self, _line: &str) {}
    /// One `--report-interval` sample.
    fn interval(&self, _sample: &IntervalSample) {}
}

/// An observer that drops everything.
pub struct Silent;
impl Observer for Silent {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abort_implies_stop_and_clones_share_flags() {
        let c = Controller::new();
        let d = c.clone();
        assert!(!d.stop_requested() && !d.abort_requested());
        c.ask_to_stop();
        assert!(d.stop_requested() && !d.abort_requested());
        let e = Controller::new();
        e.clone().abort();
        assert!(e.stop_requested() && e.abort_requested());
    }
}
