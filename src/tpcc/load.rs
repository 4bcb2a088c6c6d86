//! `prepare` (tpcc_load) and `cleanup`.
//!
//! prepare creates the nine tables, then loads ITEM and every warehouse as jobs shared by
//! `load_connections` connections (one thread and connection each): each table of a warehouse
//! is streamed with `LOAD DATA LOCAL INFILE` from its [`data`](super::data) generator, no file
//! on disk; servers that refuse local infile get multi-row INSERTs of the same rows. After the
//! data, the secondary indexes and foreign keys of tpcc-mysql's `add_fkey_idx.sql` are added
//! (one ALTER TABLE per table, in parallel, foreign-key checks off as in that script), and the
//! marker row is written last: a database without it was not fully loaded.

use super::data::{self, LoadParams, RowSource, Syntax};
use super::random::NuConstants;
use super::schema::{self, CREATE, CREATE_MARKER, INDEXES_AND_KEYS, TABLES};
use super::{TpccConfig, TpccError};
use crate::db::describe_error;
use crate::engine::{Controller, Observer};
use crate::rng::Rng;
use anyhow::Context;
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

/// Largest multi-row INSERT of the fallback path (bounded further by max_allowed_packet).
const MAX_BATCH_BYTES: usize = 4 << 20;

/// What `prepare` did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrepareSummary {
    pub warehouses: u32,
    /// Seconds for everything.
    pub elapsed_s: f64,
    /// Seconds spent loading rows.
    pub load_s: f64,
    /// Seconds spent adding indexes and foreign keys.
    pub index_s: f64,
    /// Rows were streamed with LOAD DATA LOCAL (false: multi-row INSERTs).
    pub load_data: bool,
    /// Order lines loaded (5–15 per order).
    pub order_lines: u64,
    /// The seed the data was generated from.
    pub seed: u64,
}

/// A current-thread tokio runtime for one loader thread.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .context("could not start the tokio runtime")
}

fn sql_err(what: impl std::fmt::Display, e: mysql_async::Error) -> anyhow::Error {
    anyhow::anyhow!("{what}: {}", describe_error(&e))
}

/// One unit of work of the load.
#[derive(Clone, Copy, Debug)]
enum Job {
    Items,
    Warehouse(u32),
    Alter(usize),
}

/// Creates and loads the tables of `cfg.warehouses` warehouses.
pub fn prepare(
    cfg: &TpccConfig,
    controller: &Controller,
    observer: &dyn Observer,
) -> anyhow::Result<PrepareSummary> {
    cfg.validate()?;
    let started = Instant::now();
    let seed = if cfg.seed == 0 {
        crate::rng::time_seed()
    } else {
        cfg.seed
    };
    let params = LoadParams {
        seed,
        nu: NuConstants::draw(&mut Rng::stream(seed, 0xC0)),
        now: crate::sys::clock::now_rfc3339()
            .replace('T', " ")
            .trim_end_matches('Z')
            .to_string(),
    };
    let rt = runtime()?;
    let mut conn = rt.block_on(create_tables(cfg, observer))?;
    let load_data = AtomicBool::new(true);
    let order_lines = std::sync::atomic::AtomicU64::new(0);
    let mut jobs = vec![Job::Items];
    jobs.extend((1..=cfg.warehouses).map(Job::Warehouse));
    let ctx = Ctx {
        cfg,
        params: &params,
        controller,
        observer,
        load_data: &load_data,
        order_lines: &order_lines,
    };
    run_jobs(&ctx, &jobs)?;
    let load_s = started.elapsed().as_secs_f64();
    observer.message("Adding indexes and foreign keys (add_fkey_idx.sql)...");
    let alters: Vec<Job> = (0..INDEXES_AND_KEYS.len()).map(Job::Alter).collect();
    run_jobs(&ctx, &alters)?;
    let index_s = started.elapsed().as_secs_f64() - load_s;
    rt.block_on(async {
        // Statistics up to date after the bulk load, as for OLTP's tables (oltp::prepare): the
        // run does not start on the optimizer's stale plan.
        conn.query_drop(format!(
            "ANALYZE TABLE {}",
            super::schema::TABLES.join(", ")
        ))
        .await
        .map_err(|e| sql_err("ANALYZE TABLE", e))?;
        conn.query_drop(format!(
            "INSERT INTO spindle_tpcc VALUES (1, {}, {seed}, {}, {}, {}, NOW(), 0)",
            cfg.warehouses, params.nu.c_last, params.nu.c_id, params.nu.ol_i_id
        ))
        .await
        .map_err(|e| sql_err("INSERT INTO spindle_tpcc", e))?;
        let _ = conn.disconnect().await;
        anyhow::Ok(())
    })?;
    Ok(PrepareSummary {
        warehouses: cfg.warehouses,
        elapsed_s: started.elapsed().as_secs_f64(),
        load_s,
        index_s,
        load_data: load_data.load(Relaxed),
        order_lines: order_lines.load(Relaxed),
        seed,
    })
}

