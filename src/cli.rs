//! The command line: clap definitions and the dispatch to each subcommand's runner.
//!
//! Subcommand argument structs live here; turning them into engine configs is `config`'s job.

use clap::{Parser, Subcommand};
use std::ffi::OsString;

/// spindle: disk benchmarks for MySQL-family databases (sysbench-compatible fileio and OLTP).
#[derive(Debug, Parser)]
#[command(name = "spindle", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List block devices and say which ones can be benchmarked, and why not.
    Disks(DisksArgs),
}

/// `spindle disks`: discovery and classification of benchmark targets.
#[derive(Debug, clap::Args)]
pub struct DisksArgs {
    /// Print the full facts and verdicts as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also list loop devices, RAM disks, dm/md devices and optical drives.
    #[arg(long)]
    pub all: bool,
    /// Read /sys, /proc, /dev and /run under DIR instead of / (fixture trees, images).
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub sysroot: std::path::PathBuf,
}

/// Parses `args` and runs the chosen subcommand; returns the exit code.
pub fn run<I, T>(args: I) -> anyhow::Result<i32>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout and usage errors to stderr itself.
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return Ok(code);
        }
    };
    match cli.command {
        Command::Disks(a) => crate::disk::run_disks_command(&a.sysroot, a.json, a.all),
    }
}
