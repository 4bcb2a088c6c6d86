//! What a queue is worth on each disk: the async O_DIRECT runs of one block size and test mode
//! at a deep queue divided by the same at queue depth 1. A UAS bridge queues commands and gains;
//! usb-storage (Bulk-Only Transport) carries one command at a time and does not — the difference
//! fio's QD1/QD32 tests show in published Pi storage benchmarks.

use super::figures::figures;
use crate::fileio::TestMode;
use crate::model::Phase;
use crate::model::{PhaseStatus, TargetResult};

/// Below this QD-deep / QD1 ratio a disk is said not to gain from a queue.
pub const GAIN: f64 = 1.3;

/// One block size and mode measured at QD1 and at a deeper queue.
#[derive(Clone, Debug, PartialEq)]
pub struct QueuePair {
    pub block: u64,
    pub mode: TestMode,
    pub depth: u32,
    /// Requests/s at `depth` ÷ requests/s at queue depth 1.
    pub ratio: f64,
}

/// A target's queueing gains, in plan order; empty when the profile has no such pairs.
pub fn pairs(t: &TargetResult) -> Vec<QueuePair> {
    // (block, mode, depth, requests/s) of every completed async run
    let runs: Vec<(u64, TestMode, u32, f64)> = t
        .phases
        .iter()
        .filter(|p| p.status == PhaseStatus::Ok)
        .filter_map(|p| match (p.phase, &p.result) {
            (
                Some(Phase::FileioRun {
                    mode,
                    queue: Some(q),
                    ..
                }),
                Some(r),
            ) => Some((q.block, mode, q.depth, figures(r).primary)),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for &(block, mode, depth, rate) in &runs {
        if depth <= 1 {
            continue;
        }
        let qd1 = runs
            .iter()
            .find(|r| r.0 == block && r.1 == mode && r.2 == 1 && r.3 > 0.0);
        if let Some(&(_, _, _, base)) = qd1 {
            out.push(QueuePair {
                block,
                mode,
                depth,
                ratio: rate / base,
            });
        }
    }
    out
}

/// The verdict line's words for a target with `pairs` (not empty), using the USB driver when
/// the target is a USB disk.
pub fn verdict(t: &TargetResult, pairs: &[QueuePair]) -> String {
    let mut ratios: Vec<f64> = pairs.iter().map(|p| p.ratio).collect();
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    let driver = t
        .disk
        .as_ref()
        .and_then(|d| d.usb.as_ref())
        .and_then(|u| u.driver.as_deref());
    match (median >= GAIN, driver) {
        (true, Some("uas")) => "gains from a queue (UAS queues commands)".into(),
        (true, _) => "gains from a queue".into(),
        (false, Some("usb-storage")) => {
            "no gain from a queue: usb-storage (Bulk-Only) carries one command at a time; a UAS bridge would queue".into()
        }
        (false, Some("uas")) => {
            "no gain from a queue although the bridge runs UAS: the disk itself does not queue".into()
        }
        (false, _) => "no gain from a queue".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Counters;
    use crate::model::suite::tests_support::two_disk_suite;
    use crate::model::Queue;

    /// `t` with async rndrd runs at QD1 and QD32 of `qd1` and `qd32` requests/s.
    fn with_queue_runs(t: &mut TargetResult, qd1: f64, qd32: f64) {
        let template = t.phases[0].clone();
        for (depth, rate) in [(1, qd1), (32, qd32)] {
            let mut p = template.clone();
            p.phase = Some(Phase::FileioRun {
                set: 2,
                mode: TestMode::Rndrd,
                threads: 1,
                queue: Some(Queue { block: 4096, depth }),
            });
            p.name = p.phase.unwrap().name();
            if let Some(Counters::Fileio(c)) = p.result.as_mut().map(|r| &mut r.counters) {
                c.reads_per_s = rate;
                c.writes_per_s = 0.0;
            }
            t.phases.push(p);
        }
    }

    #[test]
    fn a_queueing_disk_gains_and_a_bulk_only_one_does_not() {
        let mut s = two_disk_suite();
        with_queue_runs(&mut s.targets[0], 2000.0, 9000.0);
        with_queue_runs(&mut s.targets[1], 150.0, 160.0);
        let p = pairs(&s.targets[0]);
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p[0].block, p[0].mode, p[0].depth),
            (4096, TestMode::Rndrd, 32)
        );
        assert!((p[0].ratio - 4.5).abs() < 1e-9);
        assert_eq!(verdict(&s.targets[0], &p), "gains from a queue");
        let p = pairs(&s.targets[1]);
        assert!(verdict(&s.targets[1], &p).starts_with("no gain"), "{p:?}");
        // a failed QD1 run gives no pair (no ratio against nothing)
        s.targets[1].phases.iter_mut().for_each(|p| {
            if p.name.contains("qd1-") {
                p.status = PhaseStatus::Failed
            }
        });
        assert!(pairs(&s.targets[1]).is_empty());
    }

    #[test]
    fn summary_txt_names_each_disks_gain() {
        let mut s = two_disk_suite();
        with_queue_runs(&mut s.targets[0], 2000.0, 9000.0);
        with_queue_runs(&mut s.targets[1], 150.0, 160.0);
        let text = crate::report::summary::render_summary(&s);
        let at = text.find("Queueing gain").expect("a queueing section");
        let section: Vec<&str> = text[at..].lines().take(5).collect();
        assert!(section[1].contains("4KiB rndrd QD32 4.50×"), "{section:?}");
        assert!(section[2].contains("→ gains from a queue"), "{section:?}");
        assert!(section[3].contains("1.07×"), "{section:?}");
        assert!(section[4].contains("→ no gain"), "{section:?}");
    }
}
