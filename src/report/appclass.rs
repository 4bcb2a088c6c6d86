//! The SD Association's application performance classes, A1 and A2, checked as Raspberry Pi's
//! SD Card Speed Test checks them (raspberrypi-ui/agnostics, `data/sd_bench.fio` and
//! `data/sdtest.sh`): one 64 MiB file, O_DIRECT, queue depth 4; a sequential write in 512 KiB
//! requests, then 4 KiB random writes and random reads for 10 s each. A1 asks for a sequential
//! write of 10,000 KB/s (fio's KB: 1,024 bytes), 500 random-write and 1,500 random-read IOPS;
//! A2 for 2,000 and 4,000 IOPS (SD Physical Layer Simplified Specification 6.00, §4.16.2).
//! Found among a run's fileio results by those parameters, for every disk (the check is the
//! SD card's, the figures say the same of any disk).

use crate::engine::Counters;
use crate::fileio::{IoMode, TestMode};
use crate::model::{PhaseStatus, TargetResult, TestOptions};

/// The job's shape: file size, queue depth, sequential and random request sizes.
pub const FILE_BYTES: u64 = 64 << 20;
pub const DEPTH: u32 = 4;
pub const SEQ_BLOCK: u64 = 512 << 10;
pub const RND_BLOCK: u64 = 4 << 10;
pub const RND_SECONDS: f64 = 10.0;

/// A class's minimums: sequential write KB/s (1,024 B), random write IOPS, random read IOPS.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Class {
    pub name: &'static str,
    pub seq_write_kb_s: f64,
    pub rnd_write_iops: f64,
    pub rnd_read_iops: f64,
}

pub const A1: Class = Class {
    name: "A1",
    seq_write_kb_s: 10_000.0,
    rnd_write_iops: 500.0,
    rnd_read_iops: 1_500.0,
};
pub const A2: Class = Class {
    name: "A2",
    seq_write_kb_s: 10_000.0,
    rnd_write_iops: 2_000.0,
    rnd_read_iops: 4_000.0,
};

/// The three figures of one target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Check {
    pub seq_write_kb_s: f64,
    pub rnd_write_iops: f64,
    pub rnd_read_iops: f64,
}

impl Check {
    /// The best class all three figures meet, or `None` (below A1).
    pub fn class(&self) -> Option<Class> {
        [A2, A1].into_iter().find(|c| {
            self.seq_write_kb_s >= c.seq_write_kb_s
                && self.rnd_write_iops >= c.rnd_write_iops
                && self.rnd_read_iops >= c.rnd_read_iops
        })
    }

    /// `A1 (A2 not met: random write 1,234 IOPS, 38 % short of 2,000)` and each figure's
    /// margin over A1: the verdict line.
    pub fn describe(&self) -> String {
        let margin = |v: f64, min: f64| format!("{:+.0} %", (v / min - 1.0) * 100.0);
        let verdict = self
            .class()
            .map_or("below A1".to_string(), |c| c.name.to_string());
        format!(
            "{verdict}: sequential write {:.0} KB/s ({} of A1's 10,000), random write {:.0} IOPS ({} of A1's 500, {} of A2's 2,000), random read {:.0} IOPS ({} of A1's 1,500, {} of A2's 4,000)",
            self.seq_write_kb_s,
            margin(self.seq_write_kb_s, A1.seq_write_kb_s),
            self.rnd_write_iops,
            margin(self.rnd_write_iops, A1.rnd_write_iops),
            margin(self.rnd_write_iops, A2.rnd_write_iops),
            self.rnd_read_iops,
            margin(self.rnd_read_iops, A1.rnd_read_iops),
            margin(self.rnd_read_iops, A2.rnd_read_iops),
        )
    }
}

/// Whether fileio options are the job's: one 64 MiB file, O_DIRECT, async at depth 4, one
/// thread, `block` requests in `mode`.
pub fn is_job(o: &crate::fileio::FileioConfig, mode: TestMode, block: u64) -> bool {
    o.test_mode == Some(mode)
        && o.block_size == block
        && o.total_size == FILE_BYTES
        && o.file_num == 1
        && o.io_mode == IoMode::Async
        && o.async_backlog == DEPTH
        && o.threads == 1
        && o.extra_flags.direct
}

/// The check on target `t`, when the run measured all three figures.
pub fn of_target(t: &TargetResult) -> Option<Check> {
    let figure = |mode: TestMode, block: u64| {
        t.phases.iter().find_map(|p| {
            let r = p.result.as_ref().filter(|_| p.status == PhaseStatus::Ok)?;
            let (TestOptions::Fileio(o), Counters::Fileio(c)) = (&r.options, &r.counters) else {
                return None;
            };
            is_job(o, mode, block).then_some(c.clone())
        })
    };
    Some(Check {
        seq_write_kb_s: figure(TestMode::Seqwr, SEQ_BLOCK)?.written_mib_per_s * 1024.0,
        rnd_write_iops: figure(TestMode::Rndwr, RND_BLOCK)?.writes_per_s,
        rnd_read_iops: figure(TestMode::Rndrd, RND_BLOCK)?.reads_per_s,
    })
}

/// The section of summary.txt and `report show`.
pub fn summary_section(s: &crate::model::SuiteResult) -> String {
    let lines: Vec<String> = s
        .targets
        .iter()
        .filter_map(|t| Some(format!("  {:<10} {}\n", t.name, of_target(t)?.describe())))
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\nApplication performance class (A1/A2, as Raspberry Pi's SD Card Speed Test runs it: 64 MiB, O_DIRECT, queue depth 4):\n{}",
        lines.concat()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_need_all_three_figures_and_say_the_margins() {
        let c = Check {
            seq_write_kb_s: 27_982.0,
            rnd_write_iops: 551.0,
            rnd_read_iops: 2_391.0,
        };
        assert_eq!(c.class(), Some(A1));
        assert!(c.describe().starts_with("A1: sequential write 27982 KB/s (+180 % of A1's 10,000), random write 551 IOPS (+10 % of A1's 500, -72 % of A2's 2,000)"), "{}", c.describe());
        let a2 = Check {
            rnd_write_iops: 2_100.0,
            rnd_read_iops: 4_000.0,
            ..c
        };
        assert_eq!(a2.class(), Some(A2));
        let slow = Check {
            seq_write_kb_s: 9_000.0,
            ..a2
        };
        assert_eq!(slow.class(), None);
        assert!(slow.describe().starts_with("below A1"));
    }
}
