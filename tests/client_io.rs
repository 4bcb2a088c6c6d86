//! The measured loop's connections taken out of tokio's reactor (the vendored mysql_async's
//! `Conn::set_blocking_io`) and written and read by spindle's own protocol code on a blocking
//! socket (`db::wire`, the default), the replies awaited in the thread's io_uring or epoll
//! instance, against a real MariaDB started by spindle's provisioning (`tests/common`): the
//! protocol stays in step over the unix socket and TCP (large results and requests, several
//! result sets, errors, both paths on one connection), a server that stops answering is a
//! lost connection after the read timeout (directly and in an OLTP run), and a run blocked on
//! such a server still stops and aborts in time.

mod common;

use common::{diagnostics_say, free_tcp_port, TestServer};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Params, Value};
use spindle::db::ringdrive;
use spindle::db::{classify, wire, ErrorClass, IgnoreErrors, Param};
use spindle::engine::{Controller, Counters, Silent};
use spindle::oltp::{self, ClientIo, OltpConfig, Workload};
use spindle::provision::mysqld;
use std::time::{Duration, Instant};

fn config(srv: &TestServer) -> OltpConfig {
    OltpConfig {
        workload: Workload::PointSelect,
        tables: 1,
        table_size: 300,
        threads: 2,
        time_s: 0,
        events: 0,
        connection: srv.connection(),
        ..Default::default()
    }
}

fn signal_server(srv: &TestServer, sig: i32) {
    let pid = mysqld::status(srv.datadir())
        .unwrap()
        .pid
        .expect("server pid");
    // SAFETY: plain kill(2) on the test server's pid.
    assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0);
    if sig == libc::SIGSTOP {
        // kill(2) returns before every thread has stopped: a statement sent right away could
        // still be answered. Wait until /proc says the whole process is stopped.
        let stopped = |task: &std::path::Path| {
            std::fs::read_to_string(task.join("stat"))
                .map(|s| {
                    s.rsplit(')')
                        .next()
                        .unwrap_or("")
                        .trim_start()
                        .starts_with('T')
                })
                .unwrap_or(true)
        };
        let until = Instant::now() + Duration::from_secs(5);
        loop {
            let all = std::fs::read_dir(format!("/proc/{pid}/task"))
                .map(|d| d.flatten().all(|t| stopped(&t.path())))
                .unwrap_or(true);
            if all {
                break;
            }
            assert!(Instant::now() < until, "the server did not stop");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// `e` is the read timeout of 1.5 s firing: a lost connection (2013) after about that long.
fn assert_cut_off_by_the_read_timeout(e: &mysql_async::Error, waited: Duration) {
    assert!(e.to_string().contains("read timeout"), "{e}");
    assert_eq!(
        classify(e, &IgnoreErrors::default()),
        ErrorClass::Lost(2013)
    );
    assert!(
        waited >= Duration::from_millis(1400) && waited < Duration::from_secs(10),
        "answered after {waited:?}"
    );
}

/// Sends SIGCONT to a stopped test server when dropped (a failing test must not leave it
/// stopped: its own drop could not stop it then).
struct Stopped<'a>(&'a TestServer);
impl Drop for Stopped<'_> {
    fn drop(&mut self) {
        signal_server(self.0, libc::SIGCONT);
    }
}

async fn prepare(srv: &TestServer) {
    let mut c = config(srv);
    c.events = 1;
    tokio::task::spawn_blocking(move || oltp::prepare(&c, &Controller::new(), &Silent))
        .await
        .unwrap()
        .expect("prepare failed");
}

