//! What a suite run is given: its options ([`SuiteOptions`]), the server program to use and
//! the observer that hears its progress.

use super::targets::TargetSpec;
use crate::config::profile::SuiteProfile;
use crate::model::Phase;
use crate::model::{PhaseStatus, Skipped};
use crate::sys::System;
use std::path::PathBuf;
use std::time::Duration;

/// Receives progress (the CLI prints it; the appliance drives LEDs from it). Called from the
/// suite's thread.
pub trait SuiteObserver: Sync {
    /// `step`: its phase, and its server when the database phases run on several (its
    /// `name()` is the phase's name in the results, `oltp-read_write-t4-mysql`).
    fn phase_started(
        &self,
        _target: &str,
        _step: &super::plan::Step,
        _index: usize,
        _total: usize,
        _eta_s: u64,
    ) {
    }
    fn phase_finished(&self, _target: &str, _phase: &Phase, _status: PhaseStatus) {}
    fn message(&self, _line: &str) {}
}

/// An observer that ignores everything.
pub struct QuietObserver;
impl SuiteObserver for QuietObserver {}

pub use crate::config::spindle::ServerChoice;

/// Everything a suite run needs.
#[derive(Clone, Debug)]
pub struct SuiteOptions {
    pub profile: SuiteProfile,
    pub targets: Vec<TargetSpec>,
    /// Disks found but not benchmarked (reported in the bundle).
    pub skipped: Vec<Skipped>,
    /// The bundle directory (created if missing).
    pub out_dir: PathBuf,
    /// Run identifier (the bundle directory name by default).
    pub run_id: String,
    /// Where system state (temperature, throttling, kernel log) is read and how commands
    /// (smartctl) run.
    pub sys: System,
    /// The servers the database phases run on, once each, in order (at least one).
    pub servers: Vec<ServerChoice>,
    /// Seconds between temperature/throttling samples.
    pub sample_interval: Duration,
}
