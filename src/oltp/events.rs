//! The events of the scripts with one statement per event, as sysbench 1.0 runs them: the
//! `oltp_legacy/` scripts `select.lua`, `oltp_simple.lua`, `delete.lua`, `update_index.lua`,
//! `update_non_index.lua` (SQL text, a uniform table, a `--rand-type` id), `bulk_insert.lua`
//! (1.0's and the legacy one: one row per event, sent in multi-row INSERTs of up to 512 KiB,
//! the rest when the thread ends) and `select_random_points.lua` / `select_random_ranges.lua`
//! (a prepared statement on `sbtest1`, each thread drawing k from its own slice).
//! (`insert.lua` shares oltp_insert's code in `workload`.)
//!
//! Where the legacy scripts read `num_threads`, spindle uses `--threads`, as the scripts were
//! written (sysbench 0.5). sysbench 1.0 sets that global only from the deprecated
//! `--num-threads` (1 otherwise), so with `--threads=N` its legacy bulk_insert.lua prepares one
//! table and its other threads fail, and its legacy select_random_* threads above 0 draw k
//! beyond the table.

use super::rand::{Rng, UniqueSeq, C_TEMPLATE};
use super::send::{ascii, push_arg, run_sql};
use super::workload::{Arg, Session, Tally, Workload};
use super::OltpConfig;
use std::fmt::Write as _;

/// sysbench's `BULK_PACKET_SIZE`: a multi-row INSERT is sent before it would grow past this.
const BULK_PACKET_SIZE: usize = 512 * 1024;

impl Session {
    /// One event of a one-statement script (see the module doc).
    pub(super) async fn script_event(
        &mut self,
        cfg: &OltpConfig,
        rng: &mut Rng,
        _unique: &UniqueSeq,
        tally: &mut Tally,
    ) -> Result<(), mysql_async::Error> {
        let n = cfg.table_size.max(1);
        match cfg.workload {
            Workload::LegacySelect | Workload::LegacySimple => {
                let col = if cfg.workload == Workload::LegacySelect {
                    "pad"
                } else {
                    "c"
                };
                let t = rng.uniform(1, cfg.tables);
                let id = rng.default(1, n);
                self.text(format_args!("SELECT {col} FROM sbtest{t} WHERE id={id}"));
                self.exec_text(true, tally).await
            }
            Workload::LegacyDelete | Workload::LegacyUpdateIndex => {
                let t = rng.uniform(1, cfg.tables);
                let id = rng.default(1, n);
                if cfg.workload == Workload::LegacyDelete {
                    self.text(format_args!("DELETE FROM sbtest{t} WHERE id={id}"));
                } else {
                    self.text(format_args!("UPDATE sbtest{t} SET k=k+1 WHERE id={id}"));
                }
                self.exec_text(false, tally).await
            }
            Workload::LegacyUpdateNonIndex => {
                let t = rng.uniform(1, cfg.tables);
                let mut c = std::mem::take(&mut self.c);
                c.clear();
                rng.fill_template(C_TEMPLATE, &mut c);
                let id = rng.default(1, n);
                self.text(format_args!(
                    "UPDATE sbtest{t} SET c='{}' WHERE id={id}",
                    ascii(&c)
                ));
                self.c = c;
                self.exec_text(false, tally).await
            }
            Workload::BulkInsert | Workload::LegacyBulkInsert => self.bulk_row(cfg, tally).await,
            _ => self.random_select(cfg, rng, tally).await,
        }
    }

    /// bulk_insert.lua's event: append row `(n, n)`, sending the INSERT first when the row
    /// would not fit (sysbench's `db_bulk_insert_next`).
    async fn bulk_row(
        &mut self,
        cfg: &OltpConfig,
        tally: &mut Tally,
    ) -> Result<(), mysql_async::Error> {
        if self.bulk.sql.is_empty() {
            let table = cfg.workload.bulk_table(self.thread).unwrap_or(1);
            self.bulk.sql = format!("INSERT INTO sbtest{table} VALUES");
            self.bulk.head = self.bulk.sql.len();
        }
        let n = self.bulk.cursize + 1;
        let row = format!("({n},{n})");
        let comma = usize::from(self.bulk.rows > 0);
        if self.bulk.rows > 0 && self.bulk.sql.len() + row.len() + 1 + comma > BULK_PACKET_SIZE {
            self.bulk_flush(tally).await?;
        }
        self.bulk.cursize = n;
        if self.bulk.rows > 0 {
            self.bulk.sql.push(',');
        }
        self.bulk.sql.push_str(&row);
        self.bulk.rows += 1;
        Ok(())
    }

    /// Sends the rows appended so far (nothing when there are none).
    async fn bulk_flush(&mut self, tally: &mut Tally) -> Result<(), mysql_async::Error> {
        if self.bulk.rows == 0 {
            return Ok(());
        }
        run_sql(&mut self.conn, &mut self.wire, &self.bulk.sql).await?;
        self.count(false, tally);
        self.bulk.sql.truncate(self.bulk.head);
        self.bulk.rows = 0;
        Ok(())
    }

    /// When the thread is done (sysbench's `thread_done`): the rows of a bulk INSERT not sent
    /// yet. Not an event; the statement counts as a query.
    pub async fn finish(&mut self, tally: &mut Tally) -> Result<(), mysql_async::Error> {
        self.bulk_flush(tally).await
    }

