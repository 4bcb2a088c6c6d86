//! `spindle mysqld`: init, start, status, stop against a real MariaDB/MySQL server.

mod common;

use common::{free_tcp_port, require_server, small_spec, test_dir, TestServer};
use mysql_async::prelude::Queryable as _;
use spindle::provision::mysqld::{
    self, config::parse_cnf_section, Flavor, Layout, MysqldError, StopOutcome,
};
use std::os::unix::fs::PermissionsExt as _;
use std::time::Duration;

fn err_text(e: &anyhow::Error) -> String {
    format!("{e:#}")
}

#[tokio::test]
async fn init_start_status_stop_round_trip() {
    let t0 = std::time::Instant::now();
    let srv = TestServer::start().await;
    let dd = srv.datadir().to_path_buf();

    let st = mysqld::status(&dd).unwrap();
    assert!(st.running, "{st:?}");
    assert!(st.pid.is_some());
    assert_eq!(st.flavor, Flavor::MariaDb);
    assert!(
        st.version.starts_with("10.") || st.version.starts_with("11."),
        "{st:?}"
    );
    assert_eq!(st.socket, srv.client.socket);
    assert!(st.socket.exists());
    assert_eq!(mysqld::client_info(&dd).unwrap(), srv.client);

    // The benchmark login reaches its database.
    let mut c = mysql_async::Conn::new(srv.opts()).await.unwrap();
    let db: Option<String> = c.query_first("SELECT DATABASE()").await.unwrap();
    assert_eq!(db.as_deref(), Some("sbtest"));
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY) ENGINE=InnoDB")
        .await
        .unwrap();
    c.disconnect().await.unwrap();

    // Starting twice is refused, with the fix.
    let e = mysqld::start(&srv.spec).await.unwrap_err();
    assert!(
        matches!(e.downcast_ref(), Some(MysqldError::AlreadyRunning { .. })),
        "{e:#}"
    );
    assert!(
        err_text(&e).contains("spindle mysqld stop --datadir"),
        "{e:#}"
    );

    let out = mysqld::stop(&dd, Duration::from_secs(60)).await.unwrap();
    assert!(matches!(out, StopOutcome::Stopped { .. }), "{out:?}");
    let st = mysqld::status(&dd).unwrap();
    assert!(!st.running && st.pid.is_none(), "{st:?}");
    let e = mysqld::client_info(&dd).unwrap_err();
    assert!(
        matches!(e.downcast_ref(), Some(MysqldError::NotRunning { .. })),
        "{e:#}"
    );

    // Stopping a stopped server is not an error.
    let out = mysqld::stop(&dd, Duration::from_secs(5)).await.unwrap();
    assert_eq!(out, StopOutcome::NotRunning);

    // A restart keeps the data and the stored credentials.
    let again = mysqld::start(&srv.spec).await.unwrap();
    assert_eq!(again, srv.client);
    let mut c = mysql_async::Conn::new(srv.opts()).await.unwrap();
    let n: Option<u64> = c.query_first("SELECT COUNT(*) FROM t").await.unwrap();
    assert_eq!(n, Some(0));
    c.disconnect().await.unwrap();
    eprintln!("round trip took {:?}", t0.elapsed());
}