/// The exchanges of `dropped_results_keep_the_protocol_in_step` (tests/oltp.rs) and more,
/// through mysql_async on a connection whose socket spindle's wire also uses.
async fn exchanges(conn: &mut Conn) {
    conn.query_drop("DROP TABLE IF EXISTS t").await.unwrap();
    conn.query_drop("CREATE TABLE t (id INT PRIMARY KEY, c CHAR(120) NOT NULL)")
        .await
        .unwrap();
    conn.query_drop(
        "INSERT INTO t SELECT seq, REPEAT(CHAR(65 + seq % 26), 120) FROM seq_1_to_5000",
    )
    .await
    .unwrap();
    let range = conn
        .prep("SELECT id, c FROM t WHERE id BETWEEN ? AND ?")
        .await
        .unwrap();
    for round in 0..20u32 {
        // Up to 2000 rows (~250 KB, many reads) dropped, then an exact answer.
        let hi = Value::UInt(1 + u64::from(round) * 100);
        conn.exec_drop_unboxed(&range, Params::Positional(vec![Value::Int(1), hi]))
            .await
            .unwrap();
        let n: u32 = conn
            .exec_first("SELECT COUNT(*) FROM t WHERE id <= ?", (round,))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(n, round, "binary protocol out of step");
        // Decoded rows, text protocol.
        let rows: Vec<(u32, String)> = conn
            .query(format!("SELECT id, c FROM t WHERE id > {round} LIMIT 300"))
            .await
            .unwrap();
        assert_eq!(rows.len(), 300);
        assert_eq!(rows[0].0, round + 1, "text protocol out of step");
        let last = rows[299].0;
        let want = char::from(65 + (last % 26) as u8).to_string().repeat(120);
        assert_eq!((last, &rows[299].1), (round + 300, &want));
    }
    // A reply of more than 16 MiB (a row over two packets) and a request of 8 MiB (more than
    // a socket buffer takes at once: the send waits for room).
    let big: Option<(String, u32)> = conn
        .query_first("SELECT REPEAT('x', 17000000), 1")
        .await
        .unwrap();
    assert_eq!(big.map(|(s, n)| (s.len(), n)), Some((17_000_000, 1)));
    let sent = "y".repeat(8 << 20);
    let len: Option<u64> = conn
        .query_first(format!("SELECT LENGTH('{sent}')"))
        .await
        .unwrap();
    assert_eq!(len, Some(8 << 20));
    // A server error, then the connection still works; a transaction across statements.
    let e = conn
        .query_drop("SELECT * FROM no_such_table")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("1146"), "{e}");
    conn.query_drop("BEGIN").await.unwrap();
    conn.query_drop("UPDATE t SET c = 'z' WHERE id = 1")
        .await
        .unwrap();
    assert_eq!(conn.affected_rows(), 1);
    conn.query_drop("ROLLBACK").await.unwrap();
    let c: Option<String> = conn
        .query_first("SELECT c FROM t WHERE id = 1")
        .await
        .unwrap();
    assert_eq!(c.as_deref(), Some("B".repeat(120).as_str()));
    // A command without a reply (COM_STMT_CLOSE) is held back and goes out with the next one.
    let before = stmt_closes(conn).await;
    let two = conn.prep("SELECT 2").await.unwrap();
    conn.close(two).await.unwrap();
    assert_eq!(
        stmt_closes(conn).await,
        before + 1,
        "COM_STMT_CLOSE reached the server"
    );
}

async fn stmt_closes(conn: &mut Conn) -> u64 {
    let (_, n): (String, u64) = conn
        .query_first("SHOW SESSION STATUS LIKE 'Com_stmt_close'")
        .await
        .unwrap()
        .unwrap();
    n
}

/// Connections the server counts as ended without COM_QUIT.
async fn aborted_clients(srv: &TestServer) -> u64 {
    let mut side = Conn::new(srv.opts()).await.unwrap();
    let (_, n): (String, u64) = side
        .query_first("SHOW GLOBAL STATUS LIKE 'Aborted_clients'")
        .await
        .unwrap()
        .unwrap();
    side.disconnect().await.unwrap();
    n
}

