//! The run pipeline, one for `spindle suite` and the appliance daemon:
//!
//! ```text
//! RunRequest ─ targets::plan_disks (pure: which disks, what to do to each)
//!            ─ targets::prepare_disks (erase or mount, through sys::System; guards release)
//!            ─ suite::run_suite: plan::phases per target → phases::run_phase → engines
//!                                (tpcc: TPC-C; regimes: `[oltp.regimes]`'s restarts, prewarm)
//!                                (bundle rewritten as every phase starts)
//!            ─ together::run_together: `[together]`'s fileio runs on every disk at once
//!            ─ release ─► SuiteResult (typed: model)
//! ```
//!
//! Engines are driven through their contract (`engine::Controller`, `engine::Observer`); the
//! profile arrives resolved (`config::profile::SuiteProfile`); nothing here prints: progress
//! goes to a [`SuiteObserver`].

pub mod assemble;
mod options;
mod phases;
pub mod plan;
mod progress;
mod regimes;
mod repeat;
mod sampler;
pub mod suite;
mod target_run;
pub mod targets;
pub mod together;
mod tpcc;

pub use assemble::{execute, RunError, RunRequest};
pub use options::{QuietObserver, ServerChoice, SuiteObserver, SuiteOptions};
pub use targets::TargetSource;
