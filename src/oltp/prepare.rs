//! `prepare` and `cleanup`: sysbench's schema and rows, loaded in parallel (table i by thread
//! (i−1) mod threads), with the secondary index built after the data.
//!
//! The tables come out as sysbench's (same DDL, ids 1..N, k from the `--rand-type` distribution,
//! c/pad digit groups, index built after the data); the load is faster because the rows are
//! streamed with `LOAD DATA LOCAL INFILE` (no SQL parsing on the server). When the server refuses
//! local infile (MySQL 8's default) it falls back to sysbench's multi-row INSERTs, up to 4 MiB per
//! statement instead of 512 KiB. Each table uses its own random stream, so with `--rand-seed` the
//! data does not depend on `--threads`.

use super::rand::{time_seed, Dist, Rng, C_TEMPLATE, PAD_TEMPLATE};
use super::workload::Workload;
use super::OltpConfig;
use crate::engine::{Controller, Observer};
use anyhow::Context;
use mysql_async::prelude::Queryable;
use std::io::Write as _;
use std::time::Instant;

/// Largest multi-row INSERT we send (bounded further by the server's max_allowed_packet).
const MAX_BATCH_BYTES: usize = 4 << 20;

/// What `prepare` did.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PrepareSummary {
    pub tables: u32,
    pub rows_per_table: u32,
    pub elapsed_s: f64,
}

pub(super) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .context("could not start the tokio runtime")
}

/// The CREATE TABLE sysbench sends for table `n`.
pub(crate) fn create_table_sql(cfg: &OltpConfig, n: u32) -> String {
    let legacy = cfg.workload.legacy_schema();
    let int = if legacy {
        "INTEGER UNSIGNED"
    } else {
        "INTEGER"
    };
    let id_def = if cfg.auto_inc {
        format!("{int} NOT NULL AUTO_INCREMENT")
    } else {
        format!("{int} NOT NULL")
    };
    let id_index = if cfg.secondary {
        "KEY xid"
    } else {
        "PRIMARY KEY"
    };
    // The legacy common.lua puts `MAX_ROWS = <--myisam-max-rows, 1000000>` in the engine comment.
    let extra = if legacy { " MAX_ROWS = 1000000" } else { "" };
    format!(
        "CREATE TABLE sbtest{n}(\n  id {id_def},\n  k {int} DEFAULT '0' NOT NULL,\n  \
         c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  \
         {id_index} (id)\n) /*! ENGINE = {}{extra} */",
        cfg.storage_engine
    )
}