/// Statements through `wire` on a connection mysql_async also uses, checked through mysql_async.
async fn wire_exchanges(conn: &mut Conn, w: &mut wire::Wire, what: &str) {
    conn.query_drop("DROP TABLE IF EXISTS w").await.unwrap();
    conn.query_drop("CREATE TABLE w (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(200) NOT NULL)")
        .await
        .unwrap();
    let insert = conn
        .prep("INSERT INTO w (id, k, c) VALUES (?, ?, ?)")
        .await
        .unwrap();
    let range = conn
        .prep("SELECT id, c FROM w WHERE id BETWEEN ? AND ?")
        .await
        .unwrap();
    let update = conn
        .prep("UPDATE w SET k = k + 1 WHERE id BETWEEN ? AND ?")
        .await
        .unwrap();
    let begin = conn.prep("BEGIN").await.unwrap();
    let c = "é'\\x".repeat(30);
    w.exec(begin.id(), &[]).await.unwrap();
    for id in 1..=3000i64 {
        w.exec(
            insert.id(),
            &[Param::Int(id), Param::Int(-id), Param::Str(c.as_bytes())],
        )
        .await
        .unwrap_or_else(|e| panic!("{what}: insert {id}: {e}"));
        assert_eq!(w.affected_rows(), 1);
    }
    w.query("COMMIT").await.unwrap();
    let (n, sum, first): (u64, i64, String) = conn
        .query_first("SELECT COUNT(*), SUM(k), MIN(c) FROM w")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (n, sum, first.as_str()),
        (3000, -4_501_500, c.as_str()),
        "{what}"
    );
    for round in 0..10i64 {
        // Up to 3000 rows of ~190 bytes (many receives), then an exact answer.
        w.exec(range.id(), &[Param::Int(1), Param::Int(round * 300)])
            .await
            .unwrap();
        w.exec(update.id(), &[Param::Int(1), Param::Int(round)])
            .await
            .unwrap();
        assert_eq!(w.affected_rows(), round as u64, "{what}");
        w.query(&format!("SELECT id, c FROM w WHERE id > {round}"))
            .await
            .unwrap();
        let k: Option<i64> = conn
            .exec_first("SELECT k FROM w WHERE id = ?", (1,))
            .await
            .unwrap();
        assert_eq!(k, Some(-1 + round), "{what}: out of step");
    }
    // A server error through the wire; then both paths go on.
    let e = w.query("SELECT * FROM no_such_table").await.unwrap_err();
    assert!(e.to_string().contains("1146"), "{what}: {e}");
    assert_eq!(classify(&e, &IgnoreErrors::default()), ErrorClass::Fatal);
    let e = w
        .exec(
            insert.id(),
            &[Param::Int(1), Param::Int(0), Param::Str(b"")],
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("1062"), "{what}: {e}");
    // More than 16 MiB in one row, and two result sets.
    w.query("SELECT REPEAT('x', 17000000), 1").await.unwrap();
    w.query("SELECT 1; SELECT id FROM w; UPDATE w SET k = 0 WHERE id = 2")
        .await
        .unwrap();
    assert_eq!(w.affected_rows(), 1);
    let one: Option<u8> = conn.query_first("SELECT 1").await.unwrap();
    assert_eq!(one, Some(1), "{what}");
}

#[tokio::test]
async fn the_measured_statements_go_over_the_wire_in_step_with_mysql_async() {
    let port = free_tcp_port();
    let srv = TestServer::start_with(|s| s.tcp_port = Some(port)).await;
    let tcp = srv.tcp_opts(port);
    // Each statement through the thread's io_uring and through its epoll instance.
    let ways = [
        ("unix socket, the thread's io_uring", srv.opts(), Own::Ring),
        ("unix socket, the thread's epoll", srv.opts(), Own::Epoll),
        ("TCP, the thread's io_uring", tcp.clone(), Own::Ring),
        ("TCP, the thread's epoll", tcp, Own::Epoll),
    ];
    for (what, opts, own) in ways {
        own.install(Duration::from_secs(30));
        let mut conn = Conn::new(opts.clone()).await.unwrap();
        let mut w = wire::attach(&mut conn, Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("{what}: {e}"))
            .unwrap_or_else(|| panic!("{what}: a plain socket must move"));
        assert_eq!(
            w.shares_ring(),
            own == Own::Ring,
            "{what}: this kernel gave no io_uring"
        );
        assert!(wire::attach(&mut conn, Duration::from_secs(30))
            .unwrap()
            .is_none());
        wire_exchanges(&mut conn, &mut w, what).await;
        // mysql_async alone on the blocking socket: large replies and requests, errors.
        exchanges(&mut conn).await;
        let aborted = aborted_clients(&srv).await;
        conn.disconnect().await.unwrap();
        drop(w);
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(
            aborted_clients(&srv).await,
            aborted,
            "{what}: quit without COM_QUIT"
        );
    }
    Own::Nothing.install(Duration::ZERO);
}

