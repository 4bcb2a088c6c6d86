//! `spindle tpcc` arguments → [`TpccConfig`]: the command word, tpcc-mysql's old positional
//! forms, tpcc_start's defaults, `--datadir`, and errors that name the option.

use crate::cli::TpccArgs;
use crate::db::ConnectionConfig;
use crate::tpcc::TpccConfig;
use anyhow::{bail, Context};
use std::path::Path;

/// prepare | run | check | cleanup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TpccCommand {
    Prepare,
    Run,
    Check,
    Cleanup,
}

/// Values of tpcc-mysql's old positional command lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Positional {
    pub host: String,
    pub port: Option<u16>,
    pub db: String,
    pub user: String,
    pub password: String,
    pub warehouses: u64,
    /// tpcc_start only: connections, ramp-up, measure.
    pub run: Option<(u32, u64, u64)>,
}

fn number<T: std::str::FromStr>(w: &str, what: &str) -> anyhow::Result<T> {
    w.parse()
        .map_err(|_| anyhow::anyhow!("'{w}' is not a number of {what}"))
}

/// `HOST` or `HOST:PORT` (tpcc-mysql's parse_host_get_port); `l` means localhost as in
/// tpcc_load.
pub fn parse_host(s: &str) -> anyhow::Result<(String, Option<u16>)> {
    let (host, port) = match s.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => (h, Some(number::<u16>(p, "port")?)),
        _ => (s, None),
    };
    let host = if host == "l" { "localhost" } else { host };
    Ok((host.to_string(), port))
}

