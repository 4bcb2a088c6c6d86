//! CrystalDiskMark's (and KDiskMark's) four rows, as people quote them: SEQ1M Q8T1, SEQ1M Q1T1,
//! RND4K Q32T1, RND4K Q1T1, read and write in MB/s (10^6 bytes, as they print it), found among a
//! run's fileio results by their parameters (sequential 1 MiB or random 4 KiB requests, that
//! queue depth, one thread, O_DIRECT) and measured by spindle's own engines — with the p99
//! latency beside each figure, which those tools do not give. CrystalDiskMark runs each test 5
//! times on a 1 GiB file and keeps the best. A figure measured once is that run's; a repeated one
//! (`--repeat N`, a profile's `[repeat]`) is the best of its runs, as CrystalDiskMark keeps,
//! with that run's p99 and "best of N" beside it (the phase itself keeps the median run).

use crate::engine::Counters;
use crate::fileio::{IoMode, TestMode};
use crate::model::{SuiteResult, TargetResult, TestOptions};

/// A CrystalDiskMark row: its label and the request it names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    pub label: &'static str,
    pub sequential: bool,
    pub block: u64,
    pub depth: u32,
}

/// The four rows, in CrystalDiskMark's order.
pub const ROWS: [Row; 4] = [
    Row {
        label: "SEQ1M Q8T1",
        sequential: true,
        block: 1 << 20,
        depth: 8,
    },
    Row {
        label: "SEQ1M Q1T1",
        sequential: true,
        block: 1 << 20,
        depth: 1,
    },
    Row {
        label: "RND4K Q32T1",
        sequential: false,
        block: 4096,
        depth: 32,
    },
    Row {
        label: "RND4K Q1T1",
        sequential: false,
        block: 4096,
        depth: 1,
    },
];

/// One figure of a row: MB/s (10^6 B/s) and the p99 latency, from phase `phase`.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub mb_s: f64,
    pub p99_ms: f64,
    pub phase: String,
    /// How many runs the figure is the best of (1: measured once).
    pub runs: usize,
}

/// A row's read and write figures on one target (`None`: not measured in this run).
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub row: Row,
    pub read: Option<Cell>,
    pub write: Option<Cell>,
}

/// Whether a fileio result ran row `row`'s request in direction `mode`.
fn matches(o: &crate::fileio::FileioConfig, row: &Row, mode: TestMode) -> bool {
    let depth = match o.io_mode {
        IoMode::Async => o.async_backlog,
        IoMode::Sync => 1,
        IoMode::Mmap => return false,
    };
    o.test_mode == Some(mode)
        && o.block_size == row.block
        && depth == row.depth
        && o.threads == 1
        && o.extra_flags.direct
}

fn cell(t: &TargetResult, row: &Row, mode: TestMode) -> Option<Cell> {
    t.phases.iter().find_map(|p| {
        let r = p.result.as_ref()?;
        let TestOptions::Fileio(o) = &r.options else {
            return None;
        };
        let Counters::Fileio(c) = &r.counters else {
            return None;
        };
        if !matches(o, row, mode) || p.status != crate::model::PhaseStatus::Ok {
            return None;
        }
        let mib = if mode.writes() {
            c.written_mib_per_s
        } else {
            c.read_mib_per_s
        };
        let kept = Cell {
            mb_s: mib * 1_048_576.0 / 1e6,
            p99_ms: r.latency.p99_us / 1e3,
            phase: p.name.clone(),
            runs: 1,
        };
        Some(match &p.repeats {
            Some(rp) => best_of(kept, r, rp),
            None => kept,
        })
    })
}

/// The best of a repeated figure's runs. Each run records its figure in the unit of the kept
/// run's ranked figure (`report::metric::primary`), so the kept run's MB/s over that figure
/// converts any run's figure to MB/s.
fn best_of(kept: Cell, r: &crate::model::BenchResult, rp: &crate::model::repeat::Repeats) -> Cell {
    let primary = crate::report::metric::primary(r).value;
    let ok: Vec<_> = rp.runs.iter().filter(|run| run.ok).collect();
    let best = ok.iter().max_by(|a, b| a.value.total_cmp(&b.value));
    match best {
        Some(best) if primary > 0.0 => Cell {
            mb_s: best.value * kept.mb_s / primary,
            p99_ms: best.p99_ms.unwrap_or(kept.p99_ms),
            runs: ok.len(),
            ..kept
        },
        _ => kept,
    }
}

/// The four rows on target `t`; `None` when the run measured none of them.
pub fn of_target(t: &TargetResult) -> Option<Vec<Measured>> {
    let rows: Vec<Measured> = ROWS
        .iter()
        .map(|row| {
            let (rd, wr) = if row.sequential {
                (TestMode::Seqrd, TestMode::Seqwr)
            } else {
                (TestMode::Rndrd, TestMode::Rndwr)
            };
            Measured {
                row: *row,
                read: cell(t, row, rd),
                write: cell(t, row, wr),
            }
        })
        .collect();
    rows.iter()
        .any(|m| m.read.is_some() || m.write.is_some())
        .then_some(rows)
}

