//! The run plan: which phases run on which target, in order. Pure: built from a profile and
//! the target list, so it is unit-tested and shown to the user before anything runs.

use crate::config::profile::{FileioSet, Profile};
use crate::fileio::{IoMode, TestMode};
use crate::oltp::Workload;
use serde::Serialize;

/// One step of the suite on one target.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Phase {
    /// Record kernel, CPU, RAM, temperature, throttling and the disk's link before/after.
    SystemState {
        when: &'static str,
    },
    FileioPrepare {
        set: usize,
    },
    FileioRun {
        set: usize,
        mode: TestMode,
        threads: u32,
        /// Async sets: the block size and queue depth, which tell such sets apart by name.
        #[serde(skip_serializing_if = "Option::is_none")]
        queue: Option<Queue>,
    },
    FileioCleanup {
        set: usize,
    },
    /// Initialise a datadir on the target and start a private server.
    MysqldStart,
    OltpPrepare {
        workload: Workload,
    },
    OltpRun {
        workload: Workload,
        threads: u32,
    },
    OltpCleanup {
        workload: Workload,
    },
    MysqldStop,
}

/// The shape of an async fileio run: request size and requests in flight per thread.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Queue {
    pub block: u64,
    pub depth: u32,
}

impl Queue {
    /// For an async set (`None` for sync and mmap sets, whose names stay as they were).
    fn of(f: &FileioSet) -> Option<Queue> {
        (f.io_mode == IoMode::Async).then(|| Queue {
            block: crate::units::parse_size(&f.block_size).unwrap_or(0),
            depth: f.async_backlog,
        })
    }
}

impl Phase {
    /// Short name, also the per-test file name stem (`fileio-rndrw-t8`, `oltp-read_write-t4`;
    /// async sets add block size and queue depth: `fileio3-rndrd-4KiB-qd32-t1`).
    pub fn name(&self) -> String {
        match self {
            Phase::SystemState { when } => format!("system-state-{when}"),
            Phase::FileioPrepare { set } => format!("fileio{}-prepare", set_suffix(*set)),
            Phase::FileioRun {
                set,
                mode,
                threads,
                queue,
            } => {
                let q = queue.map_or(String::new(), |q| {
                    format!(
                        "-{}-qd{}",
                        crate::units::format_size_exact(q.block),
                        q.depth
                    )
                });
                format!("fileio{}-{}{q}-t{threads}", set_suffix(*set), mode.name())
            }
            Phase::FileioCleanup { set } => format!("fileio{}-cleanup", set_suffix(*set)),
            Phase::MysqldStart => "mysqld-start".into(),
            Phase::OltpPrepare { workload } => format!("oltp-{}-prepare", workload.name()),
            Phase::OltpRun { workload, threads } => format!("oltp-{}-t{threads}", workload.name()),
            Phase::OltpCleanup { workload } => format!("oltp-{}-cleanup", workload.name()),
            Phase::MysqldStop => "mysqld-stop".into(),
        }
    }

    /// Phases that clean up: they still run after a failure or an abort.
    pub fn is_cleanup(&self) -> bool {
        matches!(
            self,
            Phase::FileioCleanup { .. }
                | Phase::OltpCleanup { .. }
                | Phase::MysqldStop
                | Phase::SystemState { when: "after" }
        )
    }

    /// Whether this phase produces a benchmark result.
    pub fn is_measurement(&self) -> bool {
        matches!(self, Phase::FileioRun { .. } | Phase::OltpRun { .. })
    }

    /// Expected duration in seconds (for the progress line), from the profile's run times.
    pub fn estimate_s(&self, p: &Profile) -> u64 {
        match self {
            Phase::FileioRun { set, .. } => p.fileio.get(*set).map(|f| f.time.max(1)).unwrap_or(1),
            Phase::FileioPrepare { .. } | Phase::OltpPrepare { .. } => 10,
            Phase::OltpRun { .. } => p.oltp.as_ref().map(|o| o.time).unwrap_or(1),
            Phase::MysqldStart => 10,
            _ => 1,
        }
    }
}

fn set_suffix(set: usize) -> String {
    if set == 0 {
        String::new()
    } else {
        format!("{}", set + 1)
    }
}

/// The phases for one target, in order.
pub fn phases(profile: &Profile) -> Vec<Phase> {
    let mut v = vec![Phase::SystemState { when: "before" }];
    for (set, f) in profile.fileio.iter().enumerate() {
        v.push(Phase::FileioPrepare { set });
        for &mode in &f.modes {
            for &threads in &f.threads {
                v.push(Phase::FileioRun {
                    set,
                    mode,
                    threads,
                    queue: Queue::of(f),
                });
            }
        }
        v.push(Phase::FileioCleanup { set });
    }
    if let Some(o) = &profile.oltp {
        v.push(Phase::MysqldStart);
        for w in &o.workloads {
            let workload = Workload::parse(w).expect("profile checked workloads");
            v.push(Phase::OltpPrepare { workload });
            for &threads in &o.threads {
                v.push(Phase::OltpRun { workload, threads });
            }
            v.push(Phase::OltpCleanup { workload });
        }
        v.push(Phase::MysqldStop);
    }
    v.push(Phase::SystemState { when: "after" });
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_plan_order() {
        let p = Profile::load("quick").unwrap();
        let names: Vec<String> = phases(&p).iter().map(Phase::name).collect();
        assert_eq!(names.first().unwrap(), "system-state-before");
        assert_eq!(names[1], "fileio-prepare");
        assert_eq!(names[2], "fileio-seqwr-t4");
        let mysqld = names.iter().position(|n| n == "mysqld-start").unwrap();
        assert!(names[..mysqld].contains(&"fileio-cleanup".to_string()));
        assert_eq!(names[mysqld + 1], "oltp-read_write-prepare");
        assert_eq!(names[mysqld + 2], "oltp-read_write-t4");
        assert_eq!(names[mysqld + 3], "oltp-read_write-cleanup");
        assert_eq!(names[names.len() - 2], "mysqld-stop");
        assert_eq!(names.last().unwrap(), "system-state-after");
    }

    #[test]
    fn reference_plan_has_two_fileio_sets_and_legacy_oltp() {
        let p = Profile::load("reference").unwrap();
        let names: Vec<String> = phases(&p).iter().map(Phase::name).collect();
        assert!(names.contains(&"fileio-rndrw-t1".to_string()));
        assert!(names.contains(&"fileio2-rndrw-t50".to_string()));
        assert!(names.contains(&"fileio2-seqrd-t50".to_string()));
        assert!(names.contains(&"oltp-legacy-t10".to_string()));
    }

    #[test]
    fn async_sets_are_named_by_block_size_and_queue_depth() {
        for name in ["standard", "reference"] {
            let p = Profile::load(name).unwrap();
            let names: Vec<String> = phases(&p).iter().map(Phase::name).collect();
            let mut unique = names.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), names.len(), "{name}: names are unique");
            for want in [
                "rndrd-4KiB-qd1-t1",
                "rndwr-4KiB-qd32-t1",
                "rndrd-16KiB-qd32-t1",
            ] {
                assert!(
                    names.iter().any(|n| n.ends_with(want)),
                    "{name}: {want} in {names:?}"
                );
            }
        }
        let p = Profile::load("standard").unwrap();
        let names: Vec<String> = phases(&p).iter().map(Phase::name).collect();
        assert!(
            names.contains(&"fileio-rndrd-t8".to_string()),
            "sync names unchanged"
        );
        assert!(
            names.contains(&"fileio3-rndwr-4KiB-qd32-t1".to_string()),
            "{names:?}"
        );
    }
}
