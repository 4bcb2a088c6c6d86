//! The workloads' statements (sysbench 1.0's `oltp_*.lua` scripts and the legacy `oltp.lua`;
//! the one-statement scripts are in `events`): which statements each prepares, what one event
//! (transaction) executes, and how every statement is classified into read / write / other
//! exactly as sysbench's MySQL driver counts them.

pub use super::script::Workload;

use super::bulk::Bulk;
use super::rand::{Rng, UniqueSeq, C_TEMPLATE, PAD_TEMPLATE};
use super::send::{ascii, prepare_or_text, push_arg, run_prepared, run_sql};
use super::{OltpConfig, PsMode};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Statement};
use std::fmt::Write as _;

/// One kind of statement of `oltp_common.lua`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Q {
    Point,
    Simple,
    Sum,
    Order,
    Distinct,
    IndexUpd,
    NonIndexUpd,
    Delete,
    Insert,
}

const NQ: usize = 9;

impl Q {
    fn sql(self, t: u32) -> String {
        match self {
            Q::Point => format!("SELECT c FROM sbtest{t} WHERE id=?"),
            Q::Simple => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Q::Sum => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Q::Order => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c"),
            Q::Distinct => {
                format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Q::IndexUpd => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
            Q::NonIndexUpd => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
            Q::Delete => format!("DELETE FROM sbtest{t} WHERE id=?"),
            Q::Insert => format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
        }
    }

    fn is_select(self) -> bool {
        matches!(self, Q::Point) || self.is_range()
    }

    /// The kinds that take a range of ids (`BETWEEN ? AND ?`).
    fn is_range(self) -> bool {
        matches!(self, Q::Simple | Q::Sum | Q::Order | Q::Distinct)
    }
}

/// The statements a workload prepares on each connection (sysbench's `prepare_statements`).
fn prepared_kinds(cfg: &OltpConfig) -> Vec<Q> {
    let ranges = [Q::Simple, Q::Sum, Q::Order, Q::Distinct];
    let writes = [Q::IndexUpd, Q::NonIndexUpd, Q::Delete, Q::Insert];
    let mut v = Vec::new();
    match cfg.workload {
        Workload::ReadWrite => {
            v.push(Q::Point);
            if cfg.range_selects {
                v.extend(ranges);
            }
            v.extend(writes);
        }
        Workload::ReadOnly => {
            v.push(Q::Point);
            if cfg.range_selects {
                v.extend(ranges);
            }
        }
        Workload::WriteOnly => v.extend(writes),
        Workload::PointSelect => v.push(Q::Point),
        Workload::UpdateIndex => v.push(Q::IndexUpd),
        Workload::UpdateNonIndex => v.push(Q::NonIndexUpd),
        Workload::Delete => v.push(Q::Delete),
        _ => {}
    }
    v
}

/// Statements executed, classified as sysbench does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
}

/// A parameter of one statement.
pub(super) use crate::db::Param as Arg;

/// One benchmark connection with its prepared statements and reusable buffers.
pub(crate) struct Session {
    pub conn: Conn,
    /// The measured statements' own path to the server, when the client thread drives this
    /// connection alone (`ClientIo::Direct`, `db::wire`); `None`: through mysql_async.
    pub wire: Option<crate::db::Wire>,
    /// `[table-1][Q as usize]`, present for the prepared kinds in `--db-ps-mode=auto`.
    stmts: Vec<[Option<Statement>; NQ]>,
    begin: Option<Statement>,
    commit: Option<Statement>,
    /// The server refused BEGIN as a prepared statement (MySQL and Percona: error 1295), so
    /// this connection sends it as text, as sysbench's MySQL driver does.
    pub begin_as_text: bool,
    /// select_random_points/ranges: the one statement, prepared (`--db-ps-mode=auto`).
    pub(super) script: Option<Statement>,
    pub(super) ps: bool,
    /// SQL text of BEGIN / COMMIT for this workload (legacy MyISAM uses LOCK/UNLOCK TABLES).
    begin_sql: String,
    commit_sql: String,
    pub(super) sql: String,
    pub(super) c: Vec<u8>,
    pub(super) pad: Vec<u8>,
    pub in_trx: bool,
    /// The client thread (0-based; sysbench's `thread_id`) this connection belongs to.
    pub thread: u32,
    /// bulk_insert: the rows not yet sent (kept across a reconnect).
    pub bulk: Bulk,
}

