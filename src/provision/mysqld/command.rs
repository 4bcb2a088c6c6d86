//! `spindle mysqld init|start|stop|status`: turns the parsed command line into a
//! [`ServerSpec`](super::ServerSpec), runs the action and prints the outcome.

use super::{Flavor, MysqldSettings, ServerSpec, StopOutcome};
use anyhow::{bail, Context};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Default `--timeout` for start, in seconds.
pub const DEFAULT_START_TIMEOUT_S: u64 = 120;
/// Default `--timeout` for stop, in seconds (a big buffer pool on a slow disk flushes long).
pub const DEFAULT_STOP_TIMEOUT_S: u64 = 300;
/// Exit code of `status` when the server is not running (as LSB init scripts do).
pub const EXIT_NOT_RUNNING: i32 = 3;

/// The lifecycle action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Init,
    Start,
    Stop,
    Status,
}

/// Everything `spindle mysqld` was given, as plain values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MysqldCommand {
    /// The data directory.
    pub datadir: PathBuf,
    /// `--flavor` (init).
    pub flavor: Option<Flavor>,
    /// `--mysqld PATH` (init, start).
    pub mysqld: Option<PathBuf>,
    /// `--tcp-port` (init).
    pub tcp_port: Option<u16>,
    /// `--buffer-pool-size` in bytes (init).
    pub buffer_pool_size: Option<u64>,
    /// `--log-file-size` in bytes (init).
    pub log_file_size: Option<u64>,
    /// `--set KEY=VALUE` raw my.cnf overrides (init).
    pub set: Vec<String>,
    /// `--timeout` in seconds (start, stop).
    pub timeout_s: Option<u64>,
    /// `--format json` (status).
    pub json: bool,
}

/// Runs one action; returns the process exit code.
pub fn run(action: Action, cmd: MysqldCommand) -> anyhow::Result<i32> {
    reject_foreign_flags(action, &cmd)?;
    match action {
        Action::Init => {
            let spec = spec_of(&cmd)?;
            super::init(&spec)?;
            let st = super::status(&spec.datadir)?;
            println!(
                "initialised {} {} in {}\nconfig: {}\nstart it with: spindle mysqld start --datadir {}",
                st.flavor,
                st.version,
                st.datadir.display(),
                st.config.display(),
                st.datadir.display()
            );
            Ok(0)
        }
        Action::Start => {
            let spec = spec_of(&cmd)?;
            let info = runtime()?.block_on(super::start(&spec))?;
            let st = super::status(&spec.datadir)?;
            let l = super::Layout::load(&spec.datadir)?;
            println!(
                "{} {} running (pid {})\nsocket: {}{}\nlogin: user {} database {} (password in {})",
                st.flavor,
                st.version,
                st.pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into()),
                info.socket.display(),
                info.port
                    .map(|p| format!("\ntcp: 127.0.0.1:{p}"))
                    .unwrap_or_default(),
                info.user,
                info.database,
                l.credentials.display()
            );
            Ok(0)
        }
        Action::Stop => {
            let t = Duration::from_secs(cmd.timeout_s.unwrap_or(DEFAULT_STOP_TIMEOUT_S));
            let outcome = super::stop_blocking(&cmd.datadir, t)?;
            match outcome {
                StopOutcome::Killed { .. } => crate::sys::log::say!("{outcome}"),
                _ => println!("{outcome}"),
            }
            Ok(0)
        }
        Action::Status => {
            let st = super::status(&cmd.datadir)?;
            if cmd.json {
                println!("{}", serde_json::to_string_pretty(&st)?);
            } else {
                println!("datadir:   {}", st.datadir.display());
                match st.pid {
                    Some(pid) => println!("running:   yes (pid {pid})"),
                    None => println!("running:   no"),
                }
                println!("server:    {} {}", st.flavor, st.version);
                println!("socket:    {}", st.socket.display());
                if let Some(p) = st.tcp_port {
                    println!("tcp:       127.0.0.1:{p}");
                }
                println!("config:    {}", st.config.display());
                println!("error log: {}", st.error_log.display());
            }
            Ok(if st.running { 0 } else { EXIT_NOT_RUNNING })
        }
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("could not start the async runtime")
}

/// Flags that would be silently ignored by an action are an error instead.
fn reject_foreign_flags(action: Action, c: &MysqldCommand) -> anyhow::Result<()> {
    let mut given = Vec::new();
    let init_only = action != Action::Init;
    if init_only {
        if c.flavor.is_some() {
            given.push("--flavor");
        }
        if c.tcp_port.is_some() {
            given.push("--tcp-port");
        }
        if c.buffer_pool_size.is_some() {
            given.push("--buffer-pool-size");
        }
        if c.log_file_size.is_some() {
            given.push("--log-file-size");
        }
        if !c.set.is_empty() {
            given.push("--set");
        }
    }
    if c.mysqld.is_some() && matches!(action, Action::Stop | Action::Status) {
        given.push("--mysqld");
    }
    if c.timeout_s.is_some() && matches!(action, Action::Init | Action::Status) {
        given.push("--timeout");
    }
    if c.json && action != Action::Status {
        given.push("--format json");
    }
    if !given.is_empty() {
        let what = match action {
            Action::Init => "init",
            Action::Start => "start",
            Action::Stop => "stop",
            Action::Status => "status",
        };
        bail!(
            "{} does not apply to `spindle mysqld {what}`: config flags go to `init` (which writes my.cnf; edit that file to change a running setup)",
            given.join(", ")
        );
    }
    Ok(())
}

fn spec_of(c: &MysqldCommand) -> anyhow::Result<ServerSpec> {
    let mut extra = BTreeMap::new();
    for kv in &c.set {
        let (k, v) = kv.split_once('=').unwrap_or((kv.as_str(), ""));
        if k.trim().is_empty() {
            bail!("--set '{kv}': expected KEY=VALUE (or KEY for a flag), e.g. --set innodb_io_capacity=400");
        }
        extra.insert(k.trim().to_string(), v.trim().to_string());
    }
    let defaults = MysqldSettings::default();
    Ok(ServerSpec {
        datadir: c.datadir.clone(),
        flavor: c.flavor,
        mysqld: c.mysqld.clone(),
        settings: MysqldSettings {
            buffer_pool_size: c.buffer_pool_size,
            log_file_size: c.log_file_size.unwrap_or(defaults.log_file_size),
            extra,
            ..defaults
        },
        tcp_port: c.tcp_port,
        start_timeout: Duration::from_secs(c.timeout_s.unwrap_or(DEFAULT_START_TIMEOUT_S)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_flags_become_overrides() {
        let c = MysqldCommand {
            datadir: "/d".into(),
            set: vec![
                "innodb_io_capacity=400".into(),
                "skip-performance-schema".into(),
            ],
            ..Default::default()
        };
        let s = spec_of(&c).unwrap();
        assert_eq!(s.settings.extra["innodb_io_capacity"], "400");
        assert_eq!(s.settings.extra["skip-performance-schema"], "");
        let bad = MysqldCommand {
            set: vec!["=1".into()],
            ..c
        };
        assert!(spec_of(&bad).is_err());
    }

    #[test]
    fn init_flags_on_stop_are_refused() {
        let c = MysqldCommand {
            buffer_pool_size: Some(1),
            ..Default::default()
        };
        let e = reject_foreign_flags(Action::Stop, &c)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--buffer-pool-size") && e.contains("init"),
            "{e}"
        );
        assert!(reject_foreign_flags(Action::Init, &c).is_ok());
    }
}
