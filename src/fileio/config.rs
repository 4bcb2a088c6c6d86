//! The plain configuration the fileio engine runs with (every default already applied).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// sysbench's `--file-test-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestMode {
    /// Sequential write (files created during the run).
    Seqwr,
    /// Sequential rewrite of prepared files.
    Seqrewr,
    /// Sequential read.
    Seqrd,
    /// Random read.
    Rndrd,
    /// Random write.
    Rndwr,
    /// Random read/write at `--file-rw-ratio`.
    Rndrw,
}

impl TestMode {
    /// Every value as it is written (settings, profiles, command lines).
    pub const NAMES: &'static [&'static str] =
        &["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"];
}

impl TestMode {
    pub fn is_random(self) -> bool {
        matches!(self, TestMode::Rndrd | TestMode::Rndwr | TestMode::Rndrw)
    }
    /// Modes that read.
    pub fn reads(self) -> bool {
        matches!(self, TestMode::Seqrd | TestMode::Rndrd | TestMode::Rndrw)
    }
    /// Modes that write (and therefore fsync).
    pub fn writes(self) -> bool {
        !matches!(self, TestMode::Seqrd | TestMode::Rndrd)
    }
    pub fn name(self) -> &'static str {
        match self {
            TestMode::Seqwr => "seqwr",
            TestMode::Seqrewr => "seqrewr",
            TestMode::Seqrd => "seqrd",
            TestMode::Rndrd => "rndrd",
            TestMode::Rndwr => "rndwr",
            TestMode::Rndrw => "rndrw",
        }
    }
    /// sysbench's description in "Doing … test".
    pub fn description(self) -> &'static str {
        match self {
            TestMode::Seqwr => "sequential write (creation)",
            TestMode::Seqrewr => "sequential rewrite",
            TestMode::Seqrd => "sequential read",
            TestMode::Rndrd => "random read",
            TestMode::Rndwr => "random write",
            TestMode::Rndrw => "random r/w",
        }
    }
    pub const ALL: [TestMode; 6] = [
        TestMode::Seqwr,
        TestMode::Seqrewr,
        TestMode::Seqrd,
        TestMode::Rndrd,
        TestMode::Rndwr,
        TestMode::Rndrw,
    ];
}

/// sysbench's `--file-io-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoMode {
    /// pread/pwrite.
    Sync,
    /// Asynchronous I/O on io_uring: up to `--file-async-backlog` requests in flight per thread.
    Async,
    /// Files mapped once; reads and writes are memory copies, fsync is msync.
    Mmap,
}

impl IoMode {
    /// Every value as it is written (settings, profiles, command lines).
    pub const NAMES: &'static [&'static str] = &["sync", "async", "mmap"];
}

/// `--file-fill`: what prepare and write requests put in the blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fill {
    /// Zeros, as sysbench.
    #[default]
    Zero,
    /// Incompressible random bytes: no controller can compress or deduplicate them.
    Random,
}

impl Fill {
    /// Every value as it is written (settings, profiles, command lines).
    pub const NAMES: &'static [&'static str] = &["zero", "random"];
}

impl Fill {
    pub fn name(self) -> &'static str {
        match self {
            Fill::Zero => "zero",
            Fill::Random => "random",
        }
    }
}

/// Default `--file-async-backlog` (sysbench's).
pub const DEFAULT_ASYNC_BACKLOG: u32 = 128;
/// Largest `--file-async-backlog` accepted.
pub const MAX_ASYNC_BACKLOG: u32 = 4096;
/// Most buffer memory one thread's requests in flight may take (backlog × request size).
pub const MAX_INFLIGHT_BYTES: u64 = 1 << 30;

/// sysbench's `--file-fsync-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsyncMode {
    Fsync,
    Fdatasync,
}

impl FsyncMode {
    /// Every value as it is written (settings, profiles, command lines).
    pub const NAMES: &'static [&'static str] = &["fsync", "fdatasync"];
}

/// `--file-extra-flags`: open(2) flags added when creating and opening the files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtraFlags {
    /// O_SYNC
    pub sync: bool,
    /// O_DSYNC
    pub dsync: bool,
    /// O_DIRECT
    pub direct: bool,
}

impl ExtraFlags {
    /// Parses sysbench's `--file-extra-flags` list (comma- or space-separated `sync`, `dsync`,
    /// `direct`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut f = ExtraFlags::default();
        for part in text
            .split([',', ' '])
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            match part {
                "sync" => f.sync = true,
                "dsync" => f.dsync = true,
                "direct" | "directio" => f.direct = true,
                other => {
                    return Err(format!(
                        "unknown flag '{other}': use sync, dsync and/or direct, comma-separated"
                    ))
                }
            }
        }
        Ok(f)
    }

    pub fn open_flags(self) -> i32 {
        let mut f = 0;
        if self.sync {
            f |= libc::O_SYNC;
        }
        if self.dsync {
            f |= libc::O_DSYNC;
        }
        if self.direct {
            f |= libc::O_DIRECT;
        }
        f
    }
    /// sysbench's "Extra file open flags:" text.
    /// The open(2) flags for people: `O_DIRECT`, `O_SYNC + O_DIRECT` (`None` without any).
    pub fn flag_names(self) -> Option<String> {
        let flags: Vec<&str> = [
            (self.sync, "O_SYNC"),
            (self.dsync, "O_DSYNC"),
            (self.direct, "O_DIRECT"),
        ]
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, name)| name)
        .collect();
        (!flags.is_empty()).then(|| flags.join(" + "))
    }

    pub fn describe(self) -> String {
        let mut parts = Vec::new();
        if self.sync {
            parts.push("sync");
        }
        if self.dsync {
            parts.push("dsync");
        }
        if self.direct {
            parts.push("directio");
        }
        if parts.is_empty() {
            "(none)".into()
        } else {
            parts.join(" ")
        }
    }
}