    /// select_random_points/ranges: k values from this thread's slice of `1..table_size` (the
    /// scripts' `rlen * thread_id … + rlen`, truncated to integers as sysbench's C call does).
    async fn random_select(
        &mut self,
        cfg: &OltpConfig,
        rng: &mut Rng,
        tally: &mut Tally,
    ) -> Result<(), mysql_async::Error> {
        let (lo, hi) = slice(cfg.table_size, cfg.threads, self.thread);
        let ranges = matches!(
            cfg.workload,
            Workload::SelectRandomRanges | Workload::LegacySelectRandomRanges
        );
        let mut values: Vec<i64> = Vec::new();
        if ranges {
            for _ in 0..cfg.number_of_ranges.max(1) {
                let v = rng.default(lo, hi) as i64;
                values.extend([v, v + cfg.delta as i64]);
            }
        } else {
            for _ in 0..cfg.random_points.max(1) {
                values.push(rng.default(lo, hi) as i64);
            }
        }
        if self.script.is_some() {
            let params: Vec<Arg> = values.iter().map(|&v| Arg::Int(v)).collect();
            self.exec_script(&params).await?;
        } else {
            let template = cfg
                .workload
                .statement_sql(cfg.random_points, cfg.number_of_ranges)
                .unwrap_or_default();
            self.sql.clear();
            let mut it = values.iter();
            for part in template.split('?') {
                self.sql.push_str(part);
                if let Some(&v) = it.next() {
                    push_arg(&mut self.sql, &Arg::Int(v));
                }
            }
            self.send_sql().await?;
        }
        self.count(true, tally);
        Ok(())
    }
}

/// Thread `thread`'s slice of k for select_random_*: `rlen = table_size / threads`, from
/// `rlen * thread` to `+ rlen`, truncated to integers (sysbench passes the Lua numbers to a C
/// function taking `uint32_t`).
fn slice(table_size: u32, threads: u32, thread: u32) -> (u32, u32) {
    let threads = threads.max(1);
    let rlen = table_size as f64 / threads as f64;
    let rmin = rlen * (thread % threads) as f64;
    (rmin as u32, (rmin + rlen) as u32)
}

/// The tables a bulk-insert script uses with `threads` client threads, and its CREATE TABLE for
/// each (1.0's `CREATE TABLE IF NOT EXISTS … (id INTEGER …)`; the legacy one UNSIGNED, InnoDB).
pub(super) fn bulk_tables(cfg: &OltpConfig) -> Vec<(u32, String)> {
    let legacy = cfg.workload == Workload::LegacyBulkInsert;
    (0..cfg.threads.max(1))
        .filter_map(|t| cfg.workload.bulk_table(t))
        .map(|n| {
            let mut sql = String::new();
            let int = if legacy { "INTEGER UNSIGNED" } else { "INTEGER" };
            let _ = write!(
                sql,
                "CREATE TABLE IF NOT EXISTS sbtest{n} (id {int} NOT NULL, k {int} DEFAULT '0' NOT NULL, PRIMARY KEY (id))"
            );
            if legacy {
                sql.push_str(" ENGINE = InnoDB");
            }
            (n, sql)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_select_statements_have_one_placeholder_per_value() {
        let points = OltpConfig {
            workload: Workload::SelectRandomPoints,
            ..Default::default()
        };
        let sql = points
            .workload
            .statement_sql(points.random_points, points.number_of_ranges)
            .unwrap();
        assert_eq!(sql.matches('?').count(), 10, "{sql}");
        assert!(sql.starts_with("SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?"));
        let ranges = OltpConfig {
            workload: Workload::LegacySelectRandomRanges,
            number_of_ranges: 3,
            ..Default::default()
        };
        assert_eq!(
            ranges.workload.statement_sql(ranges.random_points, ranges.number_of_ranges).unwrap(),
            "SELECT count(k) FROM sbtest1 WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ? OR k BETWEEN ? AND ?"
        );
        assert_eq!(OltpConfig::default().workload.statement_sql(10, 10), None);
    }

    #[test]
    fn each_thread_draws_from_its_own_slice() {
        assert_eq!(slice(500, 1, 0), (0, 500));
        assert_eq!(slice(500, 2, 0), (0, 250));
        assert_eq!(slice(500, 2, 1), (250, 500));
        assert_eq!(slice(1000, 3, 2), (666, 1000));
        assert_eq!(slice(10, 4, 5), (2, 5));
    }

    #[test]
    fn bulk_tables_are_per_thread() {
        let modern = OltpConfig {
            workload: Workload::BulkInsert,
            threads: 2,
            ..Default::default()
        };
        let t = bulk_tables(&modern);
        assert_eq!(t.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(
            t[0].1,
            "CREATE TABLE IF NOT EXISTS sbtest1 (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, PRIMARY KEY (id))"
        );
        let legacy = OltpConfig {
            workload: Workload::LegacyBulkInsert,
            ..modern
        };
        let t = bulk_tables(&legacy);
        assert_eq!(t.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [0, 1]);
        assert!(
            t[1].1.contains("id INTEGER UNSIGNED NOT NULL") && t[1].1.ends_with("ENGINE = InnoDB")
        );
    }
}
