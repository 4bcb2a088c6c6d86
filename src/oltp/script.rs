//! Which sysbench script a workload is: sysbench 1.0's own (`oltp_*.lua`, `bulk_insert.lua`,
//! `select_random_points.lua`, `select_random_ranges.lua`) and the 0.5-API scripts 1.0 ships in
//! `tests/include/oltp_legacy/` (`oltp.lua`, `select.lua`, `insert.lua`, …), their names on
//! spindle's command line and in profiles, and the traits the engine asks about (schema, tables,
//! whether they write).

use serde::{Deserialize, Serialize};

/// A sysbench OLTP script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    ReadWrite,
    ReadOnly,
    WriteOnly,
    PointSelect,
    UpdateIndex,
    UpdateNonIndex,
    Insert,
    Delete,
    /// The 0.5-API `oltp.lua` (tests/include/oltp_legacy): one table per transaction, SQL text.
    Legacy,
    /// `oltp_legacy/select.lua`: one `SELECT pad … WHERE id=N` per event, SQL text.
    LegacySelect,
    /// `oltp_legacy/oltp_simple.lua`: one `SELECT c … WHERE id=N` per event, SQL text.
    LegacySimple,
    /// `oltp_legacy/insert.lua`: one INSERT per event (id 0 or a unique id), SQL text.
    LegacyInsert,
    /// `oltp_legacy/delete.lua`: one `DELETE … WHERE id=N` per event, SQL text.
    LegacyDelete,
    /// `oltp_legacy/update_index.lua`: one `UPDATE … SET k=k+1` per event, SQL text.
    LegacyUpdateIndex,
    /// `oltp_legacy/update_non_index.lua`: one `UPDATE … SET c='…'` per event, SQL text.
    LegacyUpdateNonIndex,
    /// `bulk_insert.lua`: every thread appends rows `(n, n)` to its own table `sbtest<thread+1>`
    /// in multi-row INSERTs of up to 512 KiB; one event per row.
    BulkInsert,
    /// `oltp_legacy/bulk_insert.lua`: the same into `sbtest<thread>` (from 0), UNSIGNED columns.
    LegacyBulkInsert,
    /// `select_random_points.lua`: `SELECT id, k, c, pad FROM sbtest1 WHERE k IN (…)`, each thread
    /// in its own slice of k.
    SelectRandomPoints,
    /// `oltp_legacy/select_random_points.lua` (the legacy table).
    LegacySelectRandomPoints,
    /// `select_random_ranges.lua`: `SELECT count(k) FROM sbtest1 WHERE k BETWEEN ? AND ? OR …`.
    SelectRandomRanges,
    /// `oltp_legacy/select_random_ranges.lua` (the legacy table).
    LegacySelectRandomRanges,
}

/// The scripts of `oltp_legacy/` by file name, and their counterparts among 1.0's own scripts.
const FILES: [(&str, Workload, Option<Workload>); 10] = [
    ("oltp", Workload::Legacy, None),
    ("select", Workload::LegacySelect, None),
    ("oltp_simple", Workload::LegacySimple, None),
    ("insert", Workload::LegacyInsert, None),
    ("delete", Workload::LegacyDelete, None),
    ("update_index", Workload::LegacyUpdateIndex, None),
    ("update_non_index", Workload::LegacyUpdateNonIndex, None),
    (
        "bulk_insert",
        Workload::LegacyBulkInsert,
        Some(Workload::BulkInsert),
    ),
    (
        "select_random_points",
        Workload::LegacySelectRandomPoints,
        Some(Workload::SelectRandomPoints),
    ),
    (
        "select_random_ranges",
        Workload::LegacySelectRandomRanges,
        Some(Workload::SelectRandomRanges),
    ),
];

