//! The SLC-cache cliff phase's record (`fileio-cliff`): what the sustained write was asked to do,
//! which bound ended it, its 1 s series, and the cliffs found in it ([`CliffFinding`]). The
//! series is kept so the finding can be recomputed offline and the chart drawn from the file.

use crate::fileio::sustained::{SustainedConfig, WriteBound};
use crate::stats::cliff::{find_cliffs, CliffFinding, CliffRules, WriteSample};
use serde::{Deserialize, Serialize};

/// A sustained write and its cliffs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CliffRecord {
    /// The write's bounds as the profile set them.
    pub config: SustainedConfig,
    /// What it set out to write: the size, or the free space less the margin when smaller.
    #[serde(default)]
    pub planned_bytes: u64,
    /// Which bound ended it (absent: not recorded).
    #[serde(default)]
    pub bound: Option<WriteBound>,
    /// Bytes written in each second, in order.
    #[serde(default)]
    pub samples: Vec<WriteSample>,
    /// The cliffs found in `samples`.
    #[serde(default)]
    pub finding: CliffFinding,
}

impl CliffRecord {
    /// A record of a write, with the cliffs found by the default rules.
    pub fn new(
        config: SustainedConfig,
        planned_bytes: u64,
        bound: WriteBound,
        samples: Vec<WriteSample>,
    ) -> CliffRecord {
        let finding = find_cliffs(&samples, &CliffRules::default());
        CliffRecord {
            config,
            planned_bytes,
            bound: Some(bound),
            samples,
            finding,
        }
    }

    /// What ended the write, in words: `the 64 GiB size`, `600 s`, `the free space (1 GiB kept)`.
    pub fn bound_words(&self) -> String {
        let h = crate::units::human_size;
        match self.bound {
            Some(WriteBound::Size) => format!("the size bound ({})", h(self.planned_bytes)),
            Some(WriteBound::FreeSpace) => format!(
                "the free space ({} written at most, {} kept free)",
                h(self.planned_bytes),
                h(self.config.keep_free)
            ),
            Some(WriteBound::Time) => {
                format!("the time bound ({} s)", self.config.time_limit.as_secs())
            }
            Some(WriteBound::Stopped) => "a stop request".into(),
            None => "not recorded".into(),
        }
    }

    /// The line the text renderings show: the finding, then what ended the write.
    pub fn summary_line(&self) -> String {
        format!(
            "{}; ended by {} (GiB = 2^30 bytes, MB/s = 10^6 bytes/s)",
            self.finding.describe(),
            self.bound_words()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_finds_its_cliff_and_reads_back_without_the_newer_fields() {
        let samples: Vec<WriteSample> = (1..=30)
            .map(|s| WriteSample {
                t_s: s as f64,
                bytes: if s <= 15 { 400_000_000 } else { 50_000_000 },
            })
            .collect();
        let r = CliffRecord::new(
            SustainedConfig::default(),
            64 << 30,
            WriteBound::Time,
            samples,
        );
        assert_eq!(r.finding.cliffs.len(), 1);
        let line = r.summary_line();
        assert!(
            line.starts_with("cliff at 5.59 GiB (15 s): 400 MB/s → 50 MB/s"),
            "{line}"
        );
        assert!(line.contains("the time bound (600 s)"), "{line}");
        let j = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<CliffRecord>(&j).unwrap(), r);
        let old = serde_json::to_string(&serde_json::json!({"config": r.config})).unwrap();
        let back: CliffRecord = serde_json::from_str(&old).unwrap();
        assert!(back.samples.is_empty() && back.bound.is_none());
    }
}
