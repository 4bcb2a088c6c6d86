//! `summary.txt` (also what `spindle report show` prints): the targets, the doubts numbered,
//! then the targets side by side per test with the ratio to the best one — the way the
//! reference articles compare an SSD with an HDD — each figure with the numbers of its doubts,
//! its steady state and its validity verdict (`report::validity`: the colour and the reasons),
//! the two regimes of `[oltp.regimes]`, then failures and notes.

use super::doubts::{steady_line, DoubtList};
use super::figures::figures;
use crate::model::{PhaseResult, PhaseStatus, RunStatus, SuiteResult, TargetResult};
use std::fmt::Write as _;

/// `summary.txt`.
pub fn render_summary(s: &SuiteResult) -> String {
    let mut out = String::new();
    header(&mut out, s);
    cut_short(&mut out, s);
    if s.status == RunStatus::NoTargets {
        let _ = writeln!(
            out,
            "\nNOTHING WAS BENCHMARKED: no disk could be used. Every disk spindle saw is listed\nbelow with the reason and what to do."
        );
    }
    targets(&mut out, s);
    if !s.skipped.is_empty() {
        let _ = writeln!(out, "\nSkipped disks:");
        for k in &s.skipped {
            let _ = writeln!(out, "  {:<10} {}  {}", k.device, k.id, k.reason);
        }
    }
    let doubts = DoubtList::of(s);
    doubts_section(&mut out, s, &doubts);
    for test in test_names(s) {
        test_table(&mut out, s, &test, &doubts);
    }
    super::regimes::summary_section(&mut out, s);
    queueing(&mut out, s);
    out.push_str(&super::cdm::summary_section(s));
    out.push_str(&super::appclass::summary_section(s));
    super::cliff::summary_section(&mut out, s);
    out.push_str(&super::together::summary_section(s));
    tpcc_checks(&mut out, s);
    server_section(&mut out, s);
    failures(&mut out, s);
    skipped_phases(&mut out, s);
    notes(&mut out, s);
    out
}

/// For a run that did not finish: where it stopped and the targets it never reached.
fn cut_short(w: &mut String, s: &SuiteResult) {
    if let Some(lines) = s.cut_short() {
        let _ = writeln!(w, "\n{}", lines.join("\n"));
    }
}

fn header(w: &mut String, s: &SuiteResult) {
    let _ = writeln!(
        w,
        "spindle {} suite, profile '{}'",
        s.tool.version, s.profile.name
    );
    let _ = writeln!(
        w,
        "host: {} ({}, {} CPUs, {} MiB RAM{})",
        s.host.hostname,
        s.host.cpu_model,
        s.host.cpus,
        s.host.ram_bytes >> 20,
        s.host
            .board_model
            .as_deref()
            .map(|m| format!(", {m}"))
            .unwrap_or_default()
    );
    if let Some(g) = &s.governor {
        let _ = writeln!(w, "CPU governor: {}", super::validity::governor_line(g));
    }
    let _ = writeln!(
        w,
        "run: {}  started {}  finished {}  status: {}",
        s.run_id,
        s.started_at,
        s.finished_at.as_deref().unwrap_or("-"),
        s.status_line()
    );
}

/// The numbered doubts (the numbers appear beside the figures), or that there is none.
fn doubts_section(w: &mut String, s: &SuiteResult, doubts: &DoubtList) {
    if s.targets
        .iter()
        .all(|t| t.phases.iter().all(|p| p.result.is_none()))
    {
        return;
    }
    if doubts.is_empty() {
        let _ = writeln!(w, "\n{}", super::doubts::none_found(s));
        return;
    }
    let _ = writeln!(
        w,
        "\nBefore trusting these figures (the numbers appear beside the figures they hold for):"
    );
    for line in doubts.lines(s) {
        let _ = writeln!(w, "  {line}");
    }
}

fn targets(w: &mut String, s: &SuiteResult) {
    let _ = writeln!(w, "\nTargets:");
    for t in &s.targets {
        let _ = writeln!(w, "  {:<10} {}  {}", t.name, t.path, t.description);
        if let Some(fs) = &t.filesystem {
            let _ = writeln!(w, "  {:<10} filesystem: {}", "", fs.describe());
        }
        if let Some(how) = &t.reused {
            let _ = writeln!(w, "  {:<10} {how}", "");
        }
        let h = super::health::of(t);
        let _ = writeln!(w, "  {:<10} SoC temperature: {}", "", h.temperature());
        let _ = writeln!(w, "  {:<10} under-voltage: {}", "", h.undervoltage());
        let _ = writeln!(w, "  {:<10} throttling: {}", "", h.throttling());
        if let Some(l) = super::together::target_line(s, &t.name) {
            let _ = writeln!(w, "  {:<10} {l}", "");
        }
        disk_facts(w, s, t);
    }
}

