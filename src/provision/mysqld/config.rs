//! The generated `my.cnf`: settings (after the reference Percona-on-a-Pi article, seed 000),
//! per-flavor rendering, reading values back, and size strings such as `64M`.

use super::version::{Flavor, ServerVersion};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::units::MIB;

/// Smallest buffer pool spindle sizes from RAM (the Pi 4 with 1 GB still gets this much).
pub const MIN_BUFFER_POOL_BYTES: u64 = 128 * MIB;

/// The server settings written into `my.cnf`. Defaults follow the reference article's config
/// (Percona Server on a Raspberry Pi 4, seed 000); every value can be overridden.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MysqldSettings {
    /// `innodb_buffer_pool_size` in bytes; `None` sizes it from RAM (3/8 of it, as the
    /// article's 1536M on a 4 GB Pi, rounded down to 128 MiB, at least 128 MiB).
    pub buffer_pool_size: Option<u64>,
    /// `innodb_log_file_size` in bytes (article: 64M, two files). On MySQL ≥ 8.0.30 this is
    /// written as `innodb_redo_log_capacity` = 2 × this; MariaDB ≥ 10.5 has one log file.
    pub log_file_size: u64,
    /// `innodb_log_buffer_size` in bytes (article: 8M).
    pub log_buffer_size: u64,
    /// `innodb_flush_method` (article: O_DIRECT).
    pub flush_method: String,
    /// `innodb_flush_log_at_trx_commit`: 0, 1 or 2 (article: 2).
    pub flush_log_at_trx_commit: u8,
    /// Binary log on (`log-bin` beside the datadir) or off (`skip-log-bin`).
    pub binlog: bool,
    /// `sync_binlog` (article: 1).
    pub sync_binlog: u32,
    /// `binlog_format` (article: mixed).
    pub binlog_format: String,
    /// `tmpdir`; `None` = `tmp/` in the run directory beside the datadir (same disk).
    pub tmpdir: Option<PathBuf>,
    /// `max_connections` (article: 50; spindle allows more benchmark threads).
    pub max_connections: u32,
    /// `max_allowed_packet` in bytes (article: 64M).
    pub max_allowed_packet: u64,
    /// `innodb_lock_wait_timeout` in seconds (article: 50).
    pub lock_wait_timeout_s: u32,
    /// Raw `[mysqld]` overrides, written last: a key that spindle also generates replaces the
    /// generated line (`-` and `_` are equivalent); an empty value writes a bare flag.
    pub extra: BTreeMap<String, String>,
}

impl Default for MysqldSettings {
    fn default() -> Self {
        MysqldSettings {
            buffer_pool_size: None,
            log_file_size: 64 * MIB,
            log_buffer_size: 8 * MIB,
            flush_method: "O_DIRECT".into(),
            flush_log_at_trx_commit: 2,
            binlog: true,
            sync_binlog: 1,
            binlog_format: "MIXED".into(),
            tmpdir: None,
            max_connections: 200,
            max_allowed_packet: 64 * MIB,
            lock_wait_timeout_s: 50,
            extra: BTreeMap::new(),
        }
    }
}

/// Buffer pool for a machine with `ram_bytes` of memory: 3/8 of RAM (the article's 1536M of
/// 4 GB), rounded down to 128 MiB, never below [`MIN_BUFFER_POOL_BYTES`].
pub fn default_buffer_pool_size(ram_bytes: u64) -> u64 {
    let chunk = 128 * MIB;
    ((ram_bytes / 8 * 3) / chunk * chunk).max(MIN_BUFFER_POOL_BYTES)
}

/// The file locations a `my.cnf` refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CnfPaths {
    /// `datadir`.
    pub datadir: PathBuf,
    /// `socket`.
    pub socket: PathBuf,
    /// `pid-file`.
    pub pid_file: PathBuf,
    /// `log-error`.
    pub error_log: PathBuf,
    /// `tmpdir`.
    pub tmpdir: PathBuf,
    /// Base name of the binary log files (`…/binlog/mysql-bin`).
    pub binlog_base: PathBuf,
}

