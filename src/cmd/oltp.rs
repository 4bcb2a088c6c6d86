//! `spindle oltp <workload> [options] prepare|run|cleanup`: runs the engine and renders its
//! result (sysbench text or JSON, `--save` via `write_atomic`).

use crate::cli::OltpArgs;
use crate::config::oltp::{config_from_args, parse_words, OltpCommand};
use crate::engine::{Controller, Observer};
use crate::report::oltp_text;
use crate::report::{BenchResult, TestOptions};
use anyhow::{bail, Context};
use std::io::Write;

/// Prints progress lines and interval lines to stdout (text) or stderr (json).
struct Printer {
    json: bool,
    percentile: u32,
}

impl Observer for Printer {
    fn message(&self, line: &str) {
        super::emit(self.json, line);
    }

    fn interval(&self, sample: &crate::model::IntervalSample) {
        let line = oltp_text::interval_line(sample, self.percentile);
        super::emit(self.json, &line);
    }
}

/// Runs `spindle oltp ...`; returns the exit code.
pub fn execute(args: &OltpArgs) -> anyhow::Result<i32> {
    let words = parse_words(&args.words)?;
    let (workload, command) = (words.workload, words.command);
    if let Some(note) = &words.note {
        eprintln!("{note}");
    }
    let json = match args.format.as_str() {
        "text" => false,
        "json" => true,
        other => bail!("--format={other}: use text or json"),
    };
    let mut cfg = config_from_args(args, workload)?;
    if let Some(datadir) = &args.datadir {
        crate::config::oltp::apply_datadir(&mut cfg.connection, datadir, args)?;
    }
    let printer = Printer {
        json,
        percentile: cfg.percentile,
    };
    let controller = Controller::on_signals();
    match command {
        OltpCommand::Prepare => {
            if !json {
                println!("spindle {} (sysbench 1.0 compatible)\n", crate::VERSION);
            }
            let summary = crate::oltp::prepare(&cfg, &controller, &printer)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&summary)?);
            }
            Ok(0)
        }
        OltpCommand::Cleanup => {
            if !json {
                println!("spindle {} (sysbench 1.0 compatible)\n", crate::VERSION);
            }
            crate::oltp::cleanup(&cfg, &printer)?;
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
            let m = crate::oltp::run(&cfg, &controller, &printer)?;
            let result = BenchResult::new(TestOptions::Oltp(Box::new(cfg.clone())), m);
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
                crate::sys::fs::write_atomic(path, result.to_json_pretty().as_bytes())
                    .with_context(|| format!("--save {}", path.display()))?;
            }
            if let Some(e) = &result.error {
                let hint = if e.contains("not one of the errors that retry") {
                    "; add its code to --mysql-ignore-errors to retry such transactions"
                } else {
                    ""
                };
                bail!("the OLTP run ended early: {e}{hint} (the report above covers the run up to the error)");
            }
            Ok(0)
        }
    }
}
