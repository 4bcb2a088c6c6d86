//! The first section of report.html: the targets ranked for MySQL with the ratios between them,
//! per test family and overall, every test's figures in one table, and the doubts.

use super::super::rank::{self, Ranking, TestView};
use super::super::suite::SuiteResult;
use super::svg::fmt_num;
use super::{esc, num, table};
use crate::report::access;
use std::fmt::Write as _;

pub(super) fn render(out: &mut String, s: &SuiteResult, views: &[TestView], r: &Ranking) {
    out.push_str("<section id=\"answer\" class=\"answer\"><h2>The answer</h2>\n");
    if views.is_empty() {
        out.push_str("<p>No test has produced a figure yet.</p>\n");
    } else if s.targets.len() == 1 {
        let _ = writeln!(
            out,
            "<p>One target was measured (<b>{}</b>): there is nothing to rank it against in this run. Put runs side by side with <code>spindle report compare</code>.</p>",
            esc(&s.targets[0].name)
        );
    } else {
        ranking_table(out, s, r);
        let sentences = rank::ratio_sentences(s, r);
        if !sentences.is_empty() {
            out.push_str("<ul class=\"ratios\">");
            for x in sentences {
                let _ = write!(out, "<li>{}</li>", esc(&x));
            }
            out.push_str("</ul>\n");
        }
        left_out(out, r);
    }
    doubts(out, s);
    if !views.is_empty() {
        per_test_table(out, s, views);
    }
    out.push_str("</section>\n");
}

/// Targets best first, with each family's score relative to that family's best target.
fn ranking_table(out: &mut String, s: &SuiteResult, r: &Ranking) {
    let fams: Vec<_> = r.families.iter().filter(|f| !f.tests.is_empty()).collect();
    let mut header: Vec<String> = vec!["#".into(), "Target".into(), "Disk".into()];
    header.extend(fams.iter().map(|f| format!("\u{1}{}", f.family.name())));
    header.push("\u{1}Overall".into());
    let mut order: Vec<usize> = r.overall.iter().map(|x| x.0).collect();
    let unranked: Vec<usize> = (0..s.targets.len())
        .filter(|i| !order.contains(i))
        .collect();
    order.extend(unranked);
    let top = r.overall.first().map_or(0.0, |x| x.1);
    let rows: Vec<Vec<String>> = order
        .iter()
        .enumerate()
        .map(|(rank, &i)| {
            let t = &s.targets[i];
            let mut row = vec![
                num(rank + 1),
                format!("<b>{}</b>", esc(&t.name)),
                esc(&t.description),
            ];
            for f in &fams {
                let best = f.scores.first().map_or(0.0, |x| x.1);
                row.push(match f.scores.iter().find(|x| x.0 == i) {
                    Some(x) if best > 0.0 => num(format!("{:.2}×", x.1 / best)),
                    _ => num("—"),
                });
            }
            row.push(match r.overall.iter().find(|x| x.0 == i) {
                Some(x) if top > 0.0 => num(format!("<b>{:.2}×</b>", x.1 / top)),
                _ => num("—"),
            });
            row
        })
        .collect();
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    table(out, &h, &rows);
    out.push_str("<p class=\"small meta\">Each score is the geometric mean, over the family's tests, of the target's figure divided by the best figure of that test, shown relative to the family's best target (1.00×). Overall: the geometric mean of the family scores.</p>\n");
}

fn left_out(out: &mut String, r: &Ranking) {
    let items: Vec<String> = r
        .families
        .iter()
        .flat_map(|f| f.left_out.iter())
        .map(|(t, why)| format!("{}: {}", esc(t), esc(why)))
        .collect();
    if !items.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"small\">Not in the scores (no figure on every target): {}.</p>",
            items.join("; ")
        );
    }
}

fn doubts(out: &mut String, s: &SuiteResult) {
    let d = rank::doubts(s);
    if d.is_empty() {
        // Power is claimed only where it was read (report::health); elsewhere it says so.
        let power = if s
            .targets
            .iter()
            .all(|t| crate::report::health::of(t).power_checked().is_some())
        {
            "no throttling or under-voltage was reported".to_string()
        } else {
            let h: Vec<String> = s
                .targets
                .iter()
                .map(|t| crate::report::health::of(t).undervoltage())
                .collect();
            format!(
                "under-voltage was {}",
                h.first().map(String::as_str).unwrap_or("not measured")
            )
        };
        let _ = writeln!(out, "<p class=\"small\">No doubts found: the run is complete, {}, every disk had a USB 3 link (or is not on USB), every phase finished, and the data sets were not cache-sized.</p>", esc(&power));
        return;
    }
    out.push_str("<div class=\"doubts\"><b>Before trusting these figures</b><ul>");
    for x in d {
        let _ = write!(out, "<li>{}</li>", esc(&x));
    }
    out.push_str("</ul></div>\n");
}

/// One row per test, one column per target: figure and ratio to the test's best.
fn per_test_table(out: &mut String, s: &SuiteResult, views: &[TestView]) {
    let mut header: Vec<String> = vec!["Test".into(), "Unit".into()];
    header.extend(s.targets.iter().map(|t| format!("\u{1}{}", esc(&t.name))));
    let rows: Vec<Vec<String>> = views
        .iter()
        .map(|v| {
            let mut row = vec![
                format!("<a href=\"#t-{}\">{}</a>", esc(&v.name), esc(&v.name)),
                esc(v.unit),
            ];
            for i in 0..s.targets.len() {
                let cell = match v.rows.iter().find(|r| r.target == i) {
                    None => "—".to_string(),
                    Some(r) => match (r.value, v.ratio(r)) {
                        (Some(x), Some(q)) => format!("{} ({q:.2}×)", fmt_num(x)),
                        (Some(x), None) => {
                            format!("{} ({})", fmt_num(x), access::phase_status(r.phase))
                        }
                        (None, _) => access::phase_status(r.phase).to_string(),
                    },
                };
                row.push(num(cell));
            }
            row
        })
        .collect();
    out.push_str("<h3>Every test</h3>");
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    table(out, &h, &rows);
    out.push_str("<p class=\"small meta\">In brackets: the ratio to the best target of the test, or the phase status when it did not finish (partial figures are not ranked).</p>\n");
}
