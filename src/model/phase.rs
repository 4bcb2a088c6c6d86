//! The steps of a suite run on one target ([`Phase`]), as recorded with each phase's result.
//! The run layer plans them from a profile; renderers group results by them.

use crate::fileio::TestMode;
use crate::oltp::Workload;
use serde::{Deserialize, Serialize};

/// Before or after a target's phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum When {
    Before,
    After,
}

/// Which of MySQL's two regimes an OLTP run is in (seed 004): the data set fits in the InnoDB
/// buffer pool (CPU-bound: the disk barely shows) or is much larger (I/O-bound: rows come from
/// the disk).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Regime {
    CpuBound,
    IoBound,
}

impl Regime {
    /// Both, in the order a profile runs them.
    pub const ALL: [Regime; 2] = [Regime::CpuBound, Regime::IoBound];

    /// The key in profiles and phase names: `cpu_bound`, `io_bound`.
    pub fn key(self) -> &'static str {
        match self {
            Regime::CpuBound => "cpu_bound",
            Regime::IoBound => "io_bound",
        }
    }

    /// Words for reports: `CPU-bound`, `I/O-bound`.
    pub fn words(self) -> &'static str {
        match self {
            Regime::CpuBound => "CPU-bound",
            Regime::IoBound => "I/O-bound",
        }
    }
}

/// One step of the suite on one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Phase {
    /// Record kernel, CPU, RAM, temperature, throttling before/after the target's phases.
    SystemState {
        when: When,
    },
    FileioPrepare {
        set: usize,
    },
    FileioRun {
        set: usize,
        mode: TestMode,
        threads: u32,
        /// Async sets: the block size and queue depth, which tell such sets apart by name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        queue: Option<Queue>,
    },
    FileioCleanup {
        set: usize,
    },
    /// The sustained sequential write that finds the SLC-cache cliff (`[cliff]`).
    FileioCliff,
    /// Initialise a datadir on the target and start a private server.
    MysqldStart,
    /// Stop the server and start it again with the buffer pool of `regime` (the profile's
    /// `[oltp.regimes]`), or with the profile's own `[mysqld]` settings when `None`.
    MysqldRestart {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        regime: Option<Regime>,
    },
    /// Read every OLTP table into the buffer pool, so a CPU-bound run starts warm.
    OltpPrewarm,
    OltpPrepare {
        workload: Workload,
    },
    OltpRun {
        workload: Workload,
        threads: u32,
        /// The regime of a profile that runs both (`[oltp.regimes]`); `None` otherwise.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        regime: Option<Regime>,
    },
    OltpCleanup {
        workload: Workload,
    },
    /// TPC-C on the same server: load the warehouses (tpcc_load).
    TpccPrepare,
    /// tpcc_start: `connections` clients on `warehouses` warehouses.
    TpccRun {
        warehouses: u32,
        connections: u32,
    },
    /// TPC-C's consistency conditions (3.3.2.1–12) on the data the run left.
    TpccCheck,
    TpccCleanup,
    MysqldStop,
}

/// The shape of an async fileio run: request size and requests in flight per thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queue {
    pub block: u64,
    pub depth: u32,
}

/// What a phase belongs to, for progress LEDs and report grouping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Bookkeeping: system state snapshots.
    System,
    Fileio,
    /// The database server and the OLTP workloads on it.
    Oltp,
    Tpcc,
}

impl Phase {
    /// Short name, also the per-test file name stem (`fileio-rndrw-t8`, `oltp-read_write-t4`;
    /// async sets add block size and queue depth: `fileio3-rndrd-4KiB-qd32-t1`).
    pub fn name(&self) -> String {
        match self {
            Phase::SystemState { when: When::Before } => "system-state-before".into(),
            Phase::SystemState { when: When::After } => "system-state-after".into(),
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
            Phase::FileioCliff => "fileio-cliff".into(),
            Phase::MysqldStart => "mysqld-start".into(),
            Phase::MysqldRestart { regime } => format!("mysqld-restart{}", regime_suffix(*regime)),
            Phase::OltpPrewarm => "oltp-prewarm".into(),
            Phase::OltpPrepare { workload } => format!("oltp-{}-prepare", workload.name()),
            Phase::OltpRun {
                workload,
                threads,
                regime,
            } => format!(
                "oltp-{}-t{threads}{}",
                workload.name(),
                regime_suffix(*regime)
            ),
            Phase::OltpCleanup { workload } => format!("oltp-{}-cleanup", workload.name()),
            Phase::TpccPrepare => "tpcc-prepare".into(),
            Phase::TpccRun {
                warehouses,
                connections,
            } => format!("tpcc-w{warehouses}-c{connections}"),
            Phase::TpccCheck => "tpcc-check".into(),
            Phase::TpccCleanup => "tpcc-cleanup".into(),
            Phase::MysqldStop => "mysqld-stop".into(),
        }
    }

