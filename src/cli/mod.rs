//! The command line: clap definitions only (one file per engine's options). Parsing into
//! engine configs is `config`'s job; running a subcommand is `cmd`'s.

mod fileio;
mod oltp;
mod report;
mod tpcc;
mod values;

pub use fileio::FileioArgs;
pub use oltp::OltpArgs;
pub use report::{ReportAction, ReportArgs};
pub use tpcc::TpccArgs;
use values::{size, word};
pub use values::{Format, SteadyArgs, Step};

use clap::{Parser, Subcommand};

/// spindle: disk benchmarks for MySQL-family databases (sysbench-compatible fileio and OLTP,
/// tpcc-mysql-compatible TPC-C). The help's first line is Cargo.toml's description.
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
    /// TPC-C, tpcc-mysql compatible: `spindle tpcc [options] prepare|run|check|cleanup`.
    Tpcc(Box<TpccArgs>),
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
    /// Run the whole suite (fileio, then OLTP and TPC-C on a private server) on every eligible
    /// disk or on the given directories, and write one results bundle.
    Suite(SuiteArgs),
    /// Read results back: show a bundle, rebuild its report.html, compare several runs.
    Report(ReportArgs),
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
    /// Profile: check, quick, standard, reference, or a .toml file [default: from --config, else standard].
    #[arg(long, value_name = "NAME|FILE")]
    pub profile: Option<String>,
    /// Configuration file (see config/spindle.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
    /// Run each measurement (fileio, OLTP, TPC-C run) N times: mean, median, CV and a 95 %
    /// interval per figure, and verdicts in `report compare` [default: the profile's [repeat], else 1].
    #[arg(long, value_name = "N")]
    pub repeat: Option<u32>,
    /// Bundle directory [default: ./spindle-results/<YYYYmmdd-HHMMSS>-<host>/ (UTC), or
    /// <[suite] out>/<YYYYmmdd-HHMMSS>-<host>/ with --config].
    #[arg(long, value_name = "DIR")]
    pub out: Option<std::path::PathBuf>,
    /// Read /sys, /proc and /dev under DIR (tests).
    #[arg(long, value_name = "DIR", default_value = "/", hide = true)]
    pub sysroot: std::path::PathBuf,
    /// Show the targets and what would be done to each (its verdict: erased, reused, used in a
    /// folder), the disks left out and why, and the phases per target; touch nothing.
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
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub buffer_pool_size: Option<u64>,
    /// innodb_log_file_size, e.g. 64M (the default) (init).
    #[arg(long, value_name = "SIZE", value_parser = size)]
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
    #[arg(long, value_name = "PATH", env = "SPINDLE_CONFIG")]
    pub config: Option<std::path::PathBuf>,
    /// Status backend, overriding `[status] backend`.
    #[arg(long, value_name = "BACKEND", value_parser = word::<crate::status::IndicatorBackend>(crate::status::IndicatorBackend::NAMES))]
    pub status: Option<crate::status::IndicatorBackend>,
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
    #[arg(long, value_name = "PATH", env = "SPINDLE_CONFIG")]
    pub config: Option<std::path::PathBuf>,
    /// Backend, overriding `[status] backend`.
    #[arg(long, value_name = "BACKEND", value_parser = word::<crate::status::IndicatorBackend>(crate::status::IndicatorBackend::NAMES))]
    pub backend: Option<crate::status::IndicatorBackend>,
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
    #[arg(long, value_name = "PATH", env = "SPINDLE_CONFIG")]
    pub config: Option<std::path::PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use values::onoff;

    #[test]
    fn booleans_accept_sysbench_spellings() {
        for t in ["on", "ON", "true", "yes", "1"] {
            assert!(onoff(t).unwrap());
        }
        for t in ["off", "false", "no", "0"] {
            assert!(!onoff(t).unwrap());
        }
        assert!(onoff("maybe").is_err());
    }
}
