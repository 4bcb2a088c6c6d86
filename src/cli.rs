//! The command line: clap definitions and the dispatch to each subcommand's runner.
//!
//! Subcommand argument structs live here; turning them into engine configs is `config`'s job.

use clap::{Parser, Subcommand};
use std::ffi::OsString;

/// spindle: disk benchmarks for MySQL-family databases (sysbench-compatible fileio and OLTP).
#[derive(Debug, Parser)]
#[command(name = "spindle", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Manage a private MySQL-family server on a data directory: init, start, stop, status.
    Mysqld(MysqldArgs),
}

/// `spindle mysqld init|start|stop|status --datadir PATH`.
#[derive(Debug, clap::Args)]
pub struct MysqldArgs {
    /// What to do: init (create datadir + my.cnf), start, stop, status.
    #[arg(value_enum)]
    pub action: MysqldActionArg,
    /// The data directory (my.cnf, logs, socket and credentials live in PATH.spindle/ beside it).
    #[arg(long, value_name = "PATH")]
    pub datadir: std::path::PathBuf,
    /// Server flavor instead of detecting it from `--version` (init).
    #[arg(long, value_parser = clap::value_parser!(crate::provision::mysqld::Flavor))]
    pub flavor: Option<crate::provision::mysqld::Flavor>,
    /// Server program to use instead of mariadbd/mysqld from PATH (init, start).
    #[arg(long, value_name = "PATH")]
    pub mysqld: Option<std::path::PathBuf>,
    /// Also listen on TCP 127.0.0.1:PORT (default: unix socket only, skip-networking) (init).
    #[arg(long, value_name = "PORT")]
    pub tcp_port: Option<u16>,
    /// innodb_buffer_pool_size, e.g. 512M or 2G (default: 3/8 of RAM, at least 128M) (init).
    #[arg(long, value_name = "SIZE", value_parser = crate::provision::mysqld::config::parse_size_arg)]
    pub buffer_pool_size: Option<u64>,
    /// innodb_log_file_size, e.g. 64M (the default) (init).
    #[arg(long, value_name = "SIZE", value_parser = crate::provision::mysqld::config::parse_size_arg)]
    pub log_file_size: Option<u64>,
    /// Extra my.cnf line KEY=VALUE (or KEY), replacing a generated one; repeatable (init).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Seconds to wait for the server to answer (start, default 120) or shut down (stop,
    /// default 300, then SIGKILL).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
    /// Output format of status.
    #[arg(long, value_enum, default_value = "text")]
    pub format: MysqldFormatArg,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum MysqldActionArg {
    Init,
    Start,
    Stop,
    Status,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum MysqldFormatArg {
    Text,
    Json,
}

impl MysqldArgs {
    fn run(self) -> anyhow::Result<i32> {
        use crate::provision::mysqld::command::{self, Action};
        let action = match self.action {
            MysqldActionArg::Init => Action::Init,
            MysqldActionArg::Start => Action::Start,
            MysqldActionArg::Stop => Action::Stop,
            MysqldActionArg::Status => Action::Status,
        };
        command::run(
            action,
            command::MysqldCommand {
                datadir: self.datadir,
                flavor: self.flavor,
                mysqld: self.mysqld,
                tcp_port: self.tcp_port,
                buffer_pool_size: self.buffer_pool_size,
                log_file_size: self.log_file_size,
                set: self.set,
                timeout_s: self.timeout,
                json: matches!(self.format, MysqldFormatArg::Json),
            },
        )
    }
}

/// Parses `args` and runs the chosen subcommand; returns the exit code.
pub fn run<I, T>(args: I) -> anyhow::Result<i32>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout and usage errors to stderr itself.
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return Ok(code);
        }
    };
    match cli.command {
        Command::Mysqld(args) => args.run(),
    }
}
