//! OLTP engine against a real MariaDB/MySQL server started by spindle's own provisioning
//! (`tests/common`): schema and rows of prepare, the statement mix of every workload, restart on
//! ignorable errors, reconnect after a server restart, a killed server, connection errors, and
//! the CLI's sysbench-style text report and saved JSON.

mod common;

use common::{diagnostics_say, TestServer};
use spindle::engine::{Controller, Observer, Silent};
use spindle::engine::{Counters, Measurement, OltpCounters};
use spindle::model::BenchResult;
use spindle::oltp::{self, ConnectionConfig, OltpConfig, PsMode, Workload};
use spindle::provision::mysqld;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mysql_async::prelude::Queryable;

fn config(srv: &TestServer, workload: Workload, tables: u32, size: u32) -> OltpConfig {
    OltpConfig {
        workload,
        tables,
        table_size: size,
        threads: 1,
        time_s: 0,
        events: 30,
        rand: oltp::RandConfig {
            seed: 7,
            ..Default::default()
        },
        connection: srv.connection(),
        ..Default::default()
    }
}

fn counters(r: &Measurement) -> &OltpCounters {
    match &r.counters {
        Counters::Oltp(c) => c,
        other => panic!("not OLTP counters: {other:?}"),
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

/// Runs the engine on a plain thread (it blocks) and returns its result.
async fn run_blocking(cfg: OltpConfig) -> anyhow::Result<Measurement> {
    tokio::task::spawn_blocking(move || oltp::run(&cfg, &Controller::new(), &Silent))
        .await
        .expect("the run thread panicked")
}

async fn prepare_blocking(cfg: OltpConfig) -> (anyhow::Result<oltp::PrepareSummary>, Vec<String>) {
    tokio::task::spawn_blocking(move || {
        let lines = Lines::default();
        let r = oltp::prepare(&cfg, &Controller::new(), &lines);
        (r, lines.0.into_inner().unwrap())
    })
    .await
    .expect("the prepare thread panicked")
}

fn check_c_pad(c: &str, pad: &str) {
    let groups = |s: &str, n: usize| {
        let g: Vec<&str> = s.split('-').collect();
        g.len() == n
            && g.iter()
                .all(|x| x.len() == 11 && x.bytes().all(|b| b.is_ascii_digit()))
    };
    assert!(c.len() == 119 && groups(c, 10), "bad c value {c:?}");
    assert!(pad.len() == 59 && groups(pad, 5), "bad pad value {pad:?}");
}

/// A workload, an option tweak, its (reads, writes, other) per transaction, a label.
type Mix = (Workload, fn(&mut OltpConfig), (u64, u64, u64), &'static str);

/// Per-transaction mix: (reads, writes, other) per event, exactly.
fn assert_mix(r: &Measurement, per_tx: (u64, u64, u64), what: &str) {
    let c = counters(r);
    assert_eq!(r.error, None, "{what}: run failed");
    assert_eq!(c.ignored_errors, 0, "{what}: unexpected ignored errors");
    assert_eq!(c.transactions, 30, "{what}: --events=30 not honoured");
    assert_eq!(
        (c.reads, c.writes, c.other),
        (per_tx.0 * 30, per_tx.1 * 30, per_tx.2 * 30),
        "{what}: r/w/o per transaction should be {per_tx:?}"
    );
    assert_eq!(c.queries, c.reads + c.writes + c.other);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepare_schema_statement_mixes_ignored_errors_and_cleanup() {
    let srv = TestServer::start_with(|s| s.settings.lock_wait_timeout_s = 1).await;
    let mut side = mysql_async::Conn::new(srv.opts()).await.unwrap();

    // prepare: 2 tables loaded by 2 threads, sysbench's lines.
    let mut cfg = config(&srv, Workload::ReadWrite, 2, 300);
    cfg.threads = 2;
    let (summary, mut lines) = prepare_blocking(cfg.clone()).await;
    let summary = summary.expect("prepare failed");
    assert_eq!((summary.tables, summary.rows_per_table), (2, 300));
    lines.sort();
    assert_eq!(
        lines,
        vec![
            "Creating a secondary index on 'sbtest1'...",
            "Creating a secondary index on 'sbtest2'...",
            "Creating table 'sbtest1'...",
            "Creating table 'sbtest2'...",
            "Inserting 300 records into 'sbtest1'",
            "Inserting 300 records into 'sbtest2'",
        ]
    );
    for t in 1..=2 {
        let (_, ddl): (String, String) = side
            .query_first(format!("SHOW CREATE TABLE sbtest{t}"))
            .await
            .unwrap()
            .unwrap();
        let ddl = ddl.to_lowercase();
        for part in [
            "`id` int",
            "not null auto_increment",
            "`k` int",
            "`c` char(120) not null default ''",
            "`pad` char(60) not null default ''",
            "primary key (`id`)",
            &format!("key `k_{t}` (`k`)"),
            "engine=innodb",
            "auto_increment=301 ",
        ] {
            assert!(ddl.contains(part), "sbtest{t} lacks {part:?}:\n{ddl}");
        }
        let (n, lo, hi, kmin, kmax): (u64, u64, u64, u64, u64) = side
            .query_first(format!(
                "SELECT COUNT(*), MIN(id), MAX(id), MIN(k), MAX(k) FROM sbtest{t}"
            ))
            .await
            .unwrap()
            .unwrap();
        assert_eq!((n, lo, hi), (300, 1, 300), "sbtest{t}: ids must be 1..300");
        assert!(kmin >= 1 && kmax <= 300, "k out of 1..300: {kmin}..{kmax}");
        let rows: Vec<(String, String)> = side
            .query(format!("SELECT c, pad FROM sbtest{t}"))
            .await
            .unwrap();
        for (c, pad) in &rows {
            check_c_pad(c, pad);
        }
    }
    // A second prepare refuses to overwrite, naming the fix.
    let (again, _) = prepare_blocking(cfg.clone()).await;
    let msg = format!("{:#}", again.unwrap_err());
    assert!(msg.contains("cleanup"), "{msg}");

    // Statement mix of every workload, one connection, 30 transactions each.
    let mixes: Vec<Mix> = vec![
        (Workload::ReadWrite, |_| {}, (14, 4, 2), "read_write"),
        (Workload::ReadOnly, |_| {}, (14, 0, 2), "read_only"),
        (Workload::WriteOnly, |_| {}, (0, 4, 2), "write_only"),
        (Workload::PointSelect, |_| {}, (1, 0, 0), "point_select"),
        (Workload::UpdateIndex, |_| {}, (0, 1, 0), "update_index"),
        (
            Workload::UpdateNonIndex,
            |_| {},
            (0, 1, 0),
            "update_non_index",
        ),
        (Workload::Legacy, |_| {}, (14, 4, 2), "legacy"),
        (
            Workload::ReadWrite,
            |c| c.ps_mode = PsMode::Disable,
            (14, 4, 2),
            "read_write --db-ps-mode=disable",
        ),
        (
            Workload::ReadWrite,
            |c| c.skip_trx = true,
            (14, 4, 0),
            "read_write --skip-trx=on",
        ),
        (
            Workload::ReadOnly,
            |c| c.range_selects = false,
            (10, 0, 2),
            "read_only --range-selects=off",
        ),
        (Workload::Insert, |_| {}, (0, 1, 0), "insert"),
    ];
    for (i, (w, adjust, per_tx, what)) in mixes.into_iter().enumerate() {
        let mut c = config(&srv, w, 2, 300);
        // A distinct seed per run: replaying a sequence would set c to the value it already
        // has, and sysbench (rightly) counts such an UPDATE as "other".
        c.rand.seed = 100 + i as u64;
        adjust(&mut c);
        let name = c.test_name();
        let r = run_blocking(c)
            .await
            .unwrap_or_else(|e| panic!("{what}: {e:#}"));
        assert_mix(&r, per_tx, what);
        assert_eq!(name, format!("oltp_{}", w.name()));
    }
    // delete: a DELETE of an id already deleted affects no row and counts as "other".
    let r = run_blocking(config(&srv, Workload::Delete, 2, 300))
        .await
        .unwrap();
    let c = counters(&r);
    assert_eq!((c.reads, c.writes + c.other), (0, 30));
    assert!(c.writes >= 1, "the first DELETE must remove a row");
    // The one connection's statements went the direct way (db::wire, the default), and with
    // the reactor its writable wake-ups really were dropped (db::sockets; once a tuning there
    // silently did nothing).
    assert_eq!(
        diagnostics_say(&r, "statements sent and replies read by spindle on "),
        1,
        "one connection: {:?}",
        r.diagnostics
    );
    let mut reactor = config(&srv, Workload::Delete, 2, 300);
    reactor.client_io = spindle::db::ClientIo::Reactor;
    let rr = run_blocking(reactor).await.unwrap();
    assert_eq!(
        diagnostics_say(&rr, "writable wake-ups dropped on "),
        1,
        "one connection: {:?}",
        rr.diagnostics
    );
    assert!(
        !r.notes
            .iter()
            .any(|n| n.contains("wake-up") || n.contains("io_uring") || n.contains("spindle on")),
        "a developer diagnostic is not a note: {:?}",
        r.notes
    );

    // Ignorable error: a side transaction holds every row of sbtest1; with
    // innodb_lock_wait_timeout=1 the UPDATEs fail with 1205, are counted and restarted.
    side.query_drop("BEGIN").await.unwrap();
    let _: Vec<u64> = side
        .query("SELECT id FROM sbtest1 FOR UPDATE")
        .await
        .unwrap();
    let mut c = config(&srv, Workload::UpdateIndex, 1, 300);
    c.events = 0;
    c.time_s = 5;
    let run = tokio::task::spawn_blocking(move || oltp::run(&c, &Controller::new(), &Silent));
    tokio::time::sleep(Duration::from_millis(2500)).await;
    side.query_drop("ROLLBACK").await.unwrap();
    let r = run.await.unwrap().expect("run with lock waits failed");
    let c = counters(&r);
    assert_eq!(r.error, None);
    assert!(c.ignored_errors >= 1, "no ignored error counted: {c:?}");
    assert!(
        c.errors_by_code.get("1205").copied().unwrap_or(0) >= 1,
        "{c:?}"
    );
    assert!(
        c.transactions > 0 && c.writes > 0,
        "the run must go on after the lock is released"
    );
    // The transaction that waited includes its retries: max latency ≥ one lock wait.
    assert!(
        r.latency.max_us >= 1_000_000.0,
        "max {} µs",
        r.latency.max_us
    );

    // Bad credentials: a clear error naming the flags.
    let mut bad = config(&srv, Workload::PointSelect, 2, 300);
    bad.connection.password = "wrong".into();
    let e = format!("{:#}", run_blocking(bad).await.unwrap_err());
    assert!(
        e.contains("--mysql-password") && e.contains("access denied"),
        "{e}"
    );

    // The CLI: sysbench's report text, --histogram before `run`, --datadir, --save.
    let save = srv.dir.path().join("result.json");
    let out = common::spindle(&[
        "oltp",
        "--tables=2",
        "--table-size=300",
        "--events=20",
        "--time=0",
        "--datadir",
        srv.datadir().to_str().unwrap(),
        "--histogram",
        "run",
        "oltp_read_write",
        "--save",
        save.to_str().unwrap(),
    ]);
    let stdout = common::assert_ok(&out);
    let labels = [
        "Threads started!",
        "Latency histogram (values are in milliseconds)",
        "       value  ------------- distribution ------------- count",
        "SQL statistics:",
        "    queries performed:",
        "        read:                            280",
        // (write/other vary: the delete workload above removed rows some statements hit)
        "        write:                           ",
        "        other:                           ",
        "        total:                           400",
        "    transactions:                        20     (",
        "    queries:                             400    (",
        "    ignored errors:                      0      (",
        "    reconnects:                          0      (",
        "General statistics:",
        "    total time:                          ",
        "    total number of events:              20",
        "Latency (ms):",
        "         min: ",
        "         avg: ",
        "         max: ",
        "         95th percentile: ",
        "         sum: ",
        "Threads fairness:",
        "    events (avg/stddev):           20.0000/0.00",
        "    execution time (avg/stddev):   ",
    ];
    let mut pos = 0;
    for l in labels {
        let found = stdout[pos..]
            .find(l)
            .unwrap_or_else(|| panic!("missing {l:?} after byte {pos} in:\n{stdout}"));
        pos += found + l.len();
    }
    let saved = BenchResult::from_json(&std::fs::read_to_string(&save).unwrap(), "saved").unwrap();
    assert_eq!(saved.events, 20);
    assert!(saved.latency.p99_us > 0.0 && !saved.histogram.sysbench_buckets.is_empty());
    assert!(
        !std::fs::read_to_string(&save)
            .unwrap()
            .contains(&srv.client.password),
        "the password must not be saved"
    );

    // cleanup drops every table.
    let c = config(&srv, Workload::ReadWrite, 2, 300);
    tokio::task::spawn_blocking(move || oltp::cleanup(&c, &Silent))
        .await
        .unwrap()
        .unwrap();
    let tables: Vec<String> = side.query("SHOW TABLES").await.unwrap();
    assert!(tables.is_empty(), "left over: {tables:?}");
    side.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnects_after_the_server_restarts_mid_run() {
    let srv = TestServer::start().await;
    // Also covers prepare's INSERT path (used when the server refuses LOAD DATA LOCAL INFILE).
    let mut p = config(&srv, Workload::ReadOnly, 1, 200);
    p.load_data = false;
    p.auto_inc = false;
    let (p, _) = prepare_blocking(p).await;
    p.unwrap();
    let mut side = mysql_async::Conn::new(srv.opts()).await.unwrap();
    let (n, lo, hi): (u64, u64, u64) = side
        .query_first("SELECT COUNT(*), MIN(id), MAX(id) FROM sbtest1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((n, lo, hi), (200, 1, 200));
    let rows: Vec<(String, String)> = side.query("SELECT c, pad FROM sbtest1").await.unwrap();
    rows.iter().for_each(|(c, pad)| check_c_pad(c, pad));
    let (_, ddl): (String, String) = side
        .query_first("SHOW CREATE TABLE sbtest1")
        .await
        .unwrap()
        .unwrap();
    assert!(!ddl.to_lowercase().contains("auto_increment"), "{ddl}");
    drop(side);
    let mut c = config(&srv, Workload::ReadOnly, 1, 200);
    c.threads = 2;
    c.events = 0;
    c.time_s = 12;
    c.reconnect_timeout_s = 60.0;
    let run = tokio::task::spawn_blocking(move || oltp::run(&c, &Controller::new(), &Silent));
    tokio::time::sleep(Duration::from_secs(2)).await;
    mysqld::stop(srv.datadir(), Duration::from_secs(60))
        .await
        .expect("stop failed");
    mysqld::start(&srv.spec).await.expect("restart failed");
    let r = run.await.unwrap().expect("run failed");
    let c = counters(&r);
    assert_eq!(r.error, None, "the run must survive a restart");
    assert!(c.reconnects >= 1, "no reconnect counted: {c:?}");
    assert!(c.transactions > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_ends_the_run_with_an_error_and_a_partial_result() {
    let srv = TestServer::start().await;
    let (p, _) = prepare_blocking(config(&srv, Workload::PointSelect, 1, 200)).await;
    p.unwrap();
    let mut c = config(&srv, Workload::PointSelect, 1, 200);
    c.threads = 2;
    c.events = 0;
    c.time_s = 120;
    c.reconnect_timeout_s = 2.0;
    let started = Instant::now();
    let run = tokio::task::spawn_blocking(move || oltp::run(&c, &Controller::new(), &Silent));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let pid = mysqld::status(srv.datadir())
        .unwrap()
        .pid
        .expect("server pid");
    // SAFETY: plain kill(2) on the test server's pid.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
    let r = run.await.unwrap().expect("a partial result, not an Err");
    let err = r.error.clone().expect("the run must end with an error");
    assert!(err.contains("lost the connection"), "{err}");
    assert!(err.contains("could not reconnect"), "{err}");
    assert!(
        r.events > 0,
        "the partial result keeps the work done before the kill"
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the run did not end promptly"
    );
}

#[tokio::test]
async fn a_missing_socket_names_the_flag() {
    let cfg = OltpConfig {
        connection: ConnectionConfig {
            socket: Some("/nonexistent/spindle-test.sock".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let e = format!("{:#}", run_blocking(cfg).await.unwrap_err());
    assert!(
        e.contains("--mysql-socket") && e.contains("/nonexistent/spindle-test.sock"),
        "{e}"
    );
}

#[test]
fn the_cli_takes_sysbench_style_words_and_booleans() {
    use clap::Parser;
    use spindle::cli::{Cli, Command};
    let cli = Cli::try_parse_from([
        "spindle",
        "oltp",
        "--histogram",
        "run",
        "--skip-trx=on",
        "--auto-inc=off",
        "oltp_read_write",
        "--mysql-ignore-errors=all",
        "--threads=4",
        "--oltp-tables-count=3",
        "--tables=5",
    ])
    .unwrap();
    let Command::Oltp(a) = cli.command else {
        panic!("not oltp")
    };
    assert!(a.histogram && a.skip_trx && !a.auto_inc);
    assert_eq!(a.words, vec!["run", "oltp_read_write"]);
    let words = spindle::config::oltp::parse_words(&a.words).unwrap();
    let (w, cmd) = (words.workload, words.command);
    assert_eq!(
        (w, cmd),
        (Workload::ReadWrite, spindle::config::oltp::OltpCommand::Run)
    );
    let cfg = spindle::config::oltp::config_from_args(&a, w).unwrap();
    assert_eq!(cfg.ignore_errors, oltp::IgnoreErrors::All);
    assert_eq!(cfg.threads, 4);
    // sysbench lets a later option override an earlier one (also through the 0.5-era alias).
    assert_eq!(cfg.tables, 5);
    // A bad value names its flag and the values it takes.
    for (arg, flag, one) in [
        ("--rand-type=zipf", "--rand-type", "pareto"),
        ("--db-ps-mode=on", "--db-ps-mode", "disable"),
        ("--format=xml", "--format", "json"),
    ] {
        let e = Cli::try_parse_from(["spindle", "oltp", "read_write", "run", arg])
            .unwrap_err()
            .to_string();
        assert!(e.contains(flag) && e.contains(one), "{e}");
    }
}

/// The vendored mysql_async patches (vendor/README.md): results dropped undecoded in the codec
/// must leave the protocol in step — across many rows, several result sets, a row longer than
/// one 16 MiB packet, and an error — in both protocols.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_results_keep_the_protocol_in_step() {
    let srv = TestServer::start().await;
    let mut conn = mysql_async::Conn::new(srv.opts()).await.unwrap();
    conn.query_drop("CREATE TABLE t (id INT PRIMARY KEY, c CHAR(120) NOT NULL)")
        .await
        .unwrap();
    conn.query_drop(
        "INSERT INTO t SELECT seq, REPEAT(CHAR(65 + seq % 26), 120) FROM seq_1_to_5000",
    )
    .await
    .unwrap();
    conn.query_drop(
        "CREATE PROCEDURE two_sets() BEGIN SELECT id FROM t LIMIT 300; \
         SELECT c FROM t LIMIT 200; END",
    )
    .await
    .unwrap();
    let stmt = conn
        .prep("SELECT id, c FROM t WHERE id BETWEEN ? AND ?")
        .await
        .unwrap();
    for round in 0..50u32 {
        // Binary protocol: a dropped result of up to 5000 rows, then an exact check.
        conn.exec_drop(&stmt, (1, 1 + round * 100)).await.unwrap();
        let n: u32 = conn
            .exec_first("SELECT COUNT(*) FROM t WHERE id <= ?", (round,))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(n, round, "binary protocol out of step");
        // Text protocol.
        conn.query_drop("SELECT * FROM t").await.unwrap();
        let v: u32 = conn
            .query_first(format!("SELECT {round}"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(v, round, "text protocol out of step");
    }
    // Several result sets (and the procedure's final OK).
    conn.query_drop("CALL two_sets()").await.unwrap();
    // A row spread over two packets (> 16 MiB) is skipped as one row.
    conn.query_drop("SELECT REPEAT('x', 17000000), 1 UNION ALL SELECT 'y', 2")
        .await
        .unwrap();
    // A server error in place of a result set, then the connection still works.
    let e = conn
        .query_drop("SELECT * FROM no_such_table")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("1146"), "{e}");
    let rows: Vec<u32> = conn.query("SELECT id FROM t WHERE id <= 3").await.unwrap();
    assert_eq!(rows, vec![1, 2, 3], "decoded rows still arrive");
    conn.disconnect().await.unwrap();
}

/// `Conn::exec_drop_unboxed` (vendor patch 4, used for every OLTP statement that does not go
/// through the direct client) behaves as `exec_drop`: rows dropped and the protocol in step,
/// affected rows and transaction state kept, a server error returned with the connection still
/// usable, a wrong parameter count refused with the connection left as `exec_drop` leaves it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unboxed_exec_drop_keeps_the_protocol_and_the_state() {
    use mysql_async::{Params, Value};
    let srv = TestServer::start().await;
    let mut conn = mysql_async::Conn::new(srv.opts()).await.unwrap();
    conn.query_drop("CREATE TABLE u (id INT PRIMARY KEY, k INT NOT NULL) ENGINE=InnoDB")
        .await
        .unwrap();
    conn.query_drop("INSERT INTO u SELECT seq, 0 FROM seq_1_to_3000")
        .await
        .unwrap();
    let range = conn
        .prep("SELECT id, k FROM u WHERE id BETWEEN ? AND ?")
        .await
        .unwrap();
    let update = conn
        .prep("UPDATE u SET k = k + 1 WHERE id <= ?")
        .await
        .unwrap();
    let insert = conn
        .prep("INSERT INTO u (id, k) VALUES (?, ?)")
        .await
        .unwrap();
    let begin = conn.prep("BEGIN").await.unwrap();
    let commit = conn.prep("COMMIT").await.unwrap();
    let int = |i: i64| Params::Positional(vec![Value::Int(i)]);
    for round in 1..=20i64 {
        let hi = Value::Int(round * 150);
        conn.exec_drop_unboxed(&range, Params::Positional(vec![Value::Int(1), hi]))
            .await
            .unwrap();
        conn.exec_drop_unboxed(&begin, Params::Empty).await.unwrap();
        conn.exec_drop_unboxed(&update, int(round)).await.unwrap();
        assert_eq!(
            conn.affected_rows(),
            round as u64,
            "affected rows of the update"
        );
        // A duplicate key inside the transaction: a server error, the transaction still open.
        let e = conn
            .exec_drop_unboxed(
                &insert,
                Params::Positional(vec![Value::Int(1), Value::Int(0)]),
            )
            .await
            .unwrap_err();
        assert!(e.to_string().contains("1062"), "{e}");
        conn.exec_drop_unboxed(&commit, Params::Empty)
            .await
            .unwrap();
        let n: i64 = conn
            .query_first(format!(
                "SELECT COUNT(*) FROM u WHERE k > 0 AND id <= {round}"
            ))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(n, round, "the committed updates, and the protocol in step");
    }
    let sum: i64 = conn
        .query_first("SELECT SUM(k) FROM u")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        sum,
        (1..=20).map(|r: i64| 21 - r).sum::<i64>(),
        "every update committed once"
    );
    conn.disconnect().await.unwrap();
    // Two parameters for a one-parameter statement: refused naming the count, and, as with
    // `exec_drop` (the routine treats a driver error as fatal), the connection is closed after.
    let mut after = Vec::new();
    for way in 0..2 {
        let mut c = mysql_async::Conn::new(srv.opts()).await.unwrap();
        let st = c
            .prep("UPDATE u SET k = k + 1 WHERE id <= ?")
            .await
            .unwrap();
        let two = Params::Positional(vec![Value::Int(1), Value::Int(2)]);
        let e = match way {
            0 => c.exec_drop_unboxed(&st, two).await.unwrap_err(),
            _ => c.exec_drop(&st, two).await.unwrap_err(),
        };
        assert!(e.to_string().contains("parameters"), "{e}");
        after.push(c.query_drop("SELECT 1").await.is_ok());
    }
    assert_eq!(
        after[0], after[1],
        "the connection after the error: unboxed vs exec_drop"
    );
}
