//! Suite profiles (`config/profiles/*.toml`): which fileio sets, server settings and OLTP
//! workloads `spindle suite` runs on each target. The three built-in profiles are compiled in;
//! `--profile PATH` reads another file with the same keys. Parsing is strict: an unknown key or
//! a bad value is an error naming the key.

use crate::fileio::{Compat, Fill, IoMode, TestMode};
use anyhow::{bail, Context};
use serde::Deserialize;

/// The built-in profiles, by name.
pub const BUILTIN: [(&str, &str); 3] = [
    ("quick", include_str!("../../config/profiles/quick.toml")),
    (
        "standard",
        include_str!("../../config/profiles/standard.toml"),
    ),
    (
        "reference",
        include_str!("../../config/profiles/reference.toml"),
    ),
];

/// A suite profile as written in TOML.
#[derive(Clone, Debug, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Name (the built-in name, or the file name without `.toml`).
    #[serde(default)]
    pub name: String,
    /// One line saying what the profile is for.
    #[serde(default)]
    pub description: String,
    /// fileio sets: each is prepared, run in every mode × thread count, and cleaned up.
    #[serde(default)]
    pub fileio: Vec<FileioSet>,
    /// Settings of the private server provisioned on each target.
    #[serde(default)]
    pub mysqld: MysqldProfile,
    /// OLTP workloads run against that server (none: no server is started).
    #[serde(default)]
    pub oltp: Option<OltpProfile>,
}

/// One fileio file set and the runs made on it.
#[derive(Clone, Debug, PartialEq, Deserialize, serde::Serialize)]
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
    /// Test modes, in order.
    pub modes: Vec<TestMode>,
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
    /// `--file-io-mode`: `sync` (pread/pwrite), `async` (io_uring, `async_backlog` requests in
    /// flight per thread) or `mmap` [sync].
    #[serde(default = "default_io_mode")]
    pub io_mode: IoMode,
    /// `--file-async-backlog`: the queue depth per thread of an async set [128].
    #[serde(default = "default_async_backlog")]
    pub async_backlog: u32,
    /// `--file-fill`: `zero` (as sysbench) or `random` (incompressible) [zero].
    #[serde(default)]
    pub fill: Fill,
}

/// Server settings for the suite (a subset of `spindle mysqld` options).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MysqldProfile {
    /// `innodb_buffer_pool_size` (default: 3/8 of RAM).
    pub buffer_pool_size: Option<String>,
    /// `innodb_log_file_size`.
    pub log_file_size: Option<String>,
    /// `innodb_flush_log_at_trx_commit`.
    pub flush_log_at_trx_commit: Option<u8>,
    /// Raw my.cnf overrides.
    #[serde(default)]
    pub extra: std::collections::BTreeMap<String, String>,
}

/// OLTP workloads and their shape.
#[derive(Clone, Debug, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct OltpProfile {
    /// Workloads in order (`read_write`, `read_only`, …, `legacy`); each is prepared, run at
    /// every thread count and cleaned up.
    pub workloads: Vec<String>,
    /// `--tables`.
    pub tables: u32,
    /// `--table-size`.
    pub table_size: u32,
    /// Thread counts.
    pub threads: Vec<u32>,
    /// `--time` per run, seconds.
    pub time: u64,
    /// `--report-interval`, seconds (0 = off).
    #[serde(default)]
    pub report_interval: u64,
    /// `--rand-type` [special].
    #[serde(default)]
    pub rand_type: Option<String>,
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
fn default_io_mode() -> IoMode {
    IoMode::Sync
}
fn default_async_backlog() -> u32 {
    crate::fileio::config::DEFAULT_ASYNC_BACKLOG
}
fn default_compat() -> String {
    "1.0".into()
}
fn yes() -> bool {
    true
}

impl FileioSet {
    /// Resolves `total_size` for a machine with `ram_bytes` of memory.
    pub fn total_bytes(&self, ram_bytes: u64) -> anyhow::Result<u64> {
        let t = self.total_size.trim();
        if let Some(n) = t.strip_suffix("xRAM").or_else(|| t.strip_suffix("xram")) {
            let n: f64 = n.trim().parse().map_err(|_| {
                anyhow::anyhow!(
                    "fileio.total_size = '{t}': use a size like 4G or a multiple of RAM like 2xRAM"
                )
            })?;
            return Ok((ram_bytes as f64 * n) as u64);
        }
        crate::units::parse_size(t).map_err(|e| anyhow::anyhow!("fileio.total_size: {e}"))
    }

