//! The SLC-cache cliff section of report.html: the sustained write's speed over the GiB written,
//! one line per target, each cliff found shaded and labelled, the levels before and after it
//! dashed, and the finding in words under the chart.

use super::super::cliff::{line, records};
use super::page::esc;
use super::svg::{self, Band, LineChart, Scale, Series};
use crate::model::{CliffRecord, SuiteResult};
use crate::stats::cliff::GIB;
use std::fmt::Write as _;

/// The section; nothing when no target has a cliff record.
pub(super) fn render(out: &mut String, s: &SuiteResult) {
    let recs = records(s);
    if recs.is_empty() {
        return;
    }
    let mut series = Vec::new();
    let mut bands = Vec::new();
    let mut words = Vec::new();
    let widest = recs
        .iter()
        .map(|(_, _, c)| c.finding.written_bytes as f64 / GIB)
        .fold(0.0, f64::max);
    for (t, p, c) in &recs {
        let i = s
            .targets
            .iter()
            .position(|x| std::ptr::eq(x, *t))
            .unwrap_or(0);
        let color = svg::color(i);
        series.push(Series {
            label: t.name.clone(),
            color,
            dashed: false,
            points: speed_over_gib(c),
        });
        if !c.finding.cliffs.is_empty() {
            series.push(Series {
                label: format!("{}: levels", t.name),
                color,
                dashed: true,
                points: levels(c),
            });
        }
        for (k, cliff) in c.finding.cliffs.iter().enumerate() {
            let at = cliff.at_bytes as f64 / GIB;
            let half = widest * 0.012;
            bands.push(Band {
                from: at - half,
                to: at + half,
                label: format!("{}cliff {at:.2} GiB", if k == 1 { "second " } else { "" }),
                fill: "#d1242f",
                opacity: 0.3,
            });
        }
        words.push(format!("<b>{}</b>: {}", esc(&t.name), esc(&line(p, c))));
    }
    let chart = LineChart {
        title: "write speed over the GiB written, SLC-cache cliffs marked".into(),
        x_label: "GiB written (2^30 bytes)".into(),
        y_label: "MB/s (10^6 bytes/s)".into(),
        x_ticks: None,
        y_scale: Scale::Linear,
        series,
        bands,
        x_from_zero: true,
    };
    out.push_str("<section id=\"cliff\"><h2>SLC-cache cliff</h2>\n<figure>");
    out.push_str(&svg::line_chart(&chart));
    out.push_str(&svg::legend(&chart.series));
    let _ = writeln!(
        out,
        "<figcaption>One sustained sequential write with O_DIRECT per target; each point is one second: its speed, over the middle of the bytes it wrote. Shaded: where the speed fell and stayed down (change-point detection: a fall of at least 30 % that lasts at least 5 s and does not recover); dashed: the speed before and after. {}.</figcaption></figure>\n</section>",
        words.join("; ")
    );
}

/// (GiB written by the middle of each second, MB/s in it): a second's speed drawn over the
/// middle of the bytes it wrote, so a fall inside a second sits where the shading says.
fn speed_over_gib(c: &CliffRecord) -> Vec<(f64, f64)> {
    let (mut written, mut prev) = (0u64, 0.0);
    let mut points = Vec::with_capacity(c.samples.len());
    for s in &c.samples {
        let dur = s.t_s - prev;
        prev = s.t_s;
        if dur > 0.0 {
            let mid = written as f64 + s.bytes as f64 / 2.0;
            points.push((mid / GIB, s.bytes as f64 / dur / 1e6));
        }
        written += s.bytes;
    }
    points
}

/// The levels the detector found, as steps: each cliff's speed before it up to it, then after.
fn levels(c: &CliffRecord) -> Vec<(f64, f64)> {
    let mut points = Vec::new();
    let mut from = 0.0;
    for cliff in &c.finding.cliffs {
        let at = cliff.at_bytes as f64 / GIB;
        points.push((from, cliff.before_mb_s));
        points.push((at, cliff.before_mb_s));
        points.push((at, cliff.after_mb_s));
        from = at;
    }
    if let Some(last) = c.finding.cliffs.last() {
        points.push((c.finding.written_bytes as f64 / GIB, last.after_mb_s));
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chart_draws_the_speed_over_gib_and_marks_the_cliff() {
        let mut s = crate::model::suite::tests_support::two_disk_suite();
        let mut none = String::new();
        render(&mut none, &s);
        assert_eq!(none, "");
        s.targets[1]
            .phases
            .push(crate::report::cliff::tests::cliff_phase());
        let page = super::super::render_html(&s);
        let sec = page
            .split("<section id=\"cliff\">")
            .nth(1)
            .expect("a cliff section");
        assert!(sec.contains(">cliff 5.59 GiB</text>"), "{sec}");
        assert!(sec.contains("GiB written (2^30 bytes)"), "{sec}");
        assert!(
            sec.contains("cliff at 5.59 GiB (15 s): 400 MB/s → 50 MB/s"),
            "{sec}"
        );
        // The target's own colour, and one point per second on its line.
        assert!(sec.contains(svg::color(1)), "{sec}");
        let rec = s.targets[1].phases.last().unwrap().cliff.as_ref().unwrap();
        let pts = speed_over_gib(rec);
        assert_eq!(pts.len(), 30);
        assert!((pts[14].0 - 5.8e9 / GIB).abs() < 1e-9 && (pts[14].1 - 400.0).abs() < 1e-9);
        assert_eq!(levels(rec).len(), 4);
    }
}