impl Session {
    /// Wraps a fresh connection of client thread `thread` and prepares the workload's
    /// statements on it.
    pub async fn new(
        conn: Conn,
        cfg: &OltpConfig,
        thread: u32,
    ) -> Result<Session, mysql_async::Error> {
        let (begin_sql, commit_sql) = if cfg.workload == Workload::Legacy
            && cfg.storage_engine.eq_ignore_ascii_case("myisam")
        {
            let tables: Vec<String> = (1..=cfg.tables)
                .map(|i| format!("sbtest{i} WRITE"))
                .collect();
            (
                format!("LOCK TABLES {}", tables.join(" ,")),
                "UNLOCK TABLES".to_string(),
            )
        } else {
            ("BEGIN".to_string(), "COMMIT".to_string())
        };
        let mut s = Session {
            conn,
            wire: None,
            stmts: Vec::new(),
            begin: None,
            commit: None,
            begin_as_text: false,
            script: None,
            ps: cfg.ps_mode == PsMode::Auto,
            begin_sql,
            commit_sql,
            sql: String::with_capacity(512),
            c: Vec::with_capacity(128),
            pad: Vec::with_capacity(64),
            in_trx: false,
            thread,
            bulk: Bulk::default(),
        };
        s.prepare_all(cfg).await?;
        Ok(s)
    }

    /// (Re)prepares every statement, after connecting or reconnecting.
    pub async fn prepare_all(&mut self, cfg: &OltpConfig) -> Result<(), mysql_async::Error> {
        self.stmts.clear();
        self.begin = None;
        self.commit = None;
        self.script = None;
        self.in_trx = false;
        if !self.ps {
            return Ok(());
        }
        if let Some(sql) = cfg
            .workload
            .statement_sql(cfg.random_points, cfg.number_of_ranges)
        {
            self.script = Some(self.conn.prep(sql).await?);
        }
        let kinds = prepared_kinds(cfg);
        if cfg.workload != Workload::Legacy && cfg.workload.uses_transactions(cfg.skip_trx) {
            self.begin = prepare_or_text(&mut self.conn, "BEGIN").await?;
            self.begin_as_text = self.begin.is_none();
            self.commit = prepare_or_text(&mut self.conn, "COMMIT").await?;
        }
        for t in 1..=cfg.tables {
            let mut row: [Option<Statement>; NQ] = Default::default();
            for &q in &kinds {
                row[q as usize] = Some(self.conn.prep(q.sql(t)).await?);
            }
            self.stmts.push(row);
        }
        Ok(())
    }