/// Everything the renderer needs besides the settings.
#[derive(Clone, Debug)]
pub struct CnfTarget<'a> {
    /// Server flavor: decides which keys exist.
    pub flavor: Flavor,
    /// Server version: decides which keys exist.
    pub version: ServerVersion,
    /// File locations.
    pub paths: &'a CnfPaths,
    /// `None`: unix socket only (`skip-networking`); `Some(port)`: TCP on 127.0.0.1:port.
    pub tcp_port: Option<u16>,
    /// Machine memory, for the buffer pool when the settings leave it unset.
    pub ram_bytes: u64,
}

/// Normalises an option name the way mysqld does (`-` and `_` are the same).
fn norm(key: &str) -> String {
    key.trim().replace('-', "_").to_ascii_lowercase()
}

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// One InnoDB I/O setting that every flavor gets where the variable exists, so a disk's figures
/// do not follow the server's own defaults (MySQL 9.7 and MariaDB 10.11 differ in most of them:
/// `innodb_io_capacity` 10000 against 200, `innodb_flush_neighbors` 0 against 1, …).
#[derive(Clone, Copy, Debug)]
pub struct PinnedSetting {
    /// The server variable (my.cnf key and `SHOW GLOBAL VARIABLES` name).
    pub name: &'static str,
    /// The value written; the server reports it back in this spelling (case aside).
    pub value: &'static str,
    /// Whether the variable exists in this flavor and version (an unknown key stops mysqld).
    exists: fn(Flavor, ServerVersion) -> bool,
}

impl PinnedSetting {
    /// Whether `flavor` `version` has this variable (and so gets it in my.cnf).
    pub fn exists_in(&self, flavor: Flavor, version: ServerVersion) -> bool {
        (self.exists)(flavor, version)
    }
}

fn everywhere(_: Flavor, _: ServerVersion) -> bool {
    true
}

/// The change buffer: removed in MariaDB 11.0; present in MySQL and Percona 5.7 to 9.x.
fn has_change_buffer(f: Flavor, v: ServerVersion) -> bool {
    f != Flavor::MariaDb || !v.at_least(11, 0, 0)
}

/// The pinned InnoDB I/O settings. The values are the long-standing defaults of both families
/// (MySQL 5.7's and MariaDB's) where they agree, and MySQL 8.4's where they do not:
/// - `innodb_io_capacity` 200 / `_max` 2000: background flushing sized for one disk, not the
///   10000 MySQL 8.4+ assumes (an SSD array), so a USB hard disk is not flooded;
/// - `innodb_flush_neighbors` 0: no neighbour-page flushing (MySQL 8.0+'s default; MariaDB's 1
///   favours rotating disks and would give them a setting the SSDs do not get);
/// - `innodb_doublewrite` ON: both flavors' default, written down so it cannot drift;
/// - `innodb_change_buffering` none: MySQL 8.4's and MariaDB 10.6+'s default (8.0 buffered all);
/// - `innodb_adaptive_hash_index` OFF: MySQL 8.4's and MariaDB 10.5+'s default (8.0 had ON);
/// - `innodb_read_io_threads`/`innodb_write_io_threads` 4: MySQL 8.4 sizes the read threads
///   by the cores, the others use 4;
/// - `innodb_lru_scan_depth` 1024 (MariaDB 10.5+ uses 1536), `innodb_max_dirty_pages_pct` 90,
///   `_lwm` 10 (MariaDB 0), `innodb_adaptive_flushing` ON, `innodb_flush_sync` ON,
///   `innodb_use_native_aio` ON.
///
/// The redo size, flush method and commit flush policy come from [`MysqldSettings`].
pub const PINNED_IO_SETTINGS: &[PinnedSetting] = &[
    pin("innodb_io_capacity", "200", everywhere),
    pin("innodb_io_capacity_max", "2000", everywhere),
    pin("innodb_flush_neighbors", "0", everywhere),
    pin("innodb_doublewrite", "ON", everywhere),
    pin("innodb_change_buffering", "none", has_change_buffer),
    pin("innodb_adaptive_hash_index", "OFF", everywhere),
    pin("innodb_read_io_threads", "4", everywhere),
    pin("innodb_write_io_threads", "4", everywhere),
    pin("innodb_lru_scan_depth", "1024", everywhere),
    pin("innodb_max_dirty_pages_pct", "90", everywhere),
    pin("innodb_max_dirty_pages_pct_lwm", "10", everywhere),
    pin("innodb_adaptive_flushing", "ON", everywhere),
    pin("innodb_flush_sync", "ON", everywhere),
    pin("innodb_use_native_aio", "ON", everywhere),
];

