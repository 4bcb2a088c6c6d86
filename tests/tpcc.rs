//! TPC-C engine and `spindle tpcc` against a real MariaDB/MySQL server started by spindle's own
//! provisioning (`tests/common`): exact row counts after prepare, the twelve consistency
//! conditions before and after a run, a row broken by hand, the transaction mix, a killed
//! server, a pasted tpcc_start command line through the real binary, and bad input.

mod common;

use common::TestServer;
use mysql_async::prelude::Queryable;
use spindle::db::ConnectionConfig;
use spindle::engine::{Controller, Observer, Silent};
use spindle::model::{Counters, Measurement, TpccCounters};
use spindle::tpcc::{self, CheckStatus, TpccConfig};
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn connection(srv: &TestServer) -> ConnectionConfig {
    ConnectionConfig {
        socket: Some(srv.client.socket.clone()),
        user: srv.client.user.clone(),
        password: srv.client.password.clone(),
        database: srv.client.database.clone(),
        ..Default::default()
    }
}

fn config(srv: &TestServer) -> TpccConfig {
    TpccConfig {
        warehouses: 1,
        connections: 2,
        rampup_s: 1,
        time_s: 4,
        report_interval_s: 2,
        load_connections: 2,
        seed: 7,
        connection: connection(srv),
        ..Default::default()
    }
}

fn counters(m: &Measurement) -> &TpccCounters {
    match &m.counters {
        Counters::Tpcc(c) => c,
        other => panic!("not TPC-C counters: {other:?}"),
    }
}

/// Collects the engine's progress lines.
#[derive(Default)]
struct Lines(Mutex<Vec<String>>);
impl Observer for Lines {
    fn message(&self, line: &str) {
        self.0.lock().unwrap().push(line.to_string());
    }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f)
        .await
        .expect("the engine thread panicked")
}

async fn prepare(cfg: &TpccConfig) -> tpcc::PrepareSummary {
    let cfg = cfg.clone();
    blocking(move || tpcc::prepare(&cfg, &Controller::new(), &Silent))
        .await
        .unwrap_or_else(|e| panic!("prepare failed: {e:#}"))
}

async fn check(cfg: &TpccConfig) -> tpcc::CheckReport {
    let cfg = cfg.clone();
    blocking(move || tpcc::check(&cfg, &Controller::new(), &Silent))
        .await
        .unwrap_or_else(|e| panic!("check failed: {e:#}"))
}

async fn run(cfg: &TpccConfig) -> Measurement {
    let cfg = cfg.clone();
    blocking(move || tpcc::run(&cfg, &Controller::new(), &Silent))
        .await
        .unwrap_or_else(|e| panic!("run failed: {e:#}"))
}

fn assert_all_pass(r: &tpcc::CheckReport, skipped_11: bool) {
    assert_eq!(r.results.len(), 12, "{r:?}");
    for c in &r.results {
        let want = if skipped_11 && c.condition == 11 {
            CheckStatus::Skipped
        } else {
            CheckStatus::Passed
        };
        assert_eq!(
            c.status,
            want,
            "{} {}: {}",
            c.clause(),
            c.warehouse,
            c.detail
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepare_check_run_check_and_a_row_broken_by_hand() {
    let srv = TestServer::start().await;
    let cfg = config(&srv);
    let t0 = Instant::now();
    let summary = prepare(&cfg).await;
    eprintln!(
        "prepare of 1 warehouse: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert!(summary.load_data, "the test server allows LOAD DATA LOCAL");
    let mut side = mysql_async::Conn::new(srv.opts()).await.unwrap();
    for (table, n) in [
        ("item", 100_000u64),
        ("warehouse", 1),
        ("district", 10),
        ("customer", 30_000),
        ("history", 30_000),
        ("orders", 30_000),
        ("new_orders", 9_000),
        ("stock", 100_000),
    ] {
        let got: u64 = side
            .query_first(format!("SELECT COUNT(*) FROM {table}"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got, n, "{table}");
    }
    let (lines, min, max): (u64, u64, u64) = side
        .query_first(
            "SELECT COUNT(*), MIN(c), MAX(c) FROM (SELECT COUNT(*) c FROM order_line \
             GROUP BY ol_w_id, ol_d_id, ol_o_id) x",
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(lines, 30_000, "every order has lines");
    assert!(min >= 5 && max <= 15, "{min}..{max}");
    assert_eq!(summary.order_lines, {
        let n: u64 = side
            .query_first("SELECT COUNT(*) FROM order_line")
            .await
            .unwrap()
            .unwrap();
        n
    });
    assert_all_pass(&check(&cfg).await, false);

    let m = run(&cfg).await;
    assert_eq!(m.error, None);
    let c = counters(&m);
    assert!(c.tpmc > 0.0, "{c:?}");
    assert_eq!(m.intervals.len(), 2);
    assert_all_pass(&check(&cfg).await, true);

    side.query_drop("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1")
        .await
        .unwrap();
    let r = check(&cfg).await;
    assert!(!r.passed());
    let failed: Vec<(u8, u32)> = r.failures().map(|f| (f.condition, f.warehouse)).collect();
    assert_eq!(failed, vec![(1, 1), (8, 1)], "{r:?}");
    side.disconnect().await.unwrap();
}
