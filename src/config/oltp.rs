//! `spindle oltp` arguments → [`OltpConfig`]: the workload and command words found anywhere
//! among the options, sysbench's defaults, and validation.

use crate::cli::OltpArgs;
use crate::oltp::{IgnoreErrors, OltpConfig, Workload};
use anyhow::{bail, Context};
use std::path::Path;

/// prepare | run | cleanup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OltpCommand {
    Prepare,
    Run,
    Cleanup,
}

/// The workload and the command found among the positional words, and a line to print when the
/// words mean something other than they say (`parallel_prepare.lua run` prepares).
#[derive(Debug)]
pub struct Words {
    pub workload: Workload,
    pub command: OltpCommand,
    pub note: Option<String>,
}

/// `oltp_legacy/parallel_prepare.lua`: in sysbench 1.0 its `run` creates and loads the legacy
/// tables from every thread — spindle's legacy `prepare`, which loads table i on thread
/// (i−1) mod --threads.
fn is_parallel_prepare(word: &str) -> bool {
    let base = word.rsplit('/').next().unwrap_or(word);
    base.strip_suffix(".lua").unwrap_or(base) == "parallel_prepare"
}

/// The workload and the command found among the positional words.
pub fn parse_words(words: &[String]) -> anyhow::Result<Words> {
    let mut workload = None;
    let mut command = None;
    let mut parallel_prepare = false;
    for w in words {
        let cmd = match w.as_str() {
            "prepare" => Some(OltpCommand::Prepare),
            "run" => Some(OltpCommand::Run),
            "cleanup" => Some(OltpCommand::Cleanup),
            _ => None,
        };
        let wl = if is_parallel_prepare(w) {
            parallel_prepare = true;
            Some(Workload::Legacy)
        } else {
            Workload::parse(w)
        };
        if let Some(c) = cmd {
            if command.replace(c).is_some() {
                bail!("more than one command given ('{w}'): use one of prepare, run, cleanup");
            }
        } else if let Some(wl) = wl {
            if workload.replace(wl).is_some() {
                bail!("more than one workload given ('{w}')");
            }
        } else {
            bail!(
                "'{w}' is neither a workload (read_write, read_only, write_only, point_select, \
                 update_index, update_non_index, insert, delete, bulk_insert, \
                 select_random_points, select_random_ranges, legacy, legacy_select, … — see \
                 `spindle oltp --help`) nor a command (prepare, run, cleanup)"
            );
        }
    }
    let workload = workload.context(
        "no workload given: name one, e.g. `spindle oltp read_write --tables=4 prepare`",
    )?;
    let mut command =
        command.context("no command given: add prepare, run or cleanup after the workload")?;
    let mut note = None;
    if parallel_prepare && command == OltpCommand::Run {
        command = OltpCommand::Prepare;
        note = Some(
            "spindle: parallel_prepare.lua run creates and loads the legacy tables: spindle runs its legacy prepare (table i on thread (i-1) mod --threads)"
                .to_string(),
        );
    }
    Ok(Words {
        workload,
        command,
        note,
    })
}

/// Builds the engine config from the command line (without `--datadir` resolution).
pub fn config_from_args(args: &OltpArgs, workload: Workload) -> anyhow::Result<OltpConfig> {
    if args.db_driver != "mysql" {
        bail!(
            "--db-driver={} is not supported: spindle drives MySQL-family servers only (use mysql)",
            args.db_driver
        );
    }
    let (kind, ps_mode) = (args.rand_type, args.db_ps_mode);
    let ignore_errors = IgnoreErrors::parse(&args.mysql_ignore_errors)
        .map_err(|e| anyhow::anyhow!("--mysql-ignore-errors: {e}"))?;
    if args.histogram && args.percentile == 0 {
        bail!("--histogram needs percentile statistics: drop --percentile=0");
    }
    if !(args.reconnect_timeout >= 0.0 && args.reconnect_timeout.is_finite()) {
        bail!("--reconnect-timeout must be a number of seconds >= 0");
    }
    let defaults = crate::oltp::ConnectionConfig::default();
    let cfg = OltpConfig {
        workload,
        tables: args.tables,
        table_size: args.table_size,
        range_size: args.range_size,
        point_selects: args.point_selects,
        simple_ranges: args.simple_ranges,
        sum_ranges: args.sum_ranges,
        order_ranges: args.order_ranges,
        distinct_ranges: args.distinct_ranges,
        index_updates: args.index_updates,
        non_index_updates: args.non_index_updates,
        delete_inserts: args.delete_inserts,
        range_selects: args.range_selects,
        auto_inc: args.auto_inc,
        skip_trx: args.skip_trx,
        secondary: args.secondary,
        create_secondary: args.create_secondary,
        storage_engine: args.mysql_storage_engine.clone(),
        legacy_read_only: args.oltp_read_only,
        legacy_write_only: args.oltp_write_only,
        random_points: args.random_points,
        number_of_ranges: args.number_of_ranges,
        delta: args.delta,
        rand: crate::oltp::RandConfig {
            kind,
            spec_iter: args.rand_spec_iter,
            spec_pct: args.rand_spec_pct,
            spec_res: args.rand_spec_res,
            pareto_h: args.rand_pareto_h,
            seed: args.rand_seed,
        },
        threads: args.threads,
        time_s: args.time,
        events: args.events,
        report_interval_s: args.report_interval,
        percentile: args.percentile,
        ignore_errors,
        ps_mode,
        connection: crate::oltp::ConnectionConfig {
            socket: args.mysql_socket.clone(),
            host: args.mysql_host.clone(),
            port: args.mysql_port,
            user: args.mysql_user.clone().unwrap_or(defaults.user),
            password: args.mysql_password.clone().unwrap_or(defaults.password),
            database: args.mysql_db.clone().unwrap_or(defaults.database),
            read_timeout_s: defaults.read_timeout_s,
        },
        reconnect_timeout_s: args.reconnect_timeout,
        load_data: true,
        skip_write_wakeups: !args.io.keep_write_wakeups,
        client_threads: args.client_threads,
        client_io: args.io.client_io()?,
    };
    cfg.validate()?;
    Ok(cfg)
}