/// A disk target's facts: USB bridge trouble and its remedy, SMART and what the run cost.
fn disk_facts(w: &mut String, s: &SuiteResult, t: &TargetResult) {
    use crate::disk::kernel_log::UsbTroubleCount;
    let trouble = match &t.usb_trouble {
        Some(UsbTroubleCount::Counted(c)) => c.of(&t.name),
        _ => Default::default(),
    };
    if let Some(env) = &s.environment {
        if let Some(advice) = env
            .disk(&t.name)
            .and_then(|f| f.uas_advice(&env.usb_storage_quirks, &trouble))
        {
            let _ = writeln!(w, "  {:<10} USB BRIDGE: {advice}", "");
        }
    }
    if !trouble.is_empty() {
        let _ = writeln!(
            w,
            "  {:<10} the kernel logged USB trouble during the run: {}",
            "",
            trouble.describe()
        );
    }
    if let Some(sm) = &t.smart {
        let _ = writeln!(w, "  {:<10} SMART before: {}", "", sm.before.describe());
        if let Some(c) = &sm.change {
            let _ = writeln!(w, "  {:<10} SMART change: {}", "", c.describe());
        }
    }
}

/// Tests with results, in plan order.
fn test_names(s: &SuiteResult) -> Vec<String> {
    let mut tests: Vec<String> = Vec::new();
    for t in &s.targets {
        for p in &t.phases {
            if p.result.is_some() && !tests.contains(&p.name) {
                tests.push(p.name.clone());
            }
        }
    }
    tests
}

/// One test: a row per target with its figures, the ratio to the best target and the
/// numbers of its doubts.
fn test_table(w: &mut String, s: &SuiteResult, test: &str, doubts: &DoubtList) {
    let rows: Vec<(usize, &TargetResult, &PhaseResult)> = s
        .targets
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.phases.iter().find(|p| p.name == test).map(|p| (i, t, p)))
        .collect();
    let best = rows
        .iter()
        .filter(|(_, _, p)| p.status == PhaseStatus::Ok)
        .filter_map(|(_, _, p)| p.result.as_ref().map(|r| figures(r).primary))
        .fold(0.0, f64::max);
    let Some(first) = rows.iter().find_map(|(_, _, p)| p.result.as_ref()) else {
        return;
    };
    let f0 = figures(first);
    let (unit, shape) = match &first.options {
        crate::model::TestOptions::Tpcc(c) => (
            "connection",
            format!(", {} statements", c.statements.name()),
        ),
        _ => ("thread", String::new()),
    };
    let count = crate::units::count(first.threads as u64, unit);
    let _ = writeln!(w, "\n{test}  ({count}{shape})");
    let _ = writeln!(
        w,
        "  {:<10} {:>12} {:>10} {:>9} {:>9} {:>8}  doubts",
        "target", f0.primary_label, f0.secondary_label, "p95 ms", "p99 ms", "vs best"
    );
    for (i, t, p) in rows {
        match &p.result {
            Some(r) => {
                let f = figures(r);
                let ratio = if best > 0.0 { f.primary / best } else { 0.0 };
                let flag = if p.status == PhaseStatus::Ok {
                    String::new()
                } else {
                    format!("  ({}: partial)", p.status)
                };
                let refs = doubts.refs_text(i, &p.name);
                let line = format!(
                    "  {:<10} {:>12.2} {:>10.2} {:>9.2} {:>9.2} {:>8.2}  {refs:<6}{flag}",
                    t.name, f.primary, f.secondary, f.p95_ms, f.p99_ms, ratio
                );
                let _ = writeln!(w, "{}", line.trim_end());
                if let crate::engine::Counters::Tpcc(c) = &r.counters {
                    let _ = writeln!(w, "  {:<10} {}", "", super::tpcc_text::nopm_line(c));
                }
                if let Some(ss) = &r.steady_state {
                    let _ = writeln!(w, "  {:<10} {}", "", steady_line(ss));
                }
                if let Some(v) = super::validity::of_phase(s, t, p) {
                    let _ = writeln!(w, "  {:<10} {}", "", v.line());
                }
                if let Some(rp) = &p.repeats {
                    let _ = writeln!(w, "  {:<10} {}", "", super::repeat::line(rp));
                }
            }
            None => {
                let _ = writeln!(
                    w,
                    "  {:<10} {}: {}",
                    t.name,
                    p.status,
                    p.error.as_deref().unwrap_or("")
                );
            }
        }
    }
}

