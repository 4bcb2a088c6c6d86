//! Hand-written inline SVG charts for the offline report: line charts (time series, the latency
//! spectrum) with shaded bands, and horizontal bar charts. Pure functions from data to SVG text;
//! no script, no fonts beyond the reader's sans-serif, no namespace URL (inline SVG in HTML5
//! needs none), so the page makes no request of any kind.

use super::page::esc;
use std::fmt::Write as _;

/// Colour-blind-safe palette (Okabe–Ito), one colour per target in every chart of a page.
pub const PALETTE: [&str; 8] = [
    "#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#7f7f7f", "#000000",
];

/// The colour of the `i`th target.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Chart size in SVG user units (the page scales it to its width).
const W: f64 = 720.0;
const H: f64 = 280.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 34.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 42.0;

/// How an axis maps values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Base-10 logarithmic (values ≤ 0 are left out).
    Log,
}

/// One line.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub color: &'static str,
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
}

/// A shaded x range (a warm-up, a phase, a throttled stretch), full plot height.
#[derive(Clone, Debug)]
pub struct Band {
    pub from: f64,
    pub to: f64,
    /// Written vertically inside the band when it is wide enough.
    pub label: String,
    pub fill: &'static str,
    pub opacity: f64,
}

/// A line chart.
#[derive(Clone, Debug)]
pub struct LineChart {
    /// Accessible name of the figure.
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Fixed x ticks (value, label); None: round numbers.
    pub x_ticks: Option<Vec<(f64, String)>>,
    pub y_scale: Scale,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
    /// Start the x axis at 0 (time since the start of a run).
    pub x_from_zero: bool,
}

/// A step of 1, 2 or 5 × 10ⁿ that splits `range` into about `target` parts.
pub fn nice_step(range: f64, target: usize) -> f64 {
    let raw = (range / target.max(1) as f64).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let n = raw / mag;
    let m = if n <= 1.0 {
        1.0
    } else if n <= 2.0 {
        2.0
    } else if n <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Round-number ticks covering `lo..hi`; returns the widened range and the ticks.
pub fn linear_ticks(lo: f64, hi: f64, target: usize) -> (f64, f64, Vec<f64>) {
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        (
            lo - 0.5_f64.max(lo.abs() * 0.1),
            hi + 0.5_f64.max(hi.abs() * 0.1),
        )
    };
    let step = nice_step(hi - lo, target);
    let a = (lo / step).floor() * step;
    let b = (hi / step).ceil() * step;
    let n = ((b - a) / step).round() as usize;
    let ticks = (0..=n).map(|i| a + i as f64 * step).collect();
    (a, b, ticks)
}

/// Decades covering `lo..hi` (both > 0); returns the range and the ticks (1, 2, 5 per decade
/// when there are few decades).
pub fn log_ticks(lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    let a = lo.log10().floor() as i32;
    let mut b = hi.log10().ceil() as i32;
    if b <= a {
        b = a + 1;
    }
    let mut ticks = Vec::new();
    for e in a..=b {
        let p = 10f64.powi(e);
        ticks.push(p);
        if b - a <= 2 && e < b {
            ticks.push(2.0 * p);
            ticks.push(5.0 * p);
        }
    }
    (10f64.powi(a), 10f64.powi(b), ticks)
}

/// A tick or value label: few digits, `k`/`M` for large numbers.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.01 {
        format!("{v:.3}")
    } else if a >= 1e-6 {
        format!("{v:.*}", (-a.log10()).ceil() as usize + 1)
    } else {
        format!("{v:.1e}")
    };
    if s.contains('.') && !s.contains('e') {
        let (num, suffix) = s.split_at(s.trim_end_matches(['k', 'M']).len());
        let num = num.trim_end_matches('0').trim_end_matches('.');
        format!("{num}{suffix}")
    } else {
        s
    }
}

/// Labels for evenly spaced ticks: as many decimals as the step needs.
fn tick_labels(ticks: &[f64]) -> Vec<(f64, String)> {
    let step = match ticks {
        [a, b, ..] => (b - a).abs(),
        _ => 1.0,
    };
    ticks
        .iter()
        .map(|v| {
            let label = if step >= 1.0 || *v == 0.0 {
                fmt_num(*v)
            } else {
                format!("{v:.*}", (-step.log10()).ceil().max(0.0) as usize)
            };
            (*v, label)
        })
        .collect()
}

/// Maps data values to plot coordinates on one axis.
struct Axis {
    scale: Scale,
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
}