/// Connects, refuses (or drops) existing TPC-C tables, creates the tables and the marker.
async fn create_tables(cfg: &TpccConfig, observer: &dyn Observer) -> anyhow::Result<Conn> {
    let mut conn = cfg.connection.connect(true).await?;
    let existing = schema::existing_tables(&mut conn)
        .await
        .map_err(|e| sql_err("reading the table list", e))?;
    if !existing.is_empty() {
        if !cfg.replace {
            return Err(TpccError::TablesExist {
                database: cfg.connection.database.clone(),
                tables: existing,
            }
            .into());
        }
        observer.message(&format!(
            "Dropping the TPC-C tables already in '{}'...",
            cfg.connection.database
        ));
        drop_all(&mut conn).await?;
    }
    observer.message(&format!(
        "Creating the TPC-C tables in '{}'...",
        cfg.connection.database
    ));
    conn.query_drop("SET SESSION foreign_key_checks = 0, unique_checks = 0")
        .await
        .map_err(|e| sql_err("SET foreign_key_checks", e))?;
    for (t, sql) in CREATE {
        conn.query_drop(sql)
            .await
            .map_err(|e| sql_err(format!("CREATE TABLE {t}"), e))?;
    }
    conn.query_drop(CREATE_MARKER)
        .await
        .map_err(|e| sql_err("CREATE TABLE spindle_tpcc", e))?;
    Ok(conn)
}

/// What every loader thread shares.
struct Ctx<'a> {
    cfg: &'a TpccConfig,
    params: &'a LoadParams,
    controller: &'a Controller,
    observer: &'a dyn Observer,
    /// Cleared when the server refuses LOAD DATA LOCAL: INSERTs from then on.
    load_data: &'a AtomicBool,
    order_lines: &'a std::sync::atomic::AtomicU64,
}

/// Runs `jobs` on up to `load_connections` threads; the first error stops the others.
fn run_jobs(ctx: &Ctx<'_>, jobs: &[Job]) -> anyhow::Result<()> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    let threads = (ctx.cfg.load_connections as usize).clamp(1, jobs.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let r = runtime().and_then(|rt| {
                    rt.block_on(async {
                        let mut conn = ctx.cfg.connection.connect(true).await?;
                        conn.query_drop("SET SESSION foreign_key_checks = 0, unique_checks = 0")
                            .await
                            .map_err(|e| sql_err("SET foreign_key_checks", e))?;
                        read_committed(&mut conn).await?;
                        loop {
                            let i = next.fetch_add(1, Relaxed);
                            let Some(&job) = jobs.get(i) else { break };
                            if failed.load(Relaxed) {
                                break;
                            }
                            if ctx.controller.stop_requested() {
                                anyhow::bail!(
                                    "the load was stopped before it finished: run cleanup, then prepare again"
                                );
                            }
                            run_job(&mut conn, ctx, job).await?;
                        }
                        let _ = conn.disconnect().await;
                        Ok(())
                    })
                });
                if let Err(e) = r {
                    failed.store(true, Relaxed);
                    let mut f = first_error.lock().unwrap_or_else(|p| p.into_inner());
                    f.get_or_insert(e);
                }
            });
        }
    });
    match first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

