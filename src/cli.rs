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
    /// sysbench-compatible file I/O benchmark: `spindle fileio [options] prepare|run|cleanup`.
    Fileio(FileioArgs),
    /// Manage a private MySQL-family server on a data directory: init, start, stop, status.
    Mysqld(MysqldArgs),
}

/// Output format of a benchmark command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// sysbench's report text.
    Text,
    /// The versioned JSON result document.
    Json,
}

/// Life-cycle step of a benchmark (sysbench's command word).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Step {
    Prepare,
    Run,
    Cleanup,
}

fn onoff(s: &str) -> Result<bool, String> {
    crate::config::parse_onoff(s)
}

fn size(s: &str) -> Result<u64, String> {
    crate::config::parse_size(s)
}

/// `spindle fileio`: options as sysbench 1.0's, so a sysbench command line can be pasted.
/// Booleans take `=on|off` (a bare `--validate` means on).
#[derive(Debug, Default, clap::Args)]
#[command(
    after_help = "Example: spindle fileio --file-num=16 --file-total-size=256M --file-test-mode=rndrw run"
)]
pub struct FileioArgs {
    /// prepare | run | cleanup (may appear anywhere among the options).
    #[arg(value_enum)]
    pub step: Option<Step>,
    /// Directory for test_file.* [default: current directory].
    #[arg(long, value_name = "PATH")]
    pub dir: Option<std::path::PathBuf>,
    /// Number of files [default: 128].
    #[arg(long, value_name = "N")]
    pub file_num: Option<u32>,
    /// Block size of every request, with K/M/G suffixes [default: 16K].
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub file_block_size: Option<u64>,
    /// Total size of all files [default: 2G].
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub file_total_size: Option<u64>,
    /// Test mode (required for run).
    #[arg(long, value_enum, value_name = "MODE")]
    pub file_test_mode: Option<crate::fileio::TestMode>,
    /// I/O mode [default: sync].
    #[arg(long, value_enum, value_name = "MODE")]
    pub file_io_mode: Option<crate::fileio::IoMode>,
    /// Extra open flags, comma-separated: sync, dsync, direct.
    #[arg(long, value_name = "LIST")]
    pub file_extra_flags: Option<String>,
    /// Periodic fsync of all files every N requests, 0 = off [default: 100].
    #[arg(long, value_name = "N")]
    pub file_fsync_freq: Option<u64>,
    /// fsync after every write [default: off].
    #[arg(long, value_name = "on|off", value_parser = onoff, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub file_fsync_all: Option<bool>,
    /// Each thread fsyncs every file at the end [default: on].
    #[arg(long, value_name = "on|off", value_parser = onoff, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub file_fsync_end: Option<bool>,
    /// fsync or fdatasync [default: fsync].
    #[arg(long, value_enum, value_name = "MODE")]
    pub file_fsync_mode: Option<crate::fileio::FsyncMode>,
    /// Merge sequential requests up to N blocks, 0 = off [default: 0].
    #[arg(long, value_name = "N")]
    pub file_merged_requests: Option<u64>,
    /// Reads per write in rndrw [default: 1.5].
    #[arg(long, value_name = "RATIO")]
    pub file_rw_ratio: Option<f64>,
    /// Accepted for sysbench compatibility; only used by the async I/O mode.
    #[arg(long, value_name = "N", hide = true)]
    pub file_async_backlog: Option<u64>,
    /// Worker threads [default: 1].
    #[arg(long, value_name = "N", visible_alias = "num-threads")]
    pub threads: Option<u32>,
    /// Time limit in seconds, 0 = none [default: 10; 0.4 mode: 0].
    #[arg(long, value_name = "SECONDS", visible_alias = "max-time")]
    pub time: Option<u64>,
    /// Event limit, 0 = none [default: 0; 0.4 mode: 10000 requests].
    #[arg(long, value_name = "N", visible_alias = "max-requests")]
    pub events: Option<u64>,
    /// Print intermediate results every N seconds, 0 = off.
    #[arg(long, value_name = "SECONDS")]
    pub report_interval: Option<u64>,
    /// Latency percentile to report, 0 = off [default: 95].
    #[arg(long, value_name = "P")]
    pub percentile: Option<f64>,
    /// Print the latency histogram.
    #[arg(long, value_name = "on|off", value_parser = onoff, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub histogram: Option<bool>,
    /// Checksum every block and verify it on read.
    #[arg(long, value_name = "on|off", value_parser = onoff, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub validate: Option<bool>,
    /// Random seed, 0 = from the clock [default: 0].
    #[arg(long, value_name = "N")]
    pub rand_seed: Option<u64>,
    /// sysbench version to emulate: 1.0 or 0.4 (0.4.12) [default: 1.0].
    #[arg(long, value_name = "VERSION")]
    pub compat: Option<String>,
    /// Output format [default: text].
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Also write the JSON result document to PATH (atomically).
    #[arg(long, value_name = "PATH")]
    pub save: Option<std::path::PathBuf>,
}

/// `spindle mysqld init|start|stop|status --datadir PATH`.
#[derive(Debug, clap::Args)]
pub struct MysqldArgs {
    /// What to do: init (create datadir + my.cnf), start, stop, status.
    #[arg(value_enum)]
    pub action: MysqldActionArg,
    /// The data directory (my.cnf, logs, socket and credentials live in PATH.spindle/ beside it).
    #[arg(long, value_name = "PATH")]
    pub datadir: std::path::PathBuf,
    /// Server flavor instead of detecting it from `--version` (init).
    #[arg(long, value_parser = clap::value_parser!(crate::provision::mysqld::Flavor))]
    pub flavor: Option<crate::provision::mysqld::Flavor>,
    /// Server program to use instead of mariadbd/mysqld from PATH (init, start).
    #[arg(long, value_name = "PATH")]
    pub mysqld: Option<std::path::PathBuf>,
    /// Also listen on TCP 127.0.0.1:PORT (default: unix socket only, skip-networking) (init).
    #[arg(long, value_name = "PORT")]
    pub tcp_port: Option<u16>,
    /// innodb_buffer_pool_size, e.g. 512M or 2G (default: 3/8 of RAM, at least 128M) (init).
    #[arg(long, value_name = "SIZE", value_parser = crate::provision::mysqld::config::parse_size_arg)]
    pub buffer_pool_size: Option<u64>,
    /// innodb_log_file_size, e.g. 64M (the default) (init).
    #[arg(long, value_name = "SIZE", value_parser = crate::provision::mysqld::config::parse_size_arg)]
    pub log_file_size: Option<u64>,
    /// Extra my.cnf line KEY=VALUE (or KEY), replacing a generated one; repeatable (init).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Seconds to wait for the server to answer (start, default 120) or shut down (stop,
    /// default 300, then SIGKILL).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
    /// Output format of status.
    #[arg(long, value_enum, default_value = "text")]
    pub format: MysqldFormatArg,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum MysqldActionArg {
    Init,
    Start,
    Stop,
    Status,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum MysqldFormatArg {
    Text,
    Json,
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
        Command::Fileio(a) => crate::cmd::fileio::run(a),
        Command::Mysqld(a) => crate::cmd::mysqld::run(a),
    }
}
