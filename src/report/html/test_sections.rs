//! One section per test in report.html: bars per target with the ratio to the best, throughput
//! over time, p95/p99 over time, the latency spectrum (HDR percentiles on a log 1/(1−p) axis),
//! TPC-C per-transaction latencies, and the parameters under every figure.

use super::super::doubts::{steady_line, DoubtList};
use super::super::metric::{self, Family};
use super::super::params;
use super::super::rank::{Row, TestView};
use super::page::{esc, num, table};
use super::svg::{self, Bar, LineChart, Scale, Series};
use crate::engine::Counters;
use crate::model::BenchResult;
use crate::model::SuiteResult;
use std::fmt::Write as _;

pub(super) fn render(out: &mut String, s: &SuiteResult, views: &[TestView]) {
    out.push_str("<section id=\"tests\"><h2>Tests</h2>\n");
    if views.is_empty() {
        out.push_str("<p>No measurement has run yet.</p>\n");
    }
    let doubts = DoubtList::of(s);
    for f in Family::ALL {
        let vs: Vec<&TestView> = views.iter().filter(|v| v.family == f).collect();
        if vs.is_empty() {
            continue;
        }
        let _ = writeln!(out, "<h2 id=\"f-{}\">{}</h2>", f.id(), f.name());
        for v in vs {
            test_section(out, s, v, &doubts);
        }
    }
    out.push_str("</section>\n");
}

/// Rows with a result, and the result.
fn results<'a>(v: &'a TestView) -> impl Iterator<Item = (&'a Row<'a>, &'a BenchResult)> {
    v.rows
        .iter()
        .filter_map(|r| r.phase.result.as_ref().map(|b| (r, b)))
}