/// Per target: what a deep queue gains over queue depth 1, and whether the disk gains at all.
fn queueing(w: &mut String, s: &SuiteResult) {
    use super::queueing::{pairs, verdict};
    let rows: Vec<(&TargetResult, Vec<_>)> = s
        .targets
        .iter()
        .map(|t| (t, pairs(t)))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        w,
        "\nQueueing gain (async O_DIRECT, requests/s at a deep queue ÷ at queue depth 1):"
    );
    for (t, p) in rows {
        let driver = t
            .disk
            .as_ref()
            .and_then(|d| d.usb.as_ref())
            .and_then(|u| u.driver.clone())
            .unwrap_or_else(|| "-".into());
        let cells: Vec<String> = p
            .iter()
            .map(|q| {
                format!(
                    "{} {} QD{} {:.2}×",
                    crate::units::format_size_exact(q.block),
                    q.mode.name(),
                    q.depth,
                    q.ratio
                )
            })
            .collect();
        let _ = writeln!(w, "  {:<10} {:<12} {}", t.name, driver, cells.join("  "));
        let _ = writeln!(w, "  {:<10} {:<12} → {}", "", "", verdict(t, &p));
    }
}

/// Per target: whether TPC-C's consistency conditions held after the run.
fn tpcc_checks(w: &mut String, s: &SuiteResult) {
    let checked: Vec<(&TargetResult, &crate::tpcc::CheckReport)> = s
        .targets
        .iter()
        .flat_map(|t| t.phases.iter().map(move |p| (t, p)))
        .filter_map(|(t, p)| p.tpcc_check.as_ref().map(|c| (t, c)))
        .collect();
    if checked.is_empty() {
        return;
    }
    let _ = writeln!(w, "\nTPC-C consistency (clause 3.3.2, after the run):");
    for (t, c) in checked {
        let failed: Vec<String> = c
            .failures()
            .map(|f| format!("{} (warehouse {})", f.clause(), f.warehouse))
            .collect();
        let verdict = if failed.is_empty() {
            let skipped = c
                .results
                .iter()
                .filter(|r| r.status == crate::tpcc::CheckStatus::Skipped)
                .count();
            format!(
                "every condition holds on {} warehouse{} ({} checks, {skipped} not applicable)",
                c.warehouses,
                if c.warehouses == 1 { "" } else { "s" },
                c.results.len()
            )
        } else {
            format!("FAILED: {}", crate::units::shorten(&failed.join(", "), 300))
        };
        let _ = writeln!(w, "  {:<10} {verdict}", t.name);
    }
}

/// The servers' effective I/O variables side by side, and their counters per database phase.
fn server_section(w: &mut String, s: &SuiteResult) {
    if let Some(t) = super::server::effective_table(s) {
        let _ = writeln!(
            w,
            "\nDatabase server, effective values (SHOW GLOBAL VARIABLES after start):"
        );
        let _ = write!(w, "  {:<32}", "");
        for (heading, _) in &t.columns {
            let _ = write!(w, " {heading:<16}");
        }
        let _ = write!(w, "\n  {:<32}", "server");
        for (_, v) in &t.columns {
            let _ = write!(w, " {:<16}", format!("{} {}", v.flavor, v.version));
        }
        let _ = write!(w, "\n  {:<32}", "peak memory (VmHWM)");
        for (_, v) in &t.columns {
            let peak = v
                .peak_rss_bytes
                .map_or("-".into(), crate::units::human_size);
            let _ = write!(w, " {peak:<16}");
        }
        let _ = writeln!(w);
        for (name, cells) in &t.rows {
            let _ = write!(w, "  {name:<32}");
            for c in cells {
                let _ = write!(w, " {:<16}", c.unwrap_or("-"));
            }
            let _ = writeln!(w);
        }
    }
    let io = super::server::io_rows(s);
    if io.is_empty() {
        return;
    }
    let _ = writeln!(
        w,
        "\nServer I/O per phase (InnoDB counters, after - before):"
    );
    let _ = write!(w, "  {:<10} {:<24}", "", "");
    for c in super::server::io_columns() {
        let _ = write!(w, " {c:>20}");
    }
    let _ = writeln!(w);
    for r in io {
        let _ = write!(w, "  {:<10} {:<24}", r.target, r.phase);
        for c in &r.cells {
            let _ = write!(w, " {:>20}", c.as_deref().unwrap_or("-"));
        }
        let _ = writeln!(w);
    }
}