    /// Phases that clean up: they still run after a failure or an abort.
    pub fn is_cleanup(&self) -> bool {
        matches!(
            self,
            Phase::FileioCleanup { .. }
                | Phase::OltpCleanup { .. }
                | Phase::TpccCleanup
                | Phase::MysqldStop
                | Phase::SystemState { when: When::After }
        )
    }

    /// Whether this phase produces a benchmark result.
    pub fn is_measurement(&self) -> bool {
        matches!(
            self,
            Phase::FileioRun { .. } | Phase::OltpRun { .. } | Phase::TpccRun { .. }
        )
    }

    pub fn family(&self) -> Family {
        match self {
            Phase::SystemState { .. } => Family::System,
            Phase::FileioPrepare { .. }
            | Phase::FileioRun { .. }
            | Phase::FileioCleanup { .. }
            | Phase::FileioCliff => Family::Fileio,
            Phase::MysqldStart
            | Phase::MysqldRestart { .. }
            | Phase::OltpPrewarm
            | Phase::OltpPrepare { .. }
            | Phase::OltpRun { .. }
            | Phase::OltpCleanup { .. }
            | Phase::MysqldStop => Family::Oltp,
            Phase::TpccPrepare | Phase::TpccRun { .. } | Phase::TpccCheck | Phase::TpccCleanup => {
                Family::Tpcc
            }
        }
    }
}

fn regime_suffix(regime: Option<Regime>) -> String {
    regime.map_or(String::new(), |r| format!("-{}", r.key()))
}

fn set_suffix(set: usize) -> String {
    if set == 0 {
        String::new()
    } else {
        format!("{}", set + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_families() {
        let p = Phase::FileioRun {
            set: 1,
            mode: TestMode::Rndrw,
            threads: 50,
            queue: None,
        };
        assert_eq!(p.name(), "fileio2-rndrw-t50");
        let q = Phase::FileioRun {
            set: 2,
            mode: TestMode::Rndwr,
            threads: 1,
            queue: Some(Queue {
                block: 4096,
                depth: 32,
            }),
        };
        assert_eq!(q.name(), "fileio3-rndwr-4KiB-qd32-t1");
        assert_eq!(p.family(), Family::Fileio);
        assert!(p.is_measurement() && !p.is_cleanup());
        assert_eq!(Phase::MysqldStop.family(), Family::Oltp);
        assert!(Phase::SystemState { when: When::After }.is_cleanup());
        let j = serde_json::to_string(&Phase::OltpRun {
            workload: Workload::ReadWrite,
            threads: 4,
            regime: None,
        })
        .unwrap();
        assert_eq!(
            j,
            r#"{"kind":"oltp_run","workload":"read_write","threads":4}"#
        );
        // A regime names the run and is read back; documents without one still read.
        let cpu = Phase::OltpRun {
            workload: Workload::ReadOnly,
            threads: 8,
            regime: Some(Regime::CpuBound),
        };
        assert_eq!(cpu.name(), "oltp-read_only-t8-cpu_bound");
        let j = serde_json::to_string(&cpu).unwrap();
        assert!(j.contains(r#""regime":"cpu_bound""#), "{j}");
        assert_eq!(serde_json::from_str::<Phase>(&j).unwrap(), cpu);
        let restart = Phase::MysqldRestart {
            regime: Some(Regime::IoBound),
        };
        assert_eq!(restart.name(), "mysqld-restart-io_bound");
        assert_eq!(
            Phase::MysqldRestart { regime: None }.name(),
            "mysqld-restart"
        );
        assert_eq!(restart.family(), Family::Oltp);
        assert!(!restart.is_measurement() && !restart.is_cleanup());
    }
}