impl Axis {
    fn map(&self, v: f64) -> f64 {
        let (lo, hi, v) = match self.scale {
            Scale::Linear => (self.lo, self.hi, v),
            Scale::Log => (self.lo.log10(), self.hi.log10(), v.max(self.lo).log10()),
        };
        let f = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
        self.from + f * (self.to - self.from)
    }
}

fn usable(scale: Scale, v: f64) -> bool {
    v.is_finite() && (scale == Scale::Linear || v > 0.0)
}

/// The y range and ticks for the values of `c`.
fn y_axis(c: &LineChart) -> (Axis, Vec<(f64, String)>) {
    let ys: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|v| usable(c.y_scale, *v))
        .collect();
    let lo = ys.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = ys.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi, ticks) = match c.y_scale {
        Scale::Linear if ys.is_empty() => linear_ticks(0.0, 1.0, 5),
        Scale::Linear => linear_ticks(lo.min(0.0), hi, 5),
        Scale::Log if ys.is_empty() => log_ticks(1.0, 10.0),
        Scale::Log => log_ticks(lo, hi),
    };
    let axis = Axis {
        scale: c.y_scale,
        lo,
        hi,
        from: H - BOTTOM,
        to: TOP,
    };
    let labels = match c.y_scale {
        Scale::Linear => tick_labels(&ticks),
        Scale::Log => ticks.iter().map(|v| (*v, fmt_num(*v))).collect(),
    };
    (axis, labels)
}

/// The x range and labelled ticks of `c`.
fn x_axis(c: &LineChart) -> (Axis, Vec<(f64, String)>) {
    let mut xs: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .chain(c.bands.iter().flat_map(|b| [b.from, b.to]))
        .filter(|v| v.is_finite())
        .collect();
    if let Some(t) = &c.x_ticks {
        xs.extend(t.iter().map(|t| t.0));
    }
    if c.x_from_zero {
        xs.push(0.0);
    }
    let lo = xs.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if xs.is_empty() { (0.0, 1.0) } else { (lo, hi) };
    let (lo, hi, ticks) = match &c.x_ticks {
        Some(t) => (lo, hi.max(lo + 1e-9), t.clone()),
        None => {
            let (a, b, t) = linear_ticks(lo, hi, 8);
            (a, b, tick_labels(&t))
        }
    };
    let axis = Axis {
        scale: Scale::Linear,
        lo,
        hi,
        from: LEFT,
        to: W - RIGHT,
    };
    (axis, ticks)
}

fn open_svg(out: &mut String, title: &str, h: f64) {
    let _ = write!(
        out,
        "<svg viewBox=\"0 0 {W} {h}\" role=\"img\" aria-label=\"{t}\" font-family=\"sans-serif\" font-size=\"11\"><title>{t}</title>",
        t = esc(title)
    );
}

fn draw_grid(out: &mut String, x: &Axis, xt: &[(f64, String)], y: &Axis, yt: &[(f64, String)]) {
    for (v, label) in yt {
        let py = y.map(*v);
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{py:.1}\" y2=\"{py:.1}\" stroke=\"#e3e3e3\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            W - RIGHT,
            LEFT - 4.0,
            py + 4.0,
            esc(label)
        );
    }
    for (v, label) in xt {
        let px = x.map(*v);
        if !(LEFT - 0.5..=W - RIGHT + 0.5).contains(&px) {
            continue;
        }
        let _ = write!(
            out,
            "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{TOP}\" y2=\"{:.1}\" stroke=\"#eeeeee\"/><text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            H - BOTTOM,
            H - BOTTOM + 14.0,
            esc(label)
        );
    }
    let _ = write!(
        out,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#999\"/>",
        W - RIGHT - LEFT,
        H - BOTTOM - TOP
    );
}

fn draw_bands(out: &mut String, x: &Axis, bands: &[Band]) {
    for b in bands {
        let (x0, x1) = (x.map(b.from).max(LEFT), x.map(b.to).min(W - RIGHT));
        if x1 <= x0 {
            continue;
        }
        let _ = write!(
            out,
            "<rect x=\"{x0:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\" fill-opacity=\"{}\"/>",
            x1 - x0,
            H - BOTTOM - TOP,
            b.fill,
            b.opacity
        );
        if !b.label.is_empty() && x1 - x0 >= 11.0 {
            let (lx, ly) = (x0 + 9.0, TOP + 4.0);
            let _ = write!(
                out,
                "<text x=\"{lx:.1}\" y=\"{ly:.1}\" transform=\"rotate(90 {lx:.1} {ly:.1})\" font-size=\"9\" fill=\"#555\">{}</text>",
                esc(&b.label)
            );
        }
    }
}

