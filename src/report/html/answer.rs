//! The first section of report.html: the targets ranked for MySQL with the ratios between them,
//! per test family and overall, the numbered doubts, the two regimes of `[oltp.regimes]`, and
//! every test's figures in one table, each with the numbers of its doubts.

use super::super::doubts::DoubtList;
use super::super::rank::{self, Ranking, TestView};
use super::page::{esc, num, table};
use super::svg::fmt_num;
use crate::model::SuiteResult;
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
    let list = DoubtList::of(s);
    doubts(out, s, &list, !views.is_empty());
    let skipped = s.skipped_phases();
    if !skipped.is_empty() {
        let items: Vec<String> = skipped.iter().map(|l| esc(l)).collect();
        let _ = writeln!(
            out,
            "<p class=\"small\">Skipped phases: {}.</p>",
            items.join("; ")
        );
    }
    regimes(out, s);
    together(out, s);
    if !views.is_empty() {
        per_test_table(out, s, views, &list);
    }
    cdm(out, s);
    appclass(out, s);
    out.push_str("</section>\n");
}

/// All disks at once (`report::together`): each disk together ÷ alone, the buses, the outlier.
fn together(out: &mut String, s: &SuiteResult) {
    use super::super::together as t;
    let Some(rec) = &s.together else { return };
    let _ = write!(
        out,
        "<h3>All disks at once</h3><p class=\"small meta\">{}.</p>",
        esc(t::HEADING)
    );
    for o in t::outliers(s) {
        let _ = write!(out, "<p><b>{}</b></p>", esc(&o));
    }
    let rows: Vec<Vec<String>> = t::rows(s)
        .into_iter()
        .map(|r| {
            vec![
                esc(&r[0]),
                esc(&r[1]),
                num(esc(&r[2])),
                num(esc(&r[3])),
                num(esc(&r[4])),
                match r[5].as_str() {
                    w @ ("green" | "amber" | "red") => format!("<b class=\"v-{w}\">{w}</b>"),
                    w => esc(w),
                },
                esc(&r[6]),
            ]
        })
        .collect();
    table(
        out,
        &[
            "Run",
            "Target",
            "\u{1}Together MiB/s",
            "\u{1}Alone MiB/s",
            "\u{1}Ratio",
            "Validity",
            "",
        ],
        &rows,
    );
    let buses: Vec<String> = rec
        .runs
        .iter()
        .flat_map(|r| {
            r.buses
                .iter()
                .map(move |b| format!("<li>{}: {}</li>", esc(&r.name), esc(&t::bus_line(b))))
                .chain(t::validity_lines(s, r).into_iter().map(|(who, line)| {
                    let line = super::test_sections::coloured(&line);
                    format!("<li>{} {}: {line}</li>", esc(&r.name), esc(&who))
                }))
        })
        .chain(rec.notes.iter().map(|n| format!("<li>{}</li>", esc(n))))
        .collect();
    let _ = writeln!(out, "<ul class=\"small\">{}</ul>", buses.concat());
}

/// CrystalDiskMark's four rows per target (`report::cdm`), as people quote them.
fn cdm(out: &mut String, s: &SuiteResult) {
    use super::super::cdm::{cell_text, of_target};
    let per: Vec<_> = s
        .targets
        .iter()
        .filter_map(|t| Some((t, of_target(t)?)))
        .collect();
    if per.is_empty() {
        return;
    }
    out.push_str("<h3>CrystalDiskMark's rows</h3><p class=\"small meta\">MB/s (10<sup>6</sup> B/s, as CrystalDiskMark prints it) from spindle's async O_DIRECT engine — a repeated figure is the best of its runs, as CrystalDiskMark keeps — with the p99 latency CrystalDiskMark does not give; – not measured in this run.</p>");
    let mut rows = Vec::new();
    for (t, measured) in per {
        for m in measured {
            rows.push(vec![
                esc(&t.name),
                esc(m.row.label),
                num(esc(&cell_text(&m.read))),
                num(esc(&cell_text(&m.write))),
            ]);
        }
    }
    table(
        out,
        &["Target", "Test", "\u{1}Read MB/s", "\u{1}Write MB/s"],
        &rows,
    );
}

