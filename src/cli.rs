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
pub enum Command {}

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
    match cli.command {}
}