/// `--datadir`: reach the server `spindle mysqld` started on a data directory (its socket and
/// benchmark login), unless `--mysql-*` flags name them explicitly.
/// Fills socket, user, password and database from the datadir; explicit flags win.
pub fn apply_datadir(
    conn: &mut crate::oltp::ConnectionConfig,
    datadir: &Path,
    args: &OltpArgs,
) -> anyhow::Result<()> {
    let given = GivenConnection {
        socket: args.mysql_socket.is_some(),
        user: args.mysql_user.is_some(),
        password: args.mysql_password.is_some(),
        database: args.mysql_db.is_some(),
    };
    fill_from_datadir(conn, datadir, given)
}

/// Which connection flags the command line gave (those win over the datadir's values).
pub struct GivenConnection {
    pub socket: bool,
    pub user: bool,
    pub password: bool,
    pub database: bool,
}

/// `--datadir`: the private server's socket and client account for the flags not given
/// (`spindle oltp` and `spindle tpcc`).
pub fn fill_from_datadir(
    conn: &mut crate::db::ConnectionConfig,
    datadir: &Path,
    given: GivenConnection,
) -> anyhow::Result<()> {
    let info = crate::provision::mysqld::client_info(datadir)
        .with_context(|| format!("--datadir {}", datadir.display()))?;
    if !given.socket {
        conn.socket = Some(info.socket);
    }
    if !given.user {
        conn.user = info.user;
    }
    if !given.password {
        conn.password = info.password;
    }
    if !given.database {
        conn.database = info.database;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    fn pair(w: &[&str]) -> (Workload, OltpCommand) {
        let p = parse_words(&words(w)).unwrap();
        (p.workload, p.command)
    }

    #[test]
    fn the_command_line_client_io_defaults_to_direct() {
        use clap::Parser as _;
        let args = |extra: &[&str]| {
            let mut v = vec!["spindle", "oltp", "read_write", "run"];
            v.extend_from_slice(extra);
            match crate::cli::Cli::try_parse_from(v).unwrap().command {
                crate::cli::Command::Oltp(a) => a,
                other => panic!("{other:?}"),
            }
        };
        let io = |a: &OltpArgs| config_from_args(a, Workload::ReadWrite).map(|c| c.client_io);
        assert_eq!(io(&args(&[])).unwrap(), crate::db::ClientIo::Direct);
        assert_eq!(
            io(&args(&["--client-io=reactor"])).unwrap(),
            crate::db::ClientIo::Reactor
        );
        assert_eq!(
            io(&args(&["--client-io=direct-epoll"])).unwrap(),
            crate::db::ClientIo::DirectEpoll
        );
        let e = io(&args(&["--client-io=epoll"])).unwrap_err().to_string();
        assert!(
            e.contains("--client-io epoll: use direct (the default), direct-epoll or reactor"),
            "{e}"
        );
        // 3 of the 8 words that once were: the others refused, naming the kept ones.
        for gone in [
            "uring",
            "uring-send",
            "direct-ring",
            "direct-reactor",
            "direct-thread-epoll",
        ] {
            let e = io(&args(&[&format!("--client-io={gone}")])).unwrap_err();
            let e = e.to_string();
            assert!(
                e.contains(&format!("--client-io {gone} was retired: use direct (the default), direct-epoll or reactor")),
                "{e}"
            );
        }
    }

    #[test]
    fn words_in_any_order() {
        assert_eq!(
            pair(&["run", "oltp_read_only"]),
            (Workload::ReadOnly, OltpCommand::Run)
        );
        assert_eq!(
            pair(&["legacy", "prepare"]),
            (Workload::Legacy, OltpCommand::Prepare)
        );
        let e = parse_words(&words(&["run"])).unwrap_err().to_string();
        assert!(e.contains("no workload"), "{e}");
        let e = parse_words(&words(&["read_write", "go"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("'go'"), "{e}");
    }

    #[test]
    fn parallel_prepare_run_is_the_legacy_prepare() {
        let script = "/usr/share/sysbench/tests/include/oltp_legacy/parallel_prepare.lua";
        let p = parse_words(&words(&[script, "run"])).unwrap();
        assert_eq!(
            (p.workload, p.command),
            (Workload::Legacy, OltpCommand::Prepare)
        );
        assert!(p.note.unwrap().contains("legacy prepare"));
        let p = parse_words(&words(&[script, "cleanup"])).unwrap();
        assert_eq!((p.command, p.note), (OltpCommand::Cleanup, None));
        assert_eq!(
            pair(&["oltp_legacy/select.lua", "run"]),
            (Workload::LegacySelect, OltpCommand::Run)
        );
    }
}
