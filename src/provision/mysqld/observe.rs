//! What the running server really does with the disk: its effective I/O variables (read back
//! with `SHOW GLOBAL VARIABLES`, not from my.cnf, so a flavor's own defaults show too) and the
//! InnoDB counters whose change over a phase says how much it wrote, read and synced.

use super::shared::ClientInfo;
use super::start::opts;
use anyhow::Context;
use mysql_async::prelude::Queryable as _;
use std::collections::BTreeMap;

/// The server variables that shape a disk's figures. A flavor that lacks one simply has no row
/// (MariaDB 10.11 has no `innodb_redo_log_capacity`, MySQL 9.7 no `innodb_log_file_size`).
pub const IO_VARIABLES: &[&str] = &[
    "version",
    "innodb_buffer_pool_size",
    "innodb_page_size",
    "innodb_log_file_size",
    "innodb_log_files_in_group",
    "innodb_redo_log_capacity",
    "innodb_log_buffer_size",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_method",
    "innodb_doublewrite",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_flush_neighbors",
    "innodb_change_buffering",
    "innodb_adaptive_hash_index",
    "innodb_read_io_threads",
    "innodb_write_io_threads",
    "innodb_lru_scan_depth",
    "innodb_max_dirty_pages_pct",
    "innodb_max_dirty_pages_pct_lwm",
    "innodb_adaptive_flushing",
    "innodb_flush_sync",
    "innodb_use_native_aio",
    "innodb_file_per_table",
    "innodb_checksum_algorithm",
    "log_bin",
    "sync_binlog",
    "binlog_format",
    "performance_schema",
    "local_infile",
];

/// The status counters whose deltas describe a phase's I/O at the server (all cumulative).
pub const IO_COUNTERS: &[&str] = &[
    "Innodb_pages_written",
    "Innodb_pages_read",
    "Innodb_data_writes",
    "Innodb_data_written",
    "Innodb_data_reads",
    "Innodb_data_read",
    "Innodb_data_fsyncs",
    "Innodb_os_log_written",
    "Innodb_os_log_fsyncs",
    "Innodb_log_writes",
    "Innodb_dblwr_pages_written",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_pages_flushed",
    "Innodb_row_lock_waits",
    "Binlog_bytes_written",
];

/// A counter the report shows first: its status variable, what a reader calls it, and whether
/// it counts bytes (shown in binary units) rather than pages or calls.
pub struct Headline {
    pub key: &'static str,
    pub label: &'static str,
    pub bytes: bool,
}

/// The counters the report shows first.
pub const HEADLINE_COUNTERS: &[Headline] = &[
    headline("Innodb_pages_written", "pages written", false),
    headline("Innodb_data_fsyncs", "fsyncs", false),
    headline("Innodb_os_log_written", "redo bytes", true),
    headline("Innodb_buffer_pool_reads", "pages read from disk", false),
];

const fn headline(key: &'static str, label: &'static str, bytes: bool) -> Headline {
    Headline { key, label, bytes }
}

/// `SHOW GLOBAL VARIABLES` or `STATUS` for `names`, as name → value.
async fn show(
    client: &ClientInfo,
    what: &str,
    names: &[&str],
) -> anyhow::Result<BTreeMap<String, String>> {
    let mut conn =
        mysql_async::Conn::new(opts(&client.socket, &client.user, &client.password, None))
            .await
            .with_context(|| format!("could not log in on '{}'", client.socket.display()))?;
    let list = names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let rows: Vec<(String, String)> = conn
        .query(format!(
            "SHOW GLOBAL {what} WHERE Variable_name IN ({list})"
        ))
        .await
        .with_context(|| format!("SHOW GLOBAL {what} failed"))?;
    let _ = conn.disconnect().await;
    Ok(rows.into_iter().collect())
}

/// The server's effective values of [`IO_VARIABLES`].
pub async fn io_variables(client: &ClientInfo) -> anyhow::Result<BTreeMap<String, String>> {
    show(client, "VARIABLES", IO_VARIABLES).await
}

/// The current values of [`IO_COUNTERS`] (those this flavor has).
pub async fn io_counters(client: &ClientInfo) -> anyhow::Result<BTreeMap<String, u64>> {
    let rows = show(client, "STATUS", IO_COUNTERS).await?;
    Ok(rows
        .into_iter()
        .filter_map(|(k, v)| Some((k, v.trim().parse::<u64>().ok()?)))
        .collect())
}

/// `after - before` for every counter both readings have (a counter that went backwards, as
/// after a server restart, is left out rather than reported as a huge number).
pub fn counter_deltas(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter_map(|(k, a)| Some((k.clone(), a.checked_sub(*before.get(k)?)?)))
        .collect()
}

/// The most memory the server of `datadir` has held so far (its `VmHWM`, peak resident set),
/// or `None` when it is not running or its status cannot be read.
pub fn peak_rss_bytes(datadir: &std::path::Path) -> Option<u64> {
    let pid = super::status(datadir).ok()?.pid?;
    parse_vm_hwm(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

/// `VmHWM` of a `/proc/PID/status` text, in bytes.
pub fn parse_vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    let mut words = line.split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    (words.next()? == "kB").then_some(n * 1024)
}

/// Whether two spellings of a variable's value mean the same (`ON` and `1`, any case; `90`
/// and MariaDB's `90.000000`).
pub fn same_value(a: &str, b: &str) -> bool {
    if let (Ok(x), Ok(y)) = (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        return x == y;
    }
    fn canon(v: &str) -> String {
        match v.trim().to_ascii_uppercase().as_str() {
            "1" | "ON" | "TRUE" | "YES" => "ON".into(),
            "0" | "OFF" | "FALSE" | "NO" => "OFF".into(),
            other => other.to_string(),
        }
    }
    canon(a) == canon(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_skip_missing_and_backwards_counters() {
        let before: BTreeMap<String, u64> =
            [("a".into(), 10), ("b".into(), 5), ("c".into(), 7)].into();
        let after: BTreeMap<String, u64> =
            [("a".into(), 25), ("b".into(), 1), ("d".into(), 3)].into();
        let d = counter_deltas(&before, &after);
        assert_eq!(d, [("a".to_string(), 15)].into());
    }

    #[test]
    fn peak_memory_from_proc_status() {
        let text = "Name:\tmysqld\nVmPeak:\t 10765432 kB\nVmHWM:\t  1234567 kB\nVmRSS:\t 1000 kB\n";
        assert_eq!(parse_vm_hwm(text), Some(1_234_567 * 1024));
        assert_eq!(parse_vm_hwm("Name:\tx\n"), None);
    }

    #[test]
    fn values_compare_across_spellings() {
        assert!(same_value("ON", "1"));
        assert!(same_value("off", "0"));
        assert!(same_value("none", "NONE"));
        assert!(same_value("90.000000", "90"));
        assert!(!same_value("10", "0"));
        assert!(!same_value("O_DIRECT", "fsync"));
    }

    #[test]
    fn every_pinned_setting_is_read_back() {
        for p in super::super::config::PINNED_IO_SETTINGS {
            assert!(
                IO_VARIABLES.contains(&p.name),
                "{} is not read back",
                p.name
            );
        }
    }
}
