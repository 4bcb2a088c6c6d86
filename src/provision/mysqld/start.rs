//! `start`: spawn the server, wait until it answers, and provision it at first start (root
//! password, the benchmark user and database).

use super::init::{looks_like_datadir, touch_log};
use super::layout::{self, Credentials, Layout};
use super::process::*;
use super::shared::*;
use super::user::*;
use anyhow::{bail, Context};
use mysql_async::prelude::Queryable as _;
use std::io::Read as _;
use std::path::Path;
use std::time::{Duration, Instant};

/// A random password of 24 letters and digits (from the kernel's CSPRNG).
pub fn random_password() -> anyhow::Result<String> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut f = std::fs::File::open("/dev/urandom").context("could not open /dev/urandom")?;
    let mut out = String::with_capacity(24);
    let mut buf = [0u8; 64];
    while out.len() < 24 {
        f.read_exact(&mut buf)
            .context("could not read /dev/urandom")?;
        for b in buf {
            // 248 = 4 × 62: reject the rest so every character is equally likely.
            if b < 248 && out.len() < 24 {
                out.push(ALPHABET[usize::from(b) % 62] as char);
            }
        }
    }
    Ok(out)
}

/// Launches the server in the background, waits until it answers on its socket, and makes
/// sure database `sbtest` and user `sbtest` (random password, `credentials.json`) exist.
pub async fn start(spec: &ServerSpec) -> anyhow::Result<ClientInfo> {
    let datadir = layout::absolute_datadir(&spec.datadir)?;
    if !datadir.is_dir() {
        return Err(MysqldError::NotADatadir {
            path: datadir,
            reason: "no such directory".into(),
        }
        .into());
    }
    if !looks_like_datadir(&datadir) {
        return Err(MysqldError::NotADatadir {
            path: datadir,
            reason: "it has no 'mysql' system schema".into(),
        }
        .into());
    }
    let l = Layout::load(&datadir)?;
    let record = read_record(&l)?;
    if let Some(pid) = running_pid(&l) {
        return Err(MysqldError::AlreadyRunning {
            datadir: l.datadir.clone(),
            pid,
        }
        .into());
    }
    let mysqld = match &spec.mysqld {
        Some(_) => detect(spec)?.mysqld,
        None => record.binary.mysqld.clone(),
    };
    if !mysqld.is_file() {
        bail!(
            "the server program '{}' recorded at init no longer exists; install it again or pass --mysqld PATH",
            mysqld.display()
        );
    }
    let run_as = if crate::sys::is_root() {
        record
            .run_as
            .as_deref()
            .and_then(lookup_user)
            .or_else(choose_run_as)
    } else {
        None
    };
    touch_log(&l.error_log, run_as.as_ref().filter(|u| u.uid != 0))?;
    if let Some(dir) = l.socket.parent().filter(|d| !d.exists()) {
        // The short /tmp socket directory vanishes at reboot.
        create_dir_for(dir, run_as.as_ref().filter(|u| u.uid != 0), 0o755)?;
    }

    let mut args = vec![format!("--defaults-file={}", path_arg(&l.my_cnf)?)];
    if let Some(u) = &run_as {
        args.push(format!("--user={}", u.name));
    }
    let log_start = file_len(&l.error_log);
    let child = spawn_server(&mysqld, &args, &l.error_log)?;
    let pid = child.id();
    let auth = account_plugin(&record.binary);
    match wait_ready_and_provision(&l, child, spec.start_timeout, log_start, auth).await {
        Ok(info) => Ok(info),
        Err(e) => {
            // Never leave a half-started server behind.
            if pid_alive(pid) {
                let _ = terminate(pid, Duration::from_secs(10));
            }
            Err(e)
        }
    }
}

