//! Every engine against Oracle MySQL as well as MariaDB, both started by spindle's own
//! provisioning code. MySQL is Debian sid's 9.7 from a root that holds only
//! `mysql-server-core` (no `/var/lib/mysql-files`, no `mysql` user), run through that root's
//! loader (`scripts/mysql-root.sh`); see `common::mysql_server`.

mod common;

use common::{assert_ok, mysql_server, spindle, test_dir, TestServer};
use spindle::model::{PhaseStatus, RunStatus, SuiteResult};
use spindle::provision::mysqld::{self, config::PINNED_IO_SETTINGS, observe, Flavor};
use std::path::{Path, PathBuf};

/// `spindle mysqld ACTION --datadir D [extra…]`, which must succeed; its stdout.
fn mysqld_cli(action: &str, datadir: &Path, extra: &[&str]) -> String {
    let mut args = vec!["mysqld", action, "--datadir", datadir.to_str().unwrap()];
    args.extend_from_slice(extra);
    assert_ok(&spindle(&args))
}

/// The pid `spindle mysqld status` reports, `None` when it says the server is not running.
fn status_pid(datadir: &Path) -> Option<u32> {
    // (`status` exits 3 when the server is not running, as an LSB init script does.)
    let o = spindle(&["mysqld", "status", "--datadir", datadir.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let line = out
        .lines()
        .find(|l| l.starts_with("running:"))
        .unwrap_or_else(|| panic!("no running: line in {out}"));
    line.split("(pid ")
        .nth(1)
        .map(|p| p.trim_end_matches(')').parse().unwrap())
}

/// Stops the server of a datadir when the test ends, passed or not.
struct StopOnDrop<'a>(&'a Path);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        let _ = mysqld::stop_blocking(self.0, std::time::Duration::from_secs(30));
    }
}

/// Whether `pid` is a live process (a zombie left to an init that does not reap is gone).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !matches!(
                s.rsplit(") ").next().and_then(|r| r.chars().next()),
                Some('Z' | 'X')
            )
        })
        .unwrap_or(false)
}

#[test]
fn mysql_init_start_status_stop_without_its_packages_folder() {
    let dir = test_dir();
    let datadir = dir.path().join("mysql");
    let server = mysql_server();
    let _stop = StopOnDrop(&datadir);
    let out = mysqld_cli(
        "init",
        &datadir,
        &[
            "--mysqld",
            server.to_str().unwrap(),
            "--buffer-pool-size",
            "32M",
        ],
    );
    assert!(out.contains("initialised MySQL 9."), "{out}");
    let out = mysqld_cli("start", &datadir, &[]);
    assert!(
        out.contains("MySQL 9.") && out.contains("running (pid "),
        "{out}"
    );
    let pid = status_pid(&datadir).expect("status says the server runs");
    let cnf = std::fs::read_to_string(dir.path().join("mysql.spindle/my.cnf")).unwrap();
    assert!(cnf.contains("secure_file_priv = NULL"), "{cnf}");
    let log = std::fs::read_to_string(dir.path().join("mysql.spindle/error.log")).unwrap();
    // No deprecated key and no account warning at start (binlog_format, MY-010235).
    assert!(!log.contains("deprecated"), "{log}");
    assert!(!log.contains("MY-010235"), "{log}");
    // A second start of the same datadir: the accounts exist, still nothing logged about them.
    let out = mysqld_cli("stop", &datadir, &[]);
    assert!(
        out.contains(&format!("(pid {pid}) shut down cleanly")),
        "{out}"
    );
    assert_eq!(status_pid(&datadir), None);
    let before = std::fs::metadata(dir.path().join("mysql.spindle/error.log"))
        .unwrap()
        .len() as usize;
    mysqld_cli("start", &datadir, &[]);
    let log = std::fs::read_to_string(dir.path().join("mysql.spindle/error.log")).unwrap();
    let restart = &log[before..];
    assert!(!restart.contains("MY-010235"), "{restart}");
    assert!(
        !restart.contains("[Warning]") || !restart.contains("deprecated"),
        "{restart}"
    );
    let pid = status_pid(&datadir).expect("running again");
    mysqld_cli("stop", &datadir, &[]);
    assert!(!alive(pid), "the server is gone");
}