const fn pin(
    name: &'static str,
    value: &'static str,
    exists: fn(Flavor, ServerVersion) -> bool,
) -> PinnedSetting {
    PinnedSetting {
        name,
        value,
        exists,
    }
}

/// Renders the `my.cnf` text for `target`, with only the keys its flavor/version accepts.
/// The InnoDB lines of my.cnf (the article's values unless overridden).
fn innodb_lines(s: &MysqldSettings, t: &CnfTarget<'_>, put: &mut dyn FnMut(&str, Option<String>)) {
    let mariadb = t.flavor == Flavor::MariaDb;
    let v = t.version;
    put("default-storage-engine", Some("InnoDB".into()));
    put("innodb_file_per_table", Some("1".into()));
    put("innodb_flush_method", Some(s.flush_method.clone()));
    let pool = s
        .buffer_pool_size
        .unwrap_or_else(|| default_buffer_pool_size(t.ram_bytes));
    put(
        "innodb_buffer_pool_size",
        Some(crate::units::my_cnf_size(pool)),
    );
    if !mariadb {
        // Removed in MariaDB 10.6 (an unknown option there); still valid in MySQL 5.7/8.
        put("innodb_buffer_pool_instances", Some("1".into()));
    }
    if !mariadb && v.at_least(8, 0, 30) {
        put(
            "innodb_redo_log_capacity",
            Some(crate::units::my_cnf_size(2 * s.log_file_size)),
        );
    } else {
        put(
            "innodb_log_file_size",
            Some(crate::units::my_cnf_size(s.log_file_size)),
        );
        if !mariadb || !v.at_least(10, 5, 0) {
            put("innodb_log_files_in_group", Some("2".into()));
        }
    }
    put(
        "innodb_log_buffer_size",
        Some(crate::units::my_cnf_size(s.log_buffer_size)),
    );
    put(
        "innodb_flush_log_at_trx_commit",
        Some(s.flush_log_at_trx_commit.to_string()),
    );
    put(
        "innodb_lock_wait_timeout",
        Some(s.lock_wait_timeout_s.to_string()),
    );
    for p in PINNED_IO_SETTINGS
        .iter()
        .filter(|p| p.exists_in(t.flavor, v))
    {
        put(p.name, Some(p.value.into()));
    }
}

/// The lines that make MySQL and Percona Server (8.0 and later) run as a private server:
/// - `secure_file_priv = NULL`: the packages are built with `/var/lib/mysql-files`, which only
///   the full package's maintainer scripts create, and the server will not start without it;
///   spindle reads and writes no server-side files (it loads with `LOAD DATA LOCAL`);
/// - the authentication plugin named: `caching_sha2_password` (the only one left in 9.x;
///   `mysql_native_password` is gone), as `authentication_policy` from 8.0.27 on and as
///   `default_authentication_plugin` before (removed in 9.0).
fn mysql_lines(t: &CnfTarget<'_>, put: &mut dyn FnMut(&str, Option<String>)) {
    let v = t.version;
    put("secure_file_priv", Some("NULL".into()));
    if v.at_least(8, 0, 27) {
        put("authentication_policy", Some(format!("{AUTH_PLUGIN},,")));
    } else if v.at_least(8, 0, 4) {
        put("default_authentication_plugin", Some(AUTH_PLUGIN.into()));
    }
}

/// MySQL and Percona Server 8.0.34 deprecated `binlog_format` (the server logs a warning at
/// every start); there the server's default, ROW, is kept. MariaDB keeps the setting.
pub fn binlog_format_is_deprecated(flavor: Flavor, v: ServerVersion) -> bool {
    flavor != Flavor::MariaDb && v.at_least(8, 0, 34)
}

/// The authentication plugin of spindle's accounts on MySQL and Percona Server 8.0+.
pub const AUTH_PLUGIN: &str = "caching_sha2_password";

