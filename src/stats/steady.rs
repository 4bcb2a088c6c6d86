//! Steady state, judged as fio judges it (`ss=`, `ss_dur=`, `ss_ramp=`), on a series of
//! per-interval values, and whether a run *left* the steady state it had reached.
//!
//! fio's words ([`Criterion`]): `iops`, `bw`, `lat` — every sample of a window lies within the
//! limit of the window's mean (the largest deviation; with `%`, relative to the mean);
//! `iops_slope`, `bw_slope`, `lat_slope` — the least-squares slope of the window's samples (per
//! second) is within the limit (with `%`, the slope divided by the window's mean, in percent).
//! "Within" is fio's strict "below": a limit of 0 is never met, so it is refused. The window
//! is the last `ss_dur` seconds, rolling, and takes no sample that began before `ss_ramp`;
//! the steady state is attained at the end of the first window that meets the criterion.
//!
//! Leaving it (fio has no such thing, fio issue #1112 asks for it): after the steady state is
//! attained, samples beyond the limit from the steady window's mean — lower for `iops`/`bw`,
//! higher for `lat`; for the slope words the limit is a level too: `%` of the mean, or the
//! absolute slope times `ss_dur` — for at least `ss_dur` seconds in a row. It is dated at the
//! start of the first of those samples. A shorter dip is not leaving.
//!
//! Pure: the series comes in as [`Point`]s; `engine::steady` builds them from the samples.

use serde::{Deserialize, Serialize};

/// What a criterion looks at, in fio's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Iops,
    Bw,
    Lat,
}

/// One of fio's steady-state criteria with its limit: `iops_slope:10%`, `iops:5`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Criterion {
    pub metric: Metric,
    /// The `_slope` words: the least-squares slope; else the largest deviation from the mean.
    pub slope: bool,
    pub limit: f64,
    /// The limit is a percentage of the window's mean.
    pub percent: bool,
}

/// The criterion words, as fio spells them.
pub const WORDS: [&str; 6] = ["iops", "iops_slope", "bw", "bw_slope", "lat", "lat_slope"];

impl Criterion {
    /// Parses fio's spelling, `WORD:LIMIT` or `WORD:LIMIT%`; the error says what is accepted.
    pub fn parse(text: &str) -> Result<Criterion, String> {
        let usage = "use iops, iops_slope, bw, bw_slope, lat or lat_slope, a colon and a limit, absolute or in % (e.g. iops_slope:10% or iops:5)";
        let Some((word, limit)) = text.trim().split_once(':') else {
            return Err(format!("'{text}' has no limit: {usage}"));
        };
        let (metric, slope) = match word {
            "iops" => (Metric::Iops, false),
            "iops_slope" => (Metric::Iops, true),
            "bw" => (Metric::Bw, false),
            "bw_slope" => (Metric::Bw, true),
            "lat" => (Metric::Lat, false),
            "lat_slope" => (Metric::Lat, true),
            _ => return Err(format!("'{word}' is not a steady-state criterion: {usage}")),
        };
        let (number, percent) = match limit.strip_suffix('%') {
            Some(n) => (n, true),
            None => (limit, false),
        };
        match number.trim().parse::<f64>() {
            Ok(l) if l.is_finite() && l > 0.0 => Ok(Criterion {
                metric,
                slope,
                limit: l,
                percent,
            }),
            _ => Err(format!(
                "the limit '{limit}' of '{text}' is not a number above 0: {usage}"
            )),
        }
    }

    /// The word: `iops_slope`.
    pub fn word(&self) -> &'static str {
        let i = match self.metric {
            Metric::Iops => 0,
            Metric::Bw => 2,
            Metric::Lat => 4,
        };
        WORDS[i + usize::from(self.slope)]
    }
}

impl std::fmt::Display for Criterion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pct = if self.percent { "%" } else { "" };
        write!(f, "{}:{}{pct}", self.word(), self.limit)
    }
}

impl From<Criterion> for String {
    fn from(c: Criterion) -> String {
        c.to_string()
    }
}

impl TryFrom<String> for Criterion {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        Criterion::parse(&s)
    }
}

/// One interval's value: the interval ends `end_s` seconds after the start and lasts `len_s`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub end_s: f64,
    pub len_s: f64,
    pub value: f64,
}

