//! sysbench 1.0's oltp_legacy scripts and its bulk_insert / select_random_* scripts against a
//! real MariaDB started by spindle's provisioning: the tables each prepares, what one event sends
//! (counted by sysbench's rules and at the server: statements as SQL text or prepared), and the
//! command lines as pasted (`…/oltp_legacy/parallel_prepare.lua run`, `…/select.lua run`).

mod common;

use common::TestServer;
use mysql_async::prelude::Queryable;
use spindle::engine::{Controller, Silent};
use spindle::engine::{Counters, Measurement, OltpCounters};
use spindle::oltp::{self, OltpConfig, Workload};

const LEGACY: &str = "/usr/share/sysbench/tests/include/oltp_legacy";

fn config(srv: &TestServer, workload: Workload) -> OltpConfig {
    OltpConfig {
        workload,
        tables: 3,
        table_size: 500,
        threads: 1,
        time_s: 0,
        events: 30,
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

async fn run(cfg: OltpConfig) -> Measurement {
    let what = cfg.workload.name();
    let m = tokio::task::spawn_blocking(move || oltp::run(&cfg, &Controller::new(), &Silent))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{what}: {e:#}"));
    assert_eq!(m.error, None, "{what}");
    m
}

/// The server's statement counters (global; the test server serves this test only).
async fn com(side: &mut mysql_async::Conn) -> std::collections::HashMap<String, u64> {
    let rows: Vec<(String, String)> = side
        .query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select','Com_insert','Com_update','Com_delete','Com_stmt_execute')")
        .await
        .unwrap();
    rows.into_iter()
        .map(|(k, v)| (k.to_lowercase(), v.parse().unwrap()))
        .collect()
}

fn words(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn spindle_ok(args: &[&str]) -> (String, String) {
    let o = common::spindle(args);
    let out = common::assert_ok(&o);
    (out, String::from_utf8_lossy(&o.stderr).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_scripts_send_what_sysbench_1_0_sends() {
    let srv = TestServer::start().await;
    let mut side = mysql_async::Conn::new(srv.opts()).await.unwrap();
    let datadir = srv.datadir().to_str().unwrap().to_string();

    // Seed 000's preparation line: parallel_prepare.lua's `run` creates and loads the tables.
    let script = format!("{LEGACY}/parallel_prepare.lua");
    let (out, err) = spindle_ok(&[
        "--db-driver=mysql",
        "--oltp-table-size=500",
        "--oltp-tables-count=3",
        "--threads=2",
        "--datadir",
        &datadir,
        &script,
        "run",
    ]);
    assert!(err.contains("legacy prepare"), "{err}");
    for t in 1..=3 {
        assert!(
            out.contains(&format!("Creating table 'sbtest{t}'...")),
            "{out}"
        );
        assert!(out.contains(&format!("Creating secondary indexes on 'sbtest{t}'...")));
        let (_, ddl): (String, String) = side
            .query_first(format!("SHOW CREATE TABLE sbtest{t}"))
            .await
            .unwrap()
            .unwrap();
        assert!(ddl.contains("`id` int(10) unsigned NOT NULL"), "{ddl}");
        let n: u64 = side
            .query_first(format!("SELECT COUNT(*) FROM sbtest{t}"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(n, 500);
    }

    // One statement per event: (reads, writes, other) per event and the statements the server
    // saw (SQL text: Com_<kind>; prepared: Com_stmt_execute, which MariaDB also counts under
    // its kind), beyond what connecting sends (measured on the first run, UPDATEs only).
    type Case = (Workload, (u64, u64, u64), &'static [&'static str]);
    let cases: [Case; 7] = [
        (Workload::LegacyUpdateIndex, (0, 1, 0), &["com_update"]),
        (Workload::LegacySelect, (1, 0, 0), &["com_select"]),
        (Workload::LegacySimple, (1, 0, 0), &["com_select"]),
        (Workload::LegacyUpdateNonIndex, (0, 1, 0), &["com_update"]),
        (Workload::LegacyInsert, (0, 1, 0), &["com_insert"]),
        (
            Workload::LegacySelectRandomPoints,
            (1, 0, 0),
            &["com_stmt_execute", "com_select"],
        ),
        (
            Workload::LegacySelectRandomRanges,
            (1, 0, 0),
            &["com_stmt_execute", "com_select"],
        ),
    ];
    let mut setup = None;
    for (w, per_event, com_keys) in cases {
        let before = com(&mut side).await;
        let m = run(config(&srv, w)).await;
        let after = com(&mut side).await;
        let c = counters(&m);
        assert_eq!(c.transactions, 30, "{}", w.name());
        assert_eq!(
            (c.reads, c.writes, c.other),
            (per_event.0 * 30, per_event.1 * 30, per_event.2 * 30),
            "{}",
            w.name()
        );
        let delta: std::collections::HashMap<String, u64> = after
            .iter()
            .map(|(k, v)| (k.clone(), v - before[k]))
            .collect();
        let setup = setup.get_or_insert_with(|| {
            let mut s = delta.clone();
            s.insert(com_keys[0].to_string(), 0);
            s
        });
        for (k, d) in &delta {
            let sent = if com_keys.contains(&k.as_str()) {
                30
            } else {
                0
            };
            assert_eq!(*d, sent + setup[k], "{}: {k}", w.name());
        }
    }
    // delete.lua: a DELETE of an id already gone affects no row: "other".
    let m = run(config(&srv, Workload::LegacyDelete)).await;
    let c = counters(&m);
    assert_eq!((c.reads, c.writes + c.other), (0, 30));
    assert!(c.writes >= 1);

    // 1.0's select_random_points refuses --tables > 1 as its script does, naming the flag.
    let mut many = config(&srv, Workload::SelectRandomPoints);
    many.tables = 2;
    let e = tokio::task::spawn_blocking(move || oltp::run(&many, &Controller::new(), &Silent))
        .await
        .unwrap()
        .unwrap_err();
    assert!(format!("{e:#}").contains("--tables"), "{e:#}");

    // A legacy script by its path, as pasted, with sysbench's report.
    let select = format!("{LEGACY}/select.lua");
    let (out, _) = spindle_ok(&[
        "--oltp-tables-count=3",
        "--oltp-table-size=500",
        "--events=50",
        "--time=0",
        "--datadir",
        &datadir,
        &select,
        "run",
    ]);
    assert!(
        out.contains("        read:                            50")
            && out.contains("    transactions:                        50 "),
        "{out}"
    );
    spindle_ok(&[
        "--oltp-tables-count=3",
        "--datadir",
        &datadir,
        &script,
        "cleanup",
    ]);
    let tables: Vec<String> = side.query("SHOW TABLES").await.unwrap();
    assert!(tables.is_empty(), "left over: {tables:?}");
    side.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_insert_sends_multi_row_inserts_of_up_to_512_kib() {
    let srv = TestServer::start().await;
    let mut side = mysql_async::Conn::new(srv.opts()).await.unwrap();
    let datadir = srv.datadir().to_str().unwrap().to_string();
    for (script, tables) in [
        ("/usr/share/sysbench/bulk_insert.lua".to_string(), [1, 2]),
        (format!("{LEGACY}/bulk_insert.lua"), [0, 1]),
    ] {
        let args = |cmd: &'static str| {
            vec![
                "--threads=2".to_string(),
                "--events=100000".into(),
                "--time=0".into(),
                "--datadir".into(),
                datadir.clone(),
                script.clone(),
                cmd.into(),
            ]
        };
        let (out, _) = spindle_ok(&words(&args("prepare")));
        let legacy = script.contains("oltp_legacy");
        assert_eq!(
            out.contains("Creating table 'sbtest1'..."),
            !legacy,
            "1.0's script says it, the legacy one does not: {out}"
        );
        let before = com(&mut side).await;
        let (out, _) = spindle_ok(&words(&args("run")));
        let after = com(&mut side).await;
        let inserts = after["com_insert"] - before["com_insert"];
        // One event per row; the rows go in INSERTs of ≤ 512 KiB (≥ 2 per thread here: each
        // row is ~12 bytes, so ~45 000 rows fill one), the rest when the thread ends.
        assert!(
            out.contains("total number of events:              100000"),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "        write:                           {inserts}\n"
            )),
            "writes = the INSERTs the server saw ({inserts}): {out}"
        );
        assert!((3..=8).contains(&inserts), "{inserts} INSERTs");
        let mut rows = 0;
        for t in tables {
            let (n, max_len): (u64, u64) = side
                .query_first(format!("SELECT COUNT(*), MAX(id) FROM sbtest{t}"))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(n, max_len, "sbtest{t}: ids 1..n, k = id");
            rows += n;
        }
        assert_eq!(rows, 100000, "every event's row arrived");
        let (out, _) = spindle_ok(&words(&args("cleanup")));
        assert!(
            out.contains(&format!("Dropping table 'sbtest{}'...", tables[0])),
            "{out}"
        );
        let left: Vec<String> = side.query("SHOW TABLES").await.unwrap();
        assert!(left.is_empty(), "{left:?}");
    }
    side.disconnect().await.unwrap();
}