pub fn render_my_cnf(s: &MysqldSettings, t: &CnfTarget<'_>) -> String {
    let mariadb = t.flavor == Flavor::MariaDb;
    let v = t.version;
    let mut lines: Vec<(String, Option<String>)> = Vec::new();
    let mut put = |k: &str, v: Option<String>| lines.push((k.to_string(), v));
    let put = &mut put;

    put("datadir", Some(path_str(&t.paths.datadir)));
    put("socket", Some(path_str(&t.paths.socket)));
    put("pid-file", Some(path_str(&t.paths.pid_file)));
    put("log-error", Some(path_str(&t.paths.error_log)));
    put("tmpdir", Some(path_str(&t.paths.tmpdir)));
    match t.tcp_port {
        None => put("skip-networking", None),
        Some(port) => {
            put("bind-address", Some("127.0.0.1".into()));
            put("port", Some(port.to_string()));
        }
    }
    if !mariadb && v.at_least(8, 0, 0) {
        // The X plugin would listen on 33060 and /var/run/mysqld; the benchmark never uses it.
        put("mysqlx", Some("OFF".into()));
    }
    put("skip-name-resolve", Some("1".into()));
    put("max_connections", Some(s.max_connections.to_string()));
    put(
        "max_allowed_packet",
        Some(crate::units::my_cnf_size(s.max_allowed_packet)),
    );
    put("slow_query_log", Some("0".into()));
    // Off on every flavor: MariaDB's default, and on MySQL 9.7 it holds 230-250 MB (a quarter
    // of a 1 GB Pi) that a disk benchmark does not read. `--set performance_schema=ON` for it.
    put("performance_schema", Some("OFF".into()));
    // The engines load with LOAD DATA LOCAL INFILE (MySQL 8.0+ turns it off by default; without
    // it they fall back to multi-row INSERTs, twice as slow on MySQL 9.7).
    put("local_infile", Some("ON".into()));
    if !mariadb && v.at_least(8, 0, 0) {
        mysql_lines(t, put);
    }
    if mariadb || !v.at_least(8, 0, 0) {
        put("query_cache_type", Some("0".into()));
        put("query_cache_size", Some("0".into()));
    }

    // Binary log (article: log-bin, sync_binlog = 1, mixed, 5 days).
    if s.binlog {
        put("log-bin", Some(path_str(&t.paths.binlog_base)));
        put("server-id", Some("1".into()));
        put("sync_binlog", Some(s.sync_binlog.to_string()));
        // MySQL 8.0.34+ warns at every start and will remove it: its default, ROW, stays.
        if !binlog_format_is_deprecated(t.flavor, v) {
            put("binlog_format", Some(s.binlog_format.clone()));
        }
        if (mariadb && v.at_least(10, 6, 1)) || (!mariadb && v.at_least(8, 0, 1)) {
            put("binlog_expire_logs_seconds", Some((5 * 86400).to_string()));
        } else {
            put("expire_logs_days", Some("5".into()));
        }
    } else {
        put("skip-log-bin", None);
    }

    innodb_lines(s, t, put);

    // Raw overrides: replace the generated line, or append.
    let mut appended = Vec::new();
    for (k, val) in &s.extra {
        let val = (!val.trim().is_empty()).then(|| val.trim().to_string());
        match lines.iter_mut().find(|(gk, _)| norm(gk) == norm(k)) {
            Some(line) => line.1 = val,
            None => appended.push((k.trim().to_string(), val)),
        }
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Generated by spindle {} for {} {}, after the reference article's config",
        crate::version::VERSION,
        t.flavor,
        v
    );
    out.push_str(
        "# (Percona Server on a Raspberry Pi 4). `spindle mysqld start` uses this file as is:\n",
    );
    out.push_str("# edit it to change a setting, or re-initialise.\n\n[mysqld]\n");
    for (k, val) in lines.iter().chain(appended.iter()) {
        match val {
            Some(val) => {
                let _ = writeln!(out, "{k} = {val}");
            }
            None => {
                let _ = writeln!(out, "{k}");
            }
        }
    }
    let _ = write!(out, "\n[client]\nsocket = {}\n", path_str(&t.paths.socket));
    out
}

/// Reads the `key = value` lines of one `[section]` of a my.cnf text; bare flags map to "".
/// Keys are normalised (`pid-file` → `pid_file`).
pub fn parse_cnf_section(text: &str, section: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut inside = false;
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = name.trim().eq_ignore_ascii_case(section);
            continue;
        }
        if !inside {
            continue;
        }
        let (k, v) = match line.split_once('=') {
            Some((k, v)) => (k, v.trim()),
            None => (line, ""),
        };
        let v = v
            .strip_prefix('"')
            .and_then(|x| x.strip_suffix('"'))
            .unwrap_or(v);
        out.insert(norm(k), v.to_string());
    }
    out
}

