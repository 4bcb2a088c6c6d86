//! One target of a suite run and what happened in each of its phases ([`TargetResult`],
//! [`PhaseResult`]), with the facts recorded about its disk, filesystem, server and SMART, and
//! the views of them every rendering shares (the disk's identity across runs, its facts, the
//! buffer pool, each phase's start).

use super::bench::BenchResult;
use super::phase::{Phase, Regime};
use super::status::{PhaseStatus, TargetKind};
use crate::disk::Disk;
use crate::sys::state::{StateSample, SystemState};
use serde::{Deserialize, Serialize};

/// The private database server a target's OLTP/TPC-C phases ran on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// `MariaDB`, `MySQL` or `Percona Server`.
    pub flavor: String,
    pub version: String,
    /// The my.cnf settings that matter for the numbers (buffer pool, log size, flush policy …),
    /// as my.cnf's words on purpose: the record of what the server was given, shown as a reader
    /// would write them; [`ServerInfo::buffer_pool_bytes`] reads the one figures use.
    pub settings: std::collections::BTreeMap<String, String>,
    /// The server's own values of the variables that shape I/O (`SHOW GLOBAL VARIABLES` right
    /// after start: the flavor's defaults as well as my.cnf's); empty in documents written
    /// before they were recorded, or when the server could not be asked.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub effective: std::collections::BTreeMap<String, String>,
    /// The most memory the server held over the run (its `VmHWM`, read right before the stop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
}

/// SMART around a target's phases.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SmartRecord {
    pub before: crate::disk::smart::SmartReading,
    pub after: Option<crate::disk::smart::SmartReading>,
    /// What the run wrote and wore, or why that is unknown.
    pub change: Option<crate::disk::smart::SmartChange>,
}

/// The filesystem a target's work directory is on, read with statfs(2) when the run starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FilesystemRecord {
    /// `ext4`, `xfs`, `tmpfs`, … (the mount table's name, else statfs's magic number named),
    /// or the magic number in hex for a type spindle does not know.
    pub fs_type: String,
    /// What it is mounted from (`/dev/sda1`, `tmpfs`), when the mount table says.
    #[serde(default)]
    pub source: Option<String>,
    /// The data lives in memory (tmpfs, ramfs, a zram or RAM block device): every figure
    /// measured there is a memory speed, not a disk's.
    pub in_ram: bool,
}

impl FilesystemRecord {
    /// `tmpfs (in RAM)`, `ext4 on /dev/vda1`.
    pub fn describe(&self) -> String {
        let on = match self.source.as_deref() {
            Some(src) if src.starts_with('/') => format!(" on {src}"),
            _ => String::new(),
        };
        let ram = if self.in_ram {
            " (in RAM, not a disk)"
        } else {
            ""
        };
        format!("{}{on}{ram}", self.fs_type)
    }
}

/// An OLTP or TPC-C run's data set against the server's InnoDB buffer pool: which regime the
/// result is in.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataSetFit {
    /// The benchmark tables, bytes: their files (`.ibd`) just before the run when `measured`,
    /// else estimated from the row counts.
    pub data_bytes: u64,
    pub measured: bool,
    /// `innodb_buffer_pool_size` the server ran with.
    pub buffer_pool_bytes: u64,
}

impl DataSetFit {
    /// CPU-bound when the data set fits in the buffer pool, else I/O-bound.
    pub fn regime(&self) -> Regime {
        if self.data_bytes <= self.buffer_pool_bytes {
            Regime::CpuBound
        } else {
            Regime::IoBound
        }
    }

    /// `data set 1.9 GiB (measured) = 7.6× the 256.0 MiB buffer pool: I/O-bound`.
    pub fn describe(&self) -> String {
        use crate::units::human_size;
        format!(
            "data set {} ({}) = {:.2}× the {} buffer pool: {}",
            human_size(self.data_bytes),
            if self.measured {
                "its table files"
            } else {
                "estimated from the rows"
            },
            self.data_bytes as f64 / self.buffer_pool_bytes.max(1) as f64,
            human_size(self.buffer_pool_bytes),
            self.regime().words()
        )
    }
}

/// One target (a disk or a directory).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetResult {
    /// Short name used in tables and file names (`sda`, `dir1`).
    pub name: String,
    /// Where the work happened (mount point or directory).
    pub path: String,
    pub kind: TargetKind,
    /// One line describing the target (model, size, link speed, driver) for tables.
    pub description: String,
    /// The disk's discovery record, when a disk.
    pub disk: Option<Disk>,
    /// How the disk was prepared (erased / existing filesystem), and the exact commands.
    pub preparation: Vec<String>,
    /// For a disk spindle erased again because it held only what an earlier run left: how it
    /// was recognised as spindle's scratch disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused: Option<String>,
    /// The filesystem the work happened on (absent in bundles before schema 3).
    #[serde(default)]
    pub filesystem: Option<FilesystemRecord>,
    /// The servers its database phases ran on, in order: one, or one per flavor of
    /// `[mysqld] flavors` (schema 3 bundles' `server` is read as the one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerInfo>,
    pub state_before: Option<SystemState>,
    pub state_after: Option<SystemState>,
    /// The disk's SMART before and after its phases (disks only), and what the run cost it.
    #[serde(default)]
    pub smart: Option<SmartRecord>,
    /// UAS aborts, USB resets and disconnects the kernel logged while the target ran.
    #[serde(default)]
    pub usb_trouble: Option<crate::disk::kernel_log::UsbTroubleCount>,
    /// Temperature/throttling samples during the run.
    pub samples: Vec<StateSample>,
    pub phases: Vec<PhaseResult>,
}