    /// Executes one statement and classifies it.
    async fn exec(
        &mut self,
        q: Q,
        t: u32,
        args: &[Arg<'_>],
        tally: &mut Tally,
    ) -> Result<(), mysql_async::Error> {
        let stmt = if self.ps {
            self.stmts
                .get((t - 1) as usize)
                .and_then(|row| row[q as usize].as_ref())
        } else {
            None
        };
        match stmt {
            Some(stmt) => run_prepared(&mut self.conn, &mut self.wire, stmt, args).await?,
            None => {
                // Client-side "prepared statement": the same SQL with the values inlined.
                self.sql.clear();
                let template = q.sql(t);
                let mut it = args.iter();
                for part in template.split('?') {
                    self.sql.push_str(part);
                    if let Some(a) = it.next() {
                        push_arg(&mut self.sql, a);
                    }
                }
                self.send_sql().await?;
            }
        }
        self.count(q.is_select(), tally);
        Ok(())
    }

    /// Executes `self.sql` as text and classifies it.
    pub(super) async fn exec_text(
        &mut self,
        is_select: bool,
        tally: &mut Tally,
    ) -> Result<(), mysql_async::Error> {
        self.send_sql().await?;
        self.count(is_select, tally);
        Ok(())
    }

    /// Runs `self.sql` as a text query, its result dropped.
    pub(super) async fn send_sql(&mut self) -> Result<(), mysql_async::Error> {
        run_sql(&mut self.conn, &mut self.wire, &self.sql).await
    }

    /// select_random_points/ranges: the prepared statement with `args`, its result dropped.
    pub(super) async fn exec_script(&mut self, args: &[Arg<'_>]) -> Result<(), mysql_async::Error> {
        let stmt = self.script.as_ref().expect("prepared in --db-ps-mode=auto");
        run_prepared(&mut self.conn, &mut self.wire, stmt, args).await
    }

    /// Rows changed by the last statement.
    fn affected_rows(&self) -> u64 {
        match &self.wire {
            Some(w) => w.affected_rows(),
            None => self.conn.affected_rows(),
        }
    }

    #[inline]
    pub(super) fn count(&self, is_select: bool, tally: &mut Tally) {
        if is_select {
            tally.reads += 1;
        } else if self.affected_rows() > 0 {
            tally.writes += 1;
        } else {
            tally.other += 1;
        }
    }

    async fn begin(&mut self, tally: &mut Tally) -> Result<(), mysql_async::Error> {
        self.trx(true, tally).await
    }

    async fn commit(&mut self, tally: &mut Tally) -> Result<(), mysql_async::Error> {
        self.trx(false, tally).await
    }

    /// BEGIN (`open`) or COMMIT, prepared or as text, counted as sysbench counts it.
    async fn trx(&mut self, open: bool, tally: &mut Tally) -> Result<(), mysql_async::Error> {
        let (prepared, sql) = if open {
            (&self.begin, &self.begin_sql)
        } else {
            (&self.commit, &self.commit_sql)
        };
        match prepared {
            Some(s) => run_prepared(&mut self.conn, &mut self.wire, s, &[]).await?,
            None => run_sql(&mut self.conn, &mut self.wire, sql).await?,
        }
        self.in_trx = open;
        self.count(false, tally);
        Ok(())
    }

    /// Ends an open transaction after an ignorable error, so the restart begins clean. Not counted
    /// (sysbench issues no statement here; its next BEGIN would commit implicitly).
    pub async fn rollback(&mut self) -> Result<(), mysql_async::Error> {
        if self.in_trx {
            self.in_trx = false;
            let sql = if self.commit_sql == "COMMIT" {
                "ROLLBACK"
            } else {
                "UNLOCK TABLES"
            };
            run_sql(&mut self.conn, &mut self.wire, sql).await?;
        }
        Ok(())
    }

    /// Runs one event of the configured workload.
    pub async fn event(
        &mut self,
        cfg: &OltpConfig,
        rng: &mut Rng,
        unique: &UniqueSeq,
        tally: &mut Tally,
    ) -> Result<(), mysql_async::Error> {
        let n = cfg.table_size.max(1);
        let trx = cfg.workload.uses_transactions(cfg.skip_trx);
        match cfg.workload {
            Workload::ReadWrite | Workload::ReadOnly | Workload::WriteOnly => {
                if trx {
                    self.begin(tally).await?;
                }
                if cfg.workload != Workload::WriteOnly {
                    self.by_id(Q::Point, cfg.point_selects, cfg, rng, tally)
                        .await?;
                    if cfg.range_selects {
                        for (q, count) in [
                            (Q::Simple, cfg.simple_ranges),
                            (Q::Sum, cfg.sum_ranges),
                            (Q::Order, cfg.order_ranges),
                            (Q::Distinct, cfg.distinct_ranges),
                        ] {
                            self.by_id(q, count, cfg, rng, tally).await?;
                        }
                    }
                }
                if cfg.workload != Workload::ReadOnly {
                    self.by_id(Q::IndexUpd, cfg.index_updates, cfg, rng, tally)
                        .await?;
                    self.by_id(Q::NonIndexUpd, cfg.non_index_updates, cfg, rng, tally)
                        .await?;
                    self.delete_inserts(cfg, rng, tally).await?;
                }
                if trx {
                    self.commit(tally).await?;
                }
            }
            Workload::PointSelect => self.by_id(Q::Point, 1, cfg, rng, tally).await?,
            Workload::UpdateIndex => {
                self.by_id(Q::IndexUpd, cfg.index_updates, cfg, rng, tally)
                    .await?
            }
            Workload::UpdateNonIndex => {
                self.by_id(Q::NonIndexUpd, cfg.non_index_updates, cfg, rng, tally)
                    .await?
            }
            Workload::Delete => {
                let t = rng.uniform(1, cfg.tables);
                let id = rng.default(1, n);
                self.exec(Q::Delete, t, &[Arg::Int(id as i64)], tally)
                    .await?;
            }
            // oltp_insert.lua; oltp_legacy/insert.lua differs only in its ids (UNSIGNED column).
            Workload::Insert | Workload::LegacyInsert => {
                let t = rng.uniform(1, cfg.tables);
                let k = rng.default(1, n);
                self.c.clear();
                rng.fill_template(C_TEMPLATE, &mut self.c);
                self.pad.clear();
                rng.fill_template(PAD_TEMPLATE, &mut self.pad);
                let id: i64 = if cfg.auto_inc {
                    0
                } else if cfg.workload == Workload::LegacyInsert {
                    unique.next() as i64
                } else {
                    unique.next() as i64 - 2_147_483_648
                };
                self.sql.clear();
                let _ = write!(
                    self.sql,
                    "INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({id}, {k}, '{}', '{}')",
                    ascii(&self.c),
                    ascii(&self.pad)
                );
                self.exec_text(false, tally).await?;
            }
            Workload::Legacy => self.legacy_event(cfg, rng, tally).await?,
            _ => self.script_event(cfg, rng, unique, tally).await?,
        }
        Ok(())
    }

    /// `count` statements of kind `q`, all on one randomly chosen table, as sysbench's
    /// `execute_point_selects`/`execute_index_updates` (one id), `execute_range` (the range
    /// kinds: `range_size` ids from a random one) and `execute_non_index_updates` (a new `c`,
    /// then the id).
    async fn by_id(
        &mut self,
        q: Q,
        count: u32,
        cfg: &OltpConfig,
        rng: &mut Rng,
        tally: &mut Tally,
    ) -> Result<(), mysql_async::Error> {
        let t = rng.uniform(1, cfg.tables);
        let n = cfg.table_size.max(1);
        let mut c = std::mem::take(&mut self.c);
        let mut result = Ok(());
        for _ in 0..count {
            result = if q == Q::NonIndexUpd {
                c.clear();
                rng.fill_template(C_TEMPLATE, &mut c);
                let id = rng.default(1, n) as i64;
                self.exec(q, t, &[Arg::Str(&c), Arg::Int(id)], tally).await
            } else if q.is_range() {
                let id = rng.default(1, n) as i64;
                let end = id + cfg.range_size as i64 - 1;
                self.exec(q, t, &[Arg::Int(id), Arg::Int(end)], tally).await
            } else {
                let id = rng.default(1, n) as i64;
                self.exec(q, t, &[Arg::Int(id)], tally).await
            };
            if result.is_err() {
                break;
            }
        }
        self.c = c;
        result
    }

    async fn delete_inserts(
        &mut self,
        cfg: &OltpConfig,
        rng: &mut Rng,
        tally: &mut Tally,
    ) -> Result<(), mysql_async::Error> {
        let t = rng.uniform(1, cfg.tables);
        let mut c = std::mem::take(&mut self.c);
        let mut pad = std::mem::take(&mut self.pad);
        let mut result = Ok(());
        for _ in 0..cfg.delete_inserts {
            let n = cfg.table_size.max(1);
            let id = rng.default(1, n) as i64;
            let k = rng.default(1, n) as i64;
            c.clear();
            rng.fill_template(C_TEMPLATE, &mut c);
            pad.clear();
            rng.fill_template(PAD_TEMPLATE, &mut pad);
            result = self.exec(Q::Delete, t, &[Arg::Int(id)], tally).await;
            if result.is_ok() {
                result = self
                    .exec(
                        Q::Insert,
                        t,
                        &[Arg::Int(id), Arg::Int(k), Arg::Str(&c), Arg::Str(&pad)],
                        tally,
                    )
                    .await;
            }
            if result.is_err() {
                break;
            }
        }
        self.c = c;
        self.pad = pad;
        result
    }

    /// The legacy `oltp.lua` event: one table for the whole transaction, SQL text.
    async fn legacy_event(
        &mut self,
        cfg: &OltpConfig,
        rng: &mut Rng,
        tally: &mut Tally,
    ) -> Result<(), mysql_async::Error> {
        let n = cfg.table_size.max(1);
        let t = rng.uniform(1, cfg.tables);
        let trx = !cfg.skip_trx;
        if trx {
            self.begin(tally).await?;
        }
        if !cfg.legacy_write_only {
            for _ in 0..cfg.point_selects {
                let id = rng.default(1, n);
                self.text(format_args!("SELECT c FROM sbtest{t} WHERE id={id}"));
                self.exec_text(true, tally).await?;
            }
            if cfg.range_selects {
                let shapes: [(&str, &str, u32); 4] = [
                    ("SELECT c FROM", "", cfg.simple_ranges),
                    ("SELECT SUM(K) FROM", "", cfg.sum_ranges),
                    ("SELECT c FROM", " ORDER BY c", cfg.order_ranges),
                    ("SELECT DISTINCT c FROM", " ORDER BY c", cfg.distinct_ranges),
                ];
                for (head, tail, count) in shapes {
                    for _ in 0..count {
                        let start = rng.default(1, n) as u64;
                        let end = start + cfg.range_size as u64 - 1;
                        self.text(format_args!(
                            "{head} sbtest{t} WHERE id BETWEEN {start} AND {end}{tail}"
                        ));
                        self.exec_text(true, tally).await?;
                    }
                }
            }
        }
        if !cfg.legacy_read_only {
            for _ in 0..cfg.index_updates {
                let id = rng.default(1, n);
                self.text(format_args!("UPDATE sbtest{t} SET k=k+1 WHERE id={id}"));
                self.exec_text(false, tally).await?;
            }
            for _ in 0..cfg.non_index_updates {
                self.c.clear();
                rng.fill_template(C_TEMPLATE, &mut self.c);
                let id = rng.default(1, n);
                let c = std::mem::take(&mut self.c);
                self.text(format_args!(
                    "UPDATE sbtest{t} SET c='{}' WHERE id={id}",
                    ascii(&c)
                ));
                self.c = c;
                self.exec_text(false, tally).await?;
            }
            for _ in 0..cfg.delete_inserts {
                let id = rng.default(1, n);
                self.text(format_args!("DELETE FROM sbtest{t} WHERE id={id}"));
                self.exec_text(false, tally).await?;
                self.c.clear();
                rng.fill_template(C_TEMPLATE, &mut self.c);
                self.pad.clear();
                rng.fill_template(PAD_TEMPLATE, &mut self.pad);
                let k = rng.default(1, n);
                let (c, pad) = (std::mem::take(&mut self.c), std::mem::take(&mut self.pad));
                self.text(format_args!(
                    "INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({id}, {k}, '{}', '{}')",
                    ascii(&c),
                    ascii(&pad)
                ));
                self.c = c;
                self.pad = pad;
                self.exec_text(false, tally).await?;
            }
        }
        if trx {
            self.commit(tally).await?;
        }
        Ok(())
    }

    pub(super) fn text(&mut self, args: std::fmt::Arguments<'_>) {
        self.sql.clear();
        let _ = self.sql.write_fmt(args);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_write_prepares_every_kind_once() {
        let cfg = OltpConfig::default();
        assert_eq!(prepared_kinds(&cfg).len(), 9);
        let ro = OltpConfig {
            workload: Workload::ReadOnly,
            range_selects: false,
            ..Default::default()
        };
        assert_eq!(prepared_kinds(&ro), vec![Q::Point]);
    }
}
