//! A profile's `[[fileio]]` sets resolved into typed engine settings ([`FileioPlan`]): modes,
//! compat level, I/O mode, queue depth, fill, flags, sizes (`NxRAM` too) and the steady-state
//! keys; every error is `(key, why and the fix)`, named with its set by `profile`.

use super::steady::from_keys;
use crate::engine::SteadySettings;
use crate::fileio::{Compat, ExtraFlags, FileioConfig, Fill, IoMode, TestMode};
use serde::Deserialize;
use std::time::Duration;

/// One fileio file set and the runs made on it, as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileioSet {
    /// `--file-num`.
    pub file_num: u32,
    /// `--file-total-size`: a size (`256M`, `50G`) or `NxRAM` (e.g. `2xRAM`: twice the memory,
    /// so reads cannot be served from the page cache).
    pub total_size: String,
    /// `--file-block-size` [16K].
    #[serde(default = "default_block")]
    pub block_size: String,
    /// Test modes, in order (`seqwr`, `seqrewr`, `seqrd`, `rndrd`, `rndwr`, `rndrw`).
    pub modes: Vec<String>,
    /// Thread counts; every mode runs once per count.
    pub threads: Vec<u32>,
    /// `--time` per run, seconds (0 = no time limit).
    #[serde(default = "default_time")]
    pub time: u64,
    /// `--events` per run (0 = no limit; with compat 0.4 the request limit).
    #[serde(default)]
    pub events: u64,
    /// `--file-extra-flags` (e.g. `direct` so requests bypass the page cache).
    #[serde(default)]
    pub extra_flags: String,
    /// `--file-fsync-freq` [100].
    #[serde(default = "default_fsync_freq")]
    pub fsync_freq: u64,
    /// `--compat`: `1.0` or `0.4`.
    #[serde(default = "default_compat")]
    pub compat: String,
    /// Drop the page cache before each run (only possible as root).
    #[serde(default = "yes")]
    pub drop_caches: bool,
    /// `--report-interval`, seconds [1]: the throughput and p95/p99 over time in report.html
    /// (0 = off).
    #[serde(default = "one")]
    pub report_interval: u64,
    /// `--file-io-mode`: `sync` (pread/pwrite), `async` (io_uring, `async_backlog` requests in
    /// flight per thread) or `mmap` [sync].
    #[serde(default)]
    pub io_mode: Option<String>,
    /// `--file-async-backlog`: the queue depth per thread of an async set [128].
    #[serde(default)]
    pub async_backlog: Option<u32>,
    /// `--file-fill`: `zero` (as sysbench) or `random` (incompressible) [zero].
    #[serde(default)]
    pub fill: Option<String>,
    /// fio's `ss`, `ss_dur`, `ss_ramp` (`--ss`, …): each run's steady-state criterion,
    /// window and ramp, seconds [`iops_slope:10%`, a third and a sixth of the run].
    pub ss: Option<String>,
    pub ss_dur: Option<u64>,
    pub ss_ramp: Option<u64>,
    /// Runs of each of the set's measurements, in rounds, when more than `[repeat]`'s count
    /// (CrystalDiskMark's 5 loops: its rows keep the best) [`[repeat]`'s].
    #[serde(default)]
    pub repeat: Option<u32>,
}

/// The total size of a fileio set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TotalSize {
    Bytes(u64),
    /// A multiple of the machine's RAM (`2xRAM`).
    RamTimes(f64),
}

impl TotalSize {
    /// Bytes on a machine with `ram_bytes` of memory.
    pub fn bytes(self, ram_bytes: u64) -> u64 {
        match self {
            TotalSize::Bytes(b) => b,
            TotalSize::RamTimes(n) => (ram_bytes as f64 * n) as u64,
        }
    }
}

/// One fileio set: the engine settings shared by its runs, and what varies.
#[derive(Clone, Debug, PartialEq)]
pub struct FileioPlan {
    /// Everything but the directory, the total size, the mode and the thread count.
    pub base: FileioConfig,
    pub total: TotalSize,
    pub modes: Vec<TestMode>,
    pub threads: Vec<u32>,
    /// Drop the page cache before each run (root only).
    pub drop_caches: bool,
    /// Each run's steady-state criterion, window and ramp.
    pub steady: SteadySettings,
    /// The set's own runs per measurement (`repeat`; 1 when it has none: `[repeat]` rules).
    pub repeat: u32,
}

