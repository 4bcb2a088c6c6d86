//! A private MariaDB/MySQL server in a temporary datadir, started through spindle's own
//! provisioning code and always stopped again.

use spindle::provision::mysqld::{self, ClientInfo, MysqldSettings, ServerSpec};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;
use tempfile::TempDir;

const MIB: u64 = 1024 * 1024;

/// A running private server; stopped (synchronously) on drop, even when a test panics.
pub struct TestServer {
    /// Holds the datadir (`dir/mysql`) and its run directory (`dir/mysql.spindle`).
    pub dir: TempDir,
    /// The spec it was initialised and started with.
    pub spec: ServerSpec,
    /// The benchmark login (`sbtest`).
    pub client: ClientInfo,
}

/// A temporary directory the server user (`mysql`, when tests run as root) can enter.
pub fn test_dir() -> TempDir {
    let dir = tempfile::Builder::new()
        .prefix("spindle-t")
        .tempdir()
        .expect("could not create a temporary directory");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
        .expect("could not chmod the temporary directory");
    dir
}

/// A small, fast config: 32 MiB buffer pool, 8 MiB redo log; everything else as spindle's
/// defaults (binlog on, O_DIRECT, unix socket only).
pub fn small_spec(datadir: &Path) -> ServerSpec {
    ServerSpec {
        datadir: datadir.to_path_buf(),
        settings: MysqldSettings {
            buffer_pool_size: Some(32 * MIB),
            log_file_size: 8 * MIB,
            log_buffer_size: 4 * MIB,
            ..Default::default()
        },
        start_timeout: Duration::from_secs(60),
        ..Default::default()
    }
}

/// Fails the test (with what to install) when no MySQL-family server is available.
pub fn require_server(spec: &ServerSpec) {
    if let Err(e) = mysqld::detect(spec) {
        panic!(
            "this test needs a MySQL-family server: install `mariadb-server` \
             (`apt install mariadb-server` on Debian) so that mariadbd and mariadb-install-db \
             are in PATH or /usr/sbin: {e:#}"
        );
    }
}

/// The Oracle MySQL server program the flavor tests run: `SPINDLE_TEST_MYSQL` when set, else
/// the one `scripts/mysql-root.sh` provides (Debian sid's MySQL in a root of its own, run
/// through that root's loader; built once with mmdebstrap, then cached). Fails the test with
/// what to do when neither works.
pub fn mysql_server() -> PathBuf {
    static PATH: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let found = PATH.get_or_init(|| {
        if let Some(p) = std::env::var_os("SPINDLE_TEST_MYSQL").filter(|p| !p.is_empty()) {
            let p = PathBuf::from(p);
            return if p.is_file() {
                Ok(p)
            } else {
                Err(format!(
                    "SPINDLE_TEST_MYSQL='{}' is not a file",
                    p.display()
                ))
            };
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/mysql-root.sh");
        let out = std::process::Command::new("bash")
            .arg(&script)
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|e| format!("could not run '{}': {e}", script.display()))?;
        let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || path.is_empty() {
            return Err(format!(
                "'{}' failed ({}): it builds Debian sid's MySQL in a root of its own and needs \
                 root and mmdebstrap; or set SPINDLE_TEST_MYSQL to a MySQL server program",
                script.display(),
                out.status
            ));
        }
        Ok(PathBuf::from(path))
    });
    match found {
        Ok(p) => p.clone(),
        Err(e) => panic!("this test needs Oracle MySQL: {e}"),
    }
}

/// A TCP port that was free a moment ago.
pub fn free_tcp_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("could not find a free TCP port")
}

impl TestServer {
    /// Initialises and starts a server with [`small_spec`] in a fresh temporary datadir.
    pub async fn start() -> TestServer {
        Self::start_with(|_| {}).await
    }

    /// Like [`start`](Self::start), with Oracle MySQL ([`mysql_server`]).
    pub async fn start_mysql() -> TestServer {
        Self::start_with(|s| s.mysqld = Some(mysql_server())).await
    }

    /// Like [`start`](Self::start), letting the caller adjust the spec first.
    pub async fn start_with(adjust: impl FnOnce(&mut ServerSpec)) -> TestServer {
        let dir = test_dir();
        let mut spec = small_spec(&dir.path().join("mysql"));
        adjust(&mut spec);
        require_server(&spec);
        mysqld::init(&spec).unwrap_or_else(|e| panic!("spindle mysqld init failed: {e:#}"));
        // `start` stops the server itself when it fails, so nothing is left behind here.
        let client = mysqld::start(&spec)
            .await
            .unwrap_or_else(|e| panic!("spindle mysqld start failed: {e:#}"));
        TestServer { dir, spec, client }
    }

    pub fn datadir(&self) -> &Path {
        &self.spec.datadir
    }

    /// The engines' connection settings for the benchmark login over the unix socket.
    pub fn connection(&self) -> spindle::db::ConnectionConfig {
        spindle::db::ConnectionConfig {
            socket: Some(self.client.socket.clone()),
            user: self.client.user.clone(),
            password: self.client.password.clone(),
            database: self.client.database.clone(),
            ..Default::default()
        }
    }

    /// mysql_async options for the benchmark login over the unix socket.
    pub fn opts(&self) -> mysql_async::Opts {
        mysql_async::OptsBuilder::default()
            .socket(Some(self.client.socket.to_string_lossy()))
            .user(Some(self.client.user.clone()))
            .pass(Some(self.client.password.clone()))
            .db_name(Some(self.client.database.clone()))
            .into()
    }

    /// The same login over TCP to 127.0.0.1:`port` (a server started with `tcp_port`).
    pub fn tcp_opts(&self, port: u16) -> mysql_async::Opts {
        mysql_async::OptsBuilder::default()
            .ip_or_hostname("127.0.0.1")
            .tcp_port(port)
            .user(Some(self.client.user.clone()))
            .pass(Some(self.client.password.clone()))
            .db_name(Some(self.client.database.clone()))
            .into()
    }
}

/// The number a run's diagnostic line starting with `prefix` gives (panics when there is none).
pub fn diagnostics_say(r: &spindle::engine::Measurement, prefix: &str) -> u64 {
    r.diagnostics
        .iter()
        .find_map(|n| {
            n.strip_prefix(prefix)
                .and_then(|rest| rest.split(' ').next())
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or_else(|| panic!("no diagnostic starting {prefix:?} in {:?}", r.diagnostics))
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Err(e) = mysqld::stop_blocking(&self.spec.datadir, Duration::from_secs(30)) {
            eprintln!(
                "could not stop the test server in {}: {e:#}",
                self.spec.datadir.display()
            );
        }
    }
}
