//! `spindle oltp` options: sysbench 1.0's `oltp_*` scripts' and the legacy `oltp.lua`'s.

use super::values::{onoff, word, Format};

/// `spindle oltp`: workload and command words may appear anywhere among the options, as in
/// sysbench (`spindle oltp --threads=4 read_write run`). Defaults are sysbench 1.0.20's.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "WORKLOADS: read_write read_only write_only point_select update_index \
    update_non_index insert delete bulk_insert select_random_points select_random_ranges \
    (also as oltp_read_write, oltp_read_write.lua, /usr/share/sysbench/bulk_insert.lua, …)\n\
  sysbench 1.0's oltp_legacy scripts: legacy (oltp.lua) legacy_select (select.lua) \
    legacy_simple (oltp_simple.lua) legacy_insert legacy_delete legacy_update_index \
    legacy_update_non_index legacy_bulk_insert legacy_select_random_points \
    legacy_select_random_ranges (also as …/oltp_legacy/NAME.lua); \
    …/oltp_legacy/parallel_prepare.lua run = legacy prepare\n\
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
    /// select_random_points: values in the IN() list.
    #[arg(long, default_value_t = 10)]
    pub random_points: u32,
    /// select_random_ranges: BETWEEN ranges per SELECT.
    #[arg(long, default_value_t = 10)]
    pub number_of_ranges: u32,
    /// select_random_ranges: size of each BETWEEN range.
    #[arg(long, default_value_t = 5, alias = "random-ranges-delta")]
    pub delta: u32,
    /// Storage engine for CREATE TABLE.
    #[arg(long, default_value = "innodb", alias = "mysql-table-engine")]
    pub mysql_storage_engine: String,
    /// Random numbers distribution: uniform, gaussian, special, pareto.
    #[arg(long, default_value = "special", value_parser = word::<crate::oltp::RandType>(crate::oltp::RandType::NAMES))]
    pub rand_type: crate::oltp::RandType,
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
    #[command(flatten)]
    pub steady: super::values::SteadyArgs,
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
    #[arg(long, default_value = "auto", value_parser = word::<crate::oltp::PsMode>(crate::oltp::PsMode::NAMES))]
    pub db_ps_mode: crate::oltp::PsMode,
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
    #[command(flatten)]
    pub io: ClientIoArgs,
    /// OS threads driving the connections (0 = one per two connections, whose replies each
    /// thread awaits together; sysbench runs one per connection).
    #[arg(long, default_value_t = 0)]
    pub client_threads: u32,
    /// Output format: text (sysbench's) or json (the result document).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also save the result document (JSON) to this file, atomically.
    #[arg(long)]
    pub save: Option<std::path::PathBuf>,
}

/// The hidden flags of `oltp run` and `tpcc run` that choose how the measured statements'
/// replies are awaited, for A/B measurements.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ClientIoArgs {
    /// Keep tokio's writable wake-ups on the run's sockets (with --client-io=reactor).
    #[arg(long, hide = true)]
    pub keep_write_wakeups: bool,
    /// How the run's connections send statements and await replies: direct (the default:
    /// spindle's own protocol code, the replies awaited in the client thread's io_uring, else
    /// its epoll instance), direct-epoll (the same, always in the epoll instance) or reactor
    /// (mysql_async on tokio's epoll, the baseline).
    #[arg(long, hide = true, value_name = "direct|direct-epoll|reactor")]
    pub client_io: Option<String>,
}

impl ClientIoArgs {
    /// The way `--client-io` names; an old word is refused, naming the kept ones.
    pub fn client_io(&self) -> anyhow::Result<crate::db::ClientIo> {
        crate::db::ClientIo::from_flag(self.client_io.as_deref())
    }
}