/// A server run under another program name (a wrapper, a loader, a renamed binary) is found by
/// its pid file and its `--defaults-file`, and stopped; a descriptor open in the process that
/// ran `spindle mysqld start` is not held by the server.
#[test]
fn a_server_under_another_name_is_found_and_holds_no_inherited_descriptor() {
    let dir = test_dir();
    let datadir = dir.path().join("mysql");
    // MySQL's wrapper calling the root's loader by its own name (ld-linux-…), not through the
    // symlink named mysqld, and telling it to call the program `db-server`: no "mysqld" in the
    // server's command line until its options.
    // The wrapper finds its root from its own path (<root>/spindle/bin/mysqld); the copy lives
    // elsewhere, so it is given the root instead.
    let server = mysql_server();
    let mysql = std::fs::read_to_string(&server).unwrap();
    let root = server
        .ancestors()
        .nth(3)
        .expect("the MySQL wrapper is <root>/spindle/bin/mysqld")
        .display()
        .to_string();
    let find_root = mysql
        .lines()
        .find(|l| l.starts_with("R="))
        .expect("the MySQL wrapper sets R=");
    let link = "\"$R/spindle/ld/mysqld\"";
    assert!(mysql.contains(link), "{mysql}");
    let loader = std::fs::canonicalize(format!("{root}/spindle/ld/mysqld")).unwrap();
    let argv0 = mysql
        .split_whitespace()
        .skip_while(|w| *w != "--argv0")
        .nth(1)
        .expect("the MySQL wrapper names the program with --argv0")
        .to_string();
    let renamed = mysql
        .replace(find_root, &format!("R='{root}'"))
        .replace(&format!("--argv0 {argv0}"), "--argv0 db-server")
        .replace(link, &format!("'{}'", loader.display()));
    let wrapper = dir.path().join("db-server");
    std::fs::write(&wrapper, renamed).unwrap();
    let _stop = StopOnDrop(&datadir);
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    mysqld_cli(
        "init",
        &datadir,
        &[
            "--mysqld",
            wrapper.to_str().unwrap(),
            "--buffer-pool-size",
            "32M",
        ],
    );
    // The caller holds a lock file on descriptor 7 (as `flock LOCK spindle …` does).
    let lock = dir.path().join("held.lock");
    let start = format!(
        "exec 7>'{}'; exec '{}' mysqld start --datadir '{}'",
        lock.display(),
        env!("CARGO_BIN_EXE_spindle"),
        datadir.display()
    );
    let o = std::process::Command::new("bash")
        .args(["-c", &start])
        .output()
        .unwrap();
    assert_ok(&o);
    let pid = status_pid(&datadir).expect("status finds the server under another name");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let argv0 = String::from_utf8_lossy(cmdline.split(|b| *b == 0).next().unwrap());
    assert!(argv0.contains("ld-linux"), "{argv0}");
    let held: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        !held.iter().any(|p| p.ends_with("held.lock")),
        "the server holds the caller's lock file: {held:?}"
    );
    let out = mysqld_cli("stop", &datadir, &[]);
    assert!(out.contains("shut down cleanly"), "{out}");
    assert!(!alive(pid), "the server is gone");
}

/// `--tables=2 --table-size=500` with `--events=10`, one thread, on `datadir`.
fn oltp(datadir: &Path, workload: &str, words: &[&str]) -> String {
    let mut args = vec![
        "oltp",
        workload,
        "--datadir",
        datadir.to_str().unwrap(),
        "--tables=2",
        "--table-size=500",
        "--threads=1",
        "--events=10",
        "--time=0",
    ];
    args.extend_from_slice(words);
    assert_ok(&spindle(&args))
}