#[test]
fn my_cnf_has_the_reference_keys_overrides_and_networking_rules() {
    let dir = test_dir();
    let mut spec = small_spec(&dir.path().join("mysql"));
    require_server(&spec);
    spec.settings.flush_log_at_trx_commit = 1;
    spec.settings
        .extra
        .insert("innodb_io_capacity".into(), "321".into());
    spec.settings
        .extra
        .insert("innodb-flush-method".into(), "fsync".into());
    mysqld::init(&spec).unwrap();

    let l = Layout::load(&spec.datadir).unwrap();
    assert!(
        !l.my_cnf.starts_with(&spec.datadir),
        "my.cnf must sit beside the datadir"
    );
    assert_eq!(l.my_cnf, dir.path().join("mysql.spindle/my.cnf"));
    let m = parse_cnf_section(&std::fs::read_to_string(&l.my_cnf).unwrap(), "mysqld");
    for key in [
        "innodb_file_per_table",
        "innodb_flush_method",
        "innodb_log_file_size",
        "innodb_log_buffer_size",
        "innodb_flush_log_at_trx_commit",
        "innodb_buffer_pool_size",
        "log_bin",
        "sync_binlog",
        "tmpdir",
        "socket",
        "pid_file",
        "log_error",
    ] {
        assert!(m.contains_key(key), "my.cnf lacks {key}: {m:?}");
    }
    assert_eq!(m["innodb_buffer_pool_size"], "32M");
    assert_eq!(m["innodb_log_file_size"], "8M");
    assert_eq!(m["innodb_flush_log_at_trx_commit"], "1");
    assert_eq!(m["innodb_flush_method"], "fsync");
    assert_eq!(m["innodb_io_capacity"], "321");
    assert_eq!(m["sync_binlog"], "1");
    assert!(m.contains_key("skip_networking"));
    assert!(!m.contains_key("port") && !m.contains_key("bind_address"));
    assert!(
        std::path::Path::new(&m["tmpdir"]).starts_with(dir.path()),
        "tmpdir on the same disk"
    );

    // init never touches an existing datadir.
    let e = mysqld::init(&spec).unwrap_err();
    assert!(
        matches!(e.downcast_ref(), Some(MysqldError::NotEmpty { .. })),
        "{e:#}"
    );
    assert!(err_text(&e).contains("already an initialised"), "{e:#}");

    // With TCP: bound to 127.0.0.1 only.
    let dir2 = test_dir();
    let mut spec2 = small_spec(&dir2.path().join("mysql"));
    spec2.tcp_port = Some(3399);
    mysqld::init(&spec2).unwrap();
    let l2 = Layout::load(&spec2.datadir).unwrap();
    let m2 = parse_cnf_section(&std::fs::read_to_string(&l2.my_cnf).unwrap(), "mysqld");
    assert_eq!(m2["bind_address"], "127.0.0.1");
    assert_eq!(m2["port"], "3399");
    assert!(!m2.contains_key("skip_networking"));
}

#[test]
fn init_refuses_a_directory_with_foreign_files() {
    let dir = test_dir();
    let dd = dir.path().join("data");
    std::fs::create_dir(&dd).unwrap();
    std::fs::write(dd.join("notes.txt"), "mine").unwrap();
    let spec = small_spec(&dd);
    require_server(&spec);
    let e = mysqld::init(&spec).unwrap_err();
    assert!(err_text(&e).contains("not empty"), "{e:#}");
    assert_eq!(
        std::fs::read_to_string(dd.join("notes.txt")).unwrap(),
        "mine"
    );
}

#[tokio::test]
async fn credentials_are_0600_and_work_over_tcp() {
    let port = free_tcp_port();
    let srv = TestServer::start_with(|s| s.tcp_port = Some(port)).await;
    let l = Layout::load(srv.datadir()).unwrap();
    let mode = std::fs::metadata(&l.credentials)
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "credentials file mode");
    let stored: mysqld::Credentials =
        serde_json::from_str(&std::fs::read_to_string(&l.credentials).unwrap()).unwrap();
    assert_eq!(stored.password, srv.client.password);
    assert_eq!(srv.client.host.as_deref(), Some("127.0.0.1"));
    assert_eq!(srv.client.port, Some(port));

    let tcp = |pass: &str| -> mysql_async::Opts {
        mysql_async::OptsBuilder::default()
            .ip_or_hostname("127.0.0.1")
            .tcp_port(port)
            .user(Some(stored.user.clone()))
            .pass(Some(pass.to_string()))
            .db_name(Some(stored.database.clone()))
            .into()
    };
    let mut c = mysql_async::Conn::new(tcp(&stored.password)).await.unwrap();
    let one: Option<u8> = c.query_first("SELECT 1").await.unwrap();
    assert_eq!(one, Some(1));
    c.disconnect().await.unwrap();
    assert!(mysql_async::Conn::new(tcp("wrong")).await.is_err());

    // root needs the stored root password now (no empty-password root).
    let root_empty = mysql_async::OptsBuilder::default()
        .socket(Some(srv.client.socket.to_string_lossy()))
        .user(Some("root"))
        .pass(Some(""));
    assert!(mysql_async::Conn::new(root_empty).await.is_err());
}