impl Workload {
    pub const ALL: [Workload; 21] = [
        Workload::ReadWrite,
        Workload::ReadOnly,
        Workload::WriteOnly,
        Workload::PointSelect,
        Workload::UpdateIndex,
        Workload::UpdateNonIndex,
        Workload::Insert,
        Workload::Delete,
        Workload::Legacy,
        Workload::LegacySelect,
        Workload::LegacySimple,
        Workload::LegacyInsert,
        Workload::LegacyDelete,
        Workload::LegacyUpdateIndex,
        Workload::LegacyUpdateNonIndex,
        Workload::BulkInsert,
        Workload::LegacyBulkInsert,
        Workload::SelectRandomPoints,
        Workload::LegacySelectRandomPoints,
        Workload::SelectRandomRanges,
        Workload::LegacySelectRandomRanges,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Workload::ReadWrite => "read_write",
            Workload::ReadOnly => "read_only",
            Workload::WriteOnly => "write_only",
            Workload::PointSelect => "point_select",
            Workload::UpdateIndex => "update_index",
            Workload::UpdateNonIndex => "update_non_index",
            Workload::Insert => "insert",
            Workload::Delete => "delete",
            Workload::Legacy => "legacy",
            Workload::LegacySelect => "legacy_select",
            Workload::LegacySimple => "legacy_simple",
            Workload::LegacyInsert => "legacy_insert",
            Workload::LegacyDelete => "legacy_delete",
            Workload::LegacyUpdateIndex => "legacy_update_index",
            Workload::LegacyUpdateNonIndex => "legacy_update_non_index",
            Workload::BulkInsert => "bulk_insert",
            Workload::LegacyBulkInsert => "legacy_bulk_insert",
            Workload::SelectRandomPoints => "select_random_points",
            Workload::LegacySelectRandomPoints => "legacy_select_random_points",
            Workload::SelectRandomRanges => "select_random_ranges",
            Workload::LegacySelectRandomRanges => "legacy_select_random_ranges",
        }
    }

    /// Whether its events change the tables (the legacy `oltp.lua` writes unless run with
    /// `--oltp-read-only`).
    pub fn writes(self) -> bool {
        !matches!(
            self,
            Workload::ReadOnly
                | Workload::PointSelect
                | Workload::LegacySelect
                | Workload::LegacySimple
                | Workload::SelectRandomPoints
                | Workload::LegacySelectRandomPoints
                | Workload::SelectRandomRanges
                | Workload::LegacySelectRandomRanges
        )
    }

    /// Parses spindle's names (`read_write`, `legacy_select`, `oltp_read_write`, …) and
    /// sysbench's script names and paths: `oltp_read_write.lua`, `/usr/share/sysbench/
    /// bulk_insert.lua`, and the `oltp_legacy/` scripts (`…/oltp_legacy/oltp.lua`,
    /// `select.lua`, `…/oltp_legacy/bulk_insert.lua`). `parallel_prepare.lua` is not a workload
    /// (it prepares the legacy tables: see `config::oltp::parse_words`).
    pub fn parse(s: &str) -> Option<Workload> {
        let legacy_dir = s.contains("oltp_legacy/");
        let base = s.rsplit('/').next().unwrap_or(s);
        let (base, lua) = match base.strip_suffix(".lua") {
            Some(b) => (b, true),
            None => (base, false),
        };
        if base == "oltp" || base == "oltp_legacy" {
            return Some(Workload::Legacy);
        }
        let file = FILES.iter().find(|(f, ..)| *f == base);
        if let Some(&(_, legacy, modern)) = file {
            // 1.0's own scripts are oltp_*.lua, bulk_insert.lua and select_random_*.lua: a
            // select.lua or insert.lua can only be the legacy one.
            if legacy_dir || (lua && modern.is_none()) {
                return Some(legacy);
            }
        }
        let base = base.strip_prefix("oltp_").unwrap_or(base);
        Workload::ALL.into_iter().find(|w| w.name() == base)
    }

    /// Whether the script wraps its event in BEGIN/COMMIT (given `--skip-trx`).
    pub fn uses_transactions(self, skip_trx: bool) -> bool {
        !skip_trx
            && matches!(
                self,
                Workload::ReadWrite | Workload::ReadOnly | Workload::WriteOnly | Workload::Legacy
            )
    }

    /// Whether its tables are the legacy `common.lua`'s (`INTEGER UNSIGNED`, `MAX_ROWS`).
    pub fn legacy_schema(self) -> bool {
        matches!(
            self,
            Workload::Legacy
                | Workload::LegacySelect
                | Workload::LegacySimple
                | Workload::LegacyInsert
                | Workload::LegacyDelete
                | Workload::LegacyUpdateIndex
                | Workload::LegacyUpdateNonIndex
                | Workload::LegacySelectRandomPoints
                | Workload::LegacySelectRandomRanges
        )
    }

    /// For the bulk-insert scripts, the table a (0-based) client thread fills: `sbtest<t+1>` for
    /// 1.0's script, `sbtest<t>` for the legacy one. `None` for the others.
    pub fn bulk_table(self, thread: u32) -> Option<u32> {
        match self {
            Workload::BulkInsert => Some(thread + 1),
            Workload::LegacyBulkInsert => Some(thread),
            _ => None,
        }
    }

    /// Whether the script works on `sbtest1` only (select_random_points/ranges).
    pub fn single_table(self) -> bool {
        matches!(
            self,
            Workload::SelectRandomPoints
                | Workload::LegacySelectRandomPoints
                | Workload::SelectRandomRanges
                | Workload::LegacySelectRandomRanges
        )
    }
}