fn draw_series(out: &mut String, x: &Axis, y: &Axis, scale: Scale, s: &Series) {
    let mut d = String::new();
    for (px, py) in s
        .points
        .iter()
        .filter(|p| p.0.is_finite() && usable(scale, p.1))
    {
        let cmd = if d.is_empty() { 'M' } else { 'L' };
        let _ = write!(d, "{cmd}{:.1} {:.1}", x.map(*px), y.map(*py));
    }
    if d.is_empty() {
        return;
    }
    let dash = if s.dashed {
        " stroke-dasharray=\"5 3\""
    } else {
        ""
    };
    let _ = write!(
        out,
        "<path d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{dash}><title>{}</title></path>",
        s.color,
        esc(&s.label)
    );
    // A short series shows every point, so two or three intervals do not read as a line
    // drawn from nothing (or a single interval as a stray dot).
    if s.points.len() <= MARKED_POINTS {
        for (px, py) in s
            .points
            .iter()
            .filter(|p| p.0.is_finite() && usable(scale, p.1))
        {
            let _ = write!(
                out,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{}\"/>",
                x.map(*px),
                y.map(*py),
                s.color
            );
        }
    }
}

/// Series with at most this many points get a dot on each.
pub const MARKED_POINTS: usize = 40;

/// Renders a line chart as an `<svg>` element.
pub fn line_chart(c: &LineChart) -> String {
    let mut out = String::new();
    open_svg(&mut out, &c.title, H);
    let (x, xt) = x_axis(c);
    let (y, yt) = y_axis(c);
    draw_bands(&mut out, &x, &c.bands);
    draw_grid(&mut out, &x, &xt, &y, &yt);
    for s in &c.series {
        draw_series(&mut out, &x, &y, c.y_scale, s);
    }
    let _ = write!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text><text x=\"12\" y=\"{:.1}\" transform=\"rotate(-90 12 {:.1})\" text-anchor=\"middle\">{}</text></svg>",
        (LEFT + W - RIGHT) / 2.0,
        H - 6.0,
        esc(&c.x_label),
        (TOP + H - BOTTOM) / 2.0,
        (TOP + H - BOTTOM) / 2.0,
        esc(&c.y_label)
    );
    out
}

/// One bar of a bar chart.
#[derive(Clone, Debug)]
pub struct Bar {
    pub label: String,
    /// None: no number (failed, skipped); `note` says why.
    pub value: Option<f64>,
    /// Written after the value ("1.00× best", "0.12×", "failed").
    pub note: String,
    pub color: &'static str,
}

/// Horizontal bars, one per row, scaled to the largest value.
pub fn bar_chart(title: &str, unit: &str, bars: &[Bar]) -> String {
    const ROW: f64 = 24.0;
    const LABEL_W: f64 = 150.0;
    const TEXT_W: f64 = 190.0;
    let h = TOP + ROW * bars.len() as f64 + 8.0;
    let mut out = String::new();
    open_svg(&mut out, title, h);
    let max = bars
        .iter()
        .filter_map(|b| b.value)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let span = W - LABEL_W - TEXT_W;
    for (i, b) in bars.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"12\">{}</text>",
            LABEL_W - 6.0,
            y + 15.0,
            esc(&b.label)
        );
        let (w, text) = match b.value {
            Some(v) if max > 0.0 && v.is_finite() => (
                (v / max * span).max(1.0),
                format!(
                    "{}{}{unit}  {}",
                    fmt_num(v),
                    if unit.starts_with('×') { "" } else { " " },
                    b.note
                ),
            ),
            _ => (0.0, b.note.clone()),
        };
        let _ = write!(
            out,
            "<rect x=\"{LABEL_W}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\">{}</text>",
            y + 3.0,
            ROW - 6.0,
            b.color,
            LABEL_W + w + 6.0,
            y + 15.0,
            esc(text.trim())
        );
    }
    out.push_str("</svg>");
    out
}

