//! A repeated measurement in one line, for summary.txt, `report show`, report.html and
//! `--markdown`: the runs, mean, median, CV and the 95 % interval of the figure and of p99
//! (`stats::repeat`, recomputed from the recorded runs: the bootstrap is seeded).

use crate::model::repeat::Repeats;
use crate::report::html::svg::fmt_num;
use crate::stats::repeat::summarise;

/// `repeats: 3 runs, mean 1.2k req/s, median 1.2k, CV 2.1 %, 95 % interval 1.1k–1.3k; p99 3.10 ms
/// (2.90–3.40)`, with `bimodal: …` when the runs fall into two groups.
pub fn line(rp: &Repeats) -> String {
    let unit = rp.runs.first().map_or("", |r| r.unit.as_str());
    let mut out = format!(
        "repeats: {} runs (the figures above are run {}'s{})",
        rp.runs.len(),
        rp.kept + 1,
        if rp.runs.get(rp.kept).is_some_and(|r| r.ok) {
            ", the median"
        } else {
            ", which did not run to its end"
        }
    );
    let Some(s) = summarise(&rp.values()) else {
        return out + ", none ran to its end";
    };
    out += &format!(
        ", mean {} {unit}, median {}, CV {:.1} %",
        fmt_num(s.mean),
        fmt_num(s.median),
        s.cv * 100.0
    );
    if let Some((lo, hi)) = s.ci {
        out += &format!(", 95 % interval {}–{}", fmt_num(lo), fmt_num(hi));
    }
    if let Some(p) = summarise(&rp.p99s()) {
        out += &format!("; p99 mean {:.2} ms", p.mean);
        if let Some((lo, hi)) = p.ci {
            out += &format!(" ({lo:.2}–{hi:.2})");
        }
    }
    if let Some(goal) = rp.until_ci_pct {
        out += &format!("; extended until ±{goal} %");
    }
    if s.bimodal {
        out += "; bimodal: the runs fall into two groups — find what changed between them";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::repeat::RepeatRun;

    #[test]
    fn the_line_has_every_statistic_and_flags_two_groups() {
        let run = |v: f64| RepeatRun {
            value: v,
            unit: "req/s".into(),
            p99_ms: Some(v / 100.0),
            ok: true,
            seconds: 1.0,
        };
        let rp = Repeats {
            runs: [100.0, 102.0, 98.0].map(run).to_vec(),
            kept: 0,
            until_ci_pct: None,
        };
        let l = line(&rp);
        assert!(
            l.starts_with("repeats: 3 runs (the figures above are run 1's, the median), mean 100 req/s, median 100, CV 2.0 %, 95 % interval ")
                && l.contains("; p99 mean 1.00 ms ("),
            "{l}"
        );
        let two = Repeats {
            runs: [100.0, 101.0, 60.0, 61.0].map(run).to_vec(),
            ..rp
        };
        assert!(line(&two).contains("bimodal"));
    }
}
