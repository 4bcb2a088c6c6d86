//! The comparison as one offline HTML page, in report.html's style: the runs and disks, the
//! per-family geometric means with wins/losses, then each test's bars and table, and the tests
//! kept apart with the options that differ.

use super::text::{
    ci_cell, doubt_lines, doubts_cell, median_cell, p99_cell, ratio_cell, runs_cell, scope_note,
    summary_rows, validity_cell, verdict_cell,
};
use super::{Comparison, TestTable};
use crate::report::html::page::{esc, num, page_end, page_start, table};
use crate::report::html::svg::{self, Bar};
use std::fmt::Write as _;

fn runs_and_disks(out: &mut String, c: &Comparison) {
    let rows: Vec<Vec<String>> = c
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            vec![
                num(i + 1),
                esc(&r.run_id),
                esc(&r.machine),
                esc(&r.profile),
                esc(&r.status),
                esc(&r.spindle),
                format!("<code>{}</code>", esc(&r.origin)),
            ]
        })
        .collect();
    out.push_str("<h2>Runs</h2>");
    table(
        out,
        &[
            "\u{1}#", "Run", "Machine", "Profile", "Status", "spindle", "File",
        ],
        &rows,
    );
    let rows: Vec<Vec<String>> = c
        .disks
        .iter()
        .map(|d| {
            vec![
                format!("<b>{}</b>", esc(&d.label)),
                format!("<code>{}</code>", esc(&d.key)),
                esc(d.model.as_deref().unwrap_or("")),
            ]
        })
        .collect();
    out.push_str("<h2>Disks</h2><p class=\"small meta\">Matched across runs by stable id (by-id name or serial; directories by host and path).</p>");
    table(out, &["Disk", "Stable id", "Model"], &rows);
}

fn summary(out: &mut String, c: &Comparison) {
    let (fams, rows) = summary_rows(c);
    let mut header: Vec<String> = vec!["Disk".into()];
    header.extend(fams.iter().map(|f| format!("\u{1}{}", f.name())));
    header.push("\u{1}Overall".into());
    header.push("\u{1}Wins/losses".into());
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|r| {
            let mut it = r.into_iter();
            let mut row = vec![format!("<b>{}</b>", esc(&it.next().unwrap_or_default()))];
            row.extend(it.map(|x| num(esc(&x))));
            row
        })
        .collect();
    let _ = write!(
        out,
        "<section class=\"answer\"><h2>Summary</h2><p>Baseline: <b>{}</b>. Cells: the geometric mean of the ratios to the baseline over the comparable tests of the family (their number in brackets).</p>",
        esc(&c.baseline_label())
    );
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    table(out, &h, &rows);
    let bars: Vec<Bar> = c
        .summary
        .iter()
        .filter_map(|s| {
            Some(Bar {
                label: c.disks[s.disk].label.clone(),
                value: Some(s.overall?),
                note: String::new(),
                color: svg::color(s.disk),
            })
        })
        .collect();
    if !bars.is_empty() {
        let _ = write!(
            out,
            "<figure>{}<figcaption>Overall: geometric mean of the family means, relative to the baseline.</figcaption></figure>",
            svg::bar_chart("overall ratio to the baseline", "×", &bars)
        );
    }
    out.push_str("</section>\n");
}

fn test_section(out: &mut String, c: &Comparison, t: &TestTable) {
    let _ = write!(out, "<section class=\"test\"><h3>{}</h3>", esc(&t.test));
    if let Some(why) = &t.apart {
        let _ = write!(
            out,
            "<div class=\"doubts\">Not compared with the baseline's {}: the parameters differ — {}.</div>",
            esc(&t.test),
            esc(&why.join("; "))
        );
    }
    let bars: Vec<Bar> = t
        .rows
        .iter()
        .map(|r| Bar {
            label: c.disks[r.disk].label.clone(),
            value: r.median,
            note: ratio_cell(c, r),
            color: svg::color(r.disk),
        })
        .collect();
    let _ = write!(
        out,
        "<figure>{}<figcaption>Median {} per disk, ratio to the baseline. Parameters: {}.</figcaption></figure>",
        svg::bar_chart(&t.test, t.unit, &bars),
        esc(t.unit),
        esc(&t.params)
    );
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| {
            vec![
                esc(&c.disks[r.disk].label),
                num(r.n),
                num(esc(&median_cell(r))),
                num(esc(&ratio_cell(c, r))),
                num(esc(&doubts_cell(r))),
                esc(&validity_cell(r)),
                num(esc(&ci_cell(r))),
                esc(&verdict_cell(c, r)),
                esc(&p99_cell(r)),
                esc(&runs_cell(r)),
            ]
        })
        .collect();
    table(
        out,
        &[
            "Disk",
            "\u{1}n",
            "\u{1}Median ± half range",
            "\u{1}Ratio",
            "\u{1}Doubts",
            "Validity",
            "\u{1}95% interval of the mean, CV",
            "Against the baseline (ratio [95%])",
            "p99 against the baseline's",
            "Each run",
        ],
        &rows,
    );
    out.push_str("</section>\n");
}

/// The comparison page.
pub fn render(c: &Comparison) -> String {
    let mut out = page_start(&format!("spindle comparison of {} runs", c.runs.len()));
    let _ = write!(
        out,
        "<h1>Disk benchmark comparison — {} runs, {} disks</h1>",
        c.runs.len(),
        c.disks.len()
    );
    summary(&mut out, c);
    if let Some(note) = scope_note(c) {
        let _ = write!(out, "<p class=\"small\">{}</p>", esc(note));
    }
    if !c.doubts.is_empty() {
        out.push_str("<div class=\"doubts\"><b>Before trusting these figures</b> <span class=\"small\">(their numbers are in the Doubts columns)</span><ul>");
        for line in doubt_lines(c) {
            let _ = write!(out, "<li>{}</li>", esc(&line));
        }
        out.push_str("</ul></div>\n");
    }
    runs_and_disks(&mut out, c);
    out.push_str("<h2>Tests</h2>");
    for t in c.tests.iter().filter(|t| t.apart.is_none()) {
        test_section(&mut out, c, t);
    }
    if c.tests.iter().any(|t| t.apart.is_some()) {
        out.push_str("<h2>Shown apart: same test, different parameters</h2>");
        for t in c.tests.iter().filter(|t| t.apart.is_some()) {
            test_section(&mut out, c, t);
        }
    }
    out.push_str(&page_end());
    out
}
