//! `spindle tpcc [options] prepare|run|check|cleanup`: runs the TPC-C engine and renders its
//! results (tpcc_start's text layout or JSON, `--save` via `write_atomic`, tpcc_start's `-f`
//! and `-t` files).

use crate::cli::TpccArgs;
use crate::config::tpcc::{apply_datadir, config_from_args, parse_words, TpccCommand};
use crate::engine::{Controller, Observer};
use crate::model::{BenchResult, TestOptions};
use crate::report::tpcc_text::{self as text, Layout};
use crate::tpcc::{self, NewOrderRecord, TpccConfig, TransactionLog};
use anyhow::{bail, Context};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Prints progress and interval lines as tpcc_start does (stdout for text, stderr with JSON).
struct Printer {
    json: bool,
    layout: Layout,
}

impl Observer for Printer {
    fn message(&self, line: &str) {
        let line = match line {
            l if l.starts_with("RAMP-UP") => format!("\n{l}"),
            l if l.starts_with("MEASURING") => format!("\n{l}\n"),
            l if l.starts_with("STOPPING") => format!("\n{l}"),
            l => l.to_string(),
        };
        super::output::emit(self.json, &line);
    }

    fn interval(&self, s: &crate::engine::IntervalSample) {
        super::output::emit(self.json, &text::interval_line(s, self.layout));
    }
}

/// tpcc_start's `-f` and `-t` files.
struct TrxFiles {
    report: Option<Mutex<std::io::BufWriter<std::fs::File>>>,
    trx: Option<Mutex<std::io::BufWriter<std::fs::File>>>,
}

fn create(path: &Path, flag: &str) -> anyhow::Result<Mutex<std::io::BufWriter<std::fs::File>>> {
    let f = std::fs::File::create(path)
        .with_context(|| format!("{flag}: could not create '{}'", path.display()))?;
    Ok(Mutex::new(std::io::BufWriter::new(f)))
}

impl TrxFiles {
    fn open(report: Option<&PathBuf>, trx: Option<&PathBuf>) -> anyhow::Result<Option<Arc<Self>>> {
        if report.is_none() && trx.is_none() {
            return Ok(None);
        }
        Ok(Some(Arc::new(TrxFiles {
            report: report
                .map(|p| create(p, "--report-file (-f)"))
                .transpose()?,
            trx: trx.map(|p| create(p, "--trx-file (-t)")).transpose()?,
        })))
    }

    fn flush(&self) -> anyhow::Result<()> {
        for w in [&self.report, &self.trx].into_iter().flatten() {
            w.lock()
                .unwrap_or_else(|p| p.into_inner())
                .flush()
                .context("could not write the -f/-t file")?;
        }
        Ok(())
    }
}

impl TransactionLog for TrxFiles {
    fn new_order(&self, r: &NewOrderRecord) {
        if let Some(w) = &self.report {
            let mut w = w.lock().unwrap_or_else(|p| p.into_inner());
            let _ = w.write_all(text::report_file_line(r).as_bytes());
        }
        if let (Some(w), Some(line)) = (&self.trx, text::trx_file_line(r)) {
            let mut w = w.lock().unwrap_or_else(|p| p.into_inner());
            let _ = w.write_all(line.as_bytes());
        }
    }
}

/// The command-line spelling of an engine option.
fn flag(option: &str) -> &'static str {
    match option {
        "warehouses" => "--warehouses (-w)",
        "connections" => "--connections (-c)",
        "load-connections" => "--load-connections",
        "time" => "--time (-l)",
        "reconnect-timeout" => "--reconnect-timeout",
        "replace" => "--replace",
        _ => "--mysql-db (-d)",
    }
}

/// Says an engine error in the command line's words.
fn with_flag(e: anyhow::Error) -> anyhow::Error {
    use tpcc::TpccError::*;
    match tpcc::error::find(&e) {
        Some(TablesExist { database, tables }) => anyhow::anyhow!(
            "database '{database}' already holds TPC-C tables ({}): add --replace to drop and load them again, or run `spindle tpcc cleanup` with the same connection options first",
            tables.join(", ")
        ),
        Some(TablesMissing { database, missing }) => anyhow::anyhow!(
            "--mysql-db (-d): database '{database}' has no complete set of TPC-C tables (missing: {}): run `spindle tpcc prepare` with the same connection options first, or name the database that holds them",
            missing.join(", ")
        ),
        Some(f) => match f.option() {
            Some(opt) => e.context(flag(opt)),
            None => e,
        },
        None => e,
    }
}