/// `1234.56 (p99 3.21 ms)`, `1234.56 best of 5 (p99 3.21 ms)`, or `-`.
pub fn cell_text(c: &Option<Cell>) -> String {
    match c {
        Some(c) if c.runs > 1 => {
            format!("{:.2} best of {} (p99 {:.2} ms)", c.mb_s, c.runs, c.p99_ms)
        }
        Some(c) => format!("{:.2} (p99 {:.2} ms)", c.mb_s, c.p99_ms),
        None => "-".into(),
    }
}

/// The section of summary.txt and `report show`: every target with a CrystalDiskMark row.
pub fn summary_section(s: &SuiteResult) -> String {
    use std::fmt::Write as _;
    let mut w = String::new();
    for t in &s.targets {
        let Some(rows) = of_target(t) else { continue };
        if w.is_empty() {
            w.push_str("\nCrystalDiskMark's rows (MB/s = 10^6 B/s, spindle's async O_DIRECT engine; a repeated figure is the best of its runs, as CrystalDiskMark keeps; - not measured):\n");
        }
        let _ = writeln!(w, "  {}", t.name);
        let _ = writeln!(w, "    {:<12} {:>36} {:>36}", "", "read", "write");
        for m in rows {
            let _ = writeln!(
                w,
                "    {:<12} {:>36} {:>36}",
                m.row.label,
                cell_text(&m.read),
                cell_text(&m.write)
            );
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bench::tests_support::sample_fileio_result;
    use crate::model::{PhaseResult, PhaseStatus};

    fn phase(mode: TestMode, block: u64, depth: u32, direct: bool, mib: f64) -> PhaseResult {
        let mut r = sample_fileio_result();
        if let TestOptions::Fileio(o) = &mut r.options {
            o.test_mode = Some(mode);
            o.block_size = block;
            o.io_mode = IoMode::Async;
            o.async_backlog = depth;
            o.threads = 1;
            o.extra_flags.direct = direct;
        }
        if let Counters::Fileio(c) = &mut r.counters {
            (c.read_mib_per_s, c.written_mib_per_s) = if mode.writes() {
                (0.0, mib)
            } else {
                (mib, 0.0)
            };
        }
        r.latency.p99_us = 2500.0;
        PhaseResult {
            result: Some(r),
            ..PhaseResult::new(format!("{mode:?}-{block}-{depth}"), None, PhaseStatus::Ok)
        }
    }

    #[test]
    fn rows_are_found_by_their_parameters_in_decimal_megabytes() {
        let mut t = TargetResult::new("sda", "/mnt/sda", crate::model::TargetKind::Disk, "d");
        t.phases = vec![
            phase(TestMode::Seqrd, 1 << 20, 8, true, 400.0),
            phase(TestMode::Rndwr, 4096, 32, true, 100.0),
            // Not O_DIRECT, or another depth: not a CrystalDiskMark row.
            phase(TestMode::Rndrd, 4096, 32, false, 900.0),
            phase(TestMode::Rndrd, 4096, 16, true, 800.0),
        ];
        let rows = of_target(&t).unwrap();
        assert_eq!(rows[0].row.label, "SEQ1M Q8T1");
        let seq = rows[0].read.as_ref().unwrap();
        assert!((seq.mb_s - 419.430_4).abs() < 1e-6, "{seq:?}");
        assert_eq!(seq.p99_ms, 2.5);
        assert!(rows[0].write.is_none() && rows[1].read.is_none());
        assert!(
            rows[2].read.is_none(),
            "QD16 and buffered reads are not RND4K Q32T1"
        );
        assert_eq!(rows[2].write.as_ref().unwrap().phase, "Rndwr-4096-32");
        let mut s = crate::model::suite::tests_support::two_disk_suite();
        s.targets = vec![t.clone()];
        let text = summary_section(&s);
        assert!(
            text.contains("SEQ1M Q8T1") && text.contains("419.43 (p99 2.50 ms)"),
            "{text}"
        );
        t.phases.truncate(0);
        assert!(of_target(&t).is_none());
    }

    #[test]
    fn a_repeated_figure_is_the_best_of_its_runs_with_that_runs_p99() {
        use crate::model::repeat::{RepeatRun, Repeats};
        let run = |value: f64, p99: f64, ok: bool| RepeatRun {
            value,
            unit: "MiB/s".into(),
            p99_ms: Some(p99),
            ok,
            seconds: 5.0,
        };
        let mut t = TargetResult::new("sda", "/mnt/sda", crate::model::TargetKind::Disk, "d");
        let mut p = phase(TestMode::Seqrd, 1 << 20, 8, true, 400.0);
        p.repeats = Some(Repeats {
            // The kept (median) run is the 400 MiB/s one; a failed run's figure never counts.
            runs: vec![
                run(380.0, 2.0, true),
                run(400.0, 2.5, true),
                run(440.0, 3.0, true),
                run(900.0, 0.1, false),
            ],
            kept: 1,
            until_ci_pct: None,
        });
        t.phases = vec![p];
        let rows = of_target(&t).unwrap();
        let best = rows[0].read.as_ref().unwrap();
        assert!((best.mb_s - 440.0 * 1.048_576).abs() < 1e-6, "{best:?}");
        assert_eq!((best.p99_ms, best.runs), (3.0, 3));
        assert_eq!(cell_text(&rows[0].read), "461.37 best of 3 (p99 3.00 ms)");
    }
}