#[tokio::test]
async fn start_on_something_that_is_not_a_datadir_says_so() {
    let dir = test_dir();
    for (name, setup) in [("empty", false), ("random", true)] {
        let dd = dir.path().join(name);
        std::fs::create_dir(&dd).unwrap();
        if setup {
            std::fs::write(dd.join("photo.jpg"), "x").unwrap();
        }
        let spec = small_spec(&dd);
        let e = mysqld::start(&spec).await.unwrap_err();
        assert!(
            matches!(e.downcast_ref(), Some(MysqldError::NotADatadir { .. })),
            "{e:#}"
        );
        let t = err_text(&e);
        assert!(
            t.contains(&dd.display().to_string()) && t.contains("spindle mysqld init"),
            "{t}"
        );
    }
    let e = mysqld::start(&small_spec(&dir.path().join("missing")))
        .await
        .unwrap_err();
    assert!(err_text(&e).contains("no such directory"), "{e:#}");
    let e = mysqld::status(&dir.path().join("empty")).unwrap_err();
    assert!(
        err_text(&e).contains("was not initialised by spindle"),
        "{e:#}"
    );
}

#[tokio::test]
async fn a_server_that_dies_at_start_quotes_its_error_log() {
    let dir = test_dir();
    let spec = small_spec(&dir.path().join("mysql"));
    require_server(&spec);
    mysqld::init(&spec).unwrap();
    let l = Layout::load(&spec.datadir).unwrap();
    let mut cnf = std::fs::read_to_string(&l.my_cnf).unwrap();
    cnf = cnf.replacen("[mysqld]\n", "[mysqld]\nspindle_no_such_option = 1\n", 1);
    std::fs::write(&l.my_cnf, cnf).unwrap();

    let e = mysqld::start(&spec).await.unwrap_err();
    assert!(
        matches!(e.downcast_ref(), Some(MysqldError::ServerDied { .. })),
        "{e:#}"
    );
    let t = err_text(&e);
    assert!(
        t.contains("spindle_no_such_option"),
        "the error must quote the log: {t}"
    );
    assert!(t.contains(&l.error_log.display().to_string()), "{t}");
    assert!(!mysqld::status(&spec.datadir).unwrap().running);
}

#[test]
fn init_failure_quotes_the_log_and_leaves_nothing_behind() {
    let dir = test_dir();
    let mut spec = small_spec(&dir.path().join("mysql"));
    require_server(&spec);
    spec.settings
        .extra
        .insert("spindle_bogus_option".into(), "1".into());
    let e = mysqld::init(&spec).unwrap_err();
    assert!(err_text(&e).contains("spindle_bogus_option"), "{e:#}");
    assert!(
        !spec.datadir.exists(),
        "a failed init removes the datadir it created"
    );
}

#[tokio::test]
async fn a_server_that_ignores_sigterm_is_killed_with_a_warning() {
    let srv = TestServer::start().await;
    let pid = mysqld::status(srv.datadir()).unwrap().pid.unwrap();
    // A stopped process cannot act on SIGTERM; SIGKILL still ends it.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGSTOP) }, 0);
    let out = mysqld::stop(srv.datadir(), Duration::from_millis(500))
        .await
        .unwrap();
    assert!(matches!(out, StopOutcome::Killed { .. }), "{out:?}");
    assert!(out.to_string().contains("warning"));
    assert!(!mysqld::status(srv.datadir()).unwrap().running);
}

