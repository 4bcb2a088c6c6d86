//! The comparison as terminal text: the runs, the baseline, one table per test (disks, median,
//! spread, ratio, the numbers of the figures' doubts), the tests kept apart with the reason,
//! the doubts numbered, and the per-family geometric means with wins and losses.

use super::{Baseline, Comparison, DiskRow, TestTable};
use crate::report::html::svg::fmt_num;
use crate::report::metric::Family;
use std::fmt::Write as _;

/// `median` with `±spread%` when there are repeated runs.
pub(crate) fn median_cell(r: &DiskRow) -> String {
    match r.median {
        None => "-".into(),
        Some(m) if r.n > 1 && m > 0.0 => {
            format!("{} ±{:.1}%", fmt_num(m), (r.max - r.min) / 2.0 / m * 100.0)
        }
        Some(m) => fmt_num(m),
    }
}

/// The 95 % interval of the mean over the row's repeats with the CV: `1.2k–1.3k CV 2.1%`,
/// `bimodal` added when the repeats fall into two groups; `-` with one repeat.
pub(crate) fn ci_cell(r: &DiskRow) -> String {
    match r.spread {
        Some(s) => match s.ci {
            Some((lo, hi)) => format!(
                "{}–{} CV {:.1}%{}",
                fmt_num(lo),
                fmt_num(hi),
                s.cv * 100.0,
                if s.bimodal { " bimodal" } else { "" }
            ),
            None => "-".into(),
        },
        None => "-".into(),
    }
}

/// The verdict against the baseline with the ratio's interval: `faster 1.48× [1.41–1.55]`;
/// `-` when either side has fewer than 2 repeats.
pub(crate) fn verdict_cell(c: &Comparison, r: &DiskRow) -> String {
    if c.baseline == Baseline::Disk(r.disk) {
        return "baseline".into();
    }
    match r.difference {
        Some(d) => format!(
            "{} {:.2}× [{:.2}–{:.2}]",
            d.verdict.words(),
            d.ratio,
            d.ci.0,
            d.ci.1
        ),
        None => "-".into(),
    }
}

/// The p99 latency against the baseline's: `p99 0.91× [0.85–0.97] lower`.
pub(crate) fn p99_cell(r: &DiskRow) -> String {
    use crate::stats::repeat::Verdict;
    match r.p99_difference {
        Some(d) => format!(
            "{:.2}× [{:.2}–{:.2}] {}",
            d.ratio,
            d.ci.0,
            d.ci.1,
            match d.verdict {
                Verdict::Higher => "higher",
                Verdict::Lower => "lower",
                Verdict::NotDistinguishable => "not distinguishable",
            }
        ),
        None => "-".into(),
    }
}

/// The ratio to the baseline, or why there is none.
pub(crate) fn ratio_cell(c: &Comparison, r: &DiskRow) -> String {
    match (r.ratio, c.baseline) {
        (_, Baseline::Disk(b)) if b == r.disk => "baseline".into(),
        (Some(q), _) => format!("{q:.2}×"),
        (None, Baseline::Run(_)) => "not in baseline run".into(),
        (None, Baseline::Disk(_)) if r.median.is_none() => "no complete figure".into(),
        (None, Baseline::Disk(_)) => "baseline lacks it".into(),
    }
}

