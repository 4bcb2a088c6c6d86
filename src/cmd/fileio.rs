//! `spindle fileio [options] prepare|run|cleanup`.

use crate::cli::{FileioArgs, Format, Step};
use crate::engine::IntervalSample;
use crate::engine::{Controller, Observer};
use crate::fileio::{self, FileioConfig};
use crate::model::{BenchResult, TestOptions};
use crate::report::sysbench_text as text;
use anyhow::Context;
use std::io::Write;

/// Prints interval lines as they arrive (stdout for text, stderr when stdout carries JSON).
struct Printer<'a> {
    cfg: &'a FileioConfig,
    json: bool,
}

impl Observer for Printer<'_> {
    fn message(&self, line: &str) {
        super::output::emit(self.json, line);
    }
    fn interval(&self, s: &IntervalSample) {
        let line = text::fileio_interval_line(s, self.cfg);
        super::output::emit(self.json, &line);
    }
}

/// Says an engine error in the command line's words: the flag it is about in front
/// (`--dir: directory … does not exist`), and for a file set that cannot serve the run, the sizes
/// in the unit the user typed (`--file-total-size=81900M`) and what to do.
fn with_flag(e: anyhow::Error, total_typed: &str) -> anyhow::Error {
    use fileio::FileioError::*;
    let unit = |bytes: u64| crate::units::in_unit_of(bytes, total_typed);
    match fileio::error::find(&e) {
        Some(SetTooSmall {
            dir,
            prepared_num,
            prepared_size,
            num,
            file_size,
        }) => anyhow::anyhow!(
            "--file-total-size: the files in '{}' were prepared as {prepared_num} files of {} ({} in all), but --file-num={num} --file-total-size={total_typed} needs {num} files of at least {} each: run with at most --file-num={prepared_num} --file-total-size={}, or run `spindle fileio cleanup` and prepare the larger set",
            dir.display(),
            unit(*prepared_size),
            unit(*prepared_size * *prepared_num as u64),
            unit(*file_size),
            unit(*prepared_size * *prepared_num as u64),
        ),
        Some(FileTooShort {
            path,
            len,
            expected,
        }) => anyhow::anyhow!(
            "--file-total-size: '{}' is {}, but --file-total-size={total_typed} needs at least {} per file: run with the size the files were prepared with, or prepare them again with this one",
            path.display(),
            unit(*len),
            unit(*expected),
        ),
        Some(NotChecksummed(dir)) => anyhow::anyhow!(
            "--validate needs checksummed files, but the files in '{}' were prepared (or last written) without --validate: run `spindle fileio cleanup`, then `spindle fileio --validate prepare`",
            dir.display()
        ),
        Some(f) => match f.option() {
            Some(opt) => e.context(format!("--{opt}")),
            None => e,
        },
        None => e,
    }
}

pub fn run(args: FileioArgs) -> anyhow::Result<i32> {
    let total_typed = match &args.file_total_size {
        Some(t) => t.text.clone(),
        None => "2G".to_string(),
    };
    execute(args).map_err(|e| with_flag(e, &total_typed))
}

fn execute(args: FileioArgs) -> anyhow::Result<i32> {
    let step = args.step.context(
        "missing command word: give prepare, run or cleanup (e.g. `spindle fileio --file-test-mode=rndrw run`)",
    )?;
    let cfg = crate::config::fileio::from_args(&args)?;
    let json = args.format == Some(Format::Json);
    let printer = Printer { cfg: &cfg, json };
    let controller = Controller::on_signals();
    let result = match step {
        Step::Prepare => fileio::prepare(&cfg, &controller, &printer).map(|_| 0),
        Step::Cleanup => fileio::cleanup(&cfg, &printer).map(|_| 0),
        Step::Run => run_step(&args, &cfg, &controller, &printer, json),
    };
    super::output::exit_code(&controller, result)
}

fn run_step(
    args: &FileioArgs,
    cfg: &FileioConfig,
    controller: &Controller,
    printer: &Printer,
    json: bool,
) -> anyhow::Result<i32> {
    let mode = cfg.test_mode.context(
        "--file-test-mode is required for run: seqwr, seqrewr, seqrd, rndrd, rndwr or rndrw",
    )?;
    let interval_s = cfg.report_interval.map_or(0, |i| i.as_secs());
    let steady = crate::config::steady::from_args(&args.steady, interval_s)?;
    // A file set that cannot serve the run is refused before sysbench's header.
    fileio::check_run(cfg, mode)?;
    if !json {
        print!("{}", text::fileio_header(cfg, mode));
        let _ = std::io::stdout().flush();
    }
    let mut m = fileio::run(cfg, controller, printer)?;
    let planned = match (cfg.time_limit, cfg.events) {
        (Some(t), _) => format!(" of --time={}", t.as_secs()),
        (None, n) => format!(" (--events={n})"),
    };
    let partial = super::output::mark_partial(controller, &mut m, &planned);
    let mut result = BenchResult::new(TestOptions::Fileio(cfg.clone()), m);
    let line = super::output::steady_line(&mut result, &steady);
    let report = || text::fileio_report(&result, cfg) + &line;
    super::output::show_result(&result, json, report, partial, args.save.as_deref())?;
    if let Some(e) = &result.error {
        anyhow::bail!("fileio run failed: {e}");
    }
    Ok(0)
}