/// `text` with `key = value` in `[section]`: the key's line replaced (`-` and `_` alike), or
/// added at the end of the section when it has none. Everything else is kept as it was.
pub fn set_cnf_value(text: &str, section: &str, key: &str, value: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut inside = false;
    let mut done = false;
    // Where the current section's last non-blank line is, to append after it.
    let mut section_end: Option<usize> = None;
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if inside && !done {
                let at = section_end.map_or(out.len(), |i| i + 1);
                out.insert(at, format!("{key} = {value}"));
                done = true;
            }
            inside = name.trim().eq_ignore_ascii_case(section);
            out.push(raw.to_string());
            section_end = Some(out.len() - 1);
            continue;
        }
        let k = line.split_once('=').map_or(line, |(k, _)| k);
        if inside && !line.starts_with('#') && !line.is_empty() && norm(k) == norm(key) {
            if !done {
                out.push(format!("{key} = {value}"));
                done = true;
            }
            section_end = Some(out.len() - 1);
            continue;
        }
        out.push(raw.to_string());
        if inside && !line.is_empty() {
            section_end = Some(out.len() - 1);
        }
    }
    if !done {
        if !inside {
            out.push(format!("[{section}]"));
            section_end = Some(out.len() - 1);
        }
        let at = section_end.map_or(out.len(), |i| i + 1);
        out.insert(at, format!("{key} = {value}"));
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}

