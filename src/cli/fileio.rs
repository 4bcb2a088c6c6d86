//! `spindle fileio` options: sysbench 1.0's, so a sysbench command line can be pasted.

use super::values::{onoff, size, typed_size, word, word_or, Format, SteadyArgs, Step};

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
    #[arg(long, value_name = "SIZE", value_parser = typed_size)]
    pub file_total_size: Option<crate::units::TypedSize>,
    /// Test mode (required for run).
    #[arg(long, value_name = "MODE", value_parser = word::<crate::fileio::TestMode>(crate::fileio::TestMode::NAMES))]
    pub file_test_mode: Option<crate::fileio::TestMode>,
    /// I/O mode: sync (pread/pwrite), async (io_uring), mmap [default: sync].
    #[arg(long, value_name = "MODE", value_parser = word::<crate::fileio::IoMode>(crate::fileio::IoMode::NAMES))]
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
    #[arg(long, value_name = "MODE", value_parser = word::<crate::fileio::FsyncMode>(crate::fileio::FsyncMode::NAMES))]
    pub file_fsync_mode: Option<crate::fileio::FsyncMode>,
    /// Merge sequential requests up to N blocks, 0 = off [default: 0].
    #[arg(long, value_name = "N")]
    pub file_merged_requests: Option<u64>,
    /// Reads per write in rndrw [default: 1.5].
    #[arg(long, value_name = "RATIO")]
    pub file_rw_ratio: Option<f64>,
    /// Requests in flight per thread in async I/O mode [default: 128].
    #[arg(long, value_name = "N")]
    pub file_async_backlog: Option<u64>,
    /// Data written by prepare and write requests: zero (as sysbench) or random
    /// (incompressible) [default: zero].
    #[arg(long, value_name = "FILL", value_parser = word::<crate::fileio::Fill>(crate::fileio::Fill::NAMES))]
    pub file_fill: Option<crate::fileio::Fill>,
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
    #[command(flatten)]
    pub steady: SteadyArgs,
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
    #[arg(long, value_name = "VERSION", value_parser = word_or::<crate::fileio::Compat>(crate::fileio::Compat::NAMES, crate::fileio::Compat::ALIASES))]
    pub compat: Option<crate::fileio::Compat>,
    /// Output format [default: text].
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Also write the JSON result document to PATH (atomically).
    #[arg(long, value_name = "PATH")]
    pub save: Option<std::path::PathBuf>,
}
