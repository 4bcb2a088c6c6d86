//! `prewarm`: reads every table's rows and its secondary index into the server's buffer pool,
//! as sysbench 1.0's `prewarm` command does, so a run meant to be CPU-bound (the data set fits
//! in the buffer pool) starts with the data set in memory instead of warming up from the disk
//! during its first minutes.

use super::OltpConfig;
use crate::engine::{Controller, Observer};
use mysql_async::prelude::Queryable;
use std::time::Instant;

/// What `prewarm` did.
#[derive(Clone, Debug, PartialEq)]
pub struct PrewarmSummary {
    /// Tables read (fewer than `--tables` when a stop was requested).
    pub tables: u32,
    pub elapsed_s: f64,
}

/// The statements that read table `n` into the buffer pool: every row through the primary key
/// (sysbench's own statement), then the secondary index `k_<n>` on its own (an index-only scan)
/// when the tables have one.
pub(crate) fn prewarm_sql(cfg: &OltpConfig, n: u32) -> Vec<String> {
    let mut v = vec![format!(
        "SELECT AVG(id) FROM (SELECT * FROM sbtest{n} FORCE KEY (PRIMARY) LIMIT {}) t",
        cfg.table_size
    )];
    if cfg.secondary {
        // `--secondary`: the id index is a secondary key; the rows are the clustered index.
        v[0] = format!(
            "SELECT COUNT(*) FROM (SELECT * FROM sbtest{n} LIMIT {}) t",
            cfg.table_size
        );
    }
    if cfg.create_secondary {
        v.push(format!("SELECT COUNT(k) FROM sbtest{n} FORCE KEY (k_{n})"));
    }
    v
}

/// Reads `sbtest1..N` into the buffer pool, `--threads` tables at a time (table i by
/// connection (i−1) mod threads). A stop request ends it before the next table.
pub fn prewarm(
    cfg: &OltpConfig,
    controller: &Controller,
    observer: &dyn Observer,
) -> anyhow::Result<PrewarmSummary> {
    let started = Instant::now();
    let workers = cfg.threads.clamp(1, cfg.tables.max(1));
    let rt = super::prepare::runtime()?;
    let done = rt.block_on(async {
        let tasks = (0..workers).map(|w| async move {
            let mut conn = cfg.connection.connect(true).await?;
            let mut read = 0u32;
            for n in (1 + w..=cfg.tables).step_by(workers as usize) {
                if controller.stop_requested() {
                    break;
                }
                observer.message(&format!("Prewarming table sbtest{n}"));
                for sql in prewarm_sql(cfg, n) {
                    conn.query_drop(&sql).await.map_err(|e| {
                        anyhow::anyhow!("prewarm sbtest{n}: {}", crate::db::describe_error(&e))
                    })?;
                }
                read += 1;
            }
            let _ = conn.disconnect().await;
            anyhow::Ok(read)
        });
        futures_util::future::try_join_all(tasks).await
    })?;
    Ok(PrewarmSummary {
        tables: done.iter().sum(),
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rows_and_the_secondary_index_are_read() {
        let cfg = OltpConfig {
            table_size: 1000,
            ..OltpConfig::default()
        };
        assert_eq!(
            prewarm_sql(&cfg, 3),
            [
                "SELECT AVG(id) FROM (SELECT * FROM sbtest3 FORCE KEY (PRIMARY) LIMIT 1000) t",
                "SELECT COUNT(k) FROM sbtest3 FORCE KEY (k_3)"
            ]
        );
        let bare = OltpConfig {
            create_secondary: false,
            secondary: true,
            ..cfg
        };
        assert_eq!(
            prewarm_sql(&bare, 1),
            ["SELECT COUNT(*) FROM (SELECT * FROM sbtest1 LIMIT 1000) t"]
        );
    }
}