/// The parameter line under each figure: every distinct parameter set of the rows.
fn params_caption(s: &SuiteResult, v: &TestView) -> String {
    let lines = super::super::group::grouped(
        results(v).map(|(r, b)| (params::describe(b), s.targets[r.target].name.as_str())),
    );
    let profile = s.profile.name.as_str();
    let body = if lines.len() == 1 {
        esc(&lines[0].0)
    } else {
        lines
            .iter()
            .map(|(l, who)| format!("{}: {}", esc(&who.join(", ")), esc(l)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    format!("Parameters: {body}; profile {}.", esc(profile))
}

fn figure(out: &mut String, svg: &str, legend: Option<&[Series]>, caption: &str) {
    out.push_str("<figure>");
    out.push_str(svg);
    if let Some(l) = legend {
        out.push_str(&svg::legend(l));
    }
    let _ = writeln!(out, "<figcaption>{caption}</figcaption></figure>");
}

/// Latency (ms) over the run: log scale when the values span more than 50×.
fn latency_chart(title: String, series: Vec<Series>) -> LineChart {
    over_run(title, "latency, ms", wide_range_scale(&series), series)
}

/// `chart` and its legend, as a figure.
fn chart_figure(out: &mut String, chart: &LineChart, caption: &str) {
    figure(out, &svg::line_chart(chart), Some(&chart.series), caption);
}

/// A chart of `series` over the seconds of a run, from zero, with no bands.
fn over_run(title: String, y_label: &str, y_scale: Scale, series: Vec<Series>) -> LineChart {
    LineChart {
        title,
        x_label: "seconds into the run".into(),
        y_label: y_label.into(),
        x_ticks: None,
        y_scale,
        series,
        bands: vec![],
        x_from_zero: true,
    }
}

fn test_section(out: &mut String, s: &SuiteResult, v: &TestView, doubts: &DoubtList) {
    let _ = writeln!(
        out,
        "<section class=\"test\" id=\"t-{n}\"><h3>{n}</h3>",
        n = esc(&v.name)
    );
    let caption = params_caption(s, v);
    bars(out, s, v, &caption);
    throughput_over_time(out, s, v, &caption);
    percentiles_over_time(out, s, v, &caption);
    spectrum(out, s, v, &caption);
    tpcc_types(out, s, v);
    problems(out, s, v, doubts);
    out.push_str("</section>\n");
}

fn bars(out: &mut String, s: &SuiteResult, v: &TestView, caption: &str) {
    let bars: Vec<Bar> = v
        .rows
        .iter()
        .map(|r| {
            let note = match (v.ratio(r), r.value) {
                (Some(q), _) if (q - 1.0).abs() < 1e-12 => "1.00× (best)".to_string(),
                (Some(q), _) => format!("{q:.2}×"),
                (None, Some(_)) => format!("{} (partial)", r.phase.status),
                (None, None) => r.phase.status.to_string(),
            };
            Bar {
                label: s.targets[r.target].name.clone(),
                value: r.value,
                note,
                color: svg::color(r.target),
            }
        })
        .collect();
    let svg = svg::bar_chart(&format!("{} {} per target", v.name, v.unit), v.unit, &bars);
    figure(
        out,
        &svg,
        None,
        &format!(
            "{} per target, with the ratio to the best. {caption}",
            esc(v.unit)
        ),
    );
}

fn throughput_over_time(out: &mut String, s: &SuiteResult, v: &TestView, caption: &str) {
    let series: Vec<Series> = results(v)
        .filter(|(_, b)| !b.intervals.is_empty())
        .map(|(r, b)| Series {
            label: s.targets[r.target].name.clone(),
            color: svg::color(r.target),
            dashed: false,
            points: b
                .intervals
                .iter()
                .filter_map(|i| Some((i.time_s, metric::interval_value(b, i)?)))
                .collect(),
        })
        .collect();
    if series.is_empty() {
        let _ = writeln!(out, "<p class=\"small meta\">Throughput over time: not recorded (the run had no report interval).</p>");
        return;
    }
    if let Some(why) = too_short(v, &series) {
        let _ = writeln!(out, "<p class=\"small meta\">{}</p>", esc(&why));
        return;
    }
    let chart = over_run(
        format!("{} {} over time", v.name, v.unit),
        v.unit,
        Scale::Linear,
        series,
    );
    chart_figure(
        out,
        &chart,
        &format!("{} over time, per report interval. {caption}", esc(v.unit)),
    );
}

fn percentiles_over_time(out: &mut String, s: &SuiteResult, v: &TestView, caption: &str) {
    let mut series = Vec::new();
    for (r, b) in results(v) {
        if !b.intervals.iter().any(|i| i.p95_ms > 0.0) {
            continue;
        }
        for (dashed, pick) in [(false, 95), (true, 99)] {
            series.push(Series {
                label: format!("{} p{pick}", s.targets[r.target].name),
                color: svg::color(r.target),
                dashed,
                points: b
                    .intervals
                    .iter()
                    .map(|i| (i.time_s, if pick == 95 { i.p95_ms } else { i.p99_ms }))
                    .collect(),
            });
        }
    }
    if series.is_empty() || too_short(v, &series).is_some() {
        return;
    }
    let chart = latency_chart(format!("{} latency p95 and p99 over time", v.name), series);
    chart_figure(
        out,
        &chart,
        &format!(
            "95th (solid) and 99th (dashed) percentile latency of each report interval. {caption}"
        ),
    );
}

/// Why there is no time series: every target's run had fewer than two report intervals.
fn too_short(v: &TestView, series: &[Series]) -> Option<String> {
    if series.iter().any(|s| s.points.len() >= 2) {
        return None;
    }
    let interval = results(v).find_map(|(_, b)| b.intervals.first().map(|i| i.time_s));
    Some(format!(
        "Over time: the run was too short for a time series (one report interval{}); the figures above are the whole run.",
        interval.map_or(String::new(), |s| format!(" of {s:.0} s"))
    ))
}

/// Log scale when the values span more than 50×.
fn wide_range_scale(series: &[Series]) -> Scale {
    let ys = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|y| *y > 0.0);
    let (lo, hi) = ys.fold((f64::INFINITY, 0.0f64), |(a, b), y| (a.min(y), b.max(y)));
    if hi > 0.0 && hi / lo > 50.0 {
        Scale::Log
    } else {
        Scale::Linear
    }
}

/// HDR percentile spectrum points of `b`: x = log10(1/(1−p)), y = latency in ms.
pub(super) fn spectrum_points(b: &BenchResult) -> Vec<(f64, f64)> {
    let Ok(h) = b.histogram.hdr() else {
        return vec![];
    };
    let n = h.len();
    if n == 0 {
        return vec![];
    }
    let xmax = (n as f64).log10().clamp(1.0, 6.0);
    let mut pts: Vec<(f64, f64)> = (0..)
        .map(|i| i as f64 * 0.05)
        .take_while(|x| *x < xmax)
        .map(|x| (x, h.value_at_quantile(1.0 - 10f64.powf(-x)) as f64 / 1e6))
        .collect();
    pts.push((xmax, h.max() as f64 / 1e6));
    pts
}

fn spectrum(out: &mut String, s: &SuiteResult, v: &TestView, caption: &str) {
    let series: Vec<Series> = results(v)
        .map(|(r, b)| Series {
            label: s.targets[r.target].name.clone(),
            color: svg::color(r.target),
            dashed: false,
            points: spectrum_points(b),
        })
        .filter(|x| !x.points.is_empty())
        .collect();
    if series.is_empty() {
        return;
    }
    let top = series
        .iter()
        .flat_map(|s| s.points.last().map(|p| p.0))
        .fold(1.0f64, f64::max)
        .ceil() as i32;
    let labels = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"];
    let ticks = (0..=top.min(6))
        .map(|e| (e as f64, labels[e as usize].to_string()))
        .collect();
    let chart = LineChart {
        x_label: "percentile (log scale of 1/(1−p)); the last point of each line is the maximum"
            .into(),
        x_ticks: Some(ticks),
        ..latency_chart(format!("{} latency by percentile", v.name), series)
    };
    chart_figure(
        out,
        &chart,
        &format!("Latency distribution of every event (HDR histogram). {caption}"),
    );
}

fn tpcc_types(out: &mut String, s: &SuiteResult, v: &TestView) {
    for (r, b) in results(v) {
        let Counters::Tpcc(c) = &b.counters else {
            continue;
        };
        let _ = write!(
            out,
            "<h4>{}: TPC-C transactions ({} warehouses, {:.1} TpmC, {})</h4>",
            esc(&s.targets[r.target].name),
            c.warehouses,
            c.tpmc,
            esc(&crate::report::tpcc_text::nopm_line(c))
        );
        if c.per_type.is_empty() {
            out.push_str("<p class=\"small meta\">Per-transaction figures: not recorded.</p>");
            continue;
        }
        let rows: Vec<Vec<String>> = c
            .per_type
            .iter()
            .map(|t| {
                vec![
                    esc(&t.name),
                    num(t.success),
                    num(t.late),
                    num(t.retries),
                    num(t.failures),
                    num(format!("{:.2}", t.p95_ms)),
                    num(format!("{:.2}", t.p99_ms)),
                    num(format!("{:.2}", t.max_ms)),
                ]
            })
            .collect();
        let h = [
            "Transaction",
            "\u{1}ok",
            "\u{1}late",
            "\u{1}retries",
            "\u{1}failures",
            "\u{1}p95 ms",
            "\u{1}p99 ms",
            "\u{1}max ms",
        ];
        table(out, &h, &rows);
    }
}

/// `t` escaped; a validity line's verdict word coloured (`v-green`, `v-amber`, `v-red`).
pub(super) fn coloured(t: &str) -> String {
    for c in ["green", "amber", "red"] {
        let head = format!("validity: {c}");
        if let Some(rest) = t.strip_prefix(&head) {
            return format!("validity: <b class=\"v-{c}\">{c}</b>{}", esc(rest));
        }
    }
    esc(t)
}

/// The doubts (numbered as in the answer), errors, steady state, validity verdict
/// (`report::validity`) and notes of the rows, each once with the targets it applies to.
fn problems(out: &mut String, s: &SuiteResult, v: &TestView, doubts: &DoubtList) {
    let mut items: Vec<(String, &str)> = Vec::new();
    for r in &v.rows {
        let name = s.targets[r.target].name.as_str();
        let numbered = doubts
            .refs(r.target, &r.phase.name)
            .into_iter()
            .map(|n| format!("doubt [{n}]: {}", doubts.items[n - 1].text));
        let fit = r.phase.data_set.map(|f| f.describe());
        let steady = r
            .phase
            .result
            .as_ref()
            .and_then(|b| b.steady_state.as_ref());
        let steady = steady.map(steady_line);
        let validity =
            super::super::validity::of_phase(s, &s.targets[r.target], r.phase).map(|v| v.line());
        let texts = numbered
            .chain(
                r.phase
                    .error
                    .iter()
                    .map(|e| format!("{}: {e}", r.phase.status)),
            )
            .chain(fit)
            .chain(steady)
            .chain(validity)
            .chain(r.phase.repeats.as_ref().map(super::super::repeat::line))
            .chain(r.phase.notes.iter().cloned())
            .chain(r.phase.result.iter().flat_map(|b| b.notes.iter().cloned()));
        items.extend(texts.map(|t| (t, name)));
    }
    let items = super::super::group::grouped(items);
    if items.is_empty() {
        return;
    }
    out.push_str("<ul class=\"small\">");
    for (t, who) in items {
        let _ = write!(out, "<li>{}: {}</li>", esc(&who.join(", ")), coloured(&t));
    }
    out.push_str("</ul>\n");
}