/// The A1/A2 application-class check per target (`report::appclass`).
fn appclass(out: &mut String, s: &SuiteResult) {
    let items: Vec<String> = s
        .targets
        .iter()
        .filter_map(|t| {
            let c = super::super::appclass::of_target(t)?;
            Some(format!(
                "<li><b>{}</b>: {}</li>",
                esc(&t.name),
                esc(&c.describe())
            ))
        })
        .collect();
    if items.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<h3>Application performance class (A1/A2)</h3><p class=\"small meta\">As Raspberry Pi's SD Card Speed Test checks it: one 64 MiB file, O_DIRECT, queue depth 4; sequential write in 512 KiB requests, random 4 KiB writes and reads for 10 s.</p><ul>{}</ul>",
        items.concat()
    );
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
            "<p class=\"small\">Not in the scores: {}.</p>",
            items.join("; ")
        );
    }
}

/// The numbered doubts, as summary.txt lists them.
fn doubts(out: &mut String, s: &SuiteResult, list: &DoubtList, measured: bool) {
    if list.is_empty() && !measured {
        return;
    }
    if list.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"small\">{}</p>",
            esc(&super::super::doubts::none_found(s))
        );
        return;
    }
    out.push_str("<div class=\"doubts\" id=\"doubts\"><b>Before trusting these figures</b> <span class=\"small\">(the numbers appear beside the figures they hold for)</span><ul>");
    for x in list.lines(s) {
        let _ = write!(out, "<li>{}</li>", esc(&x));
    }
    out.push_str("</ul></div>\n");
}

/// `[oltp.regimes]`: per test, each target's CPU-bound and I/O-bound figures, their ratio, and
/// how much the choice of disk matters in each regime.
fn regimes(out: &mut String, s: &SuiteResult) {
    use super::super::regimes as rg;
    use crate::model::Regime;
    let tests = rg::tests(s);
    if tests.is_empty() {
        return;
    }
    out.push_str("<h3 id=\"regimes\">Two regimes on the same data set</h3><p class=\"small meta\">Seed 004's lesson: the same workloads on the same data set, first with a buffer pool it fits in (CPU-bound, the tables read into it first), then, after a restart with the page cache dropped, with one far smaller (I/O-bound). The disk shows in the second.</p>");
    let x = |v: Option<f64>| num(v.map_or("—".into(), fmt_num));
    let rows: Vec<Vec<String>> = tests
        .iter()
        .flat_map(|t| {
            let mut rows: Vec<Vec<String>> = t
                .rows
                .iter()
                .map(|r| {
                    vec![
                        esc(&t.test),
                        format!("<b>{}</b>", esc(&s.targets[r.target].name)),
                        x(r.cpu_bound),
                        x(r.io_bound),
                        num(r.ratio().map_or("—".into(), rank::times)),
                    ]
                })
                .collect();
            if t.rows.len() > 1 {
                let c = |regime| {
                    num(t
                        .disk_choice(regime)
                        .map_or("—".into(), |c| rank::times(c.0)))
                };
                rows.push(vec![
                    esc(&t.test),
                    "<i>disk choice (best ÷ worst)</i>".into(),
                    c(Regime::CpuBound),
                    c(Regime::IoBound),
                    num(""),
                ]);
            }
            rows
        })
        .collect();
    let unit = tests[0].unit;
    let h = [
        "Test".to_string(),
        "Target".into(),
        format!("\u{1}CPU-bound, {unit}"),
        format!("\u{1}I/O-bound, {unit}"),
        "\u{1}CPU ÷ I/O".into(),
    ];
    let h: Vec<&str> = h.iter().map(String::as_str).collect();
    table(out, &h, &rows);
    out.push_str("<ul class=\"ratios\">");
    for line in rg::sentences(s, &tests) {
        let _ = write!(out, "<li>{}</li>", esc(&line));
    }
    out.push_str("</ul>\n");
}

/// One row per test, one column per target: figure, ratio to the test's best, and the numbers
/// of its doubts.
fn per_test_table(out: &mut String, s: &SuiteResult, views: &[TestView], list: &DoubtList) {
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
                    Some(r) => {
                        let fig = match (r.value, v.ratio(r)) {
                            (Some(x), Some(q)) => format!("{} ({q:.2}×)", fmt_num(x)),
                            (Some(x), None) => {
                                format!("{} ({})", fmt_num(x), r.phase.status)
                            }
                            (None, _) => r.phase.status.to_string(),
                        };
                        match list.refs_text(i, &v.name).as_str() {
                            "" => fig,
                            refs => format!("{fig} <sup title=\"doubts\">{refs}</sup>"),
                        }
                    }
                };
                row.push(num(cell));
            }
            row
        })
        .collect();
    out.push_str("<h3>Every test</h3>");
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    table(out, &h, &rows);
    out.push_str("<p class=\"small meta\">In brackets: the ratio to the best target of the test, or the phase status when it did not finish (partial figures are not ranked). Raised: the numbers of the figure's doubts (above).</p>\n");
}
