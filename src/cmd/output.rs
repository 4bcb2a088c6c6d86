//! What every runner prints the same way: stdout that tolerates a reader gone away, progress
//! lines beside a JSON document, a result's way out (`--save`, JSON or text), and what an
//! interrupted run says and exits with.

/// A workload command's exit code once its step ended: when SIGINT/SIGTERM stopped it, says
/// "interrupted" on stderr (with the error the step ended in, if any) and returns 130, whatever
/// the step returned; otherwise the step's own result.
pub(crate) fn exit_code(
    controller: &crate::engine::Controller,
    result: anyhow::Result<i32>,
) -> anyhow::Result<i32> {
    if !controller.stop_requested() {
        return result;
    }
    match result {
        Ok(_) => crate::sys::log::say!("interrupted by a signal"),
        Err(e) => crate::sys::log::say!("interrupted by a signal: {e:#}"),
    }
    Ok(130)
}

/// What a measurement a signal cut short says about itself: a note in its result document, and
/// the `PARTIAL:` line after the text report.
pub(crate) fn partial_note(m: &crate::engine::Measurement, planned: &str) -> String {
    format!(
        "interrupted by a signal after {:.1} s{planned}: the figures are partial (the events completed before the signal)",
        m.total_time_s
    )
}

/// Marks `m` partial when `controller` was stopped: adds [`partial_note`] to its notes and
/// returns the line to print after the text report.
pub(crate) fn mark_partial(
    controller: &crate::engine::Controller,
    m: &mut crate::engine::Measurement,
    planned: &str,
) -> Option<String> {
    if !controller.stop_requested() {
        return None;
    }
    let note = partial_note(m, planned);
    m.notes.push(note.clone());
    Some(format!("PARTIAL: {note}"))
}

/// Judges `result`'s steady state by the `--ss` options given and returns the line its text
/// report ends with; none given: the default judgement stays in the document and the text stays
/// the reference tool's (a pasted command line prints what sysbench or tpcc-mysql print).
pub(crate) fn steady_line(
    result: &mut crate::model::BenchResult,
    settings: &crate::engine::SteadySettings,
) -> String {
    if !settings.given() {
        return String::new();
    }
    let s = result.judge_steady(settings);
    format!("{}\n", crate::report::doubts::steady_line(s))
}

/// A run's result on its way out: the document to `--save PATH` (atomically), then to stdout —
/// the JSON document, or `report` (the text report) and the `PARTIAL:` line of an interrupted
/// run ([`mark_partial`]).
pub(crate) fn show_result(
    result: &crate::model::BenchResult,
    json: bool,
    report: impl FnOnce() -> String,
    partial: Option<String>,
    save: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    if let Some(path) = save {
        crate::sys::fs::write_atomic(path, result.to_json_pretty().as_bytes())
            .with_context(|| format!("--save: could not write '{}'", path.display()))?;
    }
    if json {
        out(&format!("{}\n", result.to_json_pretty()));
    } else {
        let mut text = report();
        if let Some(line) = partial {
            text.push_str(&line);
            text.push('\n');
        }
        out(&text);
    }
    Ok(())
}

/// Writes `text` to stdout as it is; a reader that went away is no error (the commands that
/// keep running then, see `main.rs` on SIGPIPE, must not panic on it).
pub(crate) fn out(text: &str) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes());
    let _ = o.flush();
}

/// [`out`] on stderr.
pub(crate) fn err(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

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