impl Point {
    fn start_s(&self) -> f64 {
        self.end_s - self.len_s
    }
    /// Timers wake a little late: times within a quarter interval count as on time.
    fn slack(&self) -> f64 {
        self.len_s * 0.25
    }
}

/// How the reason of a run without interval samples begins.
pub const NO_SAMPLES: &str = "not attained: no interval samples";
/// How the reason of a run shorter than `ss_ramp + ss_dur` begins.
pub const TOO_SHORT: &str = "not attained: run shorter than ss_ramp + ss_dur";

/// What a result records about its steady state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// fio's spelling: `iops_slope:10%`.
    pub criterion: Criterion,
    /// `ss_dur`: the rolling window, seconds.
    pub dur_s: f64,
    /// `ss_ramp`: seconds before the first window may begin.
    pub ramp_s: f64,
    pub attained: bool,
    /// End of the first window that met the criterion, seconds since the start.
    pub at_s: Option<f64>,
    /// When a drop beyond the limit that lasted `dur_s` or more began.
    pub left_at_s: Option<f64>,
    /// Why it was not attained, or what explains leaving it (`unknown` when nothing does);
    /// none when it was attained and held.
    pub reason: Option<String>,
    /// What the criterion's word measured in this engine (`iops = reads + writes per second`).
    #[serde(default)]
    pub series: String,
}

/// The window's mean and the criterion's figure (the slope or the largest deviation; in % of
/// the mean with a `%` limit).
fn measure(w: &[Point], c: &Criterion) -> (f64, f64) {
    let n = w.len() as f64;
    let mean = w.iter().map(|p| p.value).sum::<f64>() / n;
    let raw = if c.slope {
        // Least squares over the intervals' midpoints, so uneven intervals weigh right.
        let x = |p: &Point| p.end_s - p.len_s / 2.0;
        let mx = w.iter().map(x).sum::<f64>() / n;
        let sxy: f64 = w.iter().map(|p| (x(p) - mx) * (p.value - mean)).sum();
        let sxx: f64 = w.iter().map(|p| (x(p) - mx).powi(2)).sum();
        if sxx > 0.0 {
            (sxy / sxx).abs()
        } else {
            f64::INFINITY
        }
    } else {
        w.iter().map(|p| (p.value - mean).abs()).fold(0.0, f64::max)
    };
    let figure = if !c.percent {
        raw
    } else if mean > 0.0 {
        raw / mean * 100.0
    } else {
        f64::INFINITY
    };
    (mean, figure)
}

/// The window that ends with sample `i`: its first index, if it is complete (it covers
/// `dur_s` after the ramp).
fn window(points: &[Point], i: usize, dur_s: f64, ramp_s: f64) -> Option<usize> {
    let p = &points[i];
    if p.end_s - ramp_s < dur_s - p.slack() {
        return None;
    }
    let from = ramp_s.max(p.end_s - dur_s) - p.slack();
    let first = (0..=i).find(|&j| points[j].start_s() >= from)?;
    (points[first].start_s() <= from + 2.0 * p.slack()).then_some(first)
}

/// When the series left the steady state whose window had `mean`, looking from sample `from`.
fn left_at(points: &[Point], from: usize, mean: f64, c: &Criterion, dur_s: f64) -> Option<f64> {
    let level = match (c.percent, c.slope) {
        (true, _) => mean * c.limit / 100.0,
        (false, false) => c.limit,
        (false, true) => c.limit * dur_s,
    };
    let beyond = |v: f64| match c.metric {
        Metric::Lat => v > mean + level,
        _ => v < mean - level,
    };
    let mut run: Option<usize> = None;
    for (j, p) in points.iter().enumerate().skip(from) {
        if !beyond(p.value) {
            run = None;
            continue;
        }
        let r = *run.get_or_insert(j);
        let began = points[r].start_s();
        if p.end_s - began >= dur_s - p.slack() {
            return Some(began);
        }
    }
    None
}