fn test_table(w: &mut String, c: &Comparison, t: &TestTable) {
    let _ = writeln!(w, "\n{}  ({})", t.test, t.unit);
    let _ = writeln!(w, "  parameters: {}", t.params);
    if let Some(why) = &t.apart {
        let _ = writeln!(
            w,
            "  NOT COMPARED with the baseline's {}: parameters differ: {}",
            t.test,
            why.join("; ")
        );
    }
    let repeats = t.rows.iter().any(|r| r.spread.is_some_and(|s| s.n > 1));
    let _ = writeln!(
        w,
        "  {:<24} {:>4} {:>18} {:>20}  {:<7} {:<8} runs",
        "disk", "n", "median", "ratio", "doubts", "validity"
    );
    for r in &t.rows {
        let _ = writeln!(
            w,
            "  {:<24} {:>4} {:>18} {:>20}  {:<7} {:<8} {}",
            c.disks[r.disk].label,
            r.n,
            median_cell(r),
            ratio_cell(c, r),
            doubts_cell(r),
            validity_cell(r),
            runs_cell(r)
        );
    }
    if repeats {
        let _ = writeln!(
            w,
            "  {:<24} {:>4} {:>32}  {:<36} p99 against the baseline's",
            "repeats", "n", "95% interval of the mean", "against the baseline (ratio [95%])"
        );
        for r in &t.rows {
            let _ = writeln!(
                w,
                "  {:<24} {:>4} {:>32}  {:<36} {}",
                c.disks[r.disk].label,
                r.spread.map_or(0, |s| s.n),
                ci_cell(r),
                verdict_cell(c, r),
                p99_cell(r)
            );
        }
    }
}

/// The verdict of a row's figures: `green` when every run's is, else each run's
/// (`[1] green, [2] red`); `-` for figures without one.
pub(crate) fn validity_cell(r: &DiskRow) -> String {
    match r.validity.first() {
        None => "-".into(),
        Some((_, first)) if r.validity.iter().all(|(_, v)| v == first) => first.word().into(),
        Some(_) => {
            let each: Vec<String> = r
                .validity
                .iter()
                .map(|(run, v)| format!("[{}] {}", run + 1, v.word()))
                .collect();
            each.join(", ")
        }
    }
}

/// The numbers of a row's doubts: `1,3`, or `-`.
pub(crate) fn doubts_cell(r: &DiskRow) -> String {
    if r.doubts.is_empty() {
        return "-".into();
    }
    let n: Vec<String> = r.doubts.iter().map(|d| d.to_string()).collect();
    n.join(",")
}

/// Said above the tables when a verdict rests on a single run of one side (always with a run
/// as the baseline): an interval holds the spread of a figure's repeats within its run, and
/// what moves a whole run from one occasion to the next is not in it. Measured: two bundles of
/// one profile a minute apart on a 2-vCPU VM's tmpfs differed by 26 % in a figure whose
/// repeats had a CV of 1.9 % (README, `report compare`).
pub(crate) fn scope_note(c: &Comparison) -> Option<&'static str> {
    let one_run = |r: &DiskRow| r.samples.len() < 2;
    let single = c.tests.iter().any(|t| {
        let base_one_run = match c.baseline {
            Baseline::Run(_) => true,
            Baseline::Disk(b) => t.rows.iter().find(|r| r.disk == b).is_some_and(one_run),
        };
        t.rows
            .iter()
            .any(|r| r.difference.is_some() && (base_one_run || one_run(r)))
    });
    single.then_some(
        "The intervals hold the spread of each figure's repeats within one run. What moves a \
         whole run from one occasion to the next (the machine's other load, a disk's cache, \
         temperature or housekeeping) is not in them, so a verdict that rests on a single run of \
         one side can be the occasion's, not the disk's. With a disk as the baseline, two or more \
         runs of each disk, taken at different times, include it.",
    )
}

/// The numbered doubts: `[1] sda in runs 1, 2; sdb in run 2: <doubt>`.
pub(crate) fn doubt_lines(c: &Comparison) -> Vec<String> {
    c.doubts
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let who: Vec<String> = d
                .who
                .iter()
                .map(|(disk, runs)| {
                    let n: Vec<String> = runs.iter().map(|r| (r + 1).to_string()).collect();
                    let word = if runs.len() == 1 { "run" } else { "runs" };
                    format!("{} in {word} {}", c.disks[*disk].label, n.join(", "))
                })
                .collect();
            format!("[{}] {}: {}", i + 1, who.join("; "), d.text)
        })
        .collect()
}

