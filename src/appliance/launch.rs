//! How the daemon starts a run and hears about it: the [`RunLauncher`] (the real one runs the
//! suite through `run::execute`; the tests give a fake), which targets the appliance's runs take,
//! and the observer that turns suite progress into state-machine events.

use super::state::{Event, RunOutcome};
use crate::config::appliance::ApplianceSettings;
use crate::disk::{Disk, DiskPolicy, Naming};
use crate::engine::Controller;
use crate::model::{Family, Phase};
use crate::model::{PhaseStatus, RunStatus};
use crate::run::plan::Step;
use crate::run::{RunRequest, SuiteObserver, TargetSource};
use crate::sys::{CommandRunner, SysRoot, System};

/// Runs one suite. Blocks until it ends or `stop` is asked; reports progress to `observer`.
pub trait RunLauncher: Send + Sync {
    fn launch(
        &self,
        req: &RunRequest,
        observer: &dyn SuiteObserver,
        stop: &Controller,
    ) -> anyhow::Result<RunOutcome>;
}

/// Where the appliance's runs take their targets: `[appliance] targets` (directories), else
/// `[appliance] disks` (named by stable names only: kernel names change between boots), else
/// every eligible disk.
pub fn target_source(settings: &ApplianceSettings) -> TargetSource {
    if !settings.appliance.targets.is_empty() {
        TargetSource::Directories(settings.appliance.targets.clone())
    } else if !settings.appliance.disks.is_empty() {
        TargetSource::Disks {
            names: settings.appliance.disks.clone(),
            naming: Naming::Stable,
        }
    } else {
        TargetSource::Eligible
    }
}

/// Counts the disks a run would use among `scanned` (every block device), or the existing
/// configured directories.
pub(super) fn count_targets(
    settings: &ApplianceSettings,
    root: &SysRoot,
    policy: &DiskPolicy,
    scanned: &[Disk],
    stick: Option<&str>,
) -> usize {
    match target_source(settings) {
        TargetSource::Directories(dirs) => dirs.iter().filter(|d| d.is_dir()).count(),
        source => crate::run::targets::plan_disks(scanned, root, &source, policy, stick)
            .planned
            .len(),
    }
}

/// The real launcher: `run::execute` on the machine it was made for.
pub struct SuiteLauncher {
    pub sys: System,
}

/// The machine `settings` describe: `[appliance] sysroot`, commands logged. The daemon and
/// its launcher each hold one.
pub fn machine(settings: &ApplianceSettings) -> System {
    System::new(
        SysRoot::new(&settings.appliance.sysroot),
        CommandRunner::new(),
    )
}

impl SuiteLauncher {
    /// The launcher for the machine `settings` describe.
    pub fn for_settings(settings: &ApplianceSettings) -> Self {
        SuiteLauncher {
            sys: machine(settings),
        }
    }
}

impl RunLauncher for SuiteLauncher {
    fn launch(
        &self,
        req: &RunRequest,
        observer: &dyn SuiteObserver,
        stop: &Controller,
    ) -> anyhow::Result<RunOutcome> {
        let result = crate::run::execute(req, &self.sys, observer, stop)?;
        Ok(match result.status {
            RunStatus::Aborted => RunOutcome::Aborted,
            RunStatus::NoTargets => RunOutcome::NothingToDo,
            _ => RunOutcome::Completed {
                failed_phases: result.failures().count(),
                red_figures: crate::report::validity::red_count(&result),
            },
        })
    }
}

/// Suite progress into the daemon's loop (as events) and its log.
pub(super) struct Observer(pub Box<dyn Fn(Event) + Send + Sync>);

/// The LED pattern's phase for a suite phase; `None` for bookkeeping a person need not see.
fn led_phase(phase: &Phase) -> Option<crate::status::Phase> {
    use crate::status::Phase as Led;
    match phase.family() {
        Family::System => None,
        Family::Fileio => Some(Led::Fileio),
        Family::Oltp => Some(Led::Oltp),
        Family::Tpcc => Some(Led::Tpcc),
    }
}

impl SuiteObserver for Observer {
    fn phase_started(&self, target: &str, step: &Step, index: usize, total: usize, _eta: u64) {
        crate::sys::log::say!("[{index}/{total}] {target}: {}", step.name());
        if let Some(led) = led_phase(&step.phase) {
            (self.0)(Event::PhaseStarted { phase: led });
        }
    }
    fn phase_finished(&self, target: &str, phase: &Phase, status: PhaseStatus) {
        if status == PhaseStatus::Failed {
            crate::sys::log::say!("{target}: {} failed", phase.name());
        }
        let ok = matches!(status, PhaseStatus::Ok | PhaseStatus::Skipped);
        (self.0)(Event::PhaseFinished { ok });
    }
    fn message(&self, line: &str) {
        crate::sys::log::say!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink;
    use std::path::{Path, PathBuf};

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name)
    }

    #[test]
    fn one_scan_counts_disks_and_finds_the_stick() {
        let mut settings = ApplianceSettings::default();
        settings.appliance.sysroot = fixture("pi4-stick");
        let root = SysRoot::new(&settings.appliance.sysroot);
        let scanned = crate::disk::scan_all(&root).unwrap();
        let policy = settings.config.disks.clone();
        // sda is blank and eligible; sdb is the stick, sdc too small, mmcblk0 the boot card
        assert_eq!(count_targets(&settings, &root, &policy, &scanned, None), 1);
        // the disk holding the current stick never counts, even if the policy would take it
        assert_eq!(
            count_targets(&settings, &root, &policy, &scanned, Some("sda")),
            0
        );
        let sticks = sink::stick::sticks_among(&scanned, &root, &settings.stick, &mut |_| false);
        assert_eq!(sticks.len(), 1);
        assert_eq!(sticks[0].device, PathBuf::from("/dev/sdb1"));
        // configured directories replace disks
        let d = tempfile::tempdir().unwrap();
        settings.appliance.targets = vec![d.path().to_path_buf(), d.path().join("missing")];
        assert_eq!(count_targets(&settings, &root, &policy, &scanned, None), 1);
    }
}
