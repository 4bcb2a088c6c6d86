//! TPC-C engine and `spindle tpcc` against a real MariaDB/MySQL server started by spindle's own
//! provisioning (`tests/common`): exact row counts after prepare, the twelve consistency
//! conditions before and after a run, a row broken by hand, the transaction mix, a killed
//! server, a pasted tpcc_start command line through the real binary, and bad input.

mod common;

use common::TestServer;
use mysql_async::prelude::Queryable;
use spindle::engine::{Controller, Observer, Silent};
use spindle::engine::{Counters, Measurement, TpccCounters};
use spindle::tpcc::deck::{
    CustomerKey, Delivery, Input, Line, NewOrder, Payment, StockLevel, UNUSED_ITEM,
};
use spindle::tpcc::{self, CheckStatus, ClientIo, Statements, TpccConfig};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A server where one warehouse fits in memory and commits do not wait for the disk, so the
/// short runs of these tests do thousands of transactions (the tests check logic, not disks).
async fn server() -> TestServer {
    TestServer::start_with(|spec| {
        let s = &mut spec.settings;
        s.buffer_pool_size = Some(256 << 20);
        s.log_file_size = 64 << 20;
        s.binlog = false;
        s.sync_binlog = 0;
    })
    .await
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
        connection: srv.connection(),
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

/// Runs the real binary; returns (exit code, stdout, stderr).
fn spindle(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_spindle"))
        .args(args)
        .output()
        .expect("could not run spindle");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// tpcc-mysql's connection options for the test server.
fn login(srv: &TestServer) -> Vec<String> {
    let c = &srv.client;
    vec![
        "-S".into(),
        c.socket.display().to_string(),
        "-u".into(),
        c.user.clone(),
        "-p".into(),
        c.password.clone(),
        "-d".into(),
        c.database.clone(),
    ]
}

/// `spindle tpcc WORDS... <login>` with the test server's login.
fn tpcc_cli(srv: &TestServer, words: &[&str]) -> (i32, String, String) {
    let mut v: Vec<String> = vec!["tpcc".into()];
    v.extend(words.iter().map(|w| w.to_string()));
    v.extend(login(srv));
    let a: Vec<&str> = v.iter().map(String::as_str).collect();
    spindle(&a)
}

async fn count(side: &mut mysql_async::Conn, sql: &str) -> u64 {
    side.query_first(sql).await.unwrap().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepare_check_run_check_and_a_row_broken_by_hand() {
    let srv = server().await;
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
        let got = count(&mut side, &format!("SELECT COUNT(*) FROM {table}")).await;
        assert_eq!(got, n, "{table}");
    }
    let (orders, min, max): (u64, u64, u64) = side
        .query_first(
            "SELECT COUNT(*), MIN(c), MAX(c) FROM (SELECT COUNT(*) c FROM order_line \
             GROUP BY ol_w_id, ol_d_id, ol_o_id) x",
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(orders, 30_000, "every order has lines");
    assert!(min >= 5 && max <= 15, "{min}..{max}");
    let lines = count(&mut side, "SELECT COUNT(*) FROM order_line").await;
    assert_eq!(summary.order_lines, lines);
    assert_all_pass(&check(&cfg).await, false);

    // prepare again refuses the existing tables, naming the option that replaces them.
    let (code, _, err) = tpcc_cli(&srv, &["prepare"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("--replace") && err.contains("already holds TPC-C tables"),
        "{err}"
    );

    // A run: the mix, the counters, consistency afterwards (3.3.2.11 no longer applies).
    let mut run_cfg = cfg.clone();
    (
        run_cfg.connections,
        run_cfg.time_s,
        run_cfg.report_interval_s,
    ) = (4, 10, 5);
    // The default way: one connection per client thread, its statements written and its
    // rows read by spindle's own client (db::wire, db::link).
    assert_eq!(run_cfg.client_io, ClientIo::Direct);
    let m = run(&run_cfg).await;
    assert_eq!(m.error, None);
    assert!(
        m.diagnostics.iter().any(|n| n.starts_with(
            "statements sent and replies read by spindle on 4 connections (one io_uring_enter"
        )),
        "{:?}",
        m.diagnostics
    );
    let c = counters(&m);
    let done: Vec<u64> = c.per_type.iter().map(|t| t.success + t.late).collect();
    let total: u64 = done.iter().sum();
    eprintln!("mix over {total} transactions: {done:?}");
    // One deck for all connections: only the decks in progress at the two ends of the
    // window can skew the mix, by a few cards; 1 point needs about 5 cards per 500.
    assert!(
        total >= 500,
        "too few transactions to judge the mix: {done:?}"
    );
    for (n, want) in done.iter().zip([43.48, 43.48, 4.35, 4.35, 4.35]) {
        let pct = 100.0 * *n as f64 / total as f64;
        assert!(
            (pct - want).abs() <= 1.0,
            "mix {done:?}: {pct:.2} % vs {want} %"
        );
    }
    assert!((c.tpmc - done[0] as f64 * 6.0).abs() < 1e-6, "{c:?}");
    assert_eq!(m.intervals.len(), 2);
    assert!(c.per_type[0].p99_ms >= c.per_type[0].p50_ms && c.per_type[0].p50_ms > 0.0);
    let delivered = count(
        &mut side,
        "SELECT COUNT(*) FROM orders WHERE o_id > 2100 AND o_carrier_id IS NOT NULL",
    )
    .await;
    assert!(delivered > 0, "no Delivery delivered anything");
    let bc = count(
        &mut side,
        "SELECT COUNT(*) FROM customer WHERE c_credit = 'BC' AND c_data LIKE '% | %'",
    )
    .await;
    let gc = count(
        &mut side,
        "SELECT COUNT(*) FROM customer WHERE c_credit = 'GC' AND c_data LIKE '% | %'",
    )
    .await;
    assert!(
        bc > 0 && gc == 0,
        "payments must prefix C_DATA of BC customers only: {bc} {gc}"
    );
    assert_all_pass(&check(&cfg).await, true);

    // The batched statements keep every condition too, here through tokio's reactor (two
    // connections per client thread); tpcc_start's through spindle's client waiting in each
    // thread's epoll instance (--client-io=direct-epoll, one connection per thread) and with
    // two connections per thread, through the thread's own io_uring (db::sharedring).
    for (statements, io, threads, note, time_s) in [
        (
            Statements::Batched,
            ClientIo::Reactor,
            0,
            "writable wake-ups dropped on 4 client sockets",
            4,
        ),
        (
            Statements::TpccMysql,
            ClientIo::DirectEpoll,
            0,
            "statements sent and replies read by spindle on 4 connections (one send and one \
             receive per statement, one wait in the client thread's epoll instance",
            3,
        ),
        (
            Statements::TpccMysql,
            ClientIo::Direct,
            2,
            "statements sent and replies read by spindle on 4 connections (one io_uring_enter \
             on the client thread's io_uring",
            3,
        ),
    ] {
        (run_cfg.statements, run_cfg.client_io, run_cfg.time_s) = (statements, io, time_s);
        run_cfg.client_threads = threads;
        let m = run(&run_cfg).await;
        assert_eq!(m.error, None);
        assert!(
            m.diagnostics.iter().any(|n| n.starts_with(note)),
            "{io:?}: {:?}",
            m.diagnostics
        );
        assert!(counters(&m).per_type[0].success > 0, "{m:?}");
        assert_all_pass(&check(&cfg).await, true);
    }

    statements_at_the_server(&srv).await;
    assert_all_pass(&check(&cfg).await, true);
    pasted_tpcc_start_line(&srv).await;

    // One row altered by hand: the engine's report and the CLI name condition and warehouse.
    side.query_drop("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1")
        .await
        .unwrap();
    let r = check(&cfg).await;
    assert!(!r.passed());
    let failed: Vec<(u8, u32)> = r.failures().map(|f| (f.condition, f.warehouse)).collect();
    assert_eq!(failed, vec![(1, 1), (8, 1)], "{r:?}");
    let (code, out, _) = tpcc_cli(&srv, &["check"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("3.3.2.1   warehouse 1: FAILED"), "{out}");
    assert!(
        out.contains("W_YTD 300000.01 <> sum(D_YTD)") || out.contains("<> sum(D_YTD)"),
        "{out}"
    );
    assert!(out.contains("FAILED: 2 of 11 checks"), "{out}");

    bad_input_with_a_server(&srv).await;
    side.disconnect().await.unwrap();
}

/// The server's statement counters of `conn`'s session: Com_stmt_execute, and the statements
/// by kind (SELECT, INSERT (… SELECT), UPDATE, DELETE (multi-table too), COMMIT, ROLLBACK; a prepared statement counts
/// under its kind too, a text COMMIT as tpcc-mysql's `mysql_commit` sends only there).
async fn session_counts(conn: &mut mysql_async::Conn) -> (u64, u64) {
    let rows: Vec<(String, u64)> = conn
        .query(
            "SHOW SESSION STATUS WHERE Variable_name IN ('Com_stmt_execute', 'Com_select', \
             'Com_insert', 'Com_insert_select', 'Com_update', 'Com_update_multi', 'Com_delete', \
             'Com_delete_multi', 'Com_commit', 'Com_rollback')",
        )
        .await
        .unwrap();
    let execute = rows.iter().find(|r| r.0 == "Com_stmt_execute").unwrap().1;
    let by_kind = rows
        .iter()
        .filter(|r| r.0 != "Com_stmt_execute")
        .map(|r| r.1)
        .sum();
    (execute, by_kind)
}

/// Statements one transaction sends, counted by the server: (executions, by kind).
async fn counted(probe: &mut tpcc::Probe, input: &Input) -> ((u64, u64), bool) {
    let before = session_counts(probe.conn()).await;
    let committed = probe.execute(input).await.unwrap_or_else(|e| panic!("{e}"));
    let after = session_counts(probe.conn()).await;
    ((after.0 - before.0, after.1 - before.1), committed)
}

fn new_order(items: &[u32]) -> Input {
    let mut lines: Vec<Line> = items
        .iter()
        .map(|&item| Line {
            item,
            supply_w: 1,
            quantity: 3,
        })
        .collect();
    lines.sort_by_key(|l| (l.supply_w, l.item));
    Input::NewOrder(NewOrder {
        w: 1,
        d: 2,
        c: 17,
        rollback: items.contains(&UNUSED_ITEM),
        all_local: true,
        lines,
    })
}

/// At the server, the tpcc-mysql shape sends tpcc_start's statements per transaction
/// (neword.c: 5 + 4 per line + the commit; an order with the unused item stops at its SELECT
/// and rolls back; payment.c, delivery.c, slev.c likewise), the batched shape its nine.
async fn statements_at_the_server(srv: &TestServer) {
    let mut side = mysql_async::Conn::new(srv.opts()).await.unwrap();
    let mut rw = tpcc::Probe::new(&srv.connection(), Statements::TpccMysql)
        .await
        .unwrap();
    let mut batched = tpcc::Probe::new(&srv.connection(), Statements::Batched)
        .await
        .unwrap();
    for items in [
        vec![11, 12, 13, 14, 15],
        (101..=115).collect::<Vec<u32>>(),
        vec![7; 9],
    ] {
        let n = items.len() as u64;
        let (c, ok) = counted(&mut rw, &new_order(&items)).await;
        assert!(ok);
        assert_eq!(
            c,
            (5 + 4 * n + 1, 5 + 4 * n + 1),
            "tpcc-mysql shape, {n} lines"
        );
        let (c, ok) = counted(&mut batched, &new_order(&items)).await;
        assert!(ok);
        assert_eq!(c, (9, 9), "batched, {n} lines in one warehouse");
    }
    let mut items: Vec<u32> = (201..=209).collect();
    items.push(UNUSED_ITEM);
    let (c, ok) = counted(&mut rw, &new_order(&items)).await;
    assert!(!ok, "the unused item rolls back");
    assert_eq!(
        c,
        (5 + 4 * 9 + 1 + 1, 5 + 4 * 9 + 1 + 1),
        "up to the unused item, then ROLLBACK"
    );
    let (c, ok) = counted(&mut batched, &new_order(&items)).await;
    assert!(!ok);
    assert_eq!(c, (6, 6), "header, items, ROLLBACK");

    // Payment by id: 4 + customer + update (+ C_DATA read for "BC") + history + commit.
    let credit: String = side
        .query_first("SELECT c_credit FROM customer WHERE c_w_id = 1 AND c_d_id = 3 AND c_id = 5")
        .await
        .unwrap()
        .unwrap();
    let pay = Input::Payment(Payment {
        w: 1,
        d: 3,
        c_w: 1,
        c_d: 3,
        customer: CustomerKey::Id(5),
        amount_cents: 1234,
    });
    let (c, _) = counted(&mut rw, &pay).await;
    let want = 8 + (credit == "BC") as u64;
    assert_eq!(c, (want, want), "Payment by id, {credit}");
    // Stock-Level: district, distinct items, one count per item, commit.
    let next: u32 = side
        .query_first("SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4")
        .await
        .unwrap()
        .unwrap();
    let distinct = count(
        &mut side,
        &format!(
            "SELECT COUNT(DISTINCT ol_i_id) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 4 \
             AND ol_o_id < {next} AND ol_o_id >= {next} - 20"
        ),
    )
    .await;
    let sl = Input::StockLevel(StockLevel {
        w: 1,
        d: 4,
        threshold: 15,
    });
    let (c, _) = counted(&mut rw, &sl).await;
    assert_eq!(c, (3 + distinct, 3 + distinct), "Stock-Level");
    // Delivery: per district with a new order, 7 statements and a commit.
    let with_orders = count(
        &mut side,
        "SELECT COUNT(DISTINCT no_d_id) FROM new_orders WHERE no_w_id = 1",
    )
    .await;
    let (c, _) = counted(&mut rw, &Input::Delivery(Delivery { w: 1, carrier: 3 })).await;
    assert_eq!(c.0, 8 * with_orders, "Delivery");
    side.disconnect().await.unwrap();
}

/// Seed 003's tpcc_start line, with the test server's login, a socket and a short time.
async fn pasted_tpcc_start_line(srv: &TestServer) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report");
    let trx = dir.path().join("trx");
    let c = &srv.client;
    let line = format!(
        "tpcc run -h 127.0.0.1 -u {} -p {} -d {} -w 1 -c 4 -r 1 -l 4 -f {} -i 2 -t {} -S {}",
        c.user,
        c.password,
        c.database,
        report.display(),
        trx.display(),
        c.socket.display()
    );
    let argv: Vec<&str> = line.split(' ').collect();
    let (code, out, err) = spindle(&argv);
    assert_eq!(code, 0, "{out}\n{err}");
    for want in [
        "<Parameters>",
        "  [warehouse]: 1\n",
        " [connection]: 4\n",
        "no keying/think time",
        " [statements]: tpcc-mysql (tpcc_start's statements, one per row operation)\n",
        "\nRAMP-UP TIME.(1 sec.)\n",
        "\nMEASURING START.\n",
        "\n<Raw Results>\n",
        "\n<Raw Results2(sum ver.)>\n",
        "\n<Constraint Check> (all must be [OK])\n",
        "\n<TpmC>\n",
        " in 4 sec.\n",
        "<spindle: response times per type>",
        "tpmTotal",
        "           NOPM: ",
        "     efficiency: ",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    let intervals: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("   2, trx: ") || l.starts_with("   4, trx: "))
        .collect();
    assert_eq!(intervals.len(), 2, "{out}");
    assert!(!out.to_lowercase().contains("nan"), "{out}");
    let report = std::fs::read_to_string(&report).unwrap();
    let first = report.lines().next().expect("an empty -f file");
    let f: Vec<&str> = first.split(' ').collect();
    assert!(
        f.len() == 2 && f[0].parse::<u64>().is_ok() && f[1].parse::<f64>().is_ok(),
        "{first}"
    );
    let trx = std::fs::read_to_string(&trx).unwrap();
    assert!(trx.starts_with("t_num: "), "{trx}");
    assert!(trx.lines().next().unwrap().contains(" finish: ") && trx.contains(" start: "));

    // The 2011–2016 layout of seed 003, and the JSON document.
    let save = dir.path().join("r.json");
    let save_s = save.display().to_string();
    let (code, out, err) = tpcc_cli(
        srv,
        &[
            "run", "-w", "1", "-c", "2", "-r", "0", "-l", "2", "-i", "1", "--layout", "2011",
            "--save", &save_s,
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("   1, "))
        .expect("an interval line");
    assert_eq!(line.matches("):").count(), 5, "{line}");
    let doc =
        spindle::model::BenchResult::from_json(&std::fs::read_to_string(&save).unwrap(), "r.json")
            .unwrap();
    assert_eq!(doc.test, "tpcc");
    assert!(matches!(doc.options, spindle::model::TestOptions::Tpcc(_)));
    assert!(matches!(doc.counters, Counters::Tpcc(_)));
}

/// Wrong credentials, too many warehouses, no tables: clear errors naming the option.
async fn bad_input_with_a_server(srv: &TestServer) {
    let c = &srv.client;
    let sock = c.socket.display().to_string();
    let (code, _, err) = spindle(&[
        "tpcc",
        "run",
        "-S",
        &sock,
        "-u",
        &c.user,
        "-p",
        "wrong",
        "-d",
        &c.database,
        "-l",
        "1",
    ]);
    assert_ne!(code, 0);
    assert!(
        err.contains("access denied") && err.contains("--mysql-password"),
        "{err}"
    );
    let (code, _, err) = tpcc_cli(srv, &["run", "-w", "2", "-l", "1"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("--warehouses (-w)") && err.contains("holds 1 warehouse"),
        "{err}"
    );
    assert_eq!(tpcc_cli(srv, &["cleanup"]).0, 0);
    let (code, _, err) = tpcc_cli(srv, &["run", "-l", "1"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("--mysql-db (-d)") && err.contains("spindle tpcc prepare"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_ends_the_run_with_an_error_and_a_partial_result() {
    let srv = server().await;
    let mut cfg = config(&srv);
    prepare(&cfg).await;
    (cfg.rampup_s, cfg.time_s, cfg.reconnect_timeout_s) = (0, 120, 2.0);
    let started = Instant::now();
    let c = cfg.clone();
    let lines = std::sync::Arc::new(Lines::default());
    let l2 = lines.clone();
    let run = tokio::task::spawn_blocking(move || tpcc::run(&c, &Controller::new(), &*l2));
    tokio::time::sleep(Duration::from_secs(3)).await;
    let pid = spindle::provision::mysqld::status(srv.datadir())
        .unwrap()
        .pid
        .expect("server pid");
    // SAFETY: plain kill(2) on the test server's pid.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
    let m = run.await.unwrap().expect("a partial result, not an Err");
    let err = m.error.clone().expect("the run must end with an error");
    assert!(
        err.contains("lost the server") && err.contains("could not reconnect"),
        "{err}"
    );
    let c = counters(&m);
    assert!(
        c.per_type[0].success > 0,
        "the partial result keeps the work done before the kill"
    );
    assert!(
        m.total_time_s > 1.0 && m.total_time_s < 60.0,
        "{}",
        m.total_time_s
    );
    assert!(
        m.notes.iter().any(|n| n.contains("partial")),
        "{:?}",
        m.notes
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the run did not end promptly"
    );
    assert!(lines
        .0
        .lock()
        .unwrap()
        .iter()
        .any(|l| l == "MEASURING START."));
}

#[test]
fn bad_input_without_a_server_names_the_option() {
    for (w, want) in [("0", "got 0"), ("100000", "32767")] {
        let (code, _, err) = spindle(&["tpcc", "run", "-w", w]);
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains("--warehouses (-w)") && err.contains(want),
            "{err}"
        );
    }
    let (code, _, err) = spindle(&["tpcc", "prepare", "-w", "1e9"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--warehouses"), "{err}");
    let (code, _, err) = spindle(&["tpcc", "run", "-S", "/nonexistent/spindle.sock", "-l", "1"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("--mysql-socket") && err.contains("/nonexistent/spindle.sock"),
        "{err}"
    );
    // A file that is not a socket.
    let f = tempfile::NamedTempFile::new().unwrap();
    let p = f.path().display().to_string();
    let (code, _, err) = spindle(&["tpcc", "check", "-S", &p]);
    assert_eq!(code, 1);
    assert!(err.contains("--mysql-socket") && err.contains(&p), "{err}");
    let (code, _, err) = spindle(&["tpcc", "prepare", "127.0.0.1", "tpcc"]);
    assert_eq!(code, 1);
    assert!(err.contains("HOST DB USER PASS WAREHOUSES"), "{err}");
    // A word option's bad value is a usage error (exit 2, as for -w 1e9) naming its values.
    let (code, _, err) = spindle(&["tpcc", "run", "--statements", "rows"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("'rows'")
            && err.contains("--statements")
            && err.contains("tpcc-mysql")
            && err.contains("batched"),
        "{err}"
    );
    // fio's steady-state options (issue 38): a bad criterion is a usage error naming the words;
    // a window the interval samples cannot fill is refused before any connection.
    let (code, _, err) = spindle(&["tpcc", "run", "--ss=tpmc:5"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--ss")
            && err.contains("use iops, iops_slope, bw, bw_slope, lat or lat_slope"),
        "{err}"
    );
    let (code, _, err) = spindle(&[
        "tpcc",
        "run",
        "--ss=iops_slope:10%",
        "--ss-dur=10",
        "-i",
        "10",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("--ss-dur: a 10 s window holds fewer than 2 samples of --report-interval=10"),
        "{err}"
    );
    let (code, out, _) = spindle(&["tpcc", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("-h, --mysql-host"), "{out}");
    assert!(out.contains("--statements <SHAPE>"), "{out}");
    assert!(out.contains("--ss-ramp <SECONDS>"), "{out}");
}
