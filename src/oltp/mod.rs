//! The sysbench-compatible OLTP engine on mysql_async: prepare, run, cleanup for every workload.
//!
//! The engine takes a plain [`OltpConfig`] and returns plain results ([`PrepareSummary`],
//! [`crate::engine::Measurement`]); it never prints and never writes files. Progress lines
//! (`Creating table 'sbtest1'...`) and interval samples go to the caller's
//! [`crate::engine::Observer`]; a [`crate::engine::Controller`] lets another thread stop a run
//! (finish the transactions in progress) or abort it (drop them).
//!
//! Entry points: [`prepare`], [`prewarm`], [`run`], [`cleanup`]. They are blocking: each builds
//! its own tokio runtimes on its own threads, so they can be called from plain threads and
//! tests alike.
//!
//! Where spindle deliberately differs from sysbench 1.0.20 (everything else is meant to match):
//! - A lost connection (2006, 2013, 2011, 2055, I/O errors, a server shutting down) always
//!   reconnects, re-prepares and restarts the transaction, for up to `reconnect_timeout_s`;
//!   sysbench does so only when the code is listed in `--mysql-ignore-errors`. Lost connections
//!   count as ignored errors (under the client code) and, once reconnected, as reconnects.
//! - Before restarting after an ignorable error the open transaction is rolled back (not
//!   counted); sysbench's next BEGIN would implicitly commit the statements that succeeded.
//! - prepare streams rows with LOAD DATA LOCAL INFILE (same tables; see `prepare`).
//! - Same PRNG and distributions, seeded differently: `--rand-seed` makes spindle repeatable but
//!   does not reproduce sysbench's exact sequence.

mod bulk;
mod events;
mod numbers;
mod prepare;
mod prewarm;
pub mod rand;
mod run;
mod script;
mod send;
mod shared;
mod workload;

pub use crate::db::{ClientIo, ConnectionConfig, IgnoreErrors};
pub use prepare::{cleanup, prepare, PrepareSummary};
pub use prewarm::{prewarm, PrewarmSummary};
pub use rand::{RandConfig, RandType};
pub use run::run;
pub use script::Workload;

/// Bytes on disk per sbtest row (InnoDB, primary key and index `k_1`), for estimates before
/// the tables exist; the suite measures the table files once they do.
pub const BYTES_PER_ROW: u64 = 250;

/// The data set of `tables` tables of `table_size` rows, estimated.
pub fn estimated_data_bytes(tables: u32, table_size: u32) -> u64 {
    tables as u64 * table_size as u64 * BYTES_PER_ROW
}

use serde::{Deserialize, Serialize};

/// `--db-ps-mode`: server-side prepared statements (`auto`) or plain SQL text (`disable`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PsMode {
    Auto,
    Disable,
}

impl PsMode {
    pub const NAMES: &'static [&'static str] = &["auto", "disable"];
}

/// Everything one OLTP prepare/run/cleanup needs. Defaults are sysbench 1.0.20's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OltpConfig {
    /// Which script's statement mix to run.
    pub workload: Workload,
    /// `--tables`: number of tables `sbtest1..N`.
    pub tables: u32,
    /// `--table-size`: rows per table.
    pub table_size: u32,
    /// `--range-size`: width of range SELECTs.
    pub range_size: u32,
    /// `--point-selects`: point SELECTs per transaction (point_select always uses 1).
    pub point_selects: u32,
    /// `--simple-ranges`.
    pub simple_ranges: u32,
    /// `--sum-ranges`.
    pub sum_ranges: u32,
    /// `--order-ranges`.
    pub order_ranges: u32,
    /// `--distinct-ranges`.
    pub distinct_ranges: u32,
    /// `--index-updates`.
    pub index_updates: u32,
    /// `--non-index-updates`.
    pub non_index_updates: u32,
    /// `--delete-inserts`: DELETE + INSERT pairs per transaction.
    pub delete_inserts: u32,
    /// `--range-selects`: switch all four range SELECT kinds on or off.
    pub range_selects: bool,
    /// `--auto-inc`: `id` is AUTO_INCREMENT (else client-generated).
    pub auto_inc: bool,
    /// `--skip-trx`: no BEGIN/COMMIT, every statement autocommits.
    pub skip_trx: bool,
    /// `--secondary`: `KEY xid (id)` instead of `PRIMARY KEY (id)`.
    pub secondary: bool,
    /// `--create-secondary`: create `k_<n>` on `k` after loading.
    pub create_secondary: bool,
    /// `--mysql-storage-engine`.
    pub storage_engine: String,
    /// legacy only (`--oltp-read-only`): skip the write statements.
    pub legacy_read_only: bool,
    /// legacy only (`--oltp-write-only`): skip the SELECTs.
    pub legacy_write_only: bool,
    /// select_random_points (`--random-points`): values in the `IN (…)` list.
    #[serde(default = "ten")]
    pub random_points: u32,
    /// select_random_ranges (`--number-of-ranges`): `BETWEEN` ranges per SELECT.
    #[serde(default = "ten")]
    pub number_of_ranges: u32,
    /// select_random_ranges (`--delta`, the legacy script's `--random-ranges-delta`): width of
    /// each range.
    #[serde(default = "five")]
    pub delta: u32,
    /// `--rand-*`.
    pub rand: RandConfig,
    /// `--threads`: client connections (and prepare's parallelism).
    pub threads: u32,
    /// `--time`: run length limit in seconds (0 = none).
    pub time_s: u64,
    /// `--events`: limit on transactions (0 = none).
    pub events: u64,
    /// `--report-interval`: seconds between interval samples (0 = off).
    pub report_interval_s: u64,
    /// `--percentile`: sysbench percentile to report (0 = disabled).
    pub percentile: u32,
    /// `--mysql-ignore-errors`: errors that restart the transaction instead of ending the run.
    pub ignore_errors: IgnoreErrors,
    /// `--db-ps-mode`.
    pub ps_mode: PsMode,
    /// How to reach the server.
    pub connection: ConnectionConfig,
    /// How long a worker keeps trying to reconnect after losing its connection, seconds.
    pub reconnect_timeout_s: f64,
    /// prepare: stream rows with LOAD DATA LOCAL INFILE when the server allows it (false: always
    /// sysbench's multi-row INSERTs). The tables are the same either way.
    pub load_data: bool,
    /// run: stop the kernel waking the client when the server has read a request (see
    /// `db::sockets`); halves the client's wake-ups per query on unix sockets.
    pub skip_write_wakeups: bool,
    /// OS threads driving the connections (0 = one per two connections,
    /// `db::ClientIo::threads`; sysbench has one per connection); each runs a
    /// single-threaded tokio runtime with its share of the connections.
    pub client_threads: u32,
    /// run: how the measured statements are sent and their replies awaited (`direct`, the
    /// default: spindle's own protocol code, the replies awaited in the client thread's
    /// io_uring; see `db::sockets`).
    #[serde(default = "ClientIo::before_uring")]
    pub client_io: ClientIo,
}

