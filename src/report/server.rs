//! The database server as the figures saw it, shared by every rendering: each target's
//! effective I/O variables side by side (what the server ran with, its flavor's defaults
//! included), and how its InnoDB counters moved in each database phase.

use crate::model::{ServerInfo, SuiteResult, TargetResult};
use crate::provision::mysqld::observe::{HEADLINE_COUNTERS, IO_VARIABLES};

/// Every server of every target, in run order, with its column heading: the target's name, and
/// the flavor after it when the target ran several servers (`ssd (MySQL)`).
pub fn server_columns(s: &SuiteResult) -> Vec<(String, &TargetResult, &ServerInfo)> {
    s.targets
        .iter()
        .flat_map(|t| {
            t.servers.iter().map(move |v| {
                let heading = if t.servers.len() > 1 {
                    format!("{} ({})", t.name, v.flavor)
                } else {
                    t.name.clone()
                };
                (heading, t, v)
            })
        })
        .collect()
}

/// Rows of the effective-variables table: the variable, then one cell per server of
/// [`server_columns`] that recorded any (`None`: that server has no such variable). Only
/// variables at least one server recorded, in [`IO_VARIABLES`]' order.
pub struct EffectiveTable<'a> {
    /// The servers' column headings and records, in run order.
    pub columns: Vec<(String, &'a ServerInfo)>,
    pub rows: Vec<(&'static str, Vec<Option<&'a str>>)>,
}

/// The effective-variables table, or `None` when no server recorded any.
pub fn effective_table(s: &SuiteResult) -> Option<EffectiveTable<'_>> {
    let columns: Vec<(String, &ServerInfo)> = server_columns(s)
        .into_iter()
        .filter(|(_, _, v)| !v.effective.is_empty())
        .map(|(h, _, v)| (h, v))
        .collect();
    if columns.is_empty() {
        return None;
    }
    let rows = IO_VARIABLES
        .iter()
        .map(|&name| {
            let cells = columns
                .iter()
                .map(|(_, v)| v.effective.get(name).map(String::as_str))
                .collect::<Vec<_>>();
            (name, cells)
        })
        .filter(|(_, cells)| cells.iter().any(Option::is_some))
        .collect();
    Some(EffectiveTable { columns, rows })
}

/// One database phase's server I/O: target, phase, then the [`HEADLINE_COUNTERS`]' deltas as
/// text (`None`: that counter was not available).
pub struct IoRow<'a> {
    pub target: &'a str,
    pub phase: &'a str,
    pub cells: Vec<Option<String>>,
}

/// The column names of [`io_rows`]' cells.
pub fn io_columns() -> impl Iterator<Item = &'static str> {
    HEADLINE_COUNTERS.iter().map(|h| h.label)
}

/// Every phase that recorded the server's counters, in run order.
pub fn io_rows(s: &SuiteResult) -> Vec<IoRow<'_>> {
    s.targets
        .iter()
        .flat_map(|t| t.phases.iter().map(move |p| (t, p)))
        .filter_map(|(t, p)| {
            let io = p.server_io.as_ref()?;
            let cells = HEADLINE_COUNTERS
                .iter()
                .map(|h| {
                    let v = *io.get(h.key)?;
                    Some(if h.bytes {
                        crate::units::human_size(v)
                    } else {
                        v.to_string()
                    })
                })
                .collect();
            Some(IoRow {
                target: &t.name,
                phase: &p.name,
                cells,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PhaseResult, PhaseStatus, ServerInfo, TargetKind};

    fn target(name: &str, flavor: &str, vars: &[(&str, &str)]) -> TargetResult {
        let mut t = TargetResult::new(name, "/x", TargetKind::Directory, "");
        t.servers.push(ServerInfo {
            flavor: flavor.into(),
            version: "1.0".into(),
            settings: Default::default(),
            effective: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            peak_rss_bytes: None,
        });
        let mut p = PhaseResult::new("oltp-read_write-t4", None, PhaseStatus::Ok);
        p.server_io = Some(
            [
                ("Innodb_pages_written".to_string(), 1200),
                ("Innodb_os_log_written".to_string(), 3 << 20),
            ]
            .into(),
        );
        t.phases.push(p);
        t
    }

    #[test]
    fn flavors_side_by_side_with_what_each_lacks() {
        let s = crate::model::SuiteResult {
            schema_version: crate::model::SUITE_SCHEMA_VERSION,
            tool: crate::model::ToolInfo::spindle("1.0"),
            host: Default::default(),
            run_id: "r".into(),
            started_at: "2025-01-01T00:00:00Z".into(),
            finished_at: None,
            status: crate::model::RunStatus::Complete,
            profile: Default::default(),
            environment: None,
            governor: None,
            together: None,
            skipped: vec![],
            targets: vec![
                target(
                    "a",
                    "MariaDB",
                    &[
                        ("innodb_io_capacity", "200"),
                        ("innodb_log_file_size", "8388608"),
                    ],
                ),
                target(
                    "b",
                    "MySQL",
                    &[
                        ("innodb_io_capacity", "200"),
                        ("innodb_redo_log_capacity", "16777216"),
                    ],
                ),
            ],
        };
        let t = effective_table(&s).unwrap();
        assert_eq!(t.columns.len(), 2);
        assert_eq!(t.columns[1].0, "b");
        let names: Vec<&str> = t.rows.iter().map(|r| r.0).collect();
        assert_eq!(
            names,
            [
                "innodb_log_file_size",
                "innodb_redo_log_capacity",
                "innodb_io_capacity"
            ]
        );
        assert_eq!(t.rows[0].1, [Some("8388608"), None]);
        assert_eq!(t.rows[2].1, [Some("200"), Some("200")]);

        let io = io_rows(&s);
        assert_eq!(io.len(), 2);
        assert_eq!(io[0].cells[0].as_deref(), Some("1200"));
        assert_eq!(io[0].cells[1], None); // no fsync counter recorded
        assert_eq!(io[0].cells[2].as_deref(), Some("3.0 MiB"));
    }
}