/// Creates and loads `sbtest1..N`. Progress lines go to `observer`. A stop request ends the
/// preparation before the next table (the tables made so far stay; `cleanup` drops them).
pub fn prepare(
    cfg: &OltpConfig,
    controller: &Controller,
    observer: &dyn Observer,
) -> anyhow::Result<PrepareSummary> {
    cfg.validate()?;
    let started = Instant::now();
    if cfg.workload.bulk_table(0).is_some() {
        return prepare_bulk(cfg, observer, started);
    }
    let tables = cfg.tables_used();
    // oltp_insert.lua: with --auto-inc=off the tables are created empty.
    let rows = if cfg.workload == Workload::Insert && !cfg.auto_inc {
        0
    } else {
        cfg.table_size
    };
    let seed = if cfg.rand.seed == 0 {
        time_seed()
    } else {
        cfg.rand.seed
    };
    let threads = cfg.threads.min(tables).max(1);
    let errors: Vec<anyhow::Error> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|tid| {
                s.spawn(move || -> anyhow::Result<()> {
                    let rt = runtime()?;
                    rt.block_on(async {
                        let mut conn = cfg.connection.connect(true).await?;
                        let mut n = tid + 1;
                        while n <= tables {
                            if controller.stop_requested() {
                                anyhow::bail!(
                                    "the preparation was stopped before table 'sbtest{n}'"
                                );
                            }
                            load_table(&mut conn, cfg, n, rows, seed, observer)
                                .await
                                .with_context(|| format!("prepare of table 'sbtest{n}' failed"))?;
                            n += threads;
                        }
                        let _ = conn.disconnect().await;
                        Ok(())
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| match h.join() {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e),
                Err(_) => Some(anyhow::anyhow!("a prepare thread panicked")),
            })
            .collect()
    });
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    Ok(PrepareSummary {
        tables,
        rows_per_table: rows,
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

/// bulk_insert.lua's prepare: one empty two-column table per client thread (1.0's script says
/// "Creating table"; the legacy one says nothing).
fn prepare_bulk(
    cfg: &OltpConfig,
    observer: &dyn Observer,
    started: Instant,
) -> anyhow::Result<PrepareSummary> {
    let tables = super::events::bulk_tables(cfg);
    let statements = tables.iter().map(|(n, sql)| {
        if cfg.workload == Workload::BulkInsert {
            observer.message(&format!("Creating table 'sbtest{n}'..."));
        }
        (format!("CREATE TABLE sbtest{n}"), sql.clone())
    });
    run_statements(cfg, statements.collect())?;
    Ok(PrepareSummary {
        tables: tables.len() as u32,
        rows_per_table: 0,
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

async fn load_table(
    conn: &mut mysql_async::Conn,
    cfg: &OltpConfig,
    n: u32,
    rows: u32,
    seed: u64,
    observer: &dyn Observer,
) -> anyhow::Result<()> {
    let legacy = cfg.workload.legacy_schema();
    observer.message(&format!("Creating table 'sbtest{n}'..."));
    conn.query_drop(create_table_sql(cfg, n))
        .await
        .map_err(|e| anyhow::anyhow!("CREATE TABLE sbtest{n}: {}", crate::db::describe_error(&e)))
        .map_err(|e| {
            if e.to_string().contains("1050") {
                e.context("the table already exists: run `spindle oltp ... cleanup` first")
            } else {
                e
            }
        })?;
    if rows > 0 {
        observer.message(&format!("Inserting {rows} records into 'sbtest{n}'"));
        let rng = Rng::new(seed, 10_000 + n as u64, Dist::new(&cfg.rand));
        if !(cfg.load_data && load_data(conn, cfg, n, rows, rng.clone()).await?) {
            insert_rows(conn, cfg, n, rows, rng).await?;
        }
    }
    if cfg.create_secondary {
        if legacy {
            observer.message(&format!("Creating secondary indexes on 'sbtest{n}'..."));
        } else {
            observer.message(&format!("Creating a secondary index on 'sbtest{n}'..."));
        }
        conn.query_drop(format!("CREATE INDEX k_{n} ON sbtest{n}(k)"))
            .await
            .map_err(|e| {
                anyhow::anyhow!("CREATE INDEX k_{n}: {}", crate::db::describe_error(&e))
            })?;
    }
    // The table's statistics brought up to date, as after any bulk load (sysbench leaves it to
    // the server's background statistics). Without it MySQL 9.7's read_only right after a
    // prepare of 4 × 10,000 rows ran at 507 transactions/s 20 s after the load, against 2,298
    // after ANALYZE TABLE (2,575 buffer-pool page reads per transaction against MariaDB's 47):
    // the first workload would measure the optimizer's stale plan, not the disk.
    conn.query_drop(format!("ANALYZE TABLE sbtest{n}"))
        .await
        .map_err(|e| {
            anyhow::anyhow!("ANALYZE TABLE sbtest{n}: {}", crate::db::describe_error(&e))
        })?;
    Ok(())
}

/// Streams the rows through `LOAD DATA LOCAL INFILE` (no SQL to parse: about twice as fast as
/// multi-row INSERTs). `Ok(false)` when the server does not allow local infile (MySQL 8's
/// default), so the caller falls back to INSERTs.
async fn load_data(
    conn: &mut mysql_async::Conn,
    cfg: &OltpConfig,
    n: u32,
    rows: u32,
    rng: Rng,
) -> anyhow::Result<bool> {
    let (table_size, auto_inc) = (cfg.table_size.max(1), cfg.auto_inc);
    conn.set_infile_handler(async move { Ok(row_stream(rng, rows, table_size, auto_inc)) });
    let cols = if cfg.auto_inc {
        "(k, c, pad)"
    } else {
        "(id, k, c, pad)"
    };
    let sql = format!("LOAD DATA LOCAL INFILE 'sbtest{n}' INTO TABLE sbtest{n} {cols}");
    match conn.query_drop(sql).await {
        Ok(()) => {
            if cfg.auto_inc {
                // LOAD DATA reserves auto-increment values in blocks; put the counter where
                // sysbench's INSERTs leave it (rows + 1) so SHOW CREATE TABLE is identical too.
                conn.query_drop(format!(
                    "ALTER TABLE sbtest{n} AUTO_INCREMENT = {}",
                    rows as u64 + 1
                ))
                .await
                .map_err(|e| {
                    anyhow::anyhow!(
                        "ALTER TABLE sbtest{n} AUTO_INCREMENT: {}",
                        crate::db::describe_error(&e)
                    )
                })?;
            }
            Ok(true)
        }
        // ER_NOT_ALLOWED_COMMAND, MySQL 8's ER_CLIENT_LOCAL_FILES_DISABLED, and the client-side
        // CR_LOAD_DATA_LOCAL_INFILE_REJECTED: local infile is off, use INSERTs.
        Err(mysql_async::Error::Server(e)) if [1148, 3948, 2068].contains(&e.code) => Ok(false),
        Err(e) => Err(anyhow::anyhow!(
            "LOAD DATA into sbtest{n}: {}",
            crate::db::describe_error(&e)
        )),
    }
}

/// How one row is spelled: LOAD DATA's default text format or an INSERT's value tuple.
struct RowSyntax {
    open: &'static str,
    /// After each number (id, k).
    sep: &'static str,
    /// Before c.
    quote: &'static str,
    /// Between c and pad.
    mid: &'static str,
    /// After pad.
    close: &'static str,
}

/// `id\tk\tc\tpad\n` (LOAD DATA's defaults: tab-separated fields, one line per row).
const TSV_ROW: RowSyntax = RowSyntax {
    open: "",
    sep: "\t",
    quote: "",
    mid: "\t",
    close: "\n",
};

/// `(id, k, 'c', 'pad')`, as sysbench's INSERTs.
const SQL_ROW: RowSyntax = RowSyntax {
    open: "(",
    sep: ", ",
    quote: "'",
    mid: "', '",
    close: "')",
};

/// Appends row `id` (its random k, c and pad drawn in sysbench's order) to `out`. Both load
/// paths use it, so the tables are the same whichever path the server allows.
fn write_row(
    rng: &mut Rng,
    id: u32,
    table_size: u32,
    auto_inc: bool,
    syn: &RowSyntax,
    out: &mut Vec<u8>,
) {
    let k = rng.default(1, table_size);
    out.extend_from_slice(syn.open.as_bytes());
    if !auto_inc {
        let _ = write!(out, "{id}{}", syn.sep);
    }
    let _ = write!(out, "{k}{}{}", syn.sep, syn.quote);
    rng.fill_template(C_TEMPLATE, out);
    out.extend_from_slice(syn.mid.as_bytes());
    rng.fill_template(PAD_TEMPLATE, out);
    out.extend_from_slice(syn.close.as_bytes());
}

/// The rows of one table as LOAD DATA's default text format (tab-separated lines), in chunks.
fn row_stream(mut rng: Rng, rows: u32, table_size: u32, auto_inc: bool) -> mysql_async::InfileData {
    const CHUNK: usize = 256 << 10;
    let mut i = 1u32;
    Box::pin(futures_util::stream::poll_fn(move |_| {
        if i > rows {
            return std::task::Poll::Ready(None);
        }
        let mut buf = Vec::with_capacity(CHUNK + 256);
        while i <= rows && buf.len() < CHUNK {
            write_row(&mut rng, i, table_size, auto_inc, &TSV_ROW, &mut buf);
            i += 1;
        }
        std::task::Poll::Ready(Some(Ok(bytes::Bytes::from(buf))))
    }))
}

/// sysbench's way: multi-row INSERTs (up to 4 MiB here, 512 KiB in sysbench), autocommit.
async fn insert_rows(
    conn: &mut mysql_async::Conn,
    cfg: &OltpConfig,
    n: u32,
    rows: u32,
    mut rng: Rng,
) -> anyhow::Result<()> {
    let limit = crate::db::insert_batch_limit(conn, MAX_BATCH_BYTES, 1024).await;
    let head = if cfg.auto_inc {
        format!("INSERT INTO sbtest{n}(k, c, pad) VALUES")
    } else {
        format!("INSERT INTO sbtest{n}(id, k, c, pad) VALUES")
    };
    let mut sql = String::with_capacity(limit + 512);
    sql.push_str(&head);
    let mut buf = Vec::with_capacity(256);
    let mut in_batch = 0usize;
    for i in 1..=rows {
        buf.clear();
        if in_batch > 0 {
            buf.push(b',');
        }
        write_row(
            &mut rng,
            i,
            cfg.table_size.max(1),
            cfg.auto_inc,
            &SQL_ROW,
            &mut buf,
        );
        if in_batch > 0 && sql.len() + buf.len() > limit {
            send(conn, &sql, n).await?;
            sql.clear();
            sql.push_str(&head);
            buf.remove(0);
            in_batch = 0;
        }
        sql.push_str(std::str::from_utf8(&buf).unwrap_or_default());
        in_batch += 1;
    }
    if in_batch > 0 {
        send(conn, &sql, n).await?;
    }
    Ok(())
}

async fn send(conn: &mut mysql_async::Conn, sql: &str, n: u32) -> anyhow::Result<()> {
    conn.query_drop(sql).await.map_err(|e| {
        anyhow::anyhow!(
            "multi-row INSERT into sbtest{n}: {}",
            crate::db::describe_error(&e)
        )
    })
}

/// Drops `sbtest1..N` (sysbench's `cleanup`; the bulk-insert scripts' tables per thread).
pub fn cleanup(cfg: &OltpConfig, observer: &dyn Observer) -> anyhow::Result<()> {
    let tables: Vec<u32> = match cfg.workload.bulk_table(0) {
        Some(_) => super::events::bulk_tables(cfg)
            .into_iter()
            .map(|(n, _)| n)
            .collect(),
        None => (1..=cfg.tables_used()).collect(),
    };
    let statements = tables.into_iter().map(|n| {
        observer.message(&format!("Dropping table 'sbtest{n}'..."));
        (
            format!("DROP TABLE sbtest{n}"),
            format!("DROP TABLE IF EXISTS sbtest{n}"),
        )
    });
    run_statements(cfg, statements.collect())
}

/// Sends `(what, sql)` statements in order on one connection; an error names `what`.
fn run_statements(cfg: &OltpConfig, statements: Vec<(String, String)>) -> anyhow::Result<()> {
    let rt = runtime()?;
    std::thread::scope(|s| {
        s.spawn(|| {
            rt.block_on(async {
                let mut conn = cfg.connection.connect(true).await?;
                for (what, sql) in statements {
                    conn.query_drop(sql).await.map_err(|e| {
                        anyhow::anyhow!("{what}: {}", crate::db::describe_error(&e))
                    })?;
                }
                let _ = conn.disconnect().await;
                Ok(())
            })
        })
        .join()
        .unwrap_or_else(|_| Err(anyhow::anyhow!("the database client thread panicked")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_load_paths_write_the_same_rows() {
        let rng = || Rng::new(7, 10_001, Dist::new(&crate::oltp::RandConfig::default()));
        for auto_inc in [false, true] {
            let (mut a, mut b) = (rng(), rng());
            let (mut tsv, mut sql) = (Vec::new(), Vec::new());
            for id in 1..=3 {
                write_row(&mut a, id, 1000, auto_inc, &TSV_ROW, &mut tsv);
                write_row(&mut b, id, 1000, auto_inc, &SQL_ROW, &mut sql);
                sql.push(b',');
            }
            let tsv = String::from_utf8(tsv).unwrap();
            let sql = String::from_utf8(sql).unwrap();
            let from_sql: Vec<String> = sql
                .trim_end_matches(',')
                .split("),(")
                .map(|r| r.trim_matches(|c| c == '(' || c == ')').replace("'", ""))
                .map(|r| r.replace(", ", "\t"))
                .collect();
            let from_tsv: Vec<&str> = tsv.lines().collect();
            assert_eq!(from_tsv, from_sql, "auto_inc {auto_inc}");
            let fields: Vec<&str> = from_tsv[0].split('\t').collect();
            assert_eq!(fields.len(), if auto_inc { 3 } else { 4 }, "{tsv}");
            if !auto_inc {
                assert_eq!(fields[0], "1");
            }
            // c and pad in their places (their digits are rand.rs's tests' business).
            assert_eq!(fields[fields.len() - 2].len(), C_TEMPLATE.len(), "{tsv}");
            assert_eq!(fields[fields.len() - 1].len(), PAD_TEMPLATE.len(), "{tsv}");
        }
    }

    #[test]
    fn create_table_matches_sysbench() {
        let cfg = OltpConfig::default();
        assert_eq!(
            create_table_sql(&cfg, 3),
            "CREATE TABLE sbtest3(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  \
             k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  \
             pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */"
        );
        let sec = OltpConfig {
            secondary: true,
            auto_inc: false,
            ..Default::default()
        };
        let sql = create_table_sql(&sec, 1);
        assert!(sql.contains("id INTEGER NOT NULL,"), "{sql}");
        assert!(sql.contains("KEY xid (id)"), "{sql}");
        let legacy = OltpConfig {
            workload: Workload::Legacy,
            storage_engine: "myisam".into(),
            ..Default::default()
        };
        let sql = create_table_sql(&legacy, 2);
        assert!(
            sql.contains("id INTEGER UNSIGNED NOT NULL AUTO_INCREMENT"),
            "{sql}"
        );
        assert!(
            sql.contains("k INTEGER UNSIGNED DEFAULT '0' NOT NULL"),
            "{sql}"
        );
        assert!(
            sql.ends_with("/*! ENGINE = myisam MAX_ROWS = 1000000 */"),
            "{sql}"
        );
    }
}
