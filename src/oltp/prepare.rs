//! `prepare` and `cleanup`: sysbench's schema and rows, loaded in parallel (table i by thread
//! (i−1) mod threads), with the secondary index built after the data.
//!
//! The tables come out as sysbench's (same DDL, ids 1..N, k from the `--rand-type` distribution,
//! c/pad digit groups); the load is faster because each table is loaded in ONE transaction with
//! `unique_checks=0, foreign_key_checks=0` and multi-row INSERTs of up to 4 MiB. The tables have
//! no unique secondary keys and no foreign keys, so those switches change nothing in the result;
//! on MariaDB ≥ 10.6 they let InnoDB take its bulk-load path into an empty table (MDEV-24621),
//! and one commit per table replaces one commit (and fsync) per 512 KiB statement.

use super::rand::{time_seed, Dist, Rng, C_TEMPLATE, PAD_TEMPLATE};
use super::workload::Workload;
use super::{OltpConfig, OltpObserver};
use anyhow::Context;
use mysql_async::prelude::Queryable;
use std::fmt::Write as _;
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

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("could not start the tokio runtime")
}

/// The CREATE TABLE sysbench sends for table `n`.
pub(crate) fn create_table_sql(cfg: &OltpConfig, n: u32) -> String {
    let legacy = cfg.workload == Workload::Legacy;
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
    let extra = if legacy && cfg.storage_engine.eq_ignore_ascii_case("myisam") {
        " MAX_ROWS = 1000000"
    } else {
        ""
    };
    format!(
        "CREATE TABLE sbtest{n}(\n  id {id_def},\n  k {int} DEFAULT '0' NOT NULL,\n  \
         c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  \
         {id_index} (id)\n) /*! ENGINE = {} */{extra}",
        cfg.storage_engine
    )
}

/// Creates and loads `sbtest1..N`. Progress lines go to `observer`.
pub fn prepare(cfg: &OltpConfig, observer: &dyn OltpObserver) -> anyhow::Result<PrepareSummary> {
    cfg.validate()?;
    let started = Instant::now();
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
    let threads = cfg.threads.min(cfg.tables).max(1);
    let errors: Vec<anyhow::Error> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|tid| {
                s.spawn(move || -> anyhow::Result<()> {
                    let rt = runtime()?;
                    rt.block_on(async {
                        let mut conn = cfg.connection.connect(true).await?;
                        let mut rng = Rng::new(seed, 10_000 + tid as u64, Dist::new(&cfg.rand));
                        let mut n = tid + 1;
                        while n <= cfg.tables {
                            load_table(&mut conn, cfg, n, rows, &mut rng, observer)
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
        tables: cfg.tables,
        rows_per_table: rows,
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

async fn load_table(
    conn: &mut mysql_async::Conn,
    cfg: &OltpConfig,
    n: u32,
    rows: u32,
    rng: &mut Rng,
    observer: &dyn OltpObserver,
) -> anyhow::Result<()> {
    let legacy = cfg.workload == Workload::Legacy;
    observer.message(&format!("Creating table 'sbtest{n}'..."));
    conn.query_drop(create_table_sql(cfg, n))
        .await
        .map_err(|e| {
            anyhow::anyhow!(
                "CREATE TABLE sbtest{n}: {}",
                super::conn::describe_error(&e)
            )
        })
        .map_err(|e| {
            if e.to_string().contains("1050") {
                e.context("the table already exists: run `spindle oltp ... cleanup` first")
            } else {
                e
            }
        })?;
    if rows > 0 {
        observer.message(&format!("Inserting {rows} records into 'sbtest{n}'"));
        let max_packet: usize = conn
            .query_first::<u64, _>("SELECT @@max_allowed_packet")
            .await
            .ok()
            .flatten()
            .map(|v| v as usize)
            .unwrap_or(1 << 20);
        let limit = MAX_BATCH_BYTES
            .min(max_packet.saturating_sub(1024))
            .max(64 << 10);
        conn.query_drop("SET SESSION unique_checks=0, foreign_key_checks=0")
            .await
            .map_err(|e| anyhow::anyhow!("{}", super::conn::describe_error(&e)))?;
        conn.query_drop("BEGIN")
            .await
            .map_err(|e| anyhow::anyhow!("{}", super::conn::describe_error(&e)))?;
        let head = if cfg.auto_inc {
            format!("INSERT INTO sbtest{n}(k, c, pad) VALUES")
        } else {
            format!("INSERT INTO sbtest{n}(id, k, c, pad) VALUES")
        };
        let mut sql = String::with_capacity(limit + 512);
        sql.push_str(&head);
        let mut buf = Vec::with_capacity(128);
        let mut in_batch = 0usize;
        for i in 1..=rows {
            let k = rng.default(1, cfg.table_size.max(1));
            let mark = sql.len();
            if in_batch > 0 {
                sql.push(',');
            }
            if cfg.auto_inc {
                let _ = write!(sql, "({k}, '");
            } else {
                let _ = write!(sql, "({i}, {k}, '");
            }
            buf.clear();
            rng.fill_template(C_TEMPLATE, &mut buf);
            buf.extend_from_slice(b"', '");
            rng.fill_template(PAD_TEMPLATE, &mut buf);
            buf.extend_from_slice(b"')");
            sql.push_str(std::str::from_utf8(&buf).unwrap_or_default());
            in_batch += 1;
            if sql.len() >= limit && in_batch > 1 {
                // Send everything but the row that crossed the limit; it starts the next batch.
                let row = sql[mark..].trim_start_matches(',').to_string();
                sql.truncate(mark);
                send(conn, &sql, n).await?;
                sql.clear();
                sql.push_str(&head);
                sql.push_str(&row);
                in_batch = 1;
            }
        }
        if in_batch > 0 {
            send(conn, &sql, n).await?;
        }
        conn.query_drop("COMMIT")
            .await
            .map_err(|e| anyhow::anyhow!("COMMIT: {}", super::conn::describe_error(&e)))?;
        conn.query_drop("SET SESSION unique_checks=1, foreign_key_checks=1")
            .await
            .map_err(|e| anyhow::anyhow!("{}", super::conn::describe_error(&e)))?;
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
                anyhow::anyhow!("CREATE INDEX k_{n}: {}", super::conn::describe_error(&e))
            })?;
    }
    Ok(())
}

async fn send(conn: &mut mysql_async::Conn, sql: &str, n: u32) -> anyhow::Result<()> {
    conn.query_drop(sql).await.map_err(|e| {
        anyhow::anyhow!(
            "multi-row INSERT into sbtest{n}: {}",
            super::conn::describe_error(&e)
        )
    })
}

/// Drops `sbtest1..N` (sysbench's `cleanup`).
pub fn cleanup(cfg: &OltpConfig, observer: &dyn OltpObserver) -> anyhow::Result<()> {
    let rt = runtime()?;
    std::thread::scope(|s| {
        s.spawn(|| {
            rt.block_on(async {
                let mut conn = cfg.connection.connect(true).await?;
                for n in 1..=cfg.tables {
                    observer.message(&format!("Dropping table 'sbtest{n}'..."));
                    conn.query_drop(format!("DROP TABLE IF EXISTS sbtest{n}"))
                        .await
                        .map_err(|e| {
                            anyhow::anyhow!(
                                "DROP TABLE sbtest{n}: {}",
                                super::conn::describe_error(&e)
                            )
                        })?;
                }
                let _ = conn.disconnect().await;
                Ok(())
            })
        })
        .join()
        .unwrap_or_else(|_| Err(anyhow::anyhow!("the cleanup thread panicked")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