/// Runs `spindle tpcc ...`; returns the exit code.
pub fn run(args: TpccArgs) -> anyhow::Result<i32> {
    execute(args).map_err(with_flag)
}

fn execute(args: TpccArgs) -> anyhow::Result<i32> {
    let (command, pos) = parse_words(&args.words)?;
    let (json, layout) = (args.format == crate::cli::Format::Json, args.layout);
    let mut cfg = config_from_args(&args, command, pos.as_ref())?;
    if let Some(datadir) = &args.datadir {
        apply_datadir(&mut cfg.connection, datadir, &args)?;
    }
    let printer = Printer { json, layout };
    let controller = Controller::on_signals();
    let result = match command {
        TpccCommand::Prepare => prepare(&cfg, &controller, &printer, json),
        TpccCommand::Run => run_step(&args, &cfg, &controller, &printer, json, layout),
        TpccCommand::Check => check(&args, &cfg, &controller, &printer, json),
        TpccCommand::Cleanup => tpcc::cleanup(&cfg, &printer).map(|_| 0),
    };
    super::output::exit_code(&controller, result)
}

fn prepare(
    cfg: &TpccConfig,
    controller: &Controller,
    printer: &Printer,
    json: bool,
) -> anyhow::Result<i32> {
    if !json {
        println!("*************************************");
        println!("*** spindle TPC-C Data Loader     ***");
        println!("*************************************");
        print!("{}", text::parameters(cfg));
        println!("TPCC Data Load Started...");
        let _ = std::io::stdout().flush();
    }
    let s = tpcc::prepare(cfg, controller, printer)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        println!(
            "\n...DATA LOADING COMPLETED SUCCESSFULLY in {:.1} s (rows {:.1} s, indexes and keys {:.1} s, {}).",
            s.elapsed_s,
            s.load_s,
            s.index_s,
            if s.load_data { "LOAD DATA LOCAL" } else { "multi-row INSERTs" }
        );
    }
    Ok(0)
}

fn run_step(
    args: &TpccArgs,
    cfg: &TpccConfig,
    controller: &Controller,
    printer: &Printer,
    json: bool,
    layout: Layout,
) -> anyhow::Result<i32> {
    let interval = cfg.report_interval_s;
    let steady = crate::config::steady::from_args(&args.steady, interval)?;
    let files = TrxFiles::open(args.report_file.as_ref(), args.trx_file.as_ref())?;
    if !json {
        print!("{}", text::run_header(cfg));
        let _ = std::io::stdout().flush();
    }
    let log = files.clone().map(|f| f as Arc<dyn TransactionLog>);
    let mut m = tpcc::run_logged(cfg, controller, printer, log)?;
    if let Some(f) = &files {
        f.flush()?;
    }
    let planned = format!(
        " of {} s (--rampup {} s + --time {} s)",
        cfg.rampup_s + cfg.measured_s(),
        cfg.rampup_s,
        cfg.measured_s()
    );
    let partial = super::output::mark_partial(controller, &mut m, &planned);
    let mut result = BenchResult::new(TestOptions::Tpcc(Box::new(cfg.clone())), m);
    let line = super::output::steady_line(&mut result, &steady);
    let report = || text::final_report(&result, layout) + &line;
    super::output::show_result(&result, json, report, partial, args.save.as_deref())?;
    if let Some(e) = &result.error {
        bail!("the TPC-C run ended early: {e} (the report above covers the run up to the error)");
    }
    Ok(0)
}

fn check(
    args: &TpccArgs,
    cfg: &TpccConfig,
    controller: &Controller,
    printer: &Printer,
    json: bool,
) -> anyhow::Result<i32> {
    let r = tpcc::check(cfg, controller, printer)?;
    let doc = serde_json::to_string_pretty(&r)?;
    if json {
        println!("{doc}");
    } else {
        print!("{}", text::check_report(&r));
    }
    if let Some(path) = &args.save {
        crate::sys::fs::write_atomic(path, doc.as_bytes())
            .with_context(|| format!("--save: could not write '{}'", path.display()))?;
    }
    Ok(if r.passed() { 0 } else { 1 })
}