async fn run_job(conn: &mut Conn, ctx: &Ctx<'_>, job: Job) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let p = ctx.params;
    match job {
        Job::Items => {
            load(conn, ctx, "item", 0).await?;
            ctx.observer.message(&format!(
                "Loaded item: {} rows in {:.1} s",
                data::ITEMS,
                t0.elapsed().as_secs_f64()
            ));
        }
        Job::Warehouse(w) => {
            for table in WAREHOUSE_TABLES {
                load(conn, ctx, table, w)
                    .await
                    .with_context(|| format!("loading warehouse {w}"))?;
            }
            let lines = data::OrderPlan::new(p, w).total_lines();
            ctx.order_lines.fetch_add(lines, Relaxed);
            ctx.observer.message(&format!(
                "Loaded warehouse {w} of {}: stock, districts, customers, history, orders in {:.1} s",
                ctx.cfg.warehouses,
                t0.elapsed().as_secs_f64()
            ));
        }
        Job::Alter(i) => {
            let (table, sql) = INDEXES_AND_KEYS[i];
            conn.query_drop(sql)
                .await
                .map_err(|e| sql_err(format!("adding the indexes and keys of {table}"), e))?;
            ctx.observer.message(&format!(
                "Indexed {table} in {:.1} s",
                t0.elapsed().as_secs_f64()
            ));
        }
    }
    Ok(())
}

/// Fewer locks between connections loading the same table: READ COMMITTED takes no gap
/// locks. Not with statement-based binary logging, which refuses it for InnoDB writes.
async fn read_committed(conn: &mut Conn) -> anyhow::Result<()> {
    let format: Option<String> = conn
        .query_first("SELECT @@binlog_format")
        .await
        .map_err(|e| sql_err("SELECT @@binlog_format", e))?;
    if format.as_deref() != Some("STATEMENT") {
        conn.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
            .await
            .map_err(|e| sql_err("SET TRANSACTION ISOLATION LEVEL", e))?;
    }
    Ok(())
}

/// The generator of `table` for warehouse `w` (ITEM ignores `w`).
fn source(table: &str, p: &LoadParams, w: u32) -> Box<dyn RowSource> {
    match table {
        "item" => Box::new(data::Items::new(p)),
        "warehouse" => Box::new(data::Warehouses::new(p, w)),
        "district" => Box::new(data::Districts::new(p, w)),
        "stock" => Box::new(data::Stock::new(p, w)),
        "customer" => Box::new(data::Customers::new(p, w)),
        "history" => Box::new(data::History::new(p, w)),
        "orders" => Box::new(data::Orders::new(p, w)),
        "new_orders" => Box::new(data::NewOrders::new(w)),
        _ => Box::new(data::OrderLines::new(p, w)),
    }
}

/// The tables of one warehouse, in load order.
const WAREHOUSE_TABLES: [&str; 8] = [
    "warehouse",
    "district",
    "stock",
    "customer",
    "history",
    "orders",
    "new_orders",
    "order_line",
];

/// Loads the rows of `table` for warehouse `w`: LOAD DATA LOCAL while the server allows it,
/// else multi-row INSERTs.
async fn load(conn: &mut Conn, ctx: &Ctx<'_>, table: &str, w: u32) -> anyhow::Result<()> {
    let mut tries = 0;
    while ctx.load_data.load(Relaxed) {
        let src = source(table, ctx.params, w);
        conn.set_infile_handler(async move { Ok(row_stream(src)) });
        match conn
            .query_drop(format!(
                "LOAD DATA LOCAL INFILE 'tpcc-{table}' INTO TABLE {table}"
            ))
            .await
        {
            Ok(()) => return Ok(()),
            // ER_NOT_ALLOWED_COMMAND, MySQL 8's ER_CLIENT_LOCAL_FILES_DISABLED, the client's
            // CR_LOAD_DATA_LOCAL_INFILE_REJECTED: local infile is off, use INSERTs.
            Err(mysql_async::Error::Server(e)) if [1148, 3948, 2068].contains(&e.code) => {
                if ctx.load_data.swap(false, Relaxed) {
                    ctx.observer.message(
                        "The server refuses LOAD DATA LOCAL INFILE: loading with multi-row INSERTs",
                    );
                }
            }
            // Loads into one table from several connections can deadlock; the statement was
            // rolled back whole, so it is simply sent again (the rows are regenerated).
            Err(e) if retryable(&e) && tries < MAX_TRIES => tries += 1,
            Err(e) => return Err(sql_err(format!("LOAD DATA into {table}"), e)),
        }
    }
    insert_rows(conn, table, source(table, ctx.params, w)).await
}