/// What a test thread has of its own for its wires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Own {
    Nothing,
    Ring,
    Epoll,
}

impl Own {
    /// Only this, for connections with read timeout `timeout`.
    fn install(self, timeout: Duration) {
        ringdrive::remove();
        if self != Own::Nothing {
            assert!(
                ringdrive::install(timeout, self == Own::Ring),
                "no epoll instance"
            );
        }
    }
}

#[tokio::test]
async fn a_server_that_stops_answering_the_wire_is_a_lost_connection_after_the_read_timeout() {
    let srv = TestServer::start().await;
    for own in [Own::Ring, Own::Epoll] {
        own.install(Duration::from_millis(1500));
        let mut conn = Conn::new(srv.opts()).await.unwrap();
        let mut w = wire::attach(&mut conn, Duration::from_millis(1500))
            .unwrap()
            .unwrap();
        assert_eq!(w.shares_ring(), own == Own::Ring);
        w.query("SELECT 1").await.unwrap();
        let started = Instant::now();
        let stopped = Stopped(&srv);
        signal_server(&srv, libc::SIGSTOP);
        let e = w.query("SELECT 1").await.unwrap_err();
        let waited = started.elapsed();
        drop(stopped);
        assert_cut_off_by_the_read_timeout(&e, waited);
        let again = w.query("SELECT 1").await.unwrap_err();
        assert!(matches!(
            classify(&again, &IgnoreErrors::default()),
            ErrorClass::Lost(_)
        ));
        // A slow statement inside the timeout is not cut off.
        let mut conn = Conn::new(srv.opts()).await.unwrap();
        let mut w = wire::attach(&mut conn, Duration::from_secs(5))
            .unwrap()
            .unwrap();
        w.query("SELECT SLEEP(2)").await.unwrap();
        conn.disconnect().await.unwrap();
    }
    Own::Nothing.install(Duration::ZERO);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oltp_run_waits_as_chosen_and_a_stopped_server_ends_it() {
    let srv = TestServer::start().await;
    prepare(&srv).await;
    // Every connection of a direct run (the default) is written and read by spindle, the
    // replies awaited in the client thread's io_uring (in its epoll instance with
    // direct-epoll), whether the thread drives two connections (the default) or one; the
    // reactor's are not.
    const DIRECT: &str = "statements sent and replies read by spindle on ";
    const RING: &str = "(one io_uring_enter on the client thread's io_uring";
    const EPOLL: &str =
        "(one send and one receive per statement, one wait in the client thread's epoll";
    for (io, client_threads, note, how) in [
        (ClientIo::Direct, 0, DIRECT, RING),
        (ClientIo::DirectEpoll, 0, DIRECT, EPOLL),
        (ClientIo::Direct, 2, DIRECT, RING),
        (ClientIo::DirectEpoll, 2, DIRECT, EPOLL),
        (ClientIo::Reactor, 0, "writable wake-ups dropped on ", ""),
    ] {
        let mut c = config(&srv);
        c.events = 2000;
        c.client_io = io;
        c.client_threads = client_threads;
        let r = tokio::task::spawn_blocking(move || oltp::run(&c, &Controller::new(), &Silent))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(r.error, None);
        assert_eq!(r.events, 2000);
        assert_eq!(diagnostics_say(&r, note), 2, "{io:?}: {:?}", r.diagnostics);
        assert!(
            r.diagnostics
                .iter()
                .any(|n| n.starts_with(note) && n.contains(how)),
            "{io:?}: {:?}",
            r.diagnostics
        );
    }
    // A server that stops answering: every statement in flight times out (2013), reconnecting
    // finds no answer either, and the run ends with the error and the work done before.
    for (io, client_threads) in [
        (ClientIo::Direct, 0),
        (ClientIo::Direct, 2),
        (ClientIo::DirectEpoll, 0),
        (ClientIo::DirectEpoll, 2),
    ] {
        stopped_server_ends_the_run(&srv, io, client_threads).await;
    }
}

async fn stopped_server_ends_the_run(srv: &TestServer, io: ClientIo, client_threads: u32) {
    let mut c = config(srv);
    c.client_io = io;
    c.client_threads = client_threads;
    c.time_s = 120;
    c.connection.read_timeout_s = 2.0;
    c.reconnect_timeout_s = 2.0;
    let started = Instant::now();
    let run = tokio::task::spawn_blocking(move || oltp::run(&c, &Controller::new(), &Silent));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let stopped = Stopped(srv);
    signal_server(srv, libc::SIGSTOP);
    let r = tokio::time::timeout(Duration::from_secs(90), run)
        .await
        .expect("the run did not end: the read timeout did not fire")
        .unwrap()
        .expect("a partial result, not an Err");
    let took = started.elapsed();
    drop(stopped);
    let err = r.error.clone().expect("the run must end with an error");
    assert!(err.contains("lost the connection"), "{err}");
    assert!(err.contains("read timeout"), "{err}");
    assert!(err.contains("could not reconnect"), "{err}");
    assert!(err.contains("no answer from"), "{err}");
    let Counters::Oltp(counters) = &r.counters else {
        panic!("not OLTP counters")
    };
    assert!(counters.errors_by_code.contains_key("2013"), "{counters:?}");
    assert!(r.events > 0, "{io:?}: the work before the stop is kept");
    assert!(
        took < Duration::from_secs(30),
        "{io:?}: the run took {took:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_waiting_in_io_uring_or_epoll_stops_and_aborts_in_time() {
    let srv = TestServer::start().await;
    prepare(&srv).await;
    for (io, client_threads) in [
        (ClientIo::Direct, 0),
        (ClientIo::DirectEpoll, 0),
        (ClientIo::Direct, 2),
        (ClientIo::Reactor, 0),
    ] {
        stops_and_aborts_in_time(&srv, io, client_threads).await;
    }
}

async fn stops_and_aborts_in_time(srv: &TestServer, io: ClientIo, client_threads: u32) {
    // Stop: every connection finishes the query in flight and the run ends at once.
    let controller = Controller::new();
    let mut c = config(srv);
    c.client_io = io;
    c.client_threads = client_threads;
    c.time_s = 60;
    let ctl = controller.clone();
    let run = tokio::task::spawn_blocking(move || oltp::run(&c, &ctl, &Silent));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let asked = Instant::now();
    controller.ask_to_stop();
    let r = run.await.unwrap().unwrap();
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(r.error, None);
    assert!(r.events > 0);
    // Abort while every connection waits for a server that does not answer: the run gives up
    // on them after its grace period, long before their read timeout.
    let controller = Controller::new();
    let mut c = config(srv);
    c.client_io = io;
    c.client_threads = client_threads;
    c.time_s = 60;
    c.connection.read_timeout_s = 30.0;
    let ctl = controller.clone();
    let run = tokio::task::spawn_blocking(move || oltp::run(&c, &ctl, &Silent));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let stopped = Stopped(srv);
    signal_server(srv, libc::SIGSTOP);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let asked = Instant::now();
    controller.abort();
    let r = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the aborted run did not end")
        .unwrap()
        .unwrap();
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );
    drop(stopped);
    let err = r.error.expect("an aborted run says so");
    assert!(err.contains("aborted"), "{io:?}: {err}");
}