pub(super) async fn wait_ready_and_provision(
    l: &Layout,
    mut child: std::process::Child,
    timeout: Duration,
    log_start: u64,
    auth: Option<&str>,
) -> anyhow::Result<ClientInfo> {
    let deadline = Instant::now() + timeout;
    // An unreadable credentials file is an error: new passwords would lock the old ones out.
    let creds = if l.credentials.exists() {
        layout::read_json::<Credentials>(&l.credentials)?
    } else {
        Credentials {
            user: BENCH_DB.into(),
            password: random_password()?,
            database: BENCH_DB.into(),
            root_user: "root".into(),
            root_password: random_password()?,
        }
    };
    let conn = loop {
        if let Some(st) = child.try_wait()? {
            return Err(MysqldError::ServerDied {
                status: st.to_string(),
                log: l.error_log.clone(),
                tail: log_tail_since(&l.error_log, log_start),
            }
            .into());
        }
        if l.socket.exists() {
            match root_connect(l, &creds).await {
                Ok(c) => break c,
                Err(e) if is_access_denied(&e) => {
                    return Err(e).with_context(|| format!("the server answers on '{}' but refuses spindle's root login; '{}' does not match this datadir: restore it, or re-initialise the datadir", l.socket.display(), l.credentials.display()));
                }
                Err(_) => {}
            }
        }
        if Instant::now() >= deadline {
            return Err(MysqldError::NotReady {
                socket: l.socket.clone(),
                secs: timeout.as_secs(),
                log: l.error_log.clone(),
                tail: log_tail_since(&l.error_log, log_start),
            }
            .into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // Reap the server when it exits, so it never lingers as a zombie of a long-lived caller.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    if !l.credentials.exists() {
        // Written before the passwords are set, so they can never be lost.
        layout::write_json(&l.credentials, &creds, 0o600)?;
    }
    provision(conn, &creds, auth).await.with_context(|| {
        format!(
            "could not create database and user '{BENCH_DB}' on '{}'",
            l.socket.display()
        )
    })?;
    let info = client_info_of(l, &creds);
    // Prove the login the benchmark will use.
    let c = mysql_async::Conn::new(opts(
        &l.socket,
        &creds.user,
        &creds.password,
        Some(&creds.database),
    ))
    .await
    .with_context(|| {
        format!(
            "the new benchmark login '{}' does not work on '{}'",
            creds.user,
            l.socket.display()
        )
    })?;
    let _ = c.disconnect().await;
    Ok(info)
}

pub(super) fn opts(socket: &Path, user: &str, pass: &str, db: Option<&str>) -> mysql_async::Opts {
    mysql_async::OptsBuilder::default()
        .socket(Some(socket.to_string_lossy()))
        .user(Some(user))
        .pass(Some(pass))
        .db_name(db)
        .into()
}

pub(super) fn is_access_denied(e: &mysql_async::Error) -> bool {
    matches!(e, mysql_async::Error::Server(s) if s.code == 1045 || s.code == 1698)
}

/// Logs in as root: with the stored password, or (first start) with the empty one.
pub(super) async fn root_connect(
    l: &Layout,
    c: &Credentials,
) -> Result<mysql_async::Conn, mysql_async::Error> {
    let attempt = tokio::time::timeout(
        Duration::from_secs(5),
        mysql_async::Conn::new(opts(&l.socket, &c.root_user, &c.root_password, None)),
    );
    match attempt.await {
        Ok(Err(e)) if is_access_denied(&e) => {
            mysql_async::Conn::new(opts(&l.socket, &c.root_user, "", None)).await
        }
        Ok(r) => r,
        Err(_) => Err(mysql_async::Error::Io(mysql_async::IoError::Io(
            std::io::Error::new(std::io::ErrorKind::TimedOut, "login timed out"),
        ))),
    }
}

/// Quotes a string as an SQL literal.
pub(super) fn sql_str(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The plugin spindle names when it creates accounts: `caching_sha2_password` on MySQL and
/// Percona Server 8.0+ (their default, and the only one in 9.x); MariaDB's default otherwise.
pub(super) fn account_plugin(b: &super::version::ServerBinary) -> Option<&'static str> {
    (b.flavor != super::version::Flavor::MariaDb && b.version.at_least(8, 0, 4))
        .then_some(super::config::AUTH_PLUGIN)
}

pub(super) async fn provision(
    mut conn: mysql_async::Conn,
    c: &Credentials,
    auth: Option<&str>,
) -> anyhow::Result<()> {
    // Every root account gets the stored password; anonymous accounts go.
    let root_hosts = account_hosts(&mut conn, &c.root_user).await?;
    for h in root_hosts {
        let r = conn
            .query_drop(format!(
                "ALTER USER {}@{} {}",
                sql_str(&c.root_user),
                sql_str(&h),
                identified(auth, &c.root_password)
            ))
            .await;
        match r {
            // Host-name accounts (MariaDB's root@<hostname>) are ignored under
            // skip-name-resolve and cannot be altered; they cannot log in either.
            Err(mysql_async::Error::Server(e)) if e.code == 1396 && h != "localhost" => {}
            r => r?,
        }
    }
    for h in account_hosts(&mut conn, "").await? {
        conn.query_drop(format!("DROP USER ''@{}", sql_str(&h)))
            .await?;
    }
    conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{}`", c.database))
        .await?;
    // CREATE USER only for an account that is missing: `CREATE USER IF NOT EXISTS` on one that
    // exists logs a warning (MySQL's MY-010235) at every restart.
    let existing = account_hosts(&mut conn, &c.user).await?;
    for host in ["localhost", "127.0.0.1"] {
        let who = format!("{}@{}", sql_str(&c.user), sql_str(host));
        let verb = if existing.iter().any(|h| h == host) {
            "ALTER"
        } else {
            "CREATE"
        };
        conn.query_drop(format!(
            "{verb} USER {who} {}",
            identified(auth, &c.password)
        ))
        .await?;
        conn.query_drop(format!(
            "GRANT ALL PRIVILEGES ON `{}`.* TO {who}",
            c.database
        ))
        .await?;
    }
    conn.disconnect().await?;
    Ok(())
}

/// The hosts of the accounts named `user`.
async fn account_hosts(
    conn: &mut mysql_async::Conn,
    user: &str,
) -> Result<Vec<String>, mysql_async::Error> {
    conn.exec("SELECT Host FROM mysql.user WHERE User = ?", (user,))
        .await
}

/// `IDENTIFIED [WITH plugin] BY 'password'`.
fn identified(plugin: Option<&str>, password: &str) -> String {
    match plugin {
        Some(p) => format!("IDENTIFIED WITH {p} BY {}", sql_str(password)),
        None => format!("IDENTIFIED BY {}", sql_str(password)),
    }
}
