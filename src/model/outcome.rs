//! What a run's statuses say, in the words every rendering shares: the status line with the
//! failed and skipped phases, the phases that did not run and why, and where a run that did not
//! finish stopped.

use super::status::{PhaseStatus, RunStatus};
use super::suite::SuiteResult;
use super::target::{PhaseResult, TargetResult};

impl SuiteResult {
    /// What went wrong in a run's phases, for its status line: `1 phase failed, 9 skipped`, or
    /// `None` when every phase that ran finished.
    pub fn phase_trouble(&self) -> Option<String> {
        let count = |st: PhaseStatus| {
            let phases = self.targets.iter().flat_map(|t| &t.phases);
            phases.filter(|p| p.status == st).count() as u64
        };
        let (failed, skipped) = (count(PhaseStatus::Failed), count(PhaseStatus::Skipped));
        match (failed, skipped) {
            (0, 0) => None,
            (f, 0) => Some(format!("{} failed", crate::units::count(f, "phase"))),
            (0, k) => Some(format!("{} skipped", crate::units::count(k, "phase"))),
            (f, k) => Some(format!(
                "{} failed, {k} skipped",
                crate::units::count(f, "phase")
            )),
        }
    }

    /// The phases that did not run, one line per target and reason: `sda oltp-prewarm,
    /// oltp-read_only-t8-cpu_bound: <why>`.
    pub fn skipped_phases(&self) -> Vec<String> {
        let mut groups: Vec<(&str, &str, Vec<&str>)> = Vec::new();
        for t in &self.targets {
            for p in t.phases.iter().filter(|p| p.status == PhaseStatus::Skipped) {
                let why = p.error.as_deref().unwrap_or("(no reason recorded)");
                match groups
                    .iter_mut()
                    .find(|(n, r, _)| *n == t.name && *r == why)
                {
                    Some((_, _, phases)) => phases.push(&p.name),
                    None => groups.push((&t.name, why, vec![&p.name])),
                }
            }
        }
        groups
            .into_iter()
            .map(|(target, why, phases)| format!("{target} {}: {why}", phases.join(", ")))
            .collect()
    }

    /// The run's status and what went wrong in it: `complete`, `complete (1 phase failed, 9
    /// skipped)`.
    pub fn status_line(&self) -> String {
        match self.phase_trouble() {
            Some(t) => format!("{} ({t})", self.status),
            None => self.status.to_string(),
        }
    }

    /// For a run that did not finish (interrupted by a power cut or crash, or stopped on request):
    /// where it stopped, that the numbers are the phases finished before, and the targets it never
    /// reached — so a bundle read later on a laptop says why numbers are missing. `None` otherwise.
    pub fn cut_short(&self) -> Option<Vec<String>> {
        let (why, mark) = match self.status {
            RunStatus::Interrupted => (
                "INTERRUPTED: the machine lost power or spindle stopped",
                PhaseStatus::Interrupted,
            ),
            RunStatus::Aborted => (
                "STOPPED on request (the button, Ctrl-C or SIGTERM)",
                PhaseStatus::Aborted,
            ),
            _ => return None,
        };
        let phases = || {
            let t = self.targets.iter();
            t.flat_map(|t| t.phases.iter().map(move |p| (t, p)))
        };
        let label = |(t, p): (&TargetResult, &PhaseResult)| format!("{} {}", t.name, p.name);
        // A stopped run's phase that was running is `interrupted`, the ones after it `aborted`.
        let marked =
            phases().filter(|(_, p)| p.status == mark || p.status == PhaseStatus::Interrupted);
        let marked: Vec<_> = marked.collect();
        let measurement =
            |(_, p): &&(&TargetResult, &PhaseResult)| p.phase.is_some_and(|ph| ph.is_measurement());
        let place = match marked.as_slice() {
            [first, rest @ ..] if rest.iter().any(|m| measurement(&m)) => format!(
                "during {} ({} later measurement(s) not made)",
                label(*first),
                rest.iter().filter(|m| measurement(m)).count()
            ),
            [first, ..] => format!("during {}", label(*first)),
            [] => match phases().last() {
                Some(last) => format!("between phases, after {}", label(last)),
                None => "before the first phase".to_string(),
            },
        };
        let mut lines = vec![
            format!("{why} {place}."),
            "The numbers below are the phases that finished before.".to_string(),
        ];
        let unreached = self.targets.iter().filter(|t| t.phases.is_empty());
        let unreached: Vec<&str> = unreached.map(|t| t.name.as_str()).collect();
        if !unreached.is_empty() {
            lines.push(format!("Targets not reached: {}.", unreached.join(", ")));
        }
        Some(lines)
    }
}
