//! Command runners: glue between parsed arguments, the engines and the renderers. Each runner
//! turns its arguments into an engine config (via `config`), calls the engine, prints with
//! `report`, and returns the exit code. No benchmark logic lives here.

pub mod control;
pub mod daemon;
pub mod fileio;
pub mod leds;
pub mod mysqld;
pub mod oltp;
pub mod suite;

/// Prints one progress or interval line as it happens: on stdout with the text report, on
/// stderr when stdout carries the JSON document.
pub(crate) fn emit(json: bool, line: &str) {
    use std::io::Write;
    if json {
        eprintln!("{line}");
    } else {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}
