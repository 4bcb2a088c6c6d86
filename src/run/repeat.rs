//! A measurement run as many times as the profile's `[repeat]` says: `count` runs, one per round
//! (the plan repeats each stretch of measurements, `run::plan`), extended after the last round
//! while the 95 % interval of the figure is wider than `until_ci_pct` (up to `max`). The phase
//! keeps the full result of its median run and every run's figure and p99 (`model::repeat`);
//! a failed run ends the repeats and is the one kept, so a failure is never hidden behind a
//! good run. Rounds a stop request left unrun are dropped.

use crate::config::repeat::RepeatPlan;
use crate::engine::Controller;
use crate::model::repeat::{RepeatRun, Repeats};
use crate::model::{PhaseResult, PhaseStatus};

/// The figure and p99 of one run.
fn run_of(p: &PhaseResult) -> RepeatRun {
    let (value, unit, p99_ms) = match &p.result {
        Some(r) => {
            let m = crate::report::metric::primary(r);
            (
                m.value,
                m.unit.to_string(),
                crate::report::metric::p99_ms(r),
            )
        }
        None => (0.0, String::new(), None),
    };
    RepeatRun {
        value,
        unit,
        p99_ms,
        ok: p.status == PhaseStatus::Ok && p.result.is_some(),
        seconds: p.seconds,
    }
}

/// Takes the earlier rounds' results of phase `name` out of a target's phases (all but the
/// last, which is the round now running), in run order.
pub fn take_rounds(phases: &mut Vec<PhaseResult>, name: &str) -> Vec<PhaseResult> {
    let Some(running) = phases.pop() else {
        return vec![];
    };
    let (mine, rest): (Vec<PhaseResult>, Vec<PhaseResult>) =
        phases.drain(..).partition(|p| p.name == name);
    *phases = rest;
    phases.push(running);
    mine
}

/// Runs `again` after `runs` (the rounds so far, at least one) until `plan` is met, a run fails
/// or a stop is requested; returns the kept run's phase result with every run recorded.
pub fn repeat(
    plan: &RepeatPlan,
    runs: Vec<PhaseResult>,
    controller: &Controller,
    mut again: impl FnMut() -> PhaseResult,
) -> PhaseResult {
    // Rounds never run (stopped before them) are not runs; a failed or interrupted one is.
    let ran = |p: &PhaseResult| {
        !matches!(p.status, PhaseStatus::Aborted | PhaseStatus::Skipped) || p.result.is_some()
    };
    let mut all: Vec<PhaseResult> = if runs.iter().any(ran) {
        runs.into_iter().filter(ran).collect()
    } else {
        runs
    };
    if all.is_empty() {
        all.push(again());
    }
    loop {
        let failed = all
            .iter()
            .any(|p| p.status != PhaseStatus::Ok || p.result.is_none());
        if failed || controller.stop_requested() {
            break;
        }
        let values: Vec<f64> = all.iter().map(|p| run_of(p).value).collect();
        let half = crate::stats::repeat::summarise(&values).and_then(|s| s.half_width_pct());
        if !plan.wants_more(all.len() as u32, half) {
            break;
        }
        all.push(again());
    }
    let runs: Vec<RepeatRun> = all.iter().map(run_of).collect();
    let kept = if runs.iter().all(|r| r.ok) {
        median_index(&runs)
    } else {
        runs.iter().position(|r| !r.ok).unwrap_or(0)
    };
    let seconds: f64 = runs.iter().map(|r| r.seconds).sum();
    let mut out = all.swap_remove(kept);
    out.seconds = seconds;
    if runs.len() == 1 {
        return out;
    }
    out.repeats = Some(Repeats {
        runs,
        kept,
        until_ci_pct: plan.until_ci_pct,
    });
    out
}

/// The run with the median figure (the lower middle one of an even count).
fn median_index(runs: &[RepeatRun]) -> usize {
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|a, b| runs[*a].value.total_cmp(&runs[*b].value));
    order[(runs.len() - 1) / 2]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bench::tests_support::sample_fileio_result;

    fn ok_run(reads: f64) -> PhaseResult {
        let mut r = sample_fileio_result();
        if let crate::engine::Counters::Fileio(c) = &mut r.counters {
            // Whichever of requests/s and MiB/s the sample's mode ranks by.
            (c.reads_per_s, c.read_mib_per_s) = (reads, reads);
            (c.writes_per_s, c.written_mib_per_s) = (0.0, 0.0);
        }
        let mut p = PhaseResult::new("fileio-rndrd-t1", None, PhaseStatus::Ok);
        p.result = Some(r);
        p.seconds = 2.0;
        p
    }

    fn plan(count: u32, until: Option<f64>, max: u32) -> RepeatPlan {
        RepeatPlan {
            count,
            until_ci_pct: until,
            max,
        }
    }

    #[test]
    fn count_runs_keep_the_median_and_record_every_figure() {
        let c = Controller::new();
        let mut next = vec![300.0, 200.0].into_iter();
        let p = repeat(&plan(3, None, 3), vec![ok_run(100.0)], &c, || {
            ok_run(next.next().unwrap())
        });
        let r = p.repeats.as_ref().unwrap();
        assert_eq!(r.values(), vec![100.0, 300.0, 200.0]);
        assert_eq!(r.kept, 2, "the median figure's run");
        assert_eq!(
            crate::report::metric::primary(p.result.as_ref().unwrap()).value,
            200.0
        );
        assert_eq!(p.seconds, 6.0);
    }

    #[test]
    fn a_failed_run_stops_the_repeats_and_is_kept() {
        let c = Controller::new();
        let p = repeat(&plan(5, None, 5), vec![ok_run(100.0)], &c, || {
            let mut f = ok_run(0.0);
            f.status = PhaseStatus::Failed;
            f.error = Some("disk gone".into());
            f
        });
        assert_eq!(p.status, PhaseStatus::Failed);
        assert_eq!(p.repeats.unwrap().runs.len(), 2);
    }

    #[test]
    fn until_extends_while_the_interval_is_wide() {
        let c = Controller::new();
        // Alternating 100/140 never gets the interval within 1 %: runs go to max.
        let mut i = 0;
        let p = repeat(&plan(2, Some(1.0), 6), vec![ok_run(100.0)], &c, || {
            i += 1;
            ok_run(if i % 2 == 1 { 140.0 } else { 100.0 })
        });
        assert_eq!(p.repeats.unwrap().runs.len(), 6);
        // Equal figures: the interval is 0 wide at count.
        let p = repeat(&plan(2, Some(1.0), 6), vec![ok_run(100.0)], &c, || {
            ok_run(100.0)
        });
        assert_eq!(p.repeats.unwrap().runs.len(), 2);
    }
}
