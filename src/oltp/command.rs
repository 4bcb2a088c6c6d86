//! `spindle oltp`: turns the parsed command line into an [`OltpConfig`], runs the engine and
//! renders its result (sysbench text or JSON, `--save` via `write_atomic`). Thin by design.

use super::{Controller, IgnoreErrors, OltpConfig, OltpObserver, PsMode, RandType, Workload};
use crate::cli::OltpArgs;
use crate::report::oltp_text;
use anyhow::{bail, Context};
use std::io::Write;

/// prepare | run | cleanup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OltpCommand {
    Prepare,
    Run,
    Cleanup,
}

/// The workload and the command found among the positional words.
pub fn parse_words(words: &[String]) -> anyhow::Result<(Workload, OltpCommand)> {
    let mut workload = None;
    let mut command = None;
    for w in words {
        let cmd = match w.as_str() {
            "prepare" => Some(OltpCommand::Prepare),
            "run" => Some(OltpCommand::Run),
            "cleanup" => Some(OltpCommand::Cleanup),
            _ => None,
        };
        if let Some(c) = cmd {
            if command.replace(c).is_some() {
                bail!("more than one command given ('{w}'): use one of prepare, run, cleanup");
            }
        } else if let Some(wl) = Workload::parse(w) {
            if workload.replace(wl).is_some() {
                bail!("more than one workload given ('{w}')");
            }
        } else {
            bail!(
                "'{w}' is neither a workload (read_write, read_only, write_only, point_select, \
                 update_index, update_non_index, insert, delete, legacy) nor a command \
                 (prepare, run, cleanup)"
            );
        }
    }
    let workload = workload.context(
        "no workload given: name one, e.g. `spindle oltp read_write --tables=4 prepare`",
    )?;
    let command =
        command.context("no command given: add prepare, run or cleanup after the workload")?;
    Ok((workload, command))
}

/// Builds the engine config from the command line (without `--datadir` resolution).
pub fn config_from_args(args: &OltpArgs, workload: Workload) -> anyhow::Result<OltpConfig> {
    if args.db_driver != "mysql" {
        bail!(
            "--db-driver={} is not supported: spindle drives MySQL-family servers only (use mysql)",
            args.db_driver
        );
    }
    let kind = match args.rand_type.as_str() {
        "uniform" => RandType::Uniform,
        "gaussian" => RandType::Gaussian,
        "special" => RandType::Special,
        "pareto" => RandType::Pareto,
        other => bail!(
            "--rand-type={other} is not a distribution: use uniform, gaussian, special or pareto"
        ),
    };
    let ps_mode = match args.db_ps_mode.as_str() {
        "auto" => PsMode::Auto,
        "disable" => PsMode::Disable,
        other => bail!("--db-ps-mode={other}: use auto or disable"),
    };
    let ignore_errors = IgnoreErrors::parse(&args.mysql_ignore_errors)
        .map_err(|e| anyhow::anyhow!("--mysql-ignore-errors: {e}"))?;
    if args.histogram && args.percentile == 0 {
        bail!("--histogram needs percentile statistics: drop --percentile=0");
    }
    if !(args.reconnect_timeout >= 0.0 && args.reconnect_timeout.is_finite()) {
        bail!("--reconnect-timeout must be a number of seconds >= 0");
    }
    let defaults = super::ConnectionConfig::default();
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
        rand: super::RandConfig {
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
        connection: super::ConnectionConfig {
            socket: args.mysql_socket.clone(),
            host: args.mysql_host.clone(),
            port: args.mysql_port,
            user: args.mysql_user.clone().unwrap_or(defaults.user),
            password: args.mysql_password.clone().unwrap_or(defaults.password),
            database: args.mysql_db.clone().unwrap_or(defaults.database),
        },
        reconnect_timeout_s: args.reconnect_timeout,
        load_data: true,
        skip_write_wakeups: !args.keep_write_wakeups,
        client_threads: args.client_threads,
    };
    cfg.validate()?;
    Ok(cfg)
}

/// Prints progress lines and interval lines to stdout (text) or stderr (json).
struct Printer {
    json: bool,
    percentile: u32,
}

impl OltpObserver for Printer {
    fn message(&self, line: &str) {
        if self.json {
            eprintln!("{line}");
        } else {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }

    fn interval(&self, sample: &crate::report::IntervalSample) {
        let line = oltp_text::interval_line(sample, self.percentile);
        if self.json {
            eprintln!("{line}");
        } else {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }
}

/// Runs `spindle oltp ...`; returns the exit code.
pub fn execute(args: &OltpArgs) -> anyhow::Result<i32> {
    let (workload, command) = parse_words(&args.words)?;
    let json = match args.format.as_str() {
        "text" => false,
        "json" => true,
        other => bail!("--format={other}: use text or json"),
    };
    let mut cfg = config_from_args(args, workload)?;
    if let Some(datadir) = &args.datadir {
        super::datadir::apply(&mut cfg.connection, datadir, args)?;
    }
    let printer = Printer {
        json,
        percentile: cfg.percentile,
    };
    match command {
        OltpCommand::Prepare => {
            if !json {
                println!("spindle {} (sysbench 1.0 compatible)\n", crate::VERSION);
            }
            let summary = super::prepare(&cfg, &printer)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&summary)?);
            }
            Ok(0)
        }
        OltpCommand::Cleanup => {
            if !json {
                println!("spindle {} (sysbench 1.0 compatible)\n", crate::VERSION);
            }
            super::cleanup(&cfg, &printer)?;
            Ok(0)
        }
        OltpCommand::Run => {
            if !json {
                print!(
                    "{}",
                    oltp_text::run_header(cfg.threads, cfg.report_interval_s, cfg.rand.seed)
                );
                println!();
                let _ = std::io::stdout().flush();
            }
            let controller = Controller::new();
            let result = super::run(&cfg, &controller, &printer)?;
            if json {
                println!("{}", result.to_json_pretty());
            } else {
                let mut text = String::new();
                if args.histogram {
                    text.push_str(&oltp_text::histogram(&result));
                }
                text.push_str(&oltp_text::final_report(&result));
                print!("{text}");
                let _ = std::io::stdout().flush();
            }
            if let Some(path) = &args.save {
                crate::report::write::write_atomic(path, result.to_json_pretty().as_bytes())
                    .with_context(|| format!("--save {}", path.display()))?;
            }
            if let Some(e) = &result.error {
                bail!("the OLTP run ended early: {e} (the report above covers the run up to the error)");
            }
            Ok(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn words_in_any_order() {
        assert_eq!(
            parse_words(&words(&["run", "oltp_read_only"])).unwrap(),
            (Workload::ReadOnly, OltpCommand::Run)
        );
        assert_eq!(
            parse_words(&words(&["legacy", "prepare"])).unwrap(),
            (Workload::Legacy, OltpCommand::Prepare)
        );
        let e = parse_words(&words(&["run"])).unwrap_err().to_string();
        assert!(e.contains("no workload"), "{e}");
        let e = parse_words(&words(&["read_write", "go"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("'go'"), "{e}");
    }
}