#[test]
fn init_on_a_full_filesystem_is_refused_before_writing() {
    assert!(
        unsafe { libc::geteuid() } == 0,
        "this test mounts a 16 MiB tmpfs and needs root; run the tests as root (as CI does)"
    );
    let dir = test_dir();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let spec = small_spec(&mnt.join("mysql"));
    require_server(&spec);
    let ok = std::process::Command::new("mount")
        .args([
            "-t",
            "tmpfs",
            "-o",
            "size=16m",
            "spindle-test",
            mnt.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(ok.success(), "could not mount a tmpfs on {}", mnt.display());
    let result = mysqld::init(&spec);
    let leftovers = std::fs::read_dir(&mnt).unwrap().count();
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    let e = result.unwrap_err();
    assert!(
        matches!(e.downcast_ref(), Some(MysqldError::NoSpace { .. })),
        "{e:#}"
    );
    let t = err_text(&e);
    assert!(
        t.contains("MiB free") && t.contains(&mnt.display().to_string()),
        "{t}"
    );
    assert_eq!(leftovers, 0, "nothing may be written when space is short");
}

#[test]
fn root_refuses_a_datadir_the_mysql_user_cannot_reach() {
    let spec_probe = small_spec(std::path::Path::new("/tmp/x"));
    require_server(&spec_probe);
    let private = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .unwrap(); // owned by the test user, closed to everybody else
    let spec = small_spec(&private.path().join("mysql"));
    let as_root_with_mysql_user = unsafe { libc::geteuid() } == 0
        && std::process::Command::new("id")
            .arg("mysql")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
    let r = mysqld::init(&spec);
    if as_root_with_mysql_user {
        let e = r.unwrap_err();
        let t = err_text(&e);
        assert!(t.contains("'mysql'") && t.contains("chmod o+x"), "{t}");
        assert!(!spec.datadir.exists());
    } else {
        // A normal user's server runs as that user, who owns the directory.
        r.unwrap();
    }
}

#[test]
fn detect_names_a_bad_mysqld_flag() {
    let dir = test_dir();
    let mut spec = small_spec(&dir.path().join("mysql"));
    spec.mysqld = Some("/nonexistent/mariadbd".into());
    let e = mysqld::detect(&spec).unwrap_err();
    assert!(
        err_text(&e).contains("--mysqld '/nonexistent/mariadbd'"),
        "{e:#}"
    );
    spec.mysqld = Some("/bin/true".into());
    let e = mysqld::init(&spec).unwrap_err();
    assert!(
        err_text(&e).contains("does not look like a MySQL-family server"),
        "{e:#}"
    );
    assert!(!spec.datadir.exists());
}

/// The CLI end to end, as a normal user: as root the commands run as `nobody` via runuser
/// (so no root-only assumption hides in the code path); as a normal user they run directly.
#[test]
fn cli_lifecycle_as_a_normal_user() {
    require_server(&small_spec(std::path::Path::new("/tmp/x")));
    let dir = test_dir();
    let dd = dir.path().join("mysql");
    let as_root = unsafe { libc::geteuid() } == 0;
    if as_root {
        let ok = std::process::Command::new("chown")
            .args(["nobody", dir.path().to_str().unwrap()])
            .status()
            .unwrap();
        assert!(ok.success(), "could not chown the test directory to nobody");
    }
    let spindle = env!("CARGO_BIN_EXE_spindle");
    let run = |args: &[&str]| -> std::process::Output {
        let mut cmd = if as_root {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "nobody", "--", spindle]);
            c
        } else {
            std::process::Command::new(spindle)
        };
        cmd.arg("mysqld").args(args).arg("--datadir").arg(&dd);
        cmd.output()
            .expect("could not run spindle (as root this test needs `runuser`, from util-linux)")
    };
    struct Stop<'a>(&'a std::path::Path);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            let _ = mysqld::stop_blocking(self.0, Duration::from_secs(30));
        }
    }
    let _stop = Stop(&dd);

    let out = run(&["init", "--buffer-pool-size", "32M", "--log-file-size", "8M"]);
    assert!(
        out.status.success(),
        "init: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["start", "--timeout", "60"]);
    assert!(
        out.status.success(),
        "start: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("running (pid"));

    let out = run(&["status", "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let st: mysqld::ServerStatus = serde_json::from_slice(&out.stdout).unwrap();
    assert!(st.running);
    if as_root {
        let owner = std::fs::read_to_string(format!("/proc/{}/status", st.pid.unwrap())).unwrap();
        let uid_line = owner
            .lines()
            .find(|l| l.starts_with("Uid:"))
            .unwrap()
            .to_string();
        assert!(
            uid_line.contains("65534"),
            "server should run as nobody: {uid_line}"
        );
    }
    // Config flags belong to init.
    let out = run(&["stop", "--buffer-pool-size", "1G"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not apply"));

    let out = run(&["stop", "--timeout", "60"]);
    assert!(
        out.status.success(),
        "stop: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("shut down cleanly"));
    let out = run(&["status"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "status of a stopped server exits 3"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("running:   no"));
}
