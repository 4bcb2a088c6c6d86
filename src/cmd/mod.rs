//! Command runners: glue between parsed arguments, the engines and the renderers. Each runner
//! turns its arguments into an engine config (via `config`), calls the engine, prints with
//! `report`, and returns the exit code. No benchmark logic lives here. [`dispatch`] picks the
//! runner of a parsed command line.

pub mod control;
pub mod daemon;
pub mod disks;
pub mod fileio;
pub mod leds;
pub mod mysqld;
pub mod oltp;
pub(crate) mod output;
pub mod report;
pub mod suite;
pub mod sysbench_args;
pub mod tpcc;

use crate::cli::{Cli, Command};
use std::ffi::OsString;

/// Parses `args` (program name first) and runs the chosen subcommand; returns the exit code.
pub fn dispatch<I, T>(args: I) -> anyhow::Result<i32>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    use clap::{CommandFactory, Parser};
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let names: Vec<String> = Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let rewritten = sysbench_args::rewrite(args, &names).map_err(anyhow::Error::msg)?;
    for w in &rewritten.warnings {
        eprintln!("{w}");
    }
    let cli = match Cli::try_parse_from(rewritten.args) {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout and usage errors to stderr itself.
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return Ok(code);
        }
    };
    match cli.command {
        Command::Fileio(a) => fileio::run(a),
        Command::Oltp(a) => oltp::execute(&a),
        Command::Tpcc(a) => tpcc::run(*a),
        Command::Mysqld(a) => mysqld::run(a),
        Command::Daemon(a) => daemon::run(a),
        Command::Leds(a) => leds::run(a),
        Command::Start(a) => control::run(control::Request::Start, a),
        Command::Abort(a) => control::run(control::Request::Abort, a),
        Command::Disks(a) => disks::run(a),
        Command::Suite(a) => suite::run(a),
        Command::Report(a) => report::run(a),
    }
}
