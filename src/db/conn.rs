//! Reaching the server: `--mysql-*` options → mysql_async options, connecting with errors that
//! name the flag to fix, and classifying errors (ignorable / connection lost / fatal).

use mysql_async::{Conn, Opts, OptsBuilder};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Socket paths libmysqlclient falls back to for `--mysql-host=localhost` without a socket.
const DEFAULT_SOCKETS: &[&str] = &[
    "/run/mysqld/mysqld.sock",
    "/var/run/mysqld/mysqld.sock",
    "/tmp/mysql.sock",
];

/// How to reach the server (`--mysql-socket`, `--mysql-host`, …). Defaults are sysbench's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConnectionConfig {
    /// `--mysql-socket`: unix socket; wins over host/port when set.
    pub socket: Option<PathBuf>,
    /// `--mysql-host` (default `localhost`, which means the default unix socket, as in libmysql).
    pub host: String,
    /// `--mysql-port` (3306).
    pub port: u16,
    /// `--mysql-user` (`sbtest`).
    pub user: String,
    /// `--mysql-password` (empty). Never written to result documents.
    #[serde(skip_serializing, default)]
    pub password: String,
    /// `--mysql-db` (`sbtest`).
    pub database: String,
    /// Seconds the server may take to answer a handshake, or a statement of the measured loop
    /// read through io_uring (`db::uring`), before the connection counts as lost (2013, as
    /// libmysqlclient's MYSQL_OPT_READ_TIMEOUT). Longer than InnoDB's lock wait (50 s in
    /// spindle's my.cnf) with room for a slow disk's stalls.
    #[serde(default = "default_read_timeout_s")]
    pub read_timeout_s: f64,
}

fn default_read_timeout_s() -> f64 {
    DEFAULT_READ_TIMEOUT_S
}

/// The default [`ConnectionConfig::read_timeout_s`].
pub const DEFAULT_READ_TIMEOUT_S: f64 = 120.0;

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig {
            socket: None,
            host: "localhost".into(),
            port: 3306,
            user: "sbtest".into(),
            password: String::new(),
            database: "sbtest".into(),
            read_timeout_s: DEFAULT_READ_TIMEOUT_S,
        }
    }
}

/// Where a connection goes, for messages.
#[derive(Clone, Debug)]
enum Target {
    Socket(PathBuf, &'static str),
    Tcp(String, u16),
}

impl ConnectionConfig {
    fn target(&self) -> Target {
        if let Some(s) = &self.socket {
            return Target::Socket(s.clone(), "--mysql-socket");
        }
        if self.host == "localhost" {
            let found = DEFAULT_SOCKETS
                .iter()
                .find(|p| std::path::Path::new(p).exists())
                .unwrap_or(&DEFAULT_SOCKETS[0]);
            return Target::Socket(
                PathBuf::from(found),
                "--mysql-host=localhost (default socket)",
            );
        }
        Target::Tcp(self.host.clone(), self.port)
    }

    /// mysql_async options for one benchmark connection.
    pub fn opts(&self, with_db: bool) -> Opts {
        let b = OptsBuilder::default()
            .user(Some(self.user.clone()))
            .pass(Some(self.password.clone()))
            .db_name(if with_db {
                Some(self.database.clone())
            } else {
                None
            })
            .prefer_socket(false)
            .client_found_rows(false)
            .stmt_cache_size(0)
            .tcp_nodelay(true);
        let b = match self.target() {
            Target::Socket(p, _) => b.socket(Some(p.to_string_lossy().into_owned())),
            Target::Tcp(h, port) => b.ip_or_hostname(h).tcp_port(port),
        };
        Opts::from(b)
    }

    /// Human description of the target, naming the flag that chose it.
    pub fn describe(&self) -> String {
        match self.target() {
            Target::Socket(p, flag) => format!("socket '{}' ({flag})", p.display()),
            Target::Tcp(h, port) => format!("{h}:{port} (--mysql-host/--mysql-port)"),
        }
    }

    /// [`Self::read_timeout_s`] as a duration (at least a millisecond).
    pub fn read_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.read_timeout_s.max(0.001))
    }

    /// Connects once; errors say what failed and which flag to fix. A server that does not
    /// complete the handshake within the read timeout (stopped, hung) is an error too.
    pub async fn connect(&self, with_db: bool) -> anyhow::Result<Conn> {
        match tokio::time::timeout(self.read_timeout(), Conn::new(self.opts(with_db))).await {
            Ok(r) => r.map_err(|e| anyhow::anyhow!(self.explain_connect_error(&e))),
            Err(_) => Err(anyhow::anyhow!(
                "no answer from {} within {} s while connecting (is the server stopped or hung?)",
                self.describe(),
                self.read_timeout_s
            )),
        }
    }

    pub(crate) fn explain_connect_error(&self, e: &mysql_async::Error) -> String {
        let target = self.describe();
        match e {
            mysql_async::Error::Server(s) if s.code == 1045 || s.code == 1698 => format!(
                "access denied for user '{}' connecting to {target}: {} \
                 (check --mysql-user / --mysql-password, or use --datadir to read them from a \
                 server `spindle mysqld` started)",
                self.user, s.message
            ),
            mysql_async::Error::Server(s) if s.code == 1049 => format!(
                "database '{}' does not exist on {target}: create it or fix --mysql-db",
                self.database
            ),
            mysql_async::Error::Server(s) => {
                format!(
                    "server error {} connecting to {target}: {}",
                    s.code, s.message
                )
            }
            mysql_async::Error::Io(io) => {
                let hint = match self.target() {
                    Target::Socket(p, _) if !p.exists() => {
                        " (the socket file does not exist: is the server running? \
                         Start it with `spindle mysqld start --datadir PATH`, or fix --mysql-socket)"
                    }
                    Target::Socket(..) => {
                        " (is the server running? `spindle mysqld status --datadir PATH` tells)"
                    }
                    Target::Tcp(..) => " (is the server running and listening on TCP?)",
                };
                format!("cannot connect to {target}: {io}{hint}")
            }
            other => format!("cannot connect to {target}: {other}"),
        }
    }
}

