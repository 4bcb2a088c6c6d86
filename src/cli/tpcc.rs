//! `spindle tpcc` options: spindle's long options, plus tpcc-mysql's short ones as `tpcc_start`
//! and `tpcc_load` take them, so a pasted tpcc-mysql command line runs (`-h` is the host, as
//! there; help is `--help`).

use super::values::{word, word_or, Format};

/// `spindle tpcc [options] prepare|run|check|cleanup`.
#[derive(Debug, clap::Args)]
#[command(
    disable_help_flag = true,
    after_help = "COMMANDS: prepare (tpcc_load), run (tpcc_start), check (consistency conditions 3.3.2.1-12), cleanup\n\
tpcc-mysql command lines work as written:\n  \
spindle tpcc prepare -h 127.0.0.1 -d tpcc -u user -p password -w 10\n  \
spindle tpcc prepare 127.0.0.1 tpcc user password 10          (the old tpcc_load form)\n  \
spindle tpcc run -h 127.0.0.1 -u user -p password -d tpcc -w 10 -c 50 -r 20 -l 300 -i 10 -f report -t trx\n\
A socket (-S/--mysql-socket) wins over host and port."
)]
pub struct TpccArgs {
    /// The command (prepare|run|check|cleanup); after prepare, optionally tpcc_load's old
    /// positional form HOST DB USER PASS WAREHOUSES; after run, tpcc_start's old form HOST DB
    /// USER PASS WAREHOUSES CONNECTIONS RAMPUP MEASURE.
    #[arg(value_name = "COMMAND [ARGS]", required = true)]
    pub words: Vec<String>,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// Warehouses to load, or to run on [default: 1].
    #[arg(short = 'w', long, value_name = "N")]
    pub warehouses: Option<u64>,
    /// Client connections during run [default: 10].
    #[arg(short = 'c', long, value_name = "N")]
    pub connections: Option<u32>,
    /// Ramp-up seconds before measuring [default: 10].
    #[arg(short = 'r', long, value_name = "SECONDS")]
    pub rampup: Option<u64>,
    /// Measured seconds [default: 20].
    #[arg(short = 'l', long, value_name = "SECONDS")]
    pub time: Option<u64>,
    /// Seconds between interval lines, 0 = none [default: 10].
    #[arg(short = 'i', long, value_name = "SECONDS")]
    pub report_interval: Option<u64>,
    #[command(flatten)]
    pub steady: super::values::SteadyArgs,
    /// Connections loading warehouses in parallel during prepare [default: 4].
    #[arg(long, value_name = "N")]
    pub load_connections: Option<u32>,
    /// prepare: drop TPC-C tables already in the database and load anew.
    #[arg(long)]
    pub replace: bool,
    /// How a transaction's home warehouse is chosen: random (per transaction, tpcc-mysql) or
    /// per-connection (connection i always uses warehouse i mod W + 1, HammerDB's model).
    #[arg(long, value_name = "MODE", default_value = "random", value_parser = word_or::<crate::tpcc::HomeWarehouse>(crate::tpcc::HomeWarehouse::NAMES, crate::tpcc::HomeWarehouse::ALIASES))]
    pub home_warehouse: crate::tpcc::HomeWarehouse,
    /// run: the statements the transactions send: tpcc-mysql (tpcc_start's, one per row
    /// operation: 5 + 4 per order line + 1 for a New-Order; a TpmC that lines up with
    /// tpcc-mysql's) or batched (spindle's fewer round trips for the same rows: less work per
    /// transaction, a higher TpmC that does not compare with tpcc-mysql's).
    #[arg(long, value_name = "SHAPE", default_value = "tpcc-mysql", value_parser = word::<crate::tpcc::Statements>(crate::tpcc::Statements::NAMES))]
    pub statements: crate::tpcc::Statements,
    /// Unix socket of the server (wins over host and port).
    #[arg(short = 'S', long, value_name = "PATH")]
    pub mysql_socket: Option<std::path::PathBuf>,
    /// Server host ('localhost' = the default unix socket); HOST:PORT is accepted.
    #[arg(short = 'h', long, value_name = "HOST")]
    pub mysql_host: Option<String>,
    /// Server TCP port [default: 3306].
    #[arg(short = 'P', long, value_name = "PORT")]
    pub mysql_port: Option<u16>,
    /// User name [default: sbtest].
    #[arg(short = 'u', long, value_name = "USER")]
    pub mysql_user: Option<String>,
    /// Password [default: empty].
    #[arg(short = 'p', long, value_name = "PASSWORD")]
    pub mysql_password: Option<String>,
    /// Database [default: tpcc].
    #[arg(short = 'd', long, value_name = "DB")]
    pub mysql_db: Option<String>,
    /// Reach the server `spindle mysqld` started on this data directory (socket, user,
    /// password and database are read from it unless given explicitly).
    #[arg(long, value_name = "PATH")]
    pub datadir: Option<std::path::PathBuf>,
    /// run: write every New-Order's response time here, as tpcc_start's -f.
    #[arg(short = 'f', long, value_name = "FILE")]
    pub report_file: Option<std::path::PathBuf>,
    /// run: write every committed New-Order's start and finish here, as tpcc_start's -t.
    #[arg(short = 't', long, value_name = "FILE")]
    pub trx_file: Option<std::path::PathBuf>,
    /// Output format: text (tpcc_start's layout) or json (the result document).
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also save the result document (JSON) to this file, atomically (run, check).
    #[arg(long, value_name = "PATH")]
    pub save: Option<std::path::PathBuf>,
    /// tpcc_start output layout: current (2016+ builds) or 2011 (the 2011-2016 builds older
    /// articles show: `n(late):p99|max` per type, raw results without avg_rt).
    #[arg(long, value_name = "LAYOUT", default_value = "current", value_parser = word::<crate::report::tpcc_text::Layout>(crate::report::tpcc_text::Layout::NAMES))]
    pub layout: crate::report::tpcc_text::Layout,
    /// Random seed for data and inputs (0 = from the clock).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Seconds a connection keeps trying to reconnect after losing the server.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub reconnect_timeout: f64,
    /// OS threads driving the connections during run (0 = one per two connections, whose
    /// replies each thread awaits together, as `spindle oltp`; tpcc_start runs one per
    /// connection).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub client_threads: u32,
    #[command(flatten)]
    pub io: super::oltp::ClientIoArgs,
    /// tpcc_load's -l/-m/-n (partial loads) and tpcc_start's -m/-o (several schemas): not
    /// supported, refused with an explanation.
    #[arg(short = 'm', hide = true, value_name = "N")]
    pub unsupported_m: Option<String>,
    #[arg(short = 'n', hide = true, value_name = "N")]
    pub unsupported_n: Option<String>,
    #[arg(short = 'o', hide = true, value_name = "N")]
    pub unsupported_o: Option<String>,
}