/// A size as given on the command line or in a profile, for clap's `value_parser`.
pub fn parse_size_arg(text: &str) -> Result<u64, String> {
    crate::units::parse_size(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_setting_is_replaced_or_added_and_the_rest_kept() {
        let cnf = "# spindle\n\n[mysqld]\ndatadir = /d\ninnodb-buffer-pool-size = 64M\nskip-log-bin\n\n[client]\nsocket = /s\n";
        let t = set_cnf_value(cnf, "mysqld", "innodb_buffer_pool_size", "2G");
        assert_eq!(
            t,
            "# spindle\n\n[mysqld]\ndatadir = /d\ninnodb_buffer_pool_size = 2G\nskip-log-bin\n\n[client]\nsocket = /s\n"
        );
        assert_eq!(
            parse_cnf_section(&t, "mysqld")["innodb_buffer_pool_size"],
            "2G"
        );
        assert_eq!(parse_cnf_section(&t, "client")["socket"], "/s");
        // absent: added at the end of its section, before the next one
        let t = set_cnf_value(cnf, "mysqld", "innodb_io_capacity", "400");
        assert!(
            t.contains("skip-log-bin\ninnodb_io_capacity = 400\n\n[client]"),
            "{t}"
        );
        // no such section: added with it
        let t = set_cnf_value("[client]\nsocket = /s\n", "mysqld", "port", "1");
        assert_eq!(t, "[client]\nsocket = /s\n[mysqld]\nport = 1\n");
    }

    fn paths() -> CnfPaths {
        CnfPaths {
            datadir: "/d/mysql".into(),
            socket: "/d/mysql.spindle/mysqld.sock".into(),
            pid_file: "/d/mysql.spindle/mysqld.pid".into(),
            error_log: "/d/mysql.spindle/error.log".into(),
            tmpdir: "/d/mysql.spindle/tmp".into(),
            binlog_base: "/d/mysql.spindle/binlog/mysql-bin".into(),
        }
    }

    fn render(
        flavor: Flavor,
        v: ServerVersion,
        s: &MysqldSettings,
        port: Option<u16>,
    ) -> BTreeMap<String, String> {
        let p = paths();
        let text = render_my_cnf(
            s,
            &CnfTarget {
                flavor,
                version: v,
                paths: &p,
                tcp_port: port,
                ram_bytes: 4 << 30,
            },
        );
        parse_cnf_section(&text, "mysqld")
    }

    #[test]
    fn seed_000_keys_on_mariadb_10_11() {
        let m = render(
            Flavor::MariaDb,
            ServerVersion::new(10, 11, 19),
            &MysqldSettings::default(),
            None,
        );
        assert_eq!(m["innodb_flush_method"], "O_DIRECT");
        assert_eq!(m["innodb_file_per_table"], "1");
        assert_eq!(m["innodb_log_file_size"], "64M");
        assert_eq!(m["innodb_log_buffer_size"], "8M");
        assert_eq!(m["innodb_flush_log_at_trx_commit"], "2");
        assert_eq!(m["innodb_buffer_pool_size"], "1536M"); // 3/8 of 4 GiB, as in the article
        assert_eq!(m["log_bin"], "/d/mysql.spindle/binlog/mysql-bin");
        assert_eq!(m["sync_binlog"], "1");
        assert_eq!(m["tmpdir"], "/d/mysql.spindle/tmp");
        assert_eq!(m["skip_networking"], "");
        assert!(!m.contains_key("port") && !m.contains_key("bind_address"));
        // Not valid in MariaDB 10.6+:
        assert!(!m.contains_key("innodb_buffer_pool_instances"));
        assert!(!m.contains_key("innodb_log_files_in_group"));
        assert!(!m.contains_key("mysqlx"));
        assert_eq!(m["query_cache_type"], "0");
    }

    #[test]
    fn mysql_8_uses_redo_capacity_and_no_query_cache() {
        let m = render(
            Flavor::MySql,
            ServerVersion::new(8, 0, 36),
            &MysqldSettings::default(),
            Some(3307),
        );
        assert_eq!(m["innodb_redo_log_capacity"], "128M");
        assert!(!m.contains_key("innodb_log_file_size"));
        assert!(!m.contains_key("query_cache_type"));
        assert_eq!(m["mysqlx"], "OFF");
        assert_eq!(m["bind_address"], "127.0.0.1");
        assert_eq!(m["port"], "3307");
        assert!(!m.contains_key("skip_networking"));
        assert_eq!(m["binlog_expire_logs_seconds"], "432000");
    }

    /// `mysqld --version` of the servers spindle's users run: Percona 8.0 as its packages' own
    /// tests expect it (`… (Percona Server (GPL), Release '<r>', Revision '<rev>')`, the
    /// version and revision a user printed), Percona 8.4 as a public tool's tests quote it,
    /// MySQL as Debian sid's 9.7.4 prints it.
    const PERCONA_8_0: &str = "/usr/sbin/mysqld  Ver 8.0.32-24 for Linux on x86_64 (Percona Server (GPL), Release '24', Revision 'e5c6e9d2')";
    const PERCONA_8_4: &str =
        "/usr/sbin/mysqld  Ver 8.4.11-11 for Linux on x86_64 (Percona Server (GPL), Release '11')";
    const MYSQL_9_7: &str = "/usr/sbin/mysqld  Ver 9.7.4-2 for Linux on x86_64 ((Debian))";

    fn render_version(text: &str) -> BTreeMap<String, String> {
        let (flavor, v) = super::super::version::parse_version(text).unwrap();
        render(flavor, v, &MysqldSettings::default(), None)
    }

    #[test]
    fn mysql_and_percona_run_without_their_packages_folders_and_name_the_auth_plugin() {
        for text in [PERCONA_8_0, PERCONA_8_4, MYSQL_9_7] {
            let m = render_version(text);
            assert_eq!(m["secure_file_priv"], "NULL", "{text}");
            assert_eq!(m["local_infile"], "ON", "{text}");
            assert_eq!(m["performance_schema"], "OFF", "{text}");
            assert_eq!(
                m["authentication_policy"], "caching_sha2_password,,",
                "{text}"
            );
            // Removed in 9.0, replaced by authentication_policy from 8.0.27.
            assert!(!m.contains_key("default_authentication_plugin"), "{text}");
            // Deprecated from 8.0.34: the server's ROW default stays.
            let deprecated = !text.contains("8.0.32");
            assert_eq!(!m.contains_key("binlog_format"), deprecated, "{text}");
            assert_eq!(m["innodb_change_buffering"], "none", "{text}");
        }
        let old = render(
            Flavor::MySql,
            ServerVersion::new(8, 0, 20),
            &MysqldSettings::default(),
            None,
        );
        assert_eq!(
            old["default_authentication_plugin"],
            "caching_sha2_password"
        );
        assert!(!old.contains_key("authentication_policy"));
    }

    #[test]
    fn percona_is_detected_from_its_version_strings() {
        use super::super::version::parse_version;
        assert_eq!(
            parse_version(PERCONA_8_0).unwrap(),
            (Flavor::Percona, ServerVersion::new(8, 0, 32))
        );
        assert_eq!(
            parse_version(PERCONA_8_4).unwrap(),
            (Flavor::Percona, ServerVersion::new(8, 4, 11))
        );
        assert_eq!(
            parse_version(MYSQL_9_7).unwrap(),
            (Flavor::MySql, ServerVersion::new(9, 7, 4))
        );
    }

    #[test]
    fn every_flavor_gets_the_pinned_io_settings_it_has() {
        let maria = render(
            Flavor::MariaDb,
            ServerVersion::new(10, 11, 19),
            &MysqldSettings::default(),
            None,
        );
        let maria_11 = render(
            Flavor::MariaDb,
            ServerVersion::new(11, 8, 3),
            &MysqldSettings::default(),
            None,
        );
        let mysql = render_version(MYSQL_9_7);
        for p in PINNED_IO_SETTINGS {
            assert_eq!(maria[p.name], p.value, "{}", p.name);
            assert_eq!(mysql[p.name], p.value, "{}", p.name);
            if p.name == "innodb_change_buffering" {
                // MariaDB 11.0 removed the change buffer and its variable.
                assert!(!maria_11.contains_key(p.name));
            } else {
                assert_eq!(maria_11[p.name], p.value, "{}", p.name);
            }
        }
        assert_eq!(maria["performance_schema"], "OFF");
        assert_eq!(maria["binlog_format"], "MIXED");
        assert!(!maria.contains_key("secure_file_priv"));
        assert!(!maria.contains_key("authentication_policy"));
        // An override still wins over a pinned value.
        let mut s = MysqldSettings::default();
        s.extra.insert("innodb-io-capacity".into(), "4000".into());
        s.extra.insert("performance_schema".into(), "ON".into());
        let m = render(Flavor::MySql, ServerVersion::new(9, 7, 4), &s, None);
        assert_eq!(m["innodb_io_capacity"], "4000");
        assert_eq!(m["performance_schema"], "ON");
    }

    #[test]
    fn percona_5_7_keeps_old_keys() {
        let m = render(
            Flavor::Percona,
            ServerVersion::new(5, 7, 27),
            &MysqldSettings::default(),
            None,
        );
        assert_eq!(m["innodb_log_file_size"], "64M");
        assert_eq!(m["innodb_log_files_in_group"], "2");
        assert_eq!(m["expire_logs_days"], "5");
        assert_eq!(m["query_cache_size"], "0");
        assert!(!m.contains_key("mysqlx"));
    }

    #[test]
    fn overrides_replace_or_append() {
        let mut s = MysqldSettings {
            buffer_pool_size: Some(64 * MIB),
            flush_log_at_trx_commit: 1,
            binlog: false,
            ..Default::default()
        };
        s.extra.insert("innodb-flush-method".into(), "fsync".into());
        s.extra.insert("innodb_io_capacity".into(), "400".into());
        s.extra
            .insert("skip-performance-schema".into(), String::new());
        let m = render(Flavor::MariaDb, ServerVersion::new(10, 11, 19), &s, None);
        assert_eq!(m["innodb_buffer_pool_size"], "64M");
        assert_eq!(m["innodb_flush_log_at_trx_commit"], "1");
        assert_eq!(m["innodb_flush_method"], "fsync");
        assert_eq!(m["innodb_io_capacity"], "400");
        assert_eq!(m["skip_performance_schema"], "");
        assert_eq!(m["skip_log_bin"], "");
        assert!(!m.contains_key("log_bin"));
    }

    #[test]
    fn buffer_pool_from_ram() {
        assert_eq!(default_buffer_pool_size(1 << 30), 384 * MIB);
        assert_eq!(default_buffer_pool_size(4 << 30), 1536 * MIB);
        assert_eq!(default_buffer_pool_size(256 * MIB), MIN_BUFFER_POOL_BYTES);
        assert_eq!(default_buffer_pool_size(0), MIN_BUFFER_POOL_BYTES);
    }

    #[test]
    fn cnf_parser_reads_one_section() {
        let text = "[client]\nsocket=/a\n[mysqld]\n# c\npid-file = \"/p\"\nskip-networking\n[other]\nx=1\n";
        let m = parse_cnf_section(text, "mysqld");
        assert_eq!(m.len(), 2);
        assert_eq!(m["pid_file"], "/p");
        assert_eq!(m["skip_networking"], "");
    }
}