/// `--mysql-ignore-errors`: codes that restart the transaction (default 1213,1020,1205), or all.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IgnoreErrors {
    All,
    Codes(Vec<u16>),
}

impl Default for IgnoreErrors {
    fn default() -> Self {
        IgnoreErrors::Codes(vec![1213, 1020, 1205])
    }
}

impl IgnoreErrors {
    /// Parses sysbench's syntax: `all`, `none`/empty, or a comma list of codes.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("all") {
            return Ok(IgnoreErrors::All);
        }
        if s.is_empty() || s.eq_ignore_ascii_case("none") {
            return Ok(IgnoreErrors::Codes(Vec::new()));
        }
        s.split(',')
            .map(|c| {
                c.trim().parse::<u16>().map_err(|_| {
                    format!("'{c}' is not a MySQL error code (use numbers like 1213,1205 or 'all')")
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(IgnoreErrors::Codes)
    }

    pub fn contains(&self, code: u16) -> bool {
        match self {
            IgnoreErrors::All => true,
            IgnoreErrors::Codes(c) => c.contains(&code),
        }
    }
}

/// What to do about an error raised by a statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// The connection is gone: reconnect, re-prepare, restart the transaction. Carries the code
    /// it is counted under (client codes 2006/2013 for I/O errors without one).
    Lost(u16),
    /// In `--mysql-ignore-errors`: restart the transaction.
    Ignorable(u16),
    /// Anything else ends the run.
    Fatal,
}

/// Server/client codes that mean the session is gone: CR_SERVER_GONE_ERROR, CR_SERVER_LOST,
/// CR_TCP_CONNECTION, CR_SERVER_LOST_EXTENDED, plus what a server sends while shutting down or
/// killing the session (ER_SERVER_SHUTDOWN, ER_CONNECTION_KILLED, MySQL 8's
/// ER_CLIENT_INTERACTION_TIMEOUT).
const LOST_CODES: &[u16] = &[2006, 2013, 2011, 2055, 1053, 1927, 4031];

pub fn classify(e: &mysql_async::Error, ignore: &IgnoreErrors) -> ErrorClass {
    use mysql_async::{DriverError, Error};
    match e {
        Error::Server(s) if LOST_CODES.contains(&s.code) => ErrorClass::Lost(s.code),
        Error::Server(s) if ignore.contains(s.code) => ErrorClass::Ignorable(s.code),
        Error::Server(_) => ErrorClass::Fatal,
        Error::Io(_) => ErrorClass::Lost(2013),
        Error::Driver(DriverError::ConnectionClosed) => ErrorClass::Lost(2006),
        Error::Driver(DriverError::PacketOutOfOrder) => ErrorClass::Lost(2013),
        _ => ErrorClass::Fatal,
    }
}

/// One line describing a statement error.
pub fn describe_error(e: &mysql_async::Error) -> String {
    match e {
        mysql_async::Error::Server(s) => format!("error {} ({}): {}", s.code, s.state, s.message),
        other => other.to_string(),
    }
}

/// The size of one multi-row INSERT for a prepare's fallback path: `max`, or the server's
/// `max_allowed_packet` less `reserve` when that is smaller, and never under 64 KiB.
pub async fn insert_batch_limit(conn: &mut mysql_async::Conn, max: usize, reserve: usize) -> usize {
    use mysql_async::prelude::Queryable;
    let max_packet: usize = conn
        .query_first::<u64, _>("SELECT @@max_allowed_packet")
        .await
        .ok()
        .flatten()
        .map(|v| v as usize)
        .unwrap_or(1 << 20);
    max.min(max_packet.saturating_sub(reserve)).max(64 << 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_errors_parses_sysbench_syntax() {
        assert_eq!(IgnoreErrors::parse("all").unwrap(), IgnoreErrors::All);
        assert_eq!(
            IgnoreErrors::parse("1213, 1205").unwrap(),
            IgnoreErrors::Codes(vec![1213, 1205])
        );
        assert_eq!(
            IgnoreErrors::parse("none").unwrap(),
            IgnoreErrors::Codes(vec![])
        );
        assert!(IgnoreErrors::parse("12x").unwrap_err().contains("12x"));
        assert!(IgnoreErrors::default().contains(1205));
        assert!(!IgnoreErrors::default().contains(1062));
    }

    #[test]
    fn missing_socket_error_names_the_flag() {
        let c = ConnectionConfig {
            socket: Some("/nonexistent/x.sock".into()),
            ..Default::default()
        };
        let e = mysql_async::Error::Io(mysql_async::IoError::Io(std::io::Error::from(
            std::io::ErrorKind::NotFound,
        )));
        let msg = c.explain_connect_error(&e);
        assert!(msg.contains("--mysql-socket"), "{msg}");
        assert!(msg.contains("/nonexistent/x.sock"), "{msg}");
    }
}