/// The number after `label` in a sysbench-style report.
fn figure(text: &str, label: &str) -> u64 {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no '{label}' in\n{text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_oltp_workload_runs_on_mysql_with_begin_as_text_only_after_a_refusal() {
    let srv = TestServer::start_mysql().await;
    let d = srv.datadir().to_path_buf();
    tokio::task::spawn_blocking(move || {
        for workload in [
            "read_write",
            "read_only",
            "write_only",
            "point_select",
            "oltp",
        ] {
            oltp(&d, workload, &["prepare"]);
            let save = d.with_file_name(format!("{workload}.json"));
            let out = oltp(&d, workload, &["run", "--save", save.to_str().unwrap()]);
            assert_eq!(figure(&out, "transactions:"), 10, "{workload}\n{out}");
            let json = std::fs::read_to_string(&save).unwrap();
            let said = json.matches("does not prepare BEGIN (error 1295)").count();
            match workload {
                "read_write" => {
                    // sysbench's mix: 14 reads, 4 writes, 2 other (BEGIN, COMMIT) per event.
                    assert_eq!(figure(&out, "read:"), 140, "{out}");
                    assert_eq!(figure(&out, "write:"), 40, "{out}");
                    assert_eq!(figure(&out, "other:"), 20, "{out}");
                    assert_eq!(said, 1, "the note once: {json}");
                }
                "read_only" | "write_only" => assert_eq!(said, 1, "{workload}: {json}"),
                // No transaction (point_select), or BEGIN always as text (the legacy script).
                _ => assert_eq!(said, 0, "{workload}: {json}"),
            }
            oltp(&d, workload, &["cleanup"]);
        }
    })
    .await
    .unwrap();
}

/// `prepare` leaves the tables' statistics up to date (ANALYZE TABLE): MySQL's persistent
/// statistics say how many rows the tables hold right after the load, so the first workload
/// does not run on the optimizer's stale plan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepare_leaves_the_statistics_up_to_date_on_mysql() {
    use mysql_async::prelude::Queryable;
    let srv = TestServer::start_mysql().await;
    let d = srv.datadir().to_path_buf();
    tokio::task::spawn_blocking(move || oltp(&d, "read_only", &["prepare"]))
        .await
        .unwrap();
    let creds: mysqld::Credentials = serde_json::from_str(
        &std::fs::read_to_string(srv.dir.path().join("mysql.spindle/credentials.json")).unwrap(),
    )
    .unwrap();
    let root = mysql_async::OptsBuilder::default()
        .socket(Some(srv.client.socket.to_string_lossy()))
        .user(Some(creds.root_user))
        .pass(Some(creds.root_password));
    let mut conn = mysql_async::Conn::new(root).await.unwrap();
    let rows: Vec<(String, u64)> = conn
        .query(
            "SELECT table_name, n_rows FROM mysql.innodb_table_stats \
             WHERE database_name = 'sbtest' ORDER BY table_name",
        )
        .await
        .unwrap();
    assert_eq!(
        rows,
        [("sbtest1".to_string(), 500), ("sbtest2".to_string(), 500)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_prepares_begin_and_says_nothing() {
    let srv = TestServer::start().await;
    let d = srv.datadir().to_path_buf();
    tokio::task::spawn_blocking(move || {
        oltp(&d, "read_write", &["prepare"]);
        let save = d.with_file_name("rw.json");
        oltp(&d, "read_write", &["run", "--save", save.to_str().unwrap()]);
        let json = std::fs::read_to_string(&save).unwrap();
        assert!(!json.contains("error 1295"), "{json}");
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tpcc_prepare_run_check_cleanup_on_mysql() {
    let srv = TestServer::start_mysql().await;
    let d = srv.datadir().to_str().unwrap().to_string();
    tokio::task::spawn_blocking(move || {
        let tpcc = |words: &[&str]| {
            let mut a = vec!["tpcc", "--datadir", &d];
            a.extend_from_slice(words);
            assert_ok(&spindle(&a))
        };
        let out = tpcc(&["-w", "1", "prepare"]);
        // local_infile is on in spindle's my.cnf: the load does not fall back to INSERTs.
        assert!(!out.contains("refuses LOAD DATA LOCAL"), "{out}");
        let out = tpcc(&["-w", "1", "-c", "2", "-r", "1", "-l", "6", "run"]);
        assert!(out.contains("TpmC"), "{out}");
        let out = tpcc(&["check"]);
        assert!(out.contains("PASSED"), "{out}");
        tpcc(&["cleanup"]);
    })
    .await
    .unwrap();
}

/// The pinned InnoDB I/O settings are what both servers really run with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pinned_io_settings_are_effective_on_both_flavors() {
    let maria = TestServer::start().await;
    let mysql = TestServer::start_mysql().await;
    let a = observe::io_variables(&maria.client).await.unwrap();
    let b = observe::io_variables(&mysql.client).await.unwrap();
    let version = |srv: &TestServer| {
        let st = mysqld::status(srv.datadir()).unwrap();
        let (f, v) = mysqld::parse_version(&format!("x Ver {}", st.version)).unwrap();
        (st.flavor, f, v)
    };
    let (fa, _, va) = version(&maria);
    let (fb, _, vb) = version(&mysql);
    assert_eq!((fa, fb), (Flavor::MariaDb, Flavor::MySql));
    let mut compared = 0;
    for p in PINNED_IO_SETTINGS {
        for (vars, f, v) in [(&a, fa, va), (&b, fb, vb)] {
            if p.exists_in(f, v) {
                let got = vars
                    .get(p.name)
                    .unwrap_or_else(|| panic!("{f} {v} has no {}", p.name));
                assert!(observe::same_value(got, p.value), "{f}: {} = {got}", p.name);
            }
        }
        if let (Some(x), Some(y)) = (a.get(p.name), b.get(p.name)) {
            assert!(observe::same_value(x, y), "{}: {x} against {y}", p.name);
            compared += 1;
        }
    }
    assert!(compared >= 12, "only {compared} settings compared");
    for (vars, who) in [(&a, "MariaDB"), (&b, "MySQL")] {
        assert!(
            observe::same_value(&vars["performance_schema"], "OFF"),
            "{who}"
        );
        assert!(observe::same_value(&vars["local_infile"], "ON"), "{who}");
        assert_eq!(vars["innodb_flush_method"], "O_DIRECT", "{who}");
    }
}

/// `spindle suite --profile PROFILE` on a fresh directory with `config` as spindle.toml, which
/// must complete with every phase ok: the scratch directory (to see it left empty), the bundle
/// and its document.
fn suite_ok(d: &Path, profile: &str, config: &str) -> (PathBuf, PathBuf, SuiteResult) {
    let target = d.join("scratch");
    std::fs::create_dir(&target).unwrap();
    let config_file = d.join("spindle.toml");
    std::fs::write(&config_file, config).unwrap();
    let out = d.join("bundle");
    let o = spindle(&[
        "suite",
        "--target",
        target.to_str().unwrap(),
        "--profile",
        profile,
        "--config",
        config_file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let text = std::fs::read_to_string(out.join("results.json")).unwrap();
    let r = SuiteResult::from_json(&text, "results.json").unwrap();
    assert_eq!(r.status, RunStatus::Complete);
    for p in &r.targets[0].phases {
        assert_eq!(p.status, PhaseStatus::Ok, "{}: {:?}", p.name, p.error);
    }
    (target, out, r)
}

#[test]
fn the_quick_suite_on_a_directory_with_mysql() {
    let d = tempfile::tempdir().unwrap();
    let config = format!(
        "[mysqld]\nbinary = \"{}\"\nflavor = \"\"\n",
        mysql_server().display()
    );
    let (target, out, r) = suite_ok(d.path(), "quick", &config);
    let t = &r.targets[0];
    let server = t.servers.first().expect("the server is recorded");
    assert_eq!(server.flavor, "MySQL");
    assert!(observe::same_value(
        &server.effective["innodb_flush_neighbors"],
        "0"
    ));
    // Every database phase has the server's counters; a writing run wrote pages and synced.
    let rw = t
        .phases
        .iter()
        .find(|p| p.name.starts_with("oltp-read_write"))
        .expect("a read_write phase");
    let io = rw
        .server_io
        .as_ref()
        .expect("read_write has server counters");
    assert!(io["Innodb_os_log_written"] > 0, "{io:?}");
    assert!(io["Innodb_data_fsyncs"] > 0, "{io:?}");
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(
        summary.contains("Database server, effective values"),
        "{summary}"
    );
    assert!(summary.contains("Server I/O per phase"), "{summary}");
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("Server I/O per phase"));
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "work removed"
    );
}

/// `[mysqld] flavors = ["mariadb", "mysql"]`: the database phases once per server on the same
/// target, each named after its server, both servers recorded, every rendering showing both.
#[test]
fn one_target_two_servers_each_with_its_figures() {
    let d = tempfile::tempdir().unwrap();
    let config = format!(
        "[mysqld]\nflavors = [\"mariadb\", \"mysql\"]\n[mysqld.binaries]\nmysql = \"{}\"\n",
        mysql_server().display()
    );
    let profile = format!(
        "{}/tests/fixtures/profiles/tiny.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let (target, out, r) = suite_ok(d.path(), &profile, &config);
    let t = &r.targets[0];
    let flavors: Vec<&str> = t.servers.iter().map(|v| v.flavor.as_str()).collect();
    assert_eq!(flavors, ["MariaDB", "MySQL"]);
    let names: Vec<&str> = t.phases.iter().map(|p| p.name.as_str()).collect();
    let measured: Vec<&str> = t
        .phases
        .iter()
        .filter(|p| p.result.is_some() && p.name.starts_with("oltp-"))
        .map(|p| p.name.as_str())
        .collect();
    assert!(
        measured.iter().any(|n| n.ends_with("-mariadb"))
            && measured.iter().any(|n| n.ends_with("-mysql")),
        "{names:?}"
    );
    for n in &measured {
        let p = t.phases.iter().find(|p| p.name == *n).unwrap();
        assert_eq!(
            p.server.as_deref(),
            n.rsplit('-').next(),
            "{n} records its server"
        );
    }
    // The fileio phases ran once, without a server's name.
    assert!(names
        .iter()
        .filter(|n| n.starts_with("fileio"))
        .all(|n| !n.ends_with("-mysql")));
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    for n in &measured {
        assert!(summary.contains(n), "summary.txt lacks {n}");
        assert!(page.contains(n), "report.html lacks {n}");
        assert!(csv.contains(n), "results.csv lacks {n}");
    }
    assert!(summary.contains("scratch (MySQL)"), "{summary}");
    assert!(page.contains("scratch (MariaDB)"));
    let shown = assert_ok(&spindle(&["report", "show", out.to_str().unwrap()]));
    assert!(measured.iter().all(|n| shown.contains(n)), "{shown}");
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "work removed"
    );
}

/// Asked for a flavor without a program, spindle looks for one of *that* flavor: here only
/// MariaDB is in PATH (its `mysqld` is MariaDB's alias), so `--flavor mysql` and `--flavor
/// percona` are errors that say what was found and how to name the program, not a MariaDB server
/// run as MySQL; nothing is created.
#[test]
fn a_flavor_without_its_program_is_named_not_replaced_by_mariadb() {
    let dir = test_dir();
    for (flavor, says) in [("mysql", "no MySQL in PATH"), ("percona", "no Percona")] {
        let datadir = dir.path().join(flavor);
        let o = spindle(&[
            "mysqld",
            "init",
            "--datadir",
            datadir.to_str().unwrap(),
            "--flavor",
            flavor,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{flavor}: {err}");
        assert!(
            err.contains(says) && err.contains("is MariaDB") && err.contains("--mysqld PATH"),
            "{flavor}: {err}"
        );
        assert!(!datadir.exists(), "{flavor}: nothing is created");
    }
}
