//! spindle: a disk-benchmark appliance for MySQL-family databases.
//!
//! The library is the whole program; `main.rs` only forwards `argv` to [`run_from_args`], and
//! integration tests call the same entry point (or the engines directly) in-process.
//!
//! Modules and the layers they sit in (which may use which) are drawn in docs/ARCHITECTURE.md
//! and checked by tests/architecture.rs.

pub mod appliance;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod db;
pub mod disk;
pub mod engine;
pub mod fileio;
pub mod model;
pub mod oltp;
pub mod provision;
pub mod report;
pub mod rng;
pub mod run;
pub mod sink;
pub mod stats;
pub mod status;
pub mod sys;
pub mod tpcc;
pub mod units;
pub mod version;

use std::ffi::OsString;

/// Runs spindle with the given command line (including the program name) and returns the
/// process exit code. Errors are returned, not printed, so the caller decides how to show them.
pub fn run_from_args<I, T>(args: I) -> anyhow::Result<i32>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    cmd::dispatch(args)
}