impl Workload {
    /// The one statement of select_random_points/ranges (`--random-points`,
    /// `--number-of-ranges`), with `?` for its values; `None` for the other scripts.
    pub fn statement_sql(self, random_points: u32, number_of_ranges: u32) -> Option<String> {
        match self {
            Workload::SelectRandomPoints | Workload::LegacySelectRandomPoints => {
                let points = vec!["?"; random_points.max(1) as usize].join(", ");
                Some(format!(
                    "SELECT id, k, c, pad FROM sbtest1 WHERE k IN ({points})"
                ))
            }
            Workload::SelectRandomRanges | Workload::LegacySelectRandomRanges => {
                let ranges = vec!["k BETWEEN ? AND ?"; number_of_ranges.max(1) as usize];
                Some(format!(
                    "SELECT count(k) FROM sbtest1 WHERE {}",
                    ranges.join(" OR ")
                ))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_names_and_aliases() {
        for w in Workload::ALL {
            assert_eq!(Workload::parse(w.name()), Some(w));
            assert_eq!(Workload::parse(&format!("oltp_{}", w.name())), Some(w));
        }
        assert_eq!(
            Workload::parse("/usr/share/sysbench/oltp_read_only.lua"),
            Some(Workload::ReadOnly)
        );
        assert_eq!(
            Workload::parse("tests/include/oltp_legacy/oltp.lua"),
            Some(Workload::Legacy)
        );
        assert_eq!(Workload::parse("fileio"), None);
        assert_eq!(Workload::parse("parallel_prepare.lua"), None);
    }

    #[test]
    fn legacy_scripts_by_path_and_1_0_scripts_by_name() {
        let dir = "/usr/share/sysbench/tests/include/oltp_legacy/";
        let cases = [
            ("select.lua", Workload::LegacySelect),
            ("oltp_simple.lua", Workload::LegacySimple),
            ("insert.lua", Workload::LegacyInsert),
            ("delete.lua", Workload::LegacyDelete),
            ("update_index.lua", Workload::LegacyUpdateIndex),
            ("update_non_index.lua", Workload::LegacyUpdateNonIndex),
            ("bulk_insert.lua", Workload::LegacyBulkInsert),
            (
                "select_random_points.lua",
                Workload::LegacySelectRandomPoints,
            ),
            (
                "select_random_ranges.lua",
                Workload::LegacySelectRandomRanges,
            ),
        ];
        for (file, w) in cases {
            assert_eq!(Workload::parse(&format!("{dir}{file}")), Some(w), "{file}");
            assert!(w.legacy_schema() || w.bulk_table(0).is_some(), "{file}");
        }
        // Without the legacy directory: select.lua exists only there; bulk_insert.lua and
        // select_random_*.lua are 1.0's own scripts; `insert` is oltp_insert.
        assert_eq!(Workload::parse("select.lua"), Some(Workload::LegacySelect));
        assert_eq!(Workload::parse("insert.lua"), Some(Workload::LegacyInsert));
        assert_eq!(Workload::parse("insert"), Some(Workload::Insert));
        assert_eq!(
            Workload::parse("/usr/share/sysbench/bulk_insert.lua"),
            Some(Workload::BulkInsert)
        );
        assert_eq!(
            Workload::parse("/usr/share/sysbench/select_random_ranges.lua"),
            Some(Workload::SelectRandomRanges)
        );
        assert_eq!(Workload::BulkInsert.bulk_table(0), Some(1));
        assert_eq!(Workload::LegacyBulkInsert.bulk_table(0), Some(0));
        assert!(!Workload::LegacySelect.writes() && Workload::LegacyDelete.writes());
    }
}