/// Tries of one load statement that deadlocks or times out on a lock.
const MAX_TRIES: u32 = 10;

/// Deadlock or lock-wait timeout: the statement was rolled back and can be sent again.
fn retryable(e: &mysql_async::Error) -> bool {
    matches!(e, mysql_async::Error::Server(s) if s.code == 1213 || s.code == 1205)
}

/// The rows of `src` in LOAD DATA's text format, in chunks of about 256 KiB.
fn row_stream(mut src: Box<dyn RowSource>) -> mysql_async::InfileData {
    const CHUNK: usize = 256 << 10;
    let mut done = false;
    Box::pin(futures_util::stream::poll_fn(move |_| {
        if done {
            return std::task::Poll::Ready(None);
        }
        let mut buf = Vec::with_capacity(CHUNK + 2048);
        while buf.len() < CHUNK {
            if !src.next_row(Syntax::Tsv, &mut buf) {
                done = true;
                break;
            }
        }
        if buf.is_empty() {
            std::task::Poll::Ready(None)
        } else {
            std::task::Poll::Ready(Some(Ok(bytes::Bytes::from(buf))))
        }
    }))
}

/// The fallback: multi-row INSERTs of up to 4 MiB (or max_allowed_packet).
async fn insert_rows(
    conn: &mut Conn,
    table: &str,
    mut src: Box<dyn RowSource>,
) -> anyhow::Result<()> {
    let limit = crate::db::insert_batch_limit(conn, MAX_BATCH_BYTES, 4096).await;
    let head = format!("INSERT INTO {table} VALUES ");
    let mut sql = Vec::with_capacity(limit + 4096);
    let mut more = true;
    while more {
        sql.clear();
        sql.extend_from_slice(head.as_bytes());
        let mut rows = 0;
        while sql.len() < limit {
            if rows > 0 {
                sql.push(b',');
            }
            if !src.next_row(Syntax::Sql, &mut sql) {
                if rows > 0 {
                    sql.pop();
                }
                more = false;
                break;
            }
            rows += 1;
        }
        if rows > 0 {
            let text = String::from_utf8(std::mem::take(&mut sql))
                .map_err(|_| anyhow::anyhow!("generated rows for {table} are not UTF-8"))?;
            let mut tries = 0;
            loop {
                match conn.query_drop(&text).await {
                    Ok(()) => break,
                    Err(e) if retryable(&e) && tries < MAX_TRIES => tries += 1,
                    Err(e) => return Err(sql_err(format!("INSERT into {table}"), e)),
                }
            }
            sql = text.into_bytes();
        }
    }
    Ok(())
}

async fn drop_all(conn: &mut Conn) -> anyhow::Result<()> {
    let list = TABLES.join(", ");
    conn.query_drop("SET SESSION foreign_key_checks = 0")
        .await
        .map_err(|e| sql_err("SET foreign_key_checks", e))?;
    conn.query_drop(format!("DROP TABLE IF EXISTS {list}, {}", schema::MARKER))
        .await
        .map_err(|e| sql_err("DROP TABLE", e))?;
    conn.query_drop("SET SESSION foreign_key_checks = 1")
        .await
        .map_err(|e| sql_err("SET foreign_key_checks", e))
}

/// Drops the nine TPC-C tables and the marker (tpcc-mysql has no cleanup; its
/// `create_table.sql` drops them before creating).
pub fn cleanup(cfg: &TpccConfig, observer: &dyn Observer) -> anyhow::Result<()> {
    let rt = runtime()?;
    rt.block_on(async {
        let mut conn = cfg.connection.connect(true).await?;
        observer.message(&format!(
            "Dropping the TPC-C tables in '{}'...",
            cfg.connection.database
        ));
        drop_all(&mut conn).await?;
        let _ = conn.disconnect().await;
        Ok(())
    })
}