/// What happened in one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    /// The phase's name (`fileio-rndrw-t8`), also its text file's stem.
    pub name: String,
    /// The step it ran (absent in schema 1 bundles).
    #[serde(default)]
    pub phase: Option<Phase>,
    pub status: PhaseStatus,
    /// Start, seconds since the target's first phase (the clock of `TargetResult::samples`).
    /// Absent in documents written before it was recorded.
    #[serde(default)]
    pub start_s: Option<f64>,
    pub seconds: f64,
    pub error: Option<String>,
    /// Facts a reader may want about how the phase ran, one sentence each.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Whether the page cache was dropped right before the run: `Some(false)` when it could
    /// not be (needs root); absent when the phase does not drop it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caches_dropped: Option<bool>,
    /// OLTP and TPC-C runs: the data set against the buffer pool (the regime).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_set: Option<DataSetFit>,
    /// The benchmark result (also partial ones when the phase failed mid-run).
    pub result: Option<BenchResult>,
    /// `tpcc-check`: every consistency condition per warehouse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc_check: Option<crate::tpcc::CheckReport>,
    /// `fileio-cliff`: the sustained write's 1 s series and the SLC-cache cliffs found in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cliff: Option<super::cliff::CliffRecord>,
    /// Phases run while the server was up: how its InnoDB (and binlog) counters moved over the
    /// phase (`SHOW GLOBAL STATUS` before and after: pages written, fsyncs, redo bytes, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_io: Option<std::collections::BTreeMap<String, u64>>,
    /// The flavor (`mariadb`, `mysql`, `percona`) of the server a database phase ran on, when
    /// the suite ran several (`[mysqld] flavors`); the phase's name ends with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// fileio phases: what the block device under the files read and wrote over the run
    /// (its `stat` counters before and after), to tell bytes that reached it from a cache's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_io: Option<crate::sys::blockdev::Counters>,
    /// The validity verdict of `result` (schema 5; `report::validity` computes it for older
    /// documents when they are read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validity: Option<super::Validity>,
    /// A measurement run several times (`[repeat]`): every run's figure; `result` is the
    /// median run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<super::repeat::Repeats>,
}

impl PhaseResult {
    /// A phase named `name` with `status`, nothing measured or noted yet.
    pub fn new(name: impl Into<String>, phase: Option<Phase>, status: PhaseStatus) -> Self {
        PhaseResult {
            name: name.into(),
            phase,
            status,
            start_s: None,
            seconds: 0.0,
            error: None,
            notes: vec![],
            caches_dropped: None,
            data_set: None,
            result: None,
            tpcc_check: None,
            cliff: None,
            server_io: None,
            server: None,
            device_io: None,
            validity: None,
            repeats: None,
        }
    }
}

impl TargetResult {
    /// A target with no phase, no facts and no samples yet.
    pub fn new(name: &str, path: &str, kind: TargetKind, description: &str) -> Self {
        TargetResult {
            name: name.into(),
            path: path.into(),
            kind,
            description: description.into(),
            disk: None,
            preparation: vec![],
            reused: None,
            filesystem: None,
            servers: vec![],
            state_before: None,
            state_after: None,
            smart: None,
            usb_trouble: None,
            samples: vec![],
            phases: vec![],
        }
    }

    /// Start of each phase in seconds since the target's first phase (the clock of the
    /// temperature samples): the recorded start, else the sum of the earlier phases' durations.
    pub fn phase_starts(&self) -> Vec<f64> {
        let mut at = 0.0;
        self.phases
            .iter()
            .map(|p| {
                let start = p.start_s.unwrap_or(at);
                at = start + p.seconds;
                start
            })
            .collect()
    }

    /// The InnoDB buffer pool size in bytes the target's server ran with (the profile's: the
    /// same for every server of a target).
    pub fn buffer_pool_bytes(&self) -> Option<u64> {
        self.servers.first()?.buffer_pool_bytes()
    }
}

impl ServerInfo {
    /// `innodb_buffer_pool_size` as the run recorded it, in bytes.
    pub fn buffer_pool_bytes(&self) -> Option<u64> {
        let v = self.settings.get("innodb_buffer_pool_size")?;
        crate::units::parse_size(v).ok()
    }
}