fn failures(w: &mut String, s: &SuiteResult) {
    let mut any = false;
    for (t, p) in s.failures() {
        if !any {
            let _ = writeln!(w, "\nFailures:");
            any = true;
        }
        let _ = writeln!(
            w,
            "  {} {}: {}",
            t.name,
            p.name,
            p.error.as_deref().unwrap_or("(no message)")
        );
    }
}

/// Phases that did not run, per target and reason (the status line counts them).
fn skipped_phases(w: &mut String, s: &SuiteResult) {
    let lines = s.skipped_phases();
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(w, "\nSkipped phases:");
    for line in lines {
        let _ = writeln!(w, "  {line}");
    }
}

/// One line per target and distinct note, naming the phases it applies to: the phase's notes
/// and, for OLTP and TPC-C runs, their data set against the buffer pool.
fn notes(w: &mut String, s: &SuiteResult) {
    let mut notes: Vec<(String, &str)> = Vec::new();
    for t in &s.targets {
        for p in &t.phases {
            let fit = p.data_set.map(|f| {
                let engine = match p.phase.map(|ph| ph.family()) {
                    Some(crate::model::Family::Tpcc) => "TPC-C",
                    _ => "OLTP",
                };
                format!("{engine} {}", f.describe())
            });
            let keys = p.notes.iter().chain(&fit);
            notes.extend(keys.map(|n| (format!("{} {n}", t.name), p.name.as_str())));
        }
    }
    let notes = super::group::grouped(notes);
    if !notes.is_empty() {
        let _ = writeln!(w, "\nNotes:");
        for (note, phases) in notes {
            let _ = writeln!(w, "  {note} ({})", phases.join(", "));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::suite::tests_support::two_disk_suite as suite;

    #[test]
    fn summary_compares_targets_with_ratio_to_best() {
        let text = render_summary(&suite());
        assert!(text.contains("fileio-rndrw-t1"), "{text}");
        let ssd = text
            .lines()
            .find(|l| l.trim_start().starts_with("ssd ") && l.contains("1000.00"))
            .unwrap();
        let hdd = text
            .lines()
            .find(|l| l.trim_start().starts_with("hdd ") && l.contains("100.00"))
            .unwrap();
        // target, req/s, MiB/s, p95, p99, vs best, doubts
        let fields = |l: &str| l.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(fields(ssd)[5..], ["1.00", "1"], "{ssd}");
        assert_eq!(fields(hdd)[5..], ["0.10", "1"], "{hdd}");
        assert!(text.contains("Skipped disks:") && text.contains("holds data"));
        // the doubt the numbers point at, listed before the tables
        let doubts = text.find("Before trusting these figures").unwrap();
        assert!(
            doubts < text.find("fileio-rndrw-t1  (1 thread)").unwrap(),
            "{text}"
        );
        assert!(
            text.contains("  [1] ssd, hdd (fileio-rndrw-t1): measured for less than 30 s"),
            "{text}"
        );
    }

    #[test]
    fn each_result_has_a_validity_line_with_its_colour_and_reasons() {
        let mut s = suite();
        s.targets[0].filesystem = Some(crate::model::FilesystemRecord {
            fs_type: "tmpfs".into(),
            source: Some("tmpfs".into()),
            in_ram: true,
        });
        let r = s.targets[1].phases[0].result.as_mut().unwrap();
        if let crate::engine::Counters::Fileio(c) = &mut r.counters {
            c.read_mib_per_s = 10.0;
        }
        let text = render_summary(&s);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("validity: "))
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].starts_with("validity: red — ")
                && lines[0]
                    .contains("in_ram (red): on tmpfs, a filesystem in RAM: not a disk figure."),
            "{text}"
        );
        // the second target has no discovered disk: its link is not known, so not green
        assert!(
            lines[1].contains("link_ceiling (amber): not judged: link unknown"),
            "{text}"
        );
    }

    #[test]
    fn the_status_line_says_when_phases_failed_or_were_skipped() {
        let mut s = suite();
        assert!(render_summary(&s).contains("status: complete\n"));
        let mut skipped = s.targets[1].phases[0].clone();
        skipped.name = "oltp-read_only-t4".into();
        skipped.status = PhaseStatus::Skipped;
        skipped.result = None;
        s.targets[1].phases[0].status = PhaseStatus::Failed;
        s.targets[1].phases.push(skipped.clone());
        s.targets[1].phases.push(skipped);
        let text = render_summary(&s);
        assert!(
            text.contains("status: complete (1 phase failed, 2 skipped)\n"),
            "{text}"
        );
        // and says why, once per reason
        let mut skipped = s.targets[1].phases[1].clone();
        skipped.error = Some("the database server did not start".into());
        s.targets[1].phases[1].name = "oltp-read_only-t4".into();
        s.targets[1].phases[2].name = "oltp-write_only-t4".into();
        s.targets[1].phases[1].error = skipped.error.clone();
        s.targets[1].phases[2].error = skipped.error;
        let text = render_summary(&s);
        assert!(
            text.contains("\nSkipped phases:\n  hdd oltp-read_only-t4, oltp-write_only-t4: the database server did not start\n"),
            "{text}"
        );
    }

    #[test]
    fn a_reused_disk_and_the_filesystem_are_named_under_targets() {
        let mut s = suite();
        s.targets[0].reused = Some("reused as spindle's scratch disk: sda1 (ext4) …".into());
        s.targets[0].filesystem = Some(crate::model::FilesystemRecord {
            fs_type: "ext4".into(),
            source: Some("/dev/sda1".into()),
            in_ram: false,
        });
        let text = render_summary(&s);
        assert!(
            text.contains("  ssd        /mnt/ssd  test disk\n             filesystem: ext4 on /dev/sda1\n             reused as spindle's scratch disk: sda1 (ext4) …\n"),
            "{text}"
        );
    }

    #[test]
    fn a_run_cut_short_says_where_and_which_targets_it_never_reached() {
        let mut s = suite();
        let text = render_summary(&s);
        assert!(
            !text.contains("INTERRUPTED") && !text.contains("STOPPED"),
            "{text}"
        );
        // power cut while the first target's second phase ran; the second target not reached
        let mut running = s.targets[0].phases[0].clone();
        running.name = "fileio-rndwr-t1".into();
        running.result = None;
        running.status = PhaseStatus::Running;
        s.targets[0].phases.push(running);
        s.targets[1].phases.clear();
        s.status = RunStatus::Running;
        assert!(s.mark_interrupted());
        let text = render_summary(&s);
        assert!(
            text.contains("INTERRUPTED: the machine lost power or spindle stopped during ssd fileio-rndwr-t1.")
                && text.contains("Targets not reached: hdd."),
            "{text}"
        );
        // cut between two phases: nothing was running
        s.targets[0].phases.pop();
        let text = render_summary(&s);
        assert!(
            text.contains("stopped between phases, after ssd fileio-rndrw-t1."),
            "{text}"
        );
        // stopped on request: the first measurement cut short, the later ones not made
        s.status = RunStatus::Aborted;
        let mut aborted = s.targets[0].phases[0].clone();
        aborted.status = PhaseStatus::Aborted;
        for name in ["oltp-read_only-t4", "oltp-point_select-t4"] {
            aborted.name = name.into();
            s.targets[0].phases.push(aborted.clone());
        }
        let text = render_summary(&s);
        assert!(
            text.contains("STOPPED on request (the button, Ctrl-C or SIGTERM) during ssd oltp-read_only-t4 (1 later measurement(s) not made)."),
            "{text}"
        );
    }

    #[test]
    fn repeated_notes_are_listed_once_with_their_phases() {
        let mut s = suite();
        let mut second = s.targets[0].phases[0].clone();
        second.name = "fileio-rndrd-t1".into();
        s.targets[0].phases.push(second);
        for p in &mut s.targets[0].phases {
            p.notes = vec!["page cache dropped before the run".into()];
        }
        let text = render_summary(&s);
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("page cache dropped"))
            .collect();
        assert_eq!(
            lines,
            vec!["  ssd page cache dropped before the run (fileio-rndrw-t1, fileio-rndrd-t1)"]
        );
    }
}
