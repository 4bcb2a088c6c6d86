//! `spindle fileio [options] prepare|run|cleanup`.

use crate::cli::{FileioArgs, Format, Step};
use crate::engine::{Controller, Observer};
use crate::fileio::{self, FileioConfig};
use crate::model::IntervalSample;
use crate::report::sysbench_text as text;
use crate::report::{BenchResult, TestOptions};
use anyhow::Context;
use std::io::Write;

/// Prints interval lines as they arrive (stdout for text, stderr when stdout carries JSON).
struct Printer<'a> {
    cfg: &'a FileioConfig,
    json: bool,
}

impl Observer for Printer<'_> {
    fn message(&self, line: &str) {
        super::emit(self.json, line);
    }
    fn interval(&self, s: &IntervalSample) {
        let line = text::fileio_interval_line(s, self.cfg);
        super::emit(self.json, &line);
    }
}

/// Says an engine error in the command line's words: the flag it is about in front
/// (`--dir: directory … does not exist`), and for a file set that does not match, the flags to
/// use and the commands to run.
fn with_flag(e: anyhow::Error) -> anyhow::Error {
    use fileio::FileioError::*;
    match fileio::error::find(&e) {
        Some(SetMismatch {
            dir,
            prepared_num,
            prepared_size,
            num,
            total,
        }) => anyhow::anyhow!(
            "the files in '{}' were prepared with --file-num={prepared_num} --file-total-size={}, but this run asks for --file-num={num} --file-total-size={total}: run with the prepared values, or run `spindle fileio cleanup` and prepare again",
            dir.display(),
            *prepared_num as u64 * prepared_size
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
    execute(args).map_err(with_flag)
}

fn execute(args: FileioArgs) -> anyhow::Result<i32> {
    let step = args.step.context(
        "missing command word: give prepare, run or cleanup (e.g. `spindle fileio --file-test-mode=rndrw run`)",
    )?;
    let cfg = crate::config::fileio::from_args(&args)?;
    let json = args.format == Some(Format::Json);
    let printer = Printer { cfg: &cfg, json };
    let controller = Controller::on_signals();
    match step {
        Step::Prepare => {
            fileio::prepare(&cfg, &controller, &printer)?;
            Ok(0)
        }
        Step::Cleanup => {
            fileio::cleanup(&cfg, &printer)?;
            Ok(0)
        }
        Step::Run => {
            let mode = cfg.test_mode.context(
                "--file-test-mode is required for run: seqwr, seqrewr, seqrd, rndrd, rndwr or rndrw",
            )?;
            if !json {
                print!("{}", text::fileio_header(&cfg, mode));
                let _ = std::io::stdout().flush();
            }
            let m = fileio::run(&cfg, &controller, &printer)?;
            let result = BenchResult::new(TestOptions::Fileio(cfg.clone()), m);
            if let Some(path) = &args.save {
                crate::sys::fs::write_atomic(path, result.to_json_pretty().as_bytes())
                    .with_context(|| format!("--save: could not write '{}'", path.display()))?;
            }
            if json {
                println!("{}", result.to_json_pretty());
            } else {
                print!("{}", text::fileio_report(&result, &cfg));
            }
            if let Some(e) = &result.error {
                anyhow::bail!("fileio run failed: {e}");
            }
            if controller.stop_requested() {
                eprintln!("spindle: interrupted; the report covers the events completed before the signal");
                return Ok(130);
            }
            Ok(0)
        }
    }
}