/// Each run's value: `[1] 1.2k, [3] 980 (partial)`.
pub(crate) fn runs_cell(r: &DiskRow) -> String {
    let runs: Vec<String> = r
        .values
        .iter()
        .map(|(run, v, ok)| {
            format!(
                "[{}] {}{}",
                run + 1,
                fmt_num(*v),
                if *ok { "" } else { " (partial)" }
            )
        })
        .collect();
    runs.join(", ")
}

/// The per-family summary table rows: disk, one cell per family, overall, wins/losses.
pub(crate) fn summary_rows(c: &Comparison) -> (Vec<Family>, Vec<Vec<String>>) {
    let fams: Vec<Family> = Family::ALL
        .into_iter()
        .filter(|f| {
            c.summary
                .iter()
                .any(|s| s.families.iter().any(|x| x.0 == *f))
        })
        .collect();
    let rows = c
        .summary
        .iter()
        .map(|s| {
            let mut row = vec![c.disks[s.disk].label.clone()];
            for f in &fams {
                row.push(match s.families.iter().find(|x| x.0 == *f) {
                    Some((_, g, n)) => format!("{g:.2}× ({n})"),
                    None => "-".into(),
                });
            }
            row.push(s.overall.map_or("-".into(), |g| format!("{g:.2}×")));
            row.push(if c.baseline == Baseline::Disk(s.disk) {
                "baseline".into()
            } else {
                format!("{}/{}", s.wins, s.losses)
            });
            row
        })
        .collect();
    (fams, rows)
}

/// The comparison for a terminal.
pub fn render(c: &Comparison) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "Runs compared:");
    for (i, r) in c.runs.iter().enumerate() {
        let _ = writeln!(
            w,
            "  [{}] {}  {}  profile {}  {}  spindle {}  ({})",
            i + 1,
            r.run_id,
            r.machine,
            r.profile,
            r.status,
            r.spindle,
            r.origin
        );
    }
    let _ = writeln!(w, "Disks (matched by stable id across runs):");
    for d in &c.disks {
        let _ = writeln!(
            w,
            "  {:<24} {}  {}",
            d.label,
            d.key,
            d.model.as_deref().unwrap_or("")
        );
    }
    let _ = writeln!(w, "Baseline: {}", c.baseline_label());
    if let Some(note) = scope_note(c) {
        let _ = writeln!(w, "{note}");
    }
    if !c.doubts.is_empty() {
        let _ = writeln!(
            w,
            "Before trusting these figures (their numbers are in the doubts column):"
        );
        for line in doubt_lines(c) {
            let _ = writeln!(w, "  {line}");
        }
    }
    for t in c.tests.iter().filter(|t| t.apart.is_none()) {
        test_table(w, c, t);
    }
    let apart: Vec<&TestTable> = c.tests.iter().filter(|t| t.apart.is_some()).collect();
    if !apart.is_empty() {
        let _ = writeln!(
            w,
            "\nShown apart: same test name, different parameters than the baseline's"
        );
        for t in apart {
            test_table(w, c, t);
        }
    }
    let (fams, rows) = summary_rows(c);
    let _ = writeln!(
        w,
        "\nGeometric mean of the ratios to the baseline (number of tests), wins/losses:"
    );
    let mut head = format!("  {:<24}", "disk");
    for f in &fams {
        let _ = write!(head, " {:>18}", f.name());
    }
    let _ = writeln!(w, "{head} {:>9} {:>11}", "overall", "wins/losses");
    for r in rows {
        let mut line = format!("  {:<24}", r[0]);
        for cell in &r[1..=fams.len()] {
            let _ = write!(line, " {cell:>18}");
        }
        let _ = writeln!(
            w,
            "{line} {:>9} {:>11}",
            r[fams.len() + 1],
            r[fams.len() + 2]
        );
    }
    out
}
