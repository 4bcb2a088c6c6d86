//! The SLC-cache cliff in the text renderings (`summary.txt`, `spindle report show`): per
//! target, where the sustained write's speed fell and the speeds around it, or how far it went
//! without a cliff, and what ended the write. The chart is `html::cliff`'s.

use crate::model::{CliffRecord, PhaseResult, SuiteResult, TargetResult};
use std::fmt::Write as _;

/// Every cliff phase with a record, with its target, in the document's order.
pub fn records(s: &SuiteResult) -> Vec<(&TargetResult, &PhaseResult, &CliffRecord)> {
    s.targets
        .iter()
        .flat_map(|t| t.phases.iter().map(move |p| (t, p)))
        .filter_map(|(t, p)| p.cliff.as_ref().map(|c| (t, p, c)))
        .collect()
}

/// One target's line: the finding, what ended the write, and a partial series said as such.
pub fn line(p: &PhaseResult, c: &CliffRecord) -> String {
    let partial = if p.status == crate::model::PhaseStatus::Ok {
        ""
    } else {
        " — partial: the phase was cut short"
    };
    format!(
        "{}; ended by {}{partial}",
        c.finding.describe(),
        c.bound_words()
    )
}

/// The `SLC-cache cliff` section of summary.txt; nothing when no target has a cliff record.
pub fn summary_section(w: &mut String, s: &SuiteResult) {
    let recs = records(s);
    if recs.is_empty() {
        return;
    }
    let _ = writeln!(
        w,
        "\nSLC-cache cliff (one sustained O_DIRECT sequential write; GiB = 2^30 bytes, MB/s = 10^6 bytes/s):"
    );
    for (t, p, c) in recs {
        let _ = writeln!(w, "  {:<10} {}", t.name, line(p, c));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::fileio::sustained::{SustainedConfig, WriteBound};
    use crate::model::{Phase, PhaseStatus};
    use crate::stats::cliff::WriteSample;

    /// A cliff phase whose write fell from 400 to 50 MB/s after 15 s.
    pub(crate) fn cliff_phase() -> PhaseResult {
        let samples = (1..=30)
            .map(|s| WriteSample {
                t_s: s as f64,
                bytes: if s <= 15 { 400_000_000 } else { 50_000_000 },
            })
            .collect();
        let mut p = PhaseResult::new("fileio-cliff", Some(Phase::FileioCliff), PhaseStatus::Ok);
        p.cliff = Some(CliffRecord::new(
            SustainedConfig::default(),
            64 << 30,
            WriteBound::Time,
            samples,
        ));
        p
    }

    #[test]
    fn the_summary_names_the_cliff_per_target_with_its_units() {
        let mut s = crate::model::suite::tests_support::two_disk_suite();
        let mut none = String::new();
        summary_section(&mut none, &s);
        assert_eq!(none, "");
        s.targets[0].phases.push(cliff_phase());
        let text = crate::report::summary::render_summary(&s);
        assert!(text.contains("SLC-cache cliff (one sustained O_DIRECT sequential write; GiB = 2^30 bytes, MB/s = 10^6 bytes/s):"), "{text}");
        let name = &s.targets[0].name;
        assert!(
            text.contains(&format!("  {name:<10} cliff at 5.59 GiB (15 s): 400 MB/s → 50 MB/s; ended by the time bound (600 s)\n")),
            "{text}"
        );
    }
}
