//! The suite's progress count and time left, one step at a time: every target's phases, then
//! the all-at-once runs (`[together]`, two targets or more), which are steps of the count as
//! well, so the progress line, the appliance's log and its LEDs follow them too (the LED pattern
//! of a fileio phase while they run).

use super::options::{SuiteObserver, SuiteOptions};
use super::plan::{estimate_s, Step};
use crate::model::{Phase, PhaseStatus};

/// The target name the observer hears for an all-at-once run.
pub const ALL_DISKS: &str = "all disks";

/// Counts steps for the progress line.
pub struct Progress {
    done: usize,
    total: usize,
    /// Seconds each of a target's phases is expected to take, in plan order.
    est: Vec<u64>,
    /// The all-at-once steps' seconds, in the order `together::planned` gives them and they
    /// run, and how many of them have ended.
    together: Vec<u64>,
    together_done: usize,
    est_left: u64,
}

impl Progress {
    /// `together`: the seconds of each all-at-once step (`together::planned`), none with
    /// fewer than two targets.
    pub fn new(plan: &[Step], opts: &SuiteOptions, together: Vec<u64>) -> Self {
        let est: Vec<u64> = plan
            .iter()
            .map(|s| estimate_s(&s.phase, &opts.profile))
            .collect();
        let targets = opts.targets.len();
        Progress {
            done: 0,
            total: plan.len() * targets + together.len(),
            est_left: est.iter().sum::<u64>() * targets as u64 + together.iter().sum::<u64>(),
            est,
            together,
            together_done: 0,
        }
    }

    /// Tells `observer` that `step` starts on `target`, with its place in the count.
    pub fn started(&self, observer: &dyn SuiteObserver, target: &str, step: &Step) {
        observer.phase_started(target, step, self.done + 1, self.total, self.est_left);
    }

    /// A target's phase `pi` (its index in the plan) has ended.
    pub fn phase_done(&mut self, pi: usize) {
        self.done += 1;
        self.est_left = self.est_left.saturating_sub(self.est[pi]);
    }

    /// A target whose phases cannot run: all of them are counted as done.
    pub fn target_left(&mut self) {
        self.done += self.est.len();
        self.est_left = self.est_left.saturating_sub(self.est.iter().sum::<u64>());
    }

    /// The next all-at-once step starts: told to `observer` as a step of every disk.
    pub fn together_started(&self, observer: &dyn SuiteObserver, phase: Phase) {
        let step = Step {
            phase,
            server: None,
        };
        self.started(observer, ALL_DISKS, &step);
    }

    /// The all-at-once step `phase` has ended with `status` (the worst of its disks').
    pub fn together_done(
        &mut self,
        observer: &dyn SuiteObserver,
        phase: &Phase,
        status: PhaseStatus,
    ) {
        observer.phase_finished(ALL_DISKS, phase, status);
        self.done += 1;
        let s = self.together.get(self.together_done).copied().unwrap_or(0);
        self.together_done += 1;
        self.est_left = self.est_left.saturating_sub(s);
    }
}

/// One status for a step of several disks: failed if one failed, then cut short (interrupted
/// or aborted), then ok if one ran to its end; skipped when none ran.
pub fn worst(statuses: impl IntoIterator<Item = PhaseStatus>) -> PhaseStatus {
    let rank = |s: PhaseStatus| match s {
        PhaseStatus::Failed => 4,
        PhaseStatus::Interrupted | PhaseStatus::Aborted => 3,
        PhaseStatus::Running => 2,
        PhaseStatus::Ok => 1,
        PhaseStatus::Skipped => 0,
    };
    statuses
        .into_iter()
        .max_by_key(|&s| rank(s))
        .unwrap_or(PhaseStatus::Skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use PhaseStatus::*;

    #[test]
    fn a_step_of_several_disks_has_the_worst_status_of_theirs() {
        assert_eq!(worst([Ok, Failed, Skipped]), Failed);
        assert_eq!(worst([Ok, Interrupted]), Interrupted);
        assert_eq!(worst([Skipped, Ok]), Ok);
        assert_eq!(worst([Skipped, Skipped]), Skipped);
        assert_eq!(worst([]), Skipped);
    }
}