/// Which sysbench's behaviour to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Compat {
    /// sysbench 1.0: time-limited, sequential modes wrap around, end-of-test fsync per thread.
    #[serde(rename = "1.0", alias = "1", alias = "1.0.20")]
    V1_0,
    /// sysbench 0.4.12: 10000-request default limit, single-pass sequential modes, 0.4 report.
    #[serde(rename = "0.4", alias = "0.4.12")]
    V0_4,
}

impl Compat {
    pub const NAMES: &'static [&'static str] = &["1.0", "0.4"];
    /// Other spellings accepted (the versions' full numbers), not listed.
    pub const ALIASES: &'static [&'static str] = &["1", "1.0.20", "0.4.12"];

    pub fn as_str(self) -> &'static str {
        match self {
            Compat::V1_0 => "1.0",
            Compat::V0_4 => "0.4",
        }
    }
}

/// Everything the fileio engine needs, fully resolved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileioConfig {
    /// Directory holding `test_file.*` (sysbench: the current directory).
    pub dir: PathBuf,
    /// `--file-num`: number of files.
    pub file_num: u32,
    /// `--file-block-size`: bytes per request.
    pub block_size: u64,
    /// `--file-total-size`: bytes over all files; per-file size = total / file_num.
    pub total_size: u64,
    /// `--file-test-mode`; `None` is allowed for prepare/cleanup only.
    pub test_mode: Option<TestMode>,
    /// `--file-io-mode`.
    pub io_mode: IoMode,
    /// `--file-extra-flags`.
    pub extra_flags: ExtraFlags,
    /// `--file-async-backlog`: requests in flight per thread in async mode.
    #[serde(default = "default_backlog")]
    pub async_backlog: u32,
    /// `--file-fill`: zeros (sysbench) or incompressible random bytes.
    #[serde(default)]
    pub fill: Fill,
    /// `--file-fsync-freq`: a periodic fsync round every N requests (0 = never).
    pub fsync_freq: u64,
    /// `--file-fsync-all`: fsync after every write (disables periodic and end fsyncs).
    pub fsync_all: bool,
    /// `--file-fsync-end`: each thread fsyncs every file when it finishes.
    pub fsync_end: bool,
    /// `--file-fsync-mode`.
    pub fsync_mode: FsyncMode,
    /// `--file-merged-requests`: sequential request size = block × N when N > 0.
    pub merged_requests: u64,
    /// `--file-rw-ratio`: reads per write in rndrw.
    pub rw_ratio: f64,
    /// `--threads`.
    pub threads: u32,
    /// `--time`: run time limit (None = unlimited).
    #[serde(with = "opt_secs")]
    pub time_limit: Option<Duration>,
    /// `--events`: event limit (0 = unlimited). In 0.4 mode: the request limit.
    pub events: u64,
    /// `--report-interval` (None = no interval lines).
    #[serde(with = "opt_secs")]
    pub report_interval: Option<Duration>,
    /// `--percentile` (0 = disabled).
    pub percentile: f64,
    /// `--histogram`.
    pub histogram: bool,
    /// `--validate`: checksummed blocks, verified on read.
    pub validate: bool,
    /// `--rand-seed` (0 = from the current time).
    pub rand_seed: u64,
    /// `--compat`.
    pub compat: Compat,
}

impl Default for FileioConfig {
    fn default() -> Self {
        FileioConfig {
            dir: PathBuf::from("."),
            file_num: 128,
            block_size: 16384,
            total_size: 2 << 30,
            test_mode: None,
            io_mode: IoMode::Sync,
            extra_flags: ExtraFlags::default(),
            async_backlog: DEFAULT_ASYNC_BACKLOG,
            fill: Fill::Zero,
            fsync_freq: 100,
            fsync_all: false,
            fsync_end: true,
            fsync_mode: FsyncMode::Fsync,
            merged_requests: 0,
            rw_ratio: 1.5,
            threads: 1,
            time_limit: Some(Duration::from_secs(10)),
            events: 0,
            report_interval: None,
            percentile: 95.0,
            histogram: false,
            validate: false,
            rand_seed: 0,
            compat: Compat::V1_0,
        }
    }
}

impl FileioConfig {
    /// Bytes per file (integer division, as sysbench).
    pub fn file_size(&self) -> u64 {
        self.total_size / self.file_num.max(1) as u64
    }
    /// Bytes actually covered by the files (file_size × file_num).
    pub fn effective_total(&self) -> u64 {
        self.file_size() * self.file_num as u64
    }
    /// Bytes per sequential request.
    pub fn seq_request_size(&self) -> u64 {
        if self.merged_requests > 0 {
            self.block_size * self.merged_requests
        } else {
            self.block_size
        }
    }
    /// Bytes per request in `mode` (random modes: one block; sequential: merged requests).
    pub fn request_size(&self, mode: TestMode) -> u64 {
        if mode.is_random() {
            self.block_size
        } else {
            self.seq_request_size()
        }
    }
    pub fn file_path(&self, i: u32) -> PathBuf {
        self.dir.join(format!("test_file.{i}"))
    }
}

fn default_backlog() -> u32 {
    DEFAULT_ASYNC_BACKLOG
}

mod opt_secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(d) => s.serialize_f64(d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.map(Duration::from_secs_f64))
    }
}
