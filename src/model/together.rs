//! The record of the all-at-once phase (`[together]`, `run::together`): the profile's chosen
//! fileio runs made on every disk at the same time after the solo phases, each disk's result,
//! and what `report::together` found in them — the figure together against the same run alone,
//! the load each shared bus carried against its ceiling, and the outlier of a group of disks of
//! one model and firmware. Kept in `SuiteResult::together`; absent in runs without it and in
//! bundles older than it (the suite schema did not change: the field is optional).

use super::bench::BenchResult;
use super::phase::Phase;
use super::status::PhaseStatus;
use serde::{Deserialize, Serialize};

/// Every all-at-once run of a suite.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TogetherRecord {
    pub runs: Vec<TogetherRun>,
    /// Why nothing (or less) ran: fewer than two targets, a stop request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One fileio run made on every disk at once, started together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TogetherRun {
    /// `together-` and the solo phase's name (`together-fileio6-seqrd-1MiB-qd8-t1`).
    pub name: String,
    /// The solo phase it repeats, whose figure is each disk's "alone".
    pub phase: Phase,
    pub disks: Vec<TogetherDisk>,
    /// The disks grouped by the bus (USB host controller) they share, with its load.
    #[serde(default)]
    pub buses: Vec<BusLoad>,
}

/// One disk's part of an all-at-once run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TogetherDisk {
    /// The target's name.
    pub target: String,
    pub status: PhaseStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The engine's result of this disk's share of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<BenchResult>,
    /// MiB/s read and written together.
    #[serde(default)]
    pub mib_s: Option<f64>,
    /// MiB/s of the same run alone (the solo phase).
    #[serde(default)]
    pub alone_mib_s: Option<f64>,
    /// `mib_s / alone_mib_s`: 1 when the others cost this disk nothing.
    #[serde(default)]
    pub ratio: Option<f64>,
    /// The disk's model and firmware: the group its figure is compared within.
    #[serde(default)]
    pub group: Option<String>,
    /// Set when the figure is below the group's median by more than the limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outlier: Option<Outlier>,
    /// What the block device under this disk's files read and wrote over the run (its `stat`
    /// counters before and after); absent when it has none or shares it with another disk
    /// of the run (their bytes could not be told apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_io: Option<crate::sys::blockdev::Counters>,
    /// The validity verdict of `result`, by the rules of a solo phase (`report::validity`);
    /// computed when read for bundles written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validity: Option<super::Validity>,
}

/// Why a disk is its group's outlier: its figure is below `limit_mib_s`, the group's median
/// less 3 × the larger of the median absolute deviation and `report::together::MAD_FLOOR` of
/// the median.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outlier {
    pub median_mib_s: f64,
    pub mad_mib_s: f64,
    pub limit_mib_s: f64,
    /// How many disks the group has (this one included).
    pub group_size: usize,
}

/// The disks that share one bus and what they moved over it together.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BusLoad {
    /// The host controller (`VIA VL805`, `RP1 USB controller usb@…`), or what the disks are
    /// when no USB controller is known (`not USB`).
    pub bus: String,
    pub targets: Vec<String>,
    /// MB/s (10^6) read and written, summed over the disks.
    pub read_mb_s: f64,
    pub written_mb_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<BusCeiling>,
}

/// What the bus can carry: one link's worth (see `report::together`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BusCeiling {
    /// The link it is (`USB 3 Gen 1 (5 Gb/s)`).
    pub link: String,
    pub mb_s: f64,
    /// Reads and writes share the wire (USB 2): their sum is judged; else the larger direction.
    pub half_duplex: bool,
}

impl BusLoad {
    /// The load against the ceiling (1.0 = full), when one is known.
    pub fn share(&self) -> Option<f64> {
        let c = self.ceiling.as_ref().filter(|c| c.mb_s > 0.0)?;
        let load = if c.half_duplex {
            self.read_mb_s + self.written_mb_s
        } else {
            self.read_mb_s.max(self.written_mb_s)
        };
        Some(load / c.mb_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bus_share_sums_the_directions_only_on_a_half_duplex_link() {
        let mut b = BusLoad {
            bus: "VIA VL805".into(),
            targets: vec!["a".into(), "b".into()],
            read_mb_s: 300.0,
            written_mb_s: 100.0,
            ceiling: Some(BusCeiling {
                link: "USB 3 Gen 1 (5 Gb/s)".into(),
                mb_s: 500.0,
                half_duplex: false,
            }),
        };
        assert_eq!(b.share(), Some(0.6));
        b.ceiling.as_mut().unwrap().half_duplex = true;
        assert_eq!(b.share(), Some(0.8));
        b.ceiling = None;
        assert_eq!(b.share(), None);
        let json = serde_json::to_string(&b).unwrap();
        assert_eq!(serde_json::from_str::<BusLoad>(&json).unwrap(), b);
    }
}