/// An HTML legend for `series`: a coloured line sample and the label of each.
pub fn legend(series: &[Series]) -> String {
    let mut out = String::from("<ul class=\"legend\">");
    for s in series {
        let style = if s.dashed { "dashed" } else { "solid" };
        let _ = write!(
            out,
            "<li><span class=\"sw\" style=\"border-top:3px {style} {}\"></span>{}</li>",
            s.color,
            esc(&s.label)
        );
    }
    out.push_str("</ul>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_numbers_covering_the_range() {
        assert_eq!(nice_step(10.0, 5), 2.0);
        assert_eq!(nice_step(0.7, 5), 0.2);
        let (a, b, t) = linear_ticks(0.0, 1234.0, 5);
        assert_eq!((a, b), (0.0, 1500.0));
        assert_eq!(t, vec![0.0, 500.0, 1000.0, 1500.0]);
        let (a, b, t) = log_ticks(0.03, 250.0);
        assert_eq!((a, b), (0.01, 1000.0));
        assert_eq!(t, vec![0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]);
        // A flat series still gets a range.
        let (a, b, _) = linear_ticks(5.0, 5.0, 5);
        assert!(a < 5.0 && b > 5.0);
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(1234.0), "1234");
        assert_eq!(fmt_num(12_345.0), "12.3k");
        assert_eq!(fmt_num(20_000.0), "20k");
        assert_eq!(fmt_num(2.5), "2.5");
        assert_eq!(fmt_num(0.125), "0.125");
        assert_eq!(fmt_num(3_500_000.0), "3.5M");
        assert_eq!(fmt_num(0.002), "0.002");
        assert_eq!(fmt_num(0.00123), "0.0012");
        let l = tick_labels(&[0.98, 0.99, 1.0, 1.01]);
        assert_eq!(l[1].1, "0.99");
        assert_eq!(l[2].1, "1.00");
    }

    #[test]
    fn a_line_chart_draws_every_series_and_band_and_escapes_text() {
        let c = LineChart {
            title: "tps <over> time".into(),
            x_label: "s".into(),
            y_label: "tps".into(),
            x_ticks: None,
            y_scale: Scale::Linear,
            series: vec![
                Series {
                    label: "sda".into(),
                    color: color(0),
                    dashed: false,
                    points: vec![(1.0, 10.0), (2.0, 12.0), (3.0, f64::NAN)],
                },
                Series {
                    label: "sdb".into(),
                    color: color(1),
                    dashed: true,
                    points: vec![(1.0, 1.0), (2.0, 2.0)],
                },
            ],
            bands: vec![Band {
                from: 0.0,
                to: 1.5,
                label: "warm-up".into(),
                fill: "#888",
                opacity: 0.2,
            }],
            x_from_zero: true,
        };
        let svg = line_chart(&c);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<path").count(), 2, "{svg}");
        assert!(svg.contains("stroke-dasharray"));
        assert!(svg.contains("warm-up") && svg.contains("tps &lt;over&gt; time"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        assert!(!svg.contains("http"), "no namespace URL: {svg}");
    }

    #[test]
    fn log_charts_leave_out_non_positive_values() {
        let c = LineChart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_ticks: Some(vec![(0.0, "0%".into()), (2.0, "99%".into())]),
            y_scale: Scale::Log,
            series: vec![Series {
                label: "a".into(),
                color: color(0),
                dashed: false,
                points: vec![(0.0, 0.0), (1.0, 0.5), (2.0, 40.0)],
            }],
            bands: vec![],
            x_from_zero: false,
        };
        let svg = line_chart(&c);
        let path = svg.split("d=\"").nth(1).unwrap();
        assert_eq!(path.split('"').next().unwrap().matches('L').count(), 1);
        assert!(svg.contains(">99%<"));
    }

    #[test]
    fn bars_scale_to_the_largest_and_show_missing_ones_as_text() {
        let bars = [
            Bar {
                label: "ssd".into(),
                value: Some(100.0),
                note: "1.00× best".into(),
                color: color(0),
            },
            Bar {
                label: "hdd".into(),
                value: Some(10.0),
                note: "0.10×".into(),
                color: color(1),
            },
            Bar {
                label: "usb2".into(),
                value: None,
                note: "failed".into(),
                color: color(2),
            },
        ];
        let svg = bar_chart("b", "tps", &bars);
        let widths: Vec<f64> = svg
            .split("width=\"")
            .skip(1)
            .map(|s| s.split('"').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(widths.len(), 3);
        assert!((widths[0] / widths[1] - 10.0).abs() < 0.01, "{widths:?}");
        assert_eq!(widths[2], 0.0);
        assert!(svg.contains("100 tps  1.00× best") && svg.contains(">failed<"));
    }
}
