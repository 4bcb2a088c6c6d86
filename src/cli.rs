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
    /// sysbench-compatible OLTP: `spindle oltp <workload> [options] prepare|run|cleanup`.
    #[command(args_override_self = true)]
    Oltp(Box<OltpArgs>),
    /// Manage a private MySQL-family server on a data directory: init, start, stop, status.
    Mysqld(MysqldArgs),
    /// List block devices and say which ones can be benchmarked, and why not.
    Disks(DisksArgs),
    /// The appliance: LEDs, button, results stick, runs on button press (runs as root).
    Daemon(DaemonArgs),
    /// Check the status LEDs: `spindle leds test` shows every pattern in turn.
    Leds(LedsArgs),
    /// Ask the running daemon to start a run (like a short button press).
    Start(ControlArgs),
    /// Ask the running daemon to abort the run cleanly (like a long button press).
    Abort(ControlArgs),
    /// Run the whole suite (fileio, then OLTP on a private server) on every eligible disk or on
    /// the given directories, and write one results bundle.
    Suite(SuiteArgs),
}

/// `spindle suite`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  spindle suite --target /tmp/scratch --profile quick\n  spindle suite --profile standard          (every eligible USB3 disk; needs root)"
)]
pub struct SuiteArgs {
    /// Benchmark this disk (/dev/sdX, kernel name, by-id name or serial); repeatable. Without
    /// --disk and --target: every eligible disk.
    #[arg(long, value_name = "DEV|ID")]
    pub disk: Vec<String>,
    /// Benchmark in this directory (no disk preparation); repeatable.
    #[arg(long, value_name = "DIR")]
    pub target: Vec<std::path::PathBuf>,
    /// Profile: quick, standard, reference, or a .toml file [default: from --config, else standard].
    #[arg(long, value_name = "NAME|FILE")]
    pub profile: Option<String>,
    /// Configuration file (see config/spindle.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
    /// Bundle directory [default: ./spindle-results/<host>-<timestamp>/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<std::path::PathBuf>,
    /// Read /sys, /proc and /dev under DIR (tests).
    #[arg(long, value_name = "DIR", default_value = "/", hide = true)]
    pub sysroot: std::path::PathBuf,
    /// Show the plan and the disk verdicts, run nothing.
    #[arg(long)]
    pub dry_run: bool,
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
    crate::units::parse_size(s)
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

/// `spindle daemon`.
#[derive(Debug, clap::Args)]
pub struct DaemonArgs {
    /// Configuration file [default: /etc/spindle/spindle.toml, if it exists].
    #[arg(long, value_name = "PATH")]
    pub config: Option<std::path::PathBuf>,
    /// Status backend, overriding `[status] backend`.
    #[arg(long, value_enum, value_name = "BACKEND")]
    pub status: Option<crate::config::appliance::IndicatorBackend>,
    /// Start a run at boot, overriding `[appliance] autostart`.
    #[arg(long)]
    pub autostart: bool,
}

/// `spindle leds test`.
#[derive(Debug, clap::Args)]
pub struct LedsArgs {
    /// What to do (only `test`: show every pattern in turn).
    #[arg(value_enum)]
    pub action: LedsAction,
    /// Configuration file (for `[status]`) [default: /etc/spindle/spindle.toml, if it exists].
    #[arg(long, value_name = "PATH")]
    pub config: Option<std::path::PathBuf>,
    /// Backend, overriding `[status] backend`.
    #[arg(long, value_enum, value_name = "BACKEND")]
    pub backend: Option<crate::config::appliance::IndicatorBackend>,
    /// Seconds each pattern is shown.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub seconds: f64,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum LedsAction {
    Test,
}

/// `spindle start` / `spindle abort`.
#[derive(Debug, clap::Args)]
pub struct ControlArgs {
    /// The daemon's control socket [default: `[appliance] control_socket`].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<std::path::PathBuf>,
    /// Configuration file to read the socket path from.
    #[arg(long, value_name = "PATH")]
    pub config: Option<std::path::PathBuf>,
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
        Command::Oltp(a) => crate::cmd::oltp::execute(&a),
        Command::Mysqld(a) => crate::cmd::mysqld::run(a),
        Command::Daemon(a) => crate::cmd::daemon::run(a),
        Command::Leds(a) => crate::cmd::leds::run(a),
        Command::Start(a) => {
            crate::cmd::control::run(crate::appliance::daemon::ControlCommand::Start, a)
        }
        Command::Abort(a) => {
            crate::cmd::control::run(crate::appliance::daemon::ControlCommand::Abort, a)
        }
        Command::Disks(a) => crate::disk::run_disks_command(&a.sysroot, a.json, a.all),
        Command::Suite(a) => crate::cmd::suite::run(a),
    }
}

