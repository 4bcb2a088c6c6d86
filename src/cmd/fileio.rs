//! `spindle fileio [options] prepare|run|cleanup`.

use crate::cli::{FileioArgs, Format, Step};
use crate::fileio::{self, FileioConfig, RunObserver};
use crate::report::sysbench_text as text;
use crate::report::IntervalSample;
use anyhow::Context;
use std::io::Write;

/// Prints interval lines as they arrive (stdout for text, stderr when stdout carries JSON).
struct Printer<'a> {
    cfg: &'a FileioConfig,
    json: bool,
}

impl RunObserver for Printer<'_> {
    fn interval(&self, s: &IntervalSample) {
        let line = text::fileio_interval_line(s, self.cfg);
        super::emit(self.json, &line);
    }
}

pub fn run(args: FileioArgs) -> anyhow::Result<i32> {
    let step = args.step.context(
        "missing command word: give prepare, run or cleanup (e.g. `spindle fileio --file-test-mode=rndrw run`)",
    )?;
    let cfg = crate::config::fileio::from_args(&args)?;
    let json = args.format == Some(Format::Json);
    let mut log = |line: &str| {
        if json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    match step {
        Step::Prepare => {
            fileio::prepare(&cfg, &mut log)?;
            Ok(0)
        }
        Step::Cleanup => {
            fileio::cleanup(&cfg, &mut log)?;
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
            let stop = crate::sys::signals::install();
            let result = fileio::run(&cfg, &Printer { cfg: &cfg, json }, stop)?;
            if let Some(path) = &args.save {
                crate::report::write::write_atomic(path, result.to_json_pretty().as_bytes())
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
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                eprintln!("spindle: interrupted; the report covers the events completed before the signal");
                return Ok(130);
            }
            Ok(0)
        }
    }
}