/// Finds the command among the words and reads the old positional forms after it:
/// `prepare HOST DB USER PASS WAREHOUSES` (tpcc_load) and `run HOST DB USER PASS WAREHOUSES
/// CONNECTIONS RAMPUP MEASURE` (tpcc_start).
pub fn parse_words(words: &[String]) -> anyhow::Result<(TpccCommand, Option<Positional>)> {
    let mut command = None;
    let mut rest = Vec::new();
    for w in words {
        let c = match w.as_str() {
            "prepare" => Some(TpccCommand::Prepare),
            "run" => Some(TpccCommand::Run),
            "check" => Some(TpccCommand::Check),
            "cleanup" => Some(TpccCommand::Cleanup),
            _ => None,
        };
        match c {
            Some(c) if command.is_none() => command = Some(c),
            Some(_) => bail!(
                "more than one command given ('{w}'): use one of prepare, run, check, cleanup"
            ),
            None => rest.push(w.as_str()),
        }
    }
    let command = command.context(
        "no command given: add prepare, run, check or cleanup (e.g. `spindle tpcc -w 2 prepare`)",
    )?;
    let wanted = match command {
        TpccCommand::Prepare => 5,
        TpccCommand::Run => 8,
        _ => 0,
    };
    if rest.is_empty() {
        return Ok((command, None));
    }
    if rest.len() != wanted {
        let form = match command {
            TpccCommand::Prepare => "; the old tpcc_load form is `prepare HOST DB USER PASS WAREHOUSES`",
            TpccCommand::Run => "; the old tpcc_start form is `run HOST DB USER PASS WAREHOUSES CONNECTIONS RAMPUP MEASURE`",
            _ => "",
        };
        bail!(
            "unexpected argument(s) {}: options need a leading - or --{form}",
            rest.iter()
                .map(|r| format!("'{r}'"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    let (host, port) = parse_host(rest[0])?;
    let mut p = Positional {
        host,
        port,
        db: rest[1].into(),
        user: rest[2].into(),
        password: rest[3].into(),
        warehouses: number(rest[4], "warehouses")?,
        run: None,
    };
    if command == TpccCommand::Run {
        p.run = Some((
            number(rest[5], "connections")?,
            number(rest[6], "ramp-up seconds")?,
            number(rest[7], "measured seconds")?,
        ));
    }
    Ok((command, Some(p)))
}

/// Builds the engine config (without `--datadir` resolution).
pub fn config_from_args(
    args: &TpccArgs,
    command: TpccCommand,
    pos: Option<&Positional>,
) -> anyhow::Result<TpccConfig> {
    refuse_unsupported(args, command)?;
    let d = TpccConfig::default();
    let (host, host_port) = match &args.mysql_host {
        Some(h) => parse_host(h).context("--mysql-host (-h)")?,
        None => ("localhost".to_string(), None),
    };
    let mut connection = ConnectionConfig {
        socket: args.mysql_socket.clone(),
        host,
        port: args.mysql_port.or(host_port).unwrap_or(d.connection.port),
        user: args.mysql_user.clone().unwrap_or(d.connection.user),
        password: args.mysql_password.clone().unwrap_or_default(),
        database: args.mysql_db.clone().unwrap_or(d.connection.database),
        read_timeout_s: d.connection.read_timeout_s,
    };
    let mut warehouses = args.warehouses.unwrap_or(d.warehouses as u64);
    let mut connections = args.connections.unwrap_or(d.connections);
    let mut rampup_s = args.rampup.unwrap_or(d.rampup_s);
    let mut time_s = args.time.unwrap_or(d.time_s);
    if let Some(p) = pos {
        connection.host = p.host.clone();
        connection.port = p.port.unwrap_or(connection.port);
        connection.database = p.db.clone();
        connection.user = p.user.clone();
        connection.password = p.password.clone();
        warehouses = p.warehouses;
        if let Some((c, r, l)) = p.run {
            (connections, rampup_s, time_s) = (c, r, l);
        }
    }
    let (home_warehouse, statements) = (args.home_warehouse, args.statements);
    let cfg = TpccConfig {
        warehouses: u32::try_from(warehouses).unwrap_or(u32::MAX),
        connections,
        rampup_s,
        time_s,
        report_interval_s: args.report_interval.unwrap_or(d.report_interval_s),
        load_connections: args.load_connections.unwrap_or(d.load_connections),
        home_warehouse,
        rt_limits_s: d.rt_limits_s,
        reconnect_timeout_s: args.reconnect_timeout,
        seed: args.seed,
        replace: args.replace,
        connection,
        client_threads: args.client_threads,
        skip_write_wakeups: !args.io.keep_write_wakeups,
        statements,
        client_io: args.io.client_io()?,
    };
    if warehouses > u32::MAX as u64 {
        return Err(crate::tpcc::TpccError::Warehouses(warehouses).into());
    }
    cfg.validate()?;
    Ok(cfg)
}

/// tpcc-mysql options spindle does not take, with the reason.
fn refuse_unsupported(args: &TpccArgs, command: TpccCommand) -> anyhow::Result<()> {
    if args.unsupported_m.is_some() || args.unsupported_n.is_some() {
        bail!(
            "-m/-n (tpcc_load's partial loads, tpcc_start's schemas) are not supported: \
             spindle tpcc prepare loads all warehouses in parallel (--load-connections)"
        );
    }
    if args.unsupported_o.is_some() {
        bail!("-o (tpcc_start's multi-schema offset) is not supported: run one database at a time");
    }
    if command == TpccCommand::Prepare && args.time.is_some() {
        bail!(
            "-l/--time is tpcc_load's partial-load part or tpcc_start's measured time: \
             prepare loads everything, drop it"
        );
    }
    Ok(())
}

/// `--datadir`: reach the server `spindle mysqld` started on a data directory (its socket and
/// benchmark login), unless the `--mysql-*` options name them explicitly.
pub fn apply_datadir(
    conn: &mut ConnectionConfig,
    datadir: &Path,
    args: &TpccArgs,
) -> anyhow::Result<()> {
    let given = super::oltp::GivenConnection {
        socket: args.mysql_socket.is_some(),
        user: args.mysql_user.is_some(),
        password: args.mysql_password.is_some(),
        database: args.mysql_db.is_some(),
    };
    super::oltp::fill_from_datadir(conn, datadir, given)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn old_positional_forms() {
        let (c, p) = parse_words(&words(&[
            "prepare",
            "127.0.0.1",
            "tpcc",
            "user",
            "password",
            "10",
        ]))
        .unwrap();
        assert_eq!(c, TpccCommand::Prepare);
        let p = p.unwrap();
        assert_eq!(
            (p.host.as_str(), p.db.as_str(), p.warehouses),
            ("127.0.0.1", "tpcc", 10)
        );
        let (_, p) = parse_words(&words(&[
            "run", "db1:3307", "tpcc", "u", "pw", "2", "8", "5", "30",
        ]))
        .unwrap();
        let p = p.unwrap();
        assert_eq!((p.host.as_str(), p.port), ("db1", Some(3307)));
        assert_eq!(p.run, Some((8, 5, 30)));
        assert_eq!(
            parse_words(&words(&["check"])).unwrap(),
            (TpccCommand::Check, None)
        );
    }

    #[test]
    fn bad_words_are_explained() {
        let e = parse_words(&words(&["prepare", "x"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("HOST DB USER PASS WAREHOUSES"), "{e}");
        let e = parse_words(&words(&["go"])).unwrap_err().to_string();
        assert!(e.contains("no command"), "{e}");
        let e = parse_words(&words(&["prepare", "h", "d", "u", "p", "ten"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("'ten'"), "{e}");
        assert_eq!(parse_host("l").unwrap().0, "localhost");
    }

    #[test]
    fn word_options_take_the_profiles_spellings_too_and_name_the_flag_when_wrong() {
        use crate::tpcc::{HomeWarehouse, Statements};
        use clap::Parser as _;
        let parse = |extra: &[&str]| {
            let mut v = vec!["spindle", "tpcc"];
            v.extend_from_slice(extra);
            v.push("run");
            match crate::cli::Cli::try_parse_from(v)?.command {
                crate::cli::Command::Tpcc(a) => Ok::<_, clap::Error>(a),
                _ => panic!("not tpcc"),
            }
        };
        for (word, home) in [
            ("random", HomeWarehouse::Random),
            ("per-connection", HomeWarehouse::PerConnection),
            ("per_connection", HomeWarehouse::PerConnection),
            ("fixed", HomeWarehouse::PerConnection),
        ] {
            let a = parse(&[&format!("--home-warehouse={word}")]).unwrap();
            let c = config_from_args(&a, TpccCommand::Run, None).unwrap();
            assert_eq!(c.home_warehouse, home, "{word}");
        }
        // The hidden --client-io: spindle's own client unless named, a wrong word named.
        let io = |extra: &[&str]| {
            config_from_args(&parse(extra).unwrap(), TpccCommand::Run, None).map(|c| c.client_io)
        };
        assert_eq!(io(&[]).unwrap(), crate::db::ClientIo::Direct);
        assert_eq!(
            io(&["--client-io=reactor"]).unwrap(),
            crate::db::ClientIo::Reactor
        );
        let e = io(&["--client-io=epoll"]).unwrap_err().to_string();
        assert!(
            e.contains("--client-io epoll: use direct (the default), direct-epoll or reactor"),
            "{e}"
        );
        let a = parse(&["--statements=batched", "--layout=2011", "--format=json"]).unwrap();
        assert_eq!(a.statements, Statements::Batched);
        assert_eq!(a.layout, crate::report::tpcc_text::Layout::Y2011);
        for (arg, flag, one) in [
            (
                "--home-warehouse=mine",
                "--home-warehouse",
                "per-connection",
            ),
            ("--statements=fast", "--statements", "tpcc-mysql"),
            ("--layout=2009", "--layout", "2011"),
            ("--format=xml", "--format", "json"),
        ] {
            let e = parse(&[arg]).unwrap_err().to_string();
            assert!(e.contains(flag) && e.contains(one), "{e}");
        }
    }
}