/// `spindle oltp`: workload and command words may appear anywhere among the options, as in
/// sysbench (`spindle oltp --threads=4 read_write run`). Defaults are sysbench 1.0.20's.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "WORKLOADS: read_write read_only write_only point_select update_index \
    update_non_index insert delete legacy (also as oltp_read_write, oltp_read_write.lua, oltp.lua)\n\
COMMANDS: prepare run cleanup"
)]
pub struct OltpArgs {
    /// The workload and the command (prepare|run|cleanup), in any order.
    #[arg(value_name = "WORKLOAD|COMMAND", required = true)]
    pub words: Vec<String>,
    /// Number of tables.
    #[arg(long, default_value_t = 1, alias = "oltp-tables-count")]
    pub tables: u32,
    /// Rows per table.
    #[arg(long, default_value_t = 10000, alias = "oltp-table-size")]
    pub table_size: u32,
    /// Range size for range SELECT queries.
    #[arg(long, default_value_t = 100, alias = "oltp-range-size")]
    pub range_size: u32,
    /// Point SELECT queries per transaction.
    #[arg(long, default_value_t = 10, alias = "oltp-point-selects")]
    pub point_selects: u32,
    /// Simple range SELECT queries per transaction.
    #[arg(long, default_value_t = 1, alias = "oltp-simple-ranges")]
    pub simple_ranges: u32,
    /// SELECT SUM() queries per transaction.
    #[arg(long, default_value_t = 1, alias = "oltp-sum-ranges")]
    pub sum_ranges: u32,
    /// SELECT ORDER BY queries per transaction.
    #[arg(long, default_value_t = 1, alias = "oltp-order-ranges")]
    pub order_ranges: u32,
    /// SELECT DISTINCT queries per transaction.
    #[arg(long, default_value_t = 1, alias = "oltp-distinct-ranges")]
    pub distinct_ranges: u32,
    /// UPDATE index queries per transaction.
    #[arg(long, default_value_t = 1, alias = "oltp-index-updates")]
    pub index_updates: u32,
    /// UPDATE non-index queries per transaction.
    #[arg(long, default_value_t = 1, alias = "oltp-non-index-updates")]
    pub non_index_updates: u32,
    /// DELETE/INSERT combinations per transaction.
    #[arg(long, default_value_t = 1, alias = "oltp-delete-inserts")]
    pub delete_inserts: u32,
    /// Enable/disable all range SELECT queries (on|off).
    #[arg(long, default_value = "on", num_args = 0..=1, require_equals = true, default_missing_value = "on", value_parser = onoff, alias = "oltp-range-selects")]
    pub range_selects: bool,
    /// AUTO_INCREMENT id (on) or client-generated ids (off).
    #[arg(long, default_value = "on", num_args = 0..=1, require_equals = true, default_missing_value = "on", value_parser = onoff, alias = "oltp-auto-inc")]
    pub auto_inc: bool,
    /// No BEGIN/COMMIT: every query autocommits.
    #[arg(long, default_value = "off", num_args = 0..=1, require_equals = true, default_missing_value = "on", value_parser = onoff, alias = "oltp-skip-trx")]
    pub skip_trx: bool,
    /// Secondary index on id instead of the PRIMARY KEY.
    #[arg(long, default_value = "off", num_args = 0..=1, require_equals = true, default_missing_value = "on", value_parser = onoff, alias = "oltp-secondary")]
    pub secondary: bool,
    /// Create the secondary index k_N after loading.
    #[arg(long, default_value = "on", num_args = 0..=1, require_equals = true, default_missing_value = "on", value_parser = onoff, alias = "oltp-create-secondary")]
    pub create_secondary: bool,
    /// legacy only: read-only transactions.
    #[arg(long = "oltp-read-only", default_value = "off", num_args = 0..=1, require_equals = true, default_missing_value = "on", value_parser = onoff)]
    pub oltp_read_only: bool,
    /// legacy only: write-only transactions.
    #[arg(long = "oltp-write-only", default_value = "off", num_args = 0..=1, require_equals = true, default_missing_value = "on", value_parser = onoff)]
    pub oltp_write_only: bool,
    /// Accepted for 0.4-era command lines and ignored (the legacy script ignores it too).
    #[arg(long = "oltp-test-mode", hide = true)]
    pub oltp_test_mode: Option<String>,
    /// Storage engine for CREATE TABLE.
    #[arg(long, default_value = "innodb", alias = "mysql-table-engine")]
    pub mysql_storage_engine: String,
    /// Random numbers distribution: uniform, gaussian, special, pareto.
    #[arg(long, default_value = "special")]
    pub rand_type: String,
    /// Iterations for the special/gaussian distributions.
    #[arg(long, default_value_t = 12)]
    pub rand_spec_iter: u32,
    /// Percentage of the range treated as 'special'.
    #[arg(long, default_value_t = 1)]
    pub rand_spec_pct: u32,
    /// Percentage of 'special' values.
    #[arg(long, default_value_t = 75)]
    pub rand_spec_res: u32,
    /// Parameter h of the pareto distribution.
    #[arg(long, default_value_t = 0.2)]
    pub rand_pareto_h: f64,
    /// Seed (0 = current time).
    #[arg(long, default_value_t = 0)]
    pub rand_seed: u64,
    /// Number of client connections (and prepare's parallelism).
    #[arg(long, default_value_t = 1, alias = "num-threads")]
    pub threads: u32,
    /// Time limit in seconds (0 = none).
    #[arg(long, default_value_t = 10, alias = "max-time")]
    pub time: u64,
    /// Limit on transactions (0 = none).
    #[arg(long, default_value_t = 0, alias = "max-requests")]
    pub events: u64,
    /// Seconds between intermediate reports (0 = off).
    #[arg(long, default_value_t = 0)]
    pub report_interval: u64,
    /// Percentile to report in latency statistics (0 = off).
    #[arg(long, default_value_t = 95)]
    pub percentile: u32,
    /// Print the latency histogram (on|off; bare --histogram = on).
    #[arg(long, default_value = "off", num_args = 0..=1, require_equals = true, default_missing_value = "on", value_parser = onoff)]
    pub histogram: bool,
    /// Unix socket of the server.
    #[arg(long)]
    pub mysql_socket: Option<std::path::PathBuf>,
    /// Server host ('localhost' = the default unix socket).
    #[arg(long, default_value = "localhost")]
    pub mysql_host: String,
    /// Server TCP port.
    #[arg(long, default_value_t = 3306)]
    pub mysql_port: u16,
    /// User name.
    #[arg(long)]
    pub mysql_user: Option<String>,
    /// Password.
    #[arg(long)]
    pub mysql_password: Option<String>,
    /// Database.
    #[arg(long)]
    pub mysql_db: Option<String>,
    /// Error codes that restart a transaction ('all', or a comma list).
    #[arg(long, default_value = "1213,1020,1205")]
    pub mysql_ignore_errors: String,
    /// Prepared statements: auto (server-side) or disable (SQL text).
    #[arg(long, default_value = "auto")]
    pub db_ps_mode: String,
    /// Only 'mysql' is supported (accepted for sysbench command lines).
    #[arg(long, default_value = "mysql")]
    pub db_driver: String,
    /// Reach the server `spindle mysqld` started on this data directory (socket, user,
    /// password and database are read from it unless given explicitly).
    #[arg(long)]
    pub datadir: Option<std::path::PathBuf>,
    /// Seconds a connection keeps trying to reconnect after losing the server.
    #[arg(long, default_value_t = 30.0)]
    pub reconnect_timeout: f64,
    /// Keep tokio's writable wake-ups on the run's sockets (for A/B measurements).
    #[arg(long, hide = true)]
    pub keep_write_wakeups: bool,
    /// OS threads driving the connections (0 = one per connection).
    #[arg(long, default_value_t = 0)]
    pub client_threads: u32,
    /// Output format: text (sysbench's) or json (the result document).
    #[arg(long, default_value = "text")]
    pub format: String,
    /// Also save the result document (JSON) to this file, atomically.
    #[arg(long)]
    pub save: Option<std::path::PathBuf>,
}