    pub fn compat(&self) -> anyhow::Result<Compat> {
        match self.compat.as_str() {
            "1.0" => Ok(Compat::V1_0),
            "0.4" => Ok(Compat::V0_4),
            other => bail!("fileio.compat = '{other}': use \"1.0\" or \"0.4\""),
        }
    }
}

impl Profile {
    /// Parses a profile and checks every value (names the key on error).
    pub fn parse(text: &str, name: &str) -> anyhow::Result<Profile> {
        let mut p: Profile = toml::from_str(text).with_context(|| format!("profile '{name}'"))?;
        if p.name.is_empty() {
            p.name = name.to_string();
        }
        p.check().with_context(|| format!("profile '{name}'"))?;
        Ok(p)
    }

    /// A built-in profile by name, or a TOML file by path.
    pub fn load(name_or_path: &str) -> anyhow::Result<Profile> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Profile::parse(text, name_or_path);
        }
        let path = std::path::Path::new(name_or_path);
        if name_or_path.contains('/') || name_or_path.ends_with(".toml") {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--profile: could not read '{}'", path.display()))?;
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            return Profile::parse(&text, &stem);
        }
        bail!(
            "--profile '{name_or_path}': not a built-in profile (quick, standard, reference) nor a .toml file path"
        )
    }

    fn check(&self) -> anyhow::Result<()> {
        for (i, f) in self.fileio.iter().enumerate() {
            let at = |k: &str| format!("fileio[{i}].{k}");
            if f.file_num == 0 {
                bail!("{} must be at least 1", at("file_num"));
            }
            f.total_bytes(1 << 30).with_context(|| at("total_size"))?;
            crate::units::parse_size(&f.block_size)
                .map_err(|e| anyhow::anyhow!("{}: {e}", at("block_size")))?;
            crate::config::fileio::parse_extra_flags(&f.extra_flags)
                .with_context(|| at("extra_flags"))?;
            f.compat()?;
            if f.modes.is_empty() {
                bail!("{} is empty: list at least one test mode", at("modes"));
            }
            if f.threads.is_empty() || f.threads.contains(&0) {
                bail!("{} must list thread counts of at least 1", at("threads"));
            }
            let max = crate::fileio::config::MAX_ASYNC_BACKLOG;
            if !(1..=max).contains(&f.async_backlog) {
                bail!(
                    "{} = {} is out of range: use 1 to {max} (requests in flight per thread)",
                    at("async_backlog"),
                    f.async_backlog
                );
            }
            if f.io_mode == IoMode::Mmap && f.extra_flags.contains("direct") {
                bail!(
                    "{} = \"mmap\" cannot be combined with direct I/O in {}",
                    at("io_mode"),
                    at("extra_flags")
                );
            }
            if f.time == 0 && f.events == 0 && f.compat()? == Compat::V1_0 {
                bail!(
                    "{} and {} are both 0: the runs would never end",
                    at("time"),
                    at("events")
                );
            }
        }
        if let Some(o) = &self.oltp {
            if o.workloads.is_empty() {
                bail!("oltp.workloads is empty: list workloads or remove the [oltp] table");
            }
            for w in &o.workloads {
                if crate::oltp::Workload::parse(w).is_none() {
                    bail!("oltp.workloads: unknown workload '{w}': use read_write, read_only, write_only, point_select, update_index, update_non_index, insert, delete or legacy");
                }
            }
            if o.tables == 0 || o.table_size == 0 {
                bail!("oltp.tables and oltp.table_size must be at least 1");
            }
            if o.threads.is_empty() || o.threads.contains(&0) {
                bail!("oltp.threads must list thread counts of at least 1");
            }
            if o.time == 0 {
                bail!("oltp.time must be at least 1 second");
            }
        }
        for (k, v) in [
            ("mysqld.buffer_pool_size", &self.mysqld.buffer_pool_size),
            ("mysqld.log_file_size", &self.mysqld.log_file_size),
        ] {
            if let Some(v) = v {
                crate::units::parse_size(v).map_err(|e| anyhow::anyhow!("{k}: {e}"))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_profiles_parse() {
        for (name, _) in BUILTIN {
            let p = Profile::load(name).unwrap();
            assert_eq!(p.name, name);
            assert!(!p.fileio.is_empty());
            assert!(p.oltp.is_some());
        }
        let r = Profile::load("reference").unwrap();
        assert_eq!(r.fileio[0].compat().unwrap(), Compat::V0_4);
        assert_eq!(r.oltp.unwrap().tables, 10);
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key() {
        let e = format!("{:#}", Profile::parse("bogus = 1", "x").unwrap_err());
        assert!(e.contains("bogus"), "{e}");
        let t =
            "[[fileio]]\nfile_num = 1\ntotal_size = \"1Q\"\nmodes = [\"rndrd\"]\nthreads = [1]\n";
        let e = format!("{:#}", Profile::parse(t, "x").unwrap_err());
        assert!(e.contains("total_size"), "{e}");
        let t =
            "[oltp]\nworkloads = [\"nope\"]\ntables = 1\ntable_size = 1\nthreads = [1]\ntime = 1\n";
        let e = format!("{:#}", Profile::parse(t, "x").unwrap_err());
        assert!(e.contains("oltp.workloads"), "{e}");
        let e = format!("{:#}", Profile::load("fastest").unwrap_err());
        assert!(e.contains("--profile"), "{e}");
        let set =
            "[[fileio]]\nfile_num = 1\ntotal_size = \"1M\"\nmodes = [\"rndrd\"]\nthreads = [1]\n";
        for (extra, key) in [
            ("async_backlog = 0", "fileio[0].async_backlog"),
            ("async_backlog = 5000", "fileio[0].async_backlog"),
            ("io_mode = \"aio\"", "io_mode"),
            ("fill = \"ones\"", "fill"),
        ] {
            let e = format!(
                "{:#}",
                Profile::parse(&format!("{set}{extra}\n"), "x").unwrap_err()
            );
            assert!(e.contains(key), "{extra}: {e}");
        }
    }

    #[test]
    fn appliance_profiles_fill_randomly_and_measure_queueing() {
        for name in ["quick", "standard", "reference"] {
            let p = Profile::load(name).unwrap();
            assert!(p.fileio.iter().all(|f| f.fill == Fill::Random), "{name}");
        }
        for name in ["standard", "reference"] {
            let p = Profile::load(name).unwrap();
            let mut shapes: Vec<(String, u32, Vec<&str>)> = p
                .fileio
                .iter()
                .filter(|f| f.io_mode == IoMode::Async)
                .map(|f| {
                    assert!(
                        f.extra_flags.contains("direct") && f.threads == [1],
                        "{name}"
                    );
                    let modes = f.modes.iter().map(|m| m.name()).collect();
                    (f.block_size.clone(), f.async_backlog, modes)
                })
                .collect();
            shapes.sort();
            let both = vec!["rndrd", "rndwr"];
            assert_eq!(
                shapes,
                vec![
                    ("16K".to_string(), 1, both.clone()),
                    ("16K".to_string(), 32, both.clone()),
                    ("4K".to_string(), 1, both.clone()),
                    ("4K".to_string(), 32, both.clone()),
                ],
                "{name}"
            );
        }
    }

    #[test]
    fn total_size_as_multiple_of_ram() {
        let f = FileioSet {
            file_num: 1,
            total_size: "2xRAM".into(),
            block_size: "16K".into(),
            modes: vec![TestMode::Rndrd],
            threads: vec![1],
            time: 1,
            events: 0,
            extra_flags: String::new(),
            fsync_freq: 100,
            compat: "1.0".into(),
            drop_caches: true,
            io_mode: IoMode::Sync,
            async_backlog: 128,
            fill: Fill::Zero,
        };
        assert_eq!(f.total_bytes(4 << 30).unwrap(), 8 << 30);
    }
}