impl Default for OltpConfig {
    fn default() -> Self {
        OltpConfig {
            workload: Workload::ReadWrite,
            tables: 1,
            table_size: 10_000,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            auto_inc: true,
            skip_trx: false,
            secondary: false,
            create_secondary: true,
            storage_engine: "innodb".into(),
            legacy_read_only: false,
            legacy_write_only: false,
            random_points: 10,
            number_of_ranges: 10,
            delta: 5,
            rand: RandConfig::default(),
            threads: 1,
            time_s: 10,
            events: 0,
            report_interval_s: 0,
            percentile: 95,
            ignore_errors: IgnoreErrors::default(),
            ps_mode: PsMode::Auto,
            connection: ConnectionConfig::default(),
            reconnect_timeout_s: 30.0,
            load_data: true,
            skip_write_wakeups: true,
            client_threads: 0,
            client_io: ClientIo::Direct,
        }
    }
}

impl OltpConfig {
    /// Checks option combinations. An error names the sysbench option it is about (without
    /// `--`) and says what is wrong; the CLI puts the flag in front, the suite the profile key.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let fail = |opt: &'static str, msg: &str| Err((opt, msg.to_string()));
        if self.threads == 0 {
            return fail("threads", "must be at least 1");
        }
        if self.tables == 0 {
            return fail("tables", "must be at least 1");
        }
        if self.tables > 1 && self.workload.single_table() && !self.workload.legacy_schema() {
            return fail(
                "tables",
                "this benchmark does not support --tables > 1 (it works on sbtest1 only, as sysbench's script)",
            );
        }
        if self.time_s == 0 && self.events == 0 {
            return fail(
                "time",
                "0 together with events 0 would run forever: set one of them",
            );
        }
        if self.percentile > 100 {
            return fail("percentile", "must be between 0 and 100");
        }
        if self.rand.spec_res >= 100 {
            return fail("rand-spec-res", "must be below 100");
        }
        if self.rand.spec_iter == 0 {
            return fail("rand-spec-iter", "must be at least 1");
        }
        if !(self.rand.pareto_h > 0.0 && self.rand.pareto_h < 1.0) {
            return fail("rand-pareto-h", "must be between 0 and 1 (exclusive)");
        }
        if self.storage_engine.is_empty()
            || !self
                .storage_engine
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return Err((
                "mysql-storage-engine",
                format!(
                    "'{}' is not an engine name (letters, digits, '_')",
                    self.storage_engine
                ),
            ));
        }
        Ok(())
    }

    /// [`check`](Self::check) as an error naming the option with its sysbench flag.
    pub fn validate(&self) -> anyhow::Result<()> {
        self.check()
            .map_err(|(opt, msg)| anyhow::anyhow!("--{opt}: {msg}"))
    }

    /// The tables `sbtest1..N` prepare makes and cleanup drops: one for select_random_points
    /// and select_random_ranges (the legacy scripts set `oltp_tables_count = 1` themselves).
    pub fn tables_used(&self) -> u32 {
        if self.workload.single_table() {
            1
        } else {
            self.tables
        }
    }

    /// Whether the run drops the sockets' writable wake-ups (`db::sockets`): not for the
    /// bulk-insert scripts, whose 512 KiB INSERTs fill the socket buffer and need them.
    pub fn drops_write_wakeups(&self) -> bool {
        self.skip_write_wakeups && self.workload.bulk_table(0).is_none()
    }

    /// The test name used in result documents (`oltp_read_write`, …, `oltp_legacy`).
    pub fn test_name(&self) -> String {
        format!("oltp_{}", self.workload.name())
    }
}

fn ten() -> u32 {
    10
}

fn five() -> u32 {
    5
}