fn default_block() -> String {
    "16K".into()
}
fn default_time() -> u64 {
    10
}
fn default_fsync_freq() -> u64 {
    100
}
fn default_compat() -> String {
    "1.0".into()
}
pub(super) fn yes() -> bool {
    true
}
pub(super) fn one() -> u64 {
    1
}
/// An error at a key (relative to its table) with the reason.
pub(super) type KeyError = (&'static str, String);

pub(super) fn size(k: &'static str, v: &str) -> Result<u64, KeyError> {
    crate::units::parse_size(v).map_err(|e| (k, e))
}

pub(super) fn thread_counts(k: &'static str, v: &[u32]) -> Result<Vec<u32>, KeyError> {
    if v.is_empty() || v.contains(&0) {
        return Err((k, "must list thread counts of at least 1".into()));
    }
    Ok(v.to_vec())
}

fn resolve_total(t: &str) -> Result<TotalSize, KeyError> {
    let t = t.trim();
    if let Some(n) = t.strip_suffix("xRAM").or_else(|| t.strip_suffix("xram")) {
        return match n.trim().parse::<f64>() {
            Ok(n) if n > 0.0 && n.is_finite() => Ok(TotalSize::RamTimes(n)),
            _ => Err((
                "total_size",
                format!("'{t}': use a size like 4G or a multiple of RAM like 2xRAM"),
            )),
        };
    }
    Ok(TotalSize::Bytes(size("total_size", t)?))
}

pub(super) fn resolve_fileio(f: &FileioSet) -> Result<FileioPlan, KeyError> {
    if f.file_num == 0 {
        return Err(("file_num", "must be at least 1".into()));
    }
    let Some(compat) = crate::units::from_word::<Compat>(&f.compat) else {
        return Err(("compat", format!("'{}': use \"1.0\" or \"0.4\"", f.compat)));
    };
    if f.modes.is_empty() {
        return Err(("modes", "is empty: list at least one test mode".into()));
    }
    let modes = f
        .modes
        .iter()
        .map(|m| {
            crate::units::from_word::<TestMode>(m).ok_or_else(|| {
                (
                    "modes",
                    format!(
                        "unknown test mode '{m}': use seqwr, seqrewr, seqrd, rndrd, rndwr or rndrw"
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if f.time == 0 && f.events == 0 && compat == Compat::V1_0 {
        return Err((
            "time",
            "and events are both 0: the runs would never end".into(),
        ));
    }
    let d = FileioConfig::default();
    let io_mode = match &f.io_mode {
        Some(m) => crate::units::from_word::<IoMode>(m)
            .ok_or_else(|| ("io_mode", format!("'{m}': use sync, async or mmap")))?,
        None => d.io_mode,
    };
    let async_backlog = f.async_backlog.unwrap_or(d.async_backlog);
    let max = crate::fileio::config::MAX_ASYNC_BACKLOG;
    if !(1..=max).contains(&async_backlog) {
        return Err((
            "async_backlog",
            format!(
                "{async_backlog} is out of range: use 1 to {max} (requests in flight per thread)"
            ),
        ));
    }
    let fill = match &f.fill {
        Some(v) => crate::units::from_word::<Fill>(v)
            .ok_or_else(|| ("fill", format!("'{v}': use zero or random")))?,
        None => d.fill,
    };
    let base = FileioConfig {
        file_num: f.file_num,
        block_size: size("block_size", &f.block_size)?,
        extra_flags: ExtraFlags::parse(&f.extra_flags).map_err(|e| ("extra_flags", e))?,
        fsync_freq: f.fsync_freq,
        time_limit: (f.time > 0).then(|| Duration::from_secs(f.time)),
        report_interval: (f.report_interval > 0).then(|| Duration::from_secs(f.report_interval)),
        events: f.events,
        compat,
        io_mode,
        async_backlog,
        fill,
        ..d
    };
    if base.io_mode == IoMode::Mmap && base.extra_flags.direct {
        return Err((
            "io_mode",
            "\"mmap\" cannot be combined with direct I/O (extra_flags = \"direct\")".into(),
        ));
    }
    if base.block_size == 0 {
        return Err(("block_size", "must be at least 1 byte".into()));
    }
    if f.repeat == Some(0) {
        return Err((
            "repeat",
            "is 0: run each measurement at least once (or leave the key out)".into(),
        ));
    }
    Ok(FileioPlan {
        base,
        total: resolve_total(&f.total_size)?,
        modes,
        threads: thread_counts("threads", &f.threads)?,
        drop_caches: f.drop_caches,
        steady: from_keys(f.ss.as_deref(), f.ss_dur, f.ss_ramp, f.report_interval)?,
        repeat: f.repeat.unwrap_or(1),
    })
}