/// Judges `points` by `c` over windows of `dur_s` seconds after `ramp_s` seconds.
pub fn judge(points: &[Point], c: Criterion, dur_s: f64, ramp_s: f64) -> SteadyState {
    let mut out = SteadyState {
        criterion: c,
        dur_s,
        ramp_s,
        attained: false,
        at_s: None,
        left_at_s: None,
        reason: None,
        series: String::new(),
    };
    let Some(last) = points.last() else {
        out.reason = Some(format!("{NO_SAMPLES} (the report interval was off)"));
        return out;
    };
    if last.end_s + last.slack() < ramp_s + dur_s {
        out.reason = Some(format!(
            "{TOO_SHORT} ({:.0} s < {ramp_s} s + {dur_s} s)",
            last.end_s
        ));
        return out;
    }
    let mut best = f64::INFINITY;
    let mut judged = false;
    for (i, p) in points.iter().enumerate() {
        let Some(first) = window(points, i, dur_s, ramp_s) else {
            continue;
        };
        if i - first + 1 < 2 {
            continue;
        }
        judged = true;
        let (mean, figure) = measure(&points[first..=i], &c);
        if figure < c.limit {
            out.attained = true;
            out.at_s = Some(p.end_s);
            out.left_at_s = left_at(points, i + 1, mean, &c, dur_s);
            out.reason = out.left_at_s.map(|_| "unknown".to_string());
            return out;
        }
        best = best.min(figure);
    }
    out.reason = Some(if judged {
        let (what, unit) = match (c.slope, c.percent) {
            (true, true) => ("flattest had a slope of", " % of its mean per second"),
            (true, false) => ("flattest had a slope of", " per second"),
            (false, true) => ("steadiest strayed", " % from its mean"),
            (false, false) => ("steadiest strayed", " from its mean"),
        };
        format!("not attained: the {what} {best:.1}{unit} (limit {c})")
    } else {
        format!("not attained: a {dur_s} s window holds fewer than 2 interval samples: raise ss_dur or shorten the report interval")
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples of 1 s ending at 1, 2, … s.
    fn series(values: &[f64]) -> Vec<Point> {
        values
            .iter()
            .enumerate()
            .map(|(i, &value)| Point {
                end_s: (i + 1) as f64,
                len_s: 1.0,
                value,
            })
            .collect()
    }

    fn c(text: &str) -> Criterion {
        Criterion::parse(text).unwrap()
    }

    #[test]
    fn criteria_are_read_in_fios_words_and_bad_ones_say_what_is_accepted() {
        let s = c("iops_slope:10%");
        assert_eq!(
            (s.metric, s.slope, s.limit, s.percent),
            (Metric::Iops, true, 10.0, true)
        );
        assert_eq!(s.to_string(), "iops_slope:10%");
        assert_eq!(c("iops:5").to_string(), "iops:5");
        assert_eq!(c("lat_slope:0.5%").word(), "lat_slope");
        assert_eq!(c("bw:2.5").to_string(), "bw:2.5");
        for bad in [
            "foo:1",
            "iops",
            "iops:x",
            "iops:0",
            "iops:-3%",
            "bw_slope:%",
        ] {
            let e = Criterion::parse(bad).unwrap_err();
            assert!(e.contains("iops_slope:10%"), "{bad}: {e}");
        }
        assert!(Criterion::parse("foo:1")
            .unwrap_err()
            .starts_with("'foo' is not"));
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, "\"iops_slope:10%\"");
        assert_eq!(serde_json::from_str::<Criterion>(&json).unwrap(), s);
    }

    #[test]
    fn a_constant_series_attains_at_ramp_plus_dur() {
        // 100 every second: the first window whose samples all began after the 2 s ramp is
        // (2, 12], complete at 2 + 10 = 12 s; slope 0 < 10 %, deviation 0 < 5.
        let s = series(&[100.0; 20]);
        for crit in ["iops_slope:10%", "iops:5", "bw:1%", "lat_slope:1"] {
            let j = judge(&s, c(crit), 10.0, 2.0);
            assert!(j.attained, "{crit}: {j:?}");
            assert_eq!((j.at_s, j.left_at_s, j.reason), (Some(12.0), None, None));
        }
    }

    #[test]
    fn a_rising_series_fails_the_slope_but_meets_a_wide_deviation_limit() {
        // 100, 200, …, 1000 (+100 per second, the sample ending at t s is 100 t), 1 s ramp,
        // 4 s windows. The window (k, k + 4] holds 100(k + 1) … 100(k + 4): mean 100(k + 2.5),
        // slope 100 per second. The first, (1, 5] = 200, 300, 400, 500: mean 350, 100 / 350 =
        // 28.6 % per second; the last, (6, 10] = 700 … 1000: mean 850, 100 / 850 = 11.8 %.
        let rising: Vec<f64> = (1..=10).map(|t| 100.0 * t as f64).collect();
        let s = series(&rising);
        let j = judge(&s, c("iops_slope:10%"), 4.0, 1.0);
        assert!(!j.attained);
        assert_eq!((j.at_s, j.left_at_s), (None, None));
        assert_eq!(
            j.reason.as_deref(),
            Some("not attained: the flattest had a slope of 11.8 % of its mean per second (limit iops_slope:10%)")
        );
        // iops_slope:20%: (2, 6] has mean 450 (22.2 %), (3, 7] mean 550 (18.2 % < 20 %): at 7 s.
        assert_eq!(judge(&s, c("iops_slope:20%"), 4.0, 1.0).at_s, Some(7.0));
        // Deviation: each window is its mean ± 50 and ± 150, so it strays 150: iops:200 holds
        // from the first window, at 1 + 4 = 5 s; iops:100 never.
        let j = judge(&s, c("iops:200"), 4.0, 1.0);
        assert_eq!((j.attained, j.at_s), (true, Some(5.0)));
        let j = judge(&s, c("iops:100"), 4.0, 1.0);
        assert_eq!(
            j.reason.as_deref(),
            Some("not attained: the steadiest strayed 150.0 from its mean (limit iops:100)")
        );
    }

    #[test]
    fn a_drop_that_lasts_dur_is_leaving_and_a_shorter_dip_is_not() {
        // 100 for 20 s, then 50 from the interval (20, 21] on: steady at 2 + 5 = 7 s with mean
        // 100; 50 < 100 − 10 % for the samples ending 21 … 25, 5 s ≥ ss_dur: left at 20 s,
        // when the first low interval began.
        let mut v = vec![100.0; 20];
        v.extend([50.0; 10]);
        let j = judge(&series(&v), c("iops_slope:10%"), 5.0, 2.0);
        assert_eq!((j.at_s, j.left_at_s), (Some(7.0), Some(20.0)));
        assert_eq!(j.reason.as_deref(), Some("unknown"));
        // A 4 s dip (ending 21 … 24) shorter than the 5 s window is not leaving.
        let mut v = vec![100.0; 20];
        v.extend([50.0; 4]);
        v.extend([100.0; 10]);
        let j = judge(&series(&v), c("iops_slope:10%"), 5.0, 2.0);
        assert_eq!((j.attained, j.left_at_s, j.reason), (true, None, None));
        // Latency leaves upwards: 2 ms, then 3 ms > 2 + 10 % for 5 s.
        let mut v = vec![2.0; 10];
        v.extend([3.0; 6]);
        let j = judge(&series(&v), c("lat:10%"), 5.0, 0.0);
        assert_eq!((j.at_s, j.left_at_s), (Some(5.0), Some(10.0)));
    }

    #[test]
    fn too_short_or_too_coarse_says_so_instead_of_judging() {
        let j = judge(&series(&[100.0; 6]), c("iops_slope:10%"), 10.0, 2.0);
        assert_eq!(
            j.reason.as_deref(),
            Some("not attained: run shorter than ss_ramp + ss_dur (6 s < 2 s + 10 s)")
        );
        assert!(!j.attained);
        let j = judge(&[], c("iops_slope:10%"), 10.0, 2.0);
        assert!(j.reason.unwrap().contains("no interval samples"));
        // 10 s intervals and a 10 s window: one sample per window, nothing to judge.
        let coarse: Vec<Point> = (1..=6)
            .map(|i| Point {
                end_s: 10.0 * i as f64,
                len_s: 10.0,
                value: 100.0,
            })
            .collect();
        let j = judge(&coarse, c("iops_slope:10%"), 10.0, 0.0);
        assert!(j.reason.unwrap().contains("fewer than 2 interval samples"));
        let j = judge(&coarse, c("iops_slope:10%"), 20.0, 0.0);
        assert_eq!(j.at_s, Some(20.0));
    }
}
