//! `spindle oltp <workload> [options] prepare|run|cleanup`: runs the engine and renders its
//! result (sysbench text or JSON, `--save` via `write_atomic`).

use crate::cli::OltpArgs;
use crate::config::oltp::{config_from_args, parse_words, OltpCommand};
use crate::engine::{Controller, Observer};
use crate::model::{BenchResult, TestOptions};
use crate::report::oltp_text;
use anyhow::bail;

/// Prints progress lines and interval lines to stdout (text) or stderr (json).
struct Printer {
    json: bool,
    percentile: u32,
}

impl Observer for Printer {
    fn message(&self, line: &str) {
        super::output::emit(self.json, line);
    }

    fn interval(&self, sample: &crate::engine::IntervalSample) {
        let line = oltp_text::interval_line(sample, self.percentile);
        super::output::emit(self.json, &line);
    }
}

/// Runs `spindle oltp ...`; returns the exit code.
pub fn execute(args: &OltpArgs) -> anyhow::Result<i32> {
    let words = parse_words(&args.words)?;
    let (workload, command) = (words.workload, words.command);
    if let Some(note) = &words.note {
        eprintln!("{note}");
    }
    let json = args.format == crate::cli::Format::Json;
    let mut cfg = config_from_args(args, workload)?;
    if let Some(datadir) = &args.datadir {
        crate::config::oltp::apply_datadir(&mut cfg.connection, datadir, args)?;
    }
    let printer = Printer {
        json,
        percentile: cfg.percentile,
    };
    let controller = Controller::on_signals();
    let result = match command {
        OltpCommand::Prepare => {
            if !json {
                super::output::out(&format!(
                    "spindle {} (sysbench 1.0 compatible)\n\n",
                    crate::version::VERSION
                ));
            }
            crate::oltp::prepare(&cfg, &controller, &printer).and_then(|summary| {
                if json {
                    super::output::out(&format!("{}\n", serde_json::to_string_pretty(&summary)?));
                }
                Ok(0)
            })
        }
        OltpCommand::Cleanup => {
            if !json {
                super::output::out(&format!(
                    "spindle {} (sysbench 1.0 compatible)\n\n",
                    crate::version::VERSION
                ));
            }
            crate::oltp::cleanup(&cfg, &printer).map(|()| 0)
        }
        OltpCommand::Run => run_step(args, &cfg, &controller, &printer, json),
    };
    super::output::exit_code(&controller, result)
}

fn run_step(
    args: &OltpArgs,
    cfg: &crate::oltp::OltpConfig,
    controller: &Controller,
    printer: &Printer,
    json: bool,
) -> anyhow::Result<i32> {
    let interval = cfg.report_interval_s;
    let steady = crate::config::steady::from_args(&args.steady, interval)?;
    if !json {
        super::output::out(&format!(
            "{}\n",
            oltp_text::run_header(cfg.threads, cfg.report_interval_s, cfg.rand.seed)
        ));
    }
    let mut m = crate::oltp::run(cfg, controller, printer)?;
    let planned = match (cfg.time_s, cfg.events) {
        (0, n) => format!(" (--events={n})"),
        (t, _) => format!(" of --time={t}"),
    };
    let partial = super::output::mark_partial(controller, &mut m, &planned);
    let mut result = BenchResult::new(TestOptions::Oltp(Box::new(cfg.clone())), m);
    let line = super::output::steady_line(&mut result, &steady);
    let report = || {
        let mut text = String::new();
        if args.histogram {
            text.push_str(&oltp_text::histogram(&result));
        }
        text.push_str(&oltp_text::final_report(&result));
        text + &line
    };
    super::output::show_result(&result, json, report, partial, args.save.as_deref())?;
    if let Some(e) = &result.error {
        let hint = if e.contains("not one of the errors that retry") {
            "; add its code to --mysql-ignore-errors to retry such transactions"
        } else {
            ""
        };
        bail!(
            "the OLTP run ended early: {e}{hint} (the report above covers the run up to the error)"
        );
    }
    Ok(0)
}
