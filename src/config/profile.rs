//! Suite profiles (`config/profiles/*.toml`): which fileio sets, server settings and OLTP
//! workloads `spindle suite` runs on each target. The three built-in profiles are compiled in;
//! `--profile PATH` reads another file with the same keys.
//!
//! Parse, don't validate: [`SuiteProfile::load`] reads the TOML strictly ([`ProfileFile`]: an
//! unknown key is an error) and resolves it once into typed engine settings — every size, test
//! mode, compat level, flag list and distribution name parsed — so the run layer never looks at
//! a string again. Every error names the profile (built-in name or file) and the key.

use super::fileio_set::{one, resolve_fileio, size, thread_counts, yes, KeyError};
pub use super::fileio_set::{FileioPlan, FileioSet, TotalSize};
use super::steady::from_keys;
use crate::engine::SteadySettings;
use crate::fileio::{FileioConfig, TestMode};
use crate::model::ProfileRecord;
use crate::oltp::{OltpConfig, RandType, Workload};
use crate::provision::mysqld::MysqldSettings;
use crate::tpcc::{HomeWarehouse, Statements, TpccConfig};
use anyhow::bail;
use serde::Deserialize;

/// The built-in profiles, by name.
pub const BUILTIN: [(&str, &str); 4] = [
    ("check", include_str!("../../config/profiles/check.toml")),
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

/// A profile as written in TOML. Only [`SuiteProfile::parse`] reads it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileFile {
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
    /// OLTP workloads run against that server.
    #[serde(default)]
    pub oltp: Option<OltpProfile>,
    /// TPC-C on the same server, after OLTP (with neither table no server is started).
    #[serde(default)]
    pub tpcc: Option<TpccProfile>,
    /// The sustained sequential write that finds the SLC-cache cliff, after the fileio sets.
    #[serde(default)]
    pub cliff: Option<super::cliff::CliffProfile>,
    /// How many times each measurement runs (`[repeat]`).
    #[serde(default)]
    pub repeat: Option<super::repeat::RepeatProfile>,
    /// Fileio sets run on every disk at the same time, after every target's solo phases.
    pub together: Option<super::together::TogetherProfile>,
}

/// Server settings for the suite (a subset of `spindle mysqld` options), as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
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

/// OLTP workloads and their shape, as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
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
    /// `--report-interval`, seconds [1] (0 = off): the series over time in report.html.
    #[serde(default = "one")]
    pub report_interval: u64,
    /// `--rand-type` [special].
    #[serde(default)]
    pub rand_type: Option<String>,
    /// Workloads that get freshly prepared tables before they run; the others share one data
    /// set per target (read-only workloads first, writing ones after) [none].
    #[serde(default)]
    pub reprepare: Vec<String>,
    /// Both of MySQL's regimes on the same data set: the workloads run once with each buffer
    /// pool, the server restarted in between [none: one pass on `[mysqld] buffer_pool_size`].
    #[serde(default)]
    pub regimes: Option<super::regimes::RegimesProfile>,
    /// fio's `ss`, `ss_dur`, `ss_ramp` (`--ss`, …): each run's steady-state criterion,
    /// window and ramp, seconds [`iops_slope:10%`, a third and a sixth of the run].
    pub ss: Option<String>,
    pub ss_dur: Option<u64>,
    pub ss_ramp: Option<u64>,
}

/// TPC-C (tpcc-mysql's model), as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TpccProfile {
    /// Warehouses loaded and used (`-w`); ≈ 100 MiB of data each.
    pub warehouses: u32,
    /// Client connections (`-c`).
    pub connections: u32,
    /// Ramp-up seconds, not measured (`-r`) [10].
    #[serde(default = "ten")]
    pub rampup: u64,
    /// Measured seconds (`-l`).
    pub time: u64,
    /// Seconds between interval lines (`-i`) [10]; 0 = none.
    #[serde(default = "ten")]
    pub report_interval: u64,
    /// Connections loading warehouses in parallel [4].
    #[serde(default)]
    pub load_connections: Option<u32>,
    /// `random` (tpcc-mysql: per transaction) or `per_connection` (HammerDB) [random].
    #[serde(default)]
    pub home_warehouse: Option<String>,
    /// The statements the transactions send: `tpcc-mysql` (tpcc_start's, one per row
    /// operation) or `batched` (spindle's fewer round trips) [tpcc-mysql].
    #[serde(default)]
    pub statements: Option<String>,
    /// Check TPC-C's consistency conditions after the run [true].
    #[serde(default = "yes")]
    pub check: bool,
    /// fio's `ss`, `ss_dur`, `ss_ramp` (`--ss`, …): each run's steady-state criterion,
    /// window and ramp, seconds [`iops_slope:10%`, a third and a sixth of the run].
    pub ss: Option<String>,
    pub ss_dur: Option<u64>,
    pub ss_ramp: Option<u64>,
}

fn ten() -> u64 {
    10
}

/// A resolved profile: typed settings for every engine.
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteProfile {
    /// Name, description, origin and text, as recorded with the results.
    pub record: ProfileRecord,
    pub fileio: Vec<FileioPlan>,
    /// The private server's my.cnf settings.
    pub mysqld: MysqldSettings,
    pub oltp: Option<OltpPlan>,
    pub tpcc: Option<TpccPlan>,
    /// The cliff write (its directory set per target when it runs).
    pub cliff: Option<crate::fileio::sustained::SustainedConfig>,
    /// Runs of each measurement (once unless `[repeat]` or `--repeat` says more).
    pub repeat: super::repeat::RepeatPlan,
    /// `[together]`: the fileio sets run on every disk at once.
    pub together: Option<super::together::TogetherPlan>,
}

/// TPC-C on the target's server.
#[derive(Clone, Debug, PartialEq)]
pub struct TpccPlan {
    /// Everything but the connection.
    pub base: TpccConfig,
    /// Check the consistency conditions after the run.
    pub check: bool,
    /// The run's steady-state criterion, window and ramp.
    pub steady: SteadySettings,
}

/// The OLTP workloads: the engine settings shared by every run, and what varies.
#[derive(Clone, Debug, PartialEq)]
pub struct OltpPlan {
    /// Everything but the workload, the thread count and the connection.
    pub base: OltpConfig,
    /// In the order they run: the profile's read-only workloads first, then the writing ones
    /// (so every workload that only reads sees the tables as prepared).
    pub workloads: Vec<Workload>,
    pub threads: Vec<u32>,
    /// Workloads that get freshly prepared tables before they run.
    pub reprepare: Vec<Workload>,
    /// Run every workload in both regimes (CPU-bound, then I/O-bound).
    pub regimes: Option<super::regimes::Regimes>,
    /// Each run's steady-state criterion, window and ramp.
    pub steady: SteadySettings,
}

impl FileioPlan {
    /// The engine config of one run: in `dir`, on a machine with `ram_bytes` of memory.
    pub fn config(
        &self,
        dir: std::path::PathBuf,
        ram_bytes: u64,
        mode: Option<TestMode>,
        threads: u32,
    ) -> FileioConfig {
        FileioConfig {
            dir,
            total_size: self.total.bytes(ram_bytes),
            test_mode: mode,
            threads,
            ..self.base.clone()
        }
    }
}

/// Where a profile came from, for error messages: `built-in profile 'quick'` or the file.
fn origin(name: &str, source: &str) -> String {
    if source == "built-in" {
        format!("built-in profile '{name}'")
    } else {
        format!("profile file '{source}'")
    }
}

impl SuiteProfile {
    /// A built-in profile by name, or a TOML file by path.
    pub fn load(name_or_path: &str) -> anyhow::Result<SuiteProfile> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return SuiteProfile::parse(text, name_or_path, "built-in");
        }
        let path = std::path::Path::new(name_or_path);
        if name_or_path.contains('/') || name_or_path.ends_with(".toml") {
            let text = std::fs::read_to_string(path).map_err(|e| {
                anyhow::anyhow!("--profile: could not read '{}': {e}", path.display())
            })?;
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            return SuiteProfile::parse(&text, &stem, name_or_path);
        }
        bail!(
            "--profile '{name_or_path}': not a built-in profile (check, quick, standard, reference) nor a .toml file path"
        )
    }

    /// Parses and resolves a profile's text. `source` is `built-in` or the file path.
    pub fn parse(text: &str, name: &str, source: &str) -> anyhow::Result<SuiteProfile> {
        let at = origin(name, source);
        let file: ProfileFile =
            toml::from_str(text).map_err(|e| anyhow::anyhow!("{at}: {}", e.message()))?;
        let key = |k: String, e: String| anyhow::anyhow!("{at}: {k}: {e}");
        let fileio = file
            .fileio
            .iter()
            .enumerate()
            .map(|(i, f)| resolve_fileio(f).map_err(|(k, e)| key(format!("fileio[{i}].{k}"), e)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mysqld =
            resolve_mysqld(&file.mysqld).map_err(|(k, e)| key(format!("mysqld.{k}"), e))?;
        let oltp = (file.oltp.as_ref())
            .map(|o| resolve_oltp(o).map_err(|(k, e)| key(format!("oltp.{k}"), e)))
            .transpose()?;
        let tpcc = (file.tpcc.as_ref())
            .map(|t| resolve_tpcc(t).map_err(|(k, e)| key(format!("tpcc.{k}"), e)))
            .transpose()?;
        let cliff = (file.cliff.as_ref())
            .map(|c| super::cliff::resolve(c).map_err(|(k, e)| key(format!("cliff.{k}"), e)))
            .transpose()?;
        let repeat = (file.repeat.as_ref())
            .map(|r| super::repeat::resolve(r).map_err(|(k, e)| key(format!("repeat.{k}"), e)))
            .transpose()?
            .unwrap_or_default();
        let together = super::together::of(file.together.as_ref(), fileio.len());
        let together = together.map_err(|(k, e)| key(format!("together.{k}"), e))?;
        Ok(SuiteProfile {
            record: ProfileRecord {
                name: if file.name.is_empty() {
                    name.to_string()
                } else {
                    file.name.clone()
                },
                description: file.description.clone(),
                source: source.to_string(),
                toml: text.to_string(),
            },
            fileio,
            mysqld,
            oltp,
            tpcc,
            cliff,
            repeat,
            together,
        })
    }
}

fn resolve_mysqld(m: &MysqldProfile) -> Result<MysqldSettings, KeyError> {
    let mut s = MysqldSettings::default();
    if let Some(v) = &m.buffer_pool_size {
        s.buffer_pool_size = Some(size("buffer_pool_size", v)?);
    }
    if let Some(v) = &m.log_file_size {
        s.log_file_size = size("log_file_size", v)?;
    }
    if let Some(v) = m.flush_log_at_trx_commit {
        if v > 2 {
            return Err(("flush_log_at_trx_commit", format!("{v}: use 0, 1 or 2")));
        }
        s.flush_log_at_trx_commit = v;
    }
    s.extra = m.extra.clone();
    Ok(s)
}

fn resolve_oltp(o: &OltpProfile) -> Result<OltpPlan, KeyError> {
    if o.workloads.is_empty() {
        return Err((
            "workloads",
            "is empty: list workloads or remove the [oltp] table".into(),
        ));
    }
    let parse = |key: &'static str, list: &[String]| {
        list.iter()
            .map(|w| {
                match Workload::parse(w) {
                    None => Err((key, format!("unknown workload '{w}': use read_write, read_only, write_only, point_select, update_index, update_non_index, insert, delete, select_random_points, select_random_ranges, legacy or another oltp_legacy script (legacy_select, …; see `spindle oltp --help`)"))),
                    Some(b) if b.bulk_table(0).is_some() => Err((key, format!("'{w}' makes its own two-column tables (sbtest1..N, one per thread) and cannot share the suite's OLTP data set: run it with `spindle oltp {w}`"))),
                    Some(wl) => Ok(wl),
                }
            })
            .collect::<Result<Vec<_>, _>>()
    };
    let mut workloads = parse("workloads", &o.workloads)?;
    // One data set per target: the read-only workloads see it as prepared.
    workloads.sort_by_key(|w| w.writes());
    let reprepare = parse("reprepare", &o.reprepare)?;
    if let Some(w) = reprepare.iter().find(|w| !workloads.contains(w)) {
        return Err((
            "reprepare",
            format!("'{}' is not among the workloads", w.name()),
        ));
    }
    if o.tables == 0 {
        return Err(("tables", "must be at least 1".into()));
    }
    if o.table_size == 0 {
        return Err(("table_size", "must be at least 1".into()));
    }
    if o.time == 0 {
        return Err(("time", "must be at least 1 second".into()));
    }
    let mut base = OltpConfig {
        tables: o.tables,
        table_size: o.table_size,
        time_s: o.time,
        report_interval_s: o.report_interval,
        ..OltpConfig::default()
    };
    if let Some(rt) = &o.rand_type {
        base.rand.kind = RandType::parse(rt).map_err(|e| ("rand_type", e))?;
    }
    base.check().map_err(|(opt, msg)| {
        let key = match opt {
            "time" => "time",
            "tables" => "tables",
            _ => "threads",
        };
        (key, msg)
    })?;
    let regimes = match &o.regimes {
        None => None,
        Some(_) if !reprepare.is_empty() => {
            return Err((
                "regimes",
                "cannot be combined with reprepare: both regimes run on the same data set".into(),
            ))
        }
        Some(r) => Some(super::regimes::resolve(r, o.tables, o.table_size)?),
    };
    Ok(OltpPlan {
        base,
        workloads,
        threads: thread_counts("threads", &o.threads)?,
        reprepare,
        regimes,
        steady: from_keys(o.ss.as_deref(), o.ss_dur, o.ss_ramp, o.report_interval)?,
    })
}

fn resolve_tpcc(t: &TpccProfile) -> Result<TpccPlan, KeyError> {
    let d = TpccConfig::default();
    let home_warehouse = match t.home_warehouse.as_deref() {
        None => HomeWarehouse::Random,
        Some(name) => crate::units::from_word(name).ok_or_else(|| {
            (
                "home_warehouse",
                format!("'{name}': use \"random\" or \"per_connection\""),
            )
        })?,
    };
    let statements = match t.statements.as_deref() {
        None => d.statements,
        Some(name) => Statements::parse(name).ok_or_else(|| {
            (
                "statements",
                format!("'{name}': use \"tpcc-mysql\" (tpcc_start's statements) or \"batched\""),
            )
        })?,
    };
    let base = TpccConfig {
        warehouses: t.warehouses,
        connections: t.connections,
        rampup_s: t.rampup,
        time_s: t.time,
        report_interval_s: t.report_interval,
        load_connections: t.load_connections.unwrap_or(d.load_connections),
        home_warehouse,
        statements,
        ..d
    };
    base.validate().map_err(|e| {
        let key = match e.option() {
            Some("warehouses") => "warehouses",
            Some("connections") => "connections",
            Some("load-connections") | Some("load_connections") => "load_connections",
            Some("time") => "time",
            _ => "tpcc",
        };
        (key, e.to_string())
    })?;
    Ok(TpccPlan {
        base,
        check: t.check,
        steady: from_keys(t.ss.as_deref(), t.ss_dur, t.ss_ramp, t.report_interval)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fileio::{Compat, Fill, IoMode};

    #[test]
    fn builtin_profiles_resolve() {
        for (name, _) in BUILTIN {
            let p = SuiteProfile::load(name).unwrap();
            assert_eq!(p.record.name, name);
            assert_eq!(p.record.source, "built-in");
            assert!(!p.fileio.is_empty());
            assert!(p.oltp.is_some() && p.tpcc.is_some());
        }
        let r = SuiteProfile::load("reference").unwrap();
        assert_eq!(r.fileio[0].base.compat, Compat::V0_4);
        assert_eq!(r.fileio[1].total, TotalSize::Bytes(80 << 30));
        let t = r.tpcc.as_ref().unwrap();
        assert_eq!(
            (
                t.base.warehouses,
                t.base.connections,
                t.base.rampup_s,
                t.base.time_s
            ),
            (10, 50, 20, 300),
            "seed 003's tpcc_start line"
        );
        assert_eq!(t.base.statements, crate::tpcc::Statements::TpccMysql);
        let o = r.oltp.unwrap();
        assert_eq!(o.base.tables, 10);
        assert_eq!(o.workloads, vec![Workload::Legacy]);
        let s = SuiteProfile::load("standard").unwrap();
        assert!(s.fileio[0].base.extra_flags.direct);
        let o = s.oltp.unwrap();
        assert_eq!(
            o.workloads,
            [
                Workload::ReadOnly,
                Workload::PointSelect,
                Workload::ReadWrite,
                Workload::WriteOnly
            ],
            "read-only workloads first on the shared data set"
        );
        assert_eq!(s.mysqld.buffer_pool_size, Some(256 << 20));
        // Both regimes on the same data set, the I/O-bound one on the profile's buffer pool.
        use crate::config::regimes::{CpuBoundPool, Regimes};
        let both = |io_bound| {
            Some(Regimes {
                cpu_bound: CpuBoundPool::Auto,
                io_bound,
            })
        };
        assert_eq!(o.regimes, both(256 << 20));
        assert_eq!(
            SuiteProfile::load("reference")
                .unwrap()
                .oltp
                .unwrap()
                .regimes,
            both(128 << 20)
        );
        assert_eq!(
            SuiteProfile::load("quick").unwrap().oltp.unwrap().regimes,
            None
        );
    }

    fn err(text: &str) -> String {
        format!(
            "{:#}",
            SuiteProfile::parse(text, "mine", "/etc/spindle/mine.toml").unwrap_err()
        )
    }

    const SET: &str =
        "[[fileio]]\nfile_num = 1\ntotal_size = \"1G\"\nmodes = [\"rndrd\"]\nthreads = [1]\n";
    const OLTP: &str =
        "[oltp]\nworkloads = [\"read_write\"]\ntables = 1\ntable_size = 1\nthreads = [1]\ntime = 1\n";

    #[test]
    fn steady_state_keys_reach_every_engine_and_bad_ones_name_the_key() {
        let tpcc = "[tpcc]\nwarehouses = 1\nconnections = 2\ntime = 60\nss = \"lat:2\"\n";
        let text = format!("{SET}ss = \"bw_slope:5%\"\nss_dur = 20\n{OLTP}ss_ramp = 3\n{tpcc}");
        let p = SuiteProfile::parse(&text, "mine", "built-in").unwrap();
        let f = p.fileio[0].steady;
        assert_eq!(
            f.criterion.map(|c| c.to_string()).as_deref(),
            Some("bw_slope:5%")
        );
        assert_eq!((f.dur_s, f.ramp_s), (Some(20), None));
        assert_eq!(p.oltp.unwrap().steady.ramp_s, Some(3));
        let t = p.tpcc.unwrap().steady;
        assert_eq!(t.criterion.map(|c| c.to_string()).as_deref(), Some("lat:2"));
        assert!(!SuiteProfile::load("quick").unwrap().fileio[0]
            .steady
            .given());
        let e = err(&format!("{SET}ss = \"foo:1\"\n"));
        assert!(
            e.contains("fileio[0].ss: 'foo' is not a steady-state criterion"),
            "{e}"
        );
        let e = err(&format!("{tpcc}ss_dur = 10\n"));
        assert!(
            e.contains("tpcc.ss_dur: a 10 s window holds fewer than 2 samples"),
            "{e}"
        );
    }

    #[test]
    fn errors_name_the_key_and_the_file() {
        let file = "profile file '/etc/spindle/mine.toml'";
        let e = err("bogus = 1");
        assert!(e.contains(file) && e.contains("bogus"), "{e}");
        let e = err(&SET.replace("1G", "1Q"));
        assert!(
            e.contains(file) && e.contains("fileio[0].total_size"),
            "{e}"
        );
        let e = err(&format!("{SET}block_size = \"16Q\"\n"));
        assert!(
            e.contains("fileio[0].block_size") && e.contains("suffix"),
            "{e}"
        );
        let e = err(&format!("{SET}compat = \"0.5\"\n"));
        assert!(e.contains("fileio[0].compat") && e.contains("0.5"), "{e}");
        let e = err(&SET.replace("rndrd", "random"));
        assert!(e.contains("fileio[0].modes") && e.contains("random"), "{e}");
        let e = err(&format!("{SET}extra_flags = \"direkt\"\n"));
        assert!(
            e.contains("fileio[0].extra_flags") && e.contains("direkt"),
            "{e}"
        );
        let e = err(&format!("{SET}repeat = 0\n"));
        assert!(
            e.contains("fileio[0].repeat") && e.contains("at least once"),
            "{e}"
        );
        let e = err(&format!("{OLTP}rand_type = \"zipf\"\n"));
        assert!(
            e.contains(file) && e.contains("oltp.rand_type") && e.contains("zipf"),
            "{e}"
        );
        let e = err(&OLTP.replace("read_write", "nope"));
        assert!(e.contains("oltp.workloads"), "{e}");
        let e = err(&format!("{OLTP}reprepare = [\"write_only\"]\n"));
        assert!(
            e.contains("oltp.reprepare") && e.contains("write_only"),
            "{e}"
        );
        let tpcc = "[tpcc]\nwarehouses = 1\nconnections = 2\ntime = 5\n";
        for (bad, key) in [
            (
                tpcc.replace("warehouses = 1", "warehouses = 0"),
                "tpcc.warehouses",
            ),
            (
                tpcc.replace("connections = 2", "connections = 0"),
                "tpcc.connections",
            ),
            (tpcc.replace("time = 5", "time = 0"), "tpcc.time"),
            (
                format!("{tpcc}home_warehouse = \"mine\"\n"),
                "tpcc.home_warehouse",
            ),
            (format!("{tpcc}statements = \"rows\"\n"), "tpcc.statements"),
            (
                format!("{tpcc}load_connections = 0\n"),
                "tpcc.load_connections",
            ),
        ] {
            let e = err(&bad);
            assert!(e.contains(file) && e.contains(key), "{bad}: {e}");
        }
        let regimes = "[oltp]\nworkloads = [\"read_only\"]\ntables = 2\ntable_size = 100000\nthreads = [1]\ntime = 1\n[oltp.regimes]\ncpu_bound = \"auto\"\n";
        let e = err(&format!("{regimes}io_bound = \"2G\"\n"));
        assert!(
            e.contains(file) && e.contains("oltp.regimes.io_bound: 2.0 GiB is not well below"),
            "{e}"
        );
        let e = err(regimes);
        assert!(
            e.contains(file) && e.contains("io_bound"),
            "a missing key: {e}"
        );
        let e = err(&format!("{regimes}io_bound = \"8M\"\nfoo = 1\n"));
        assert!(e.contains(file) && e.contains("foo"), "an unknown key: {e}");
        let e = err("[mysqld]\nbuffer_pool_size = \"lots\"\n");
        assert!(e.contains("mysqld.buffer_pool_size"), "{e}");
        let e = format!("{:#}", SuiteProfile::load("fastest").unwrap_err());
        assert!(e.contains("--profile"), "{e}");
        let e = SuiteProfile::parse("bogus = 1", "quick", "built-in").unwrap_err();
        assert!(e.to_string().contains("built-in profile 'quick'"), "{e}");
        for (extra, key) in [
            ("async_backlog = 0", "fileio[0].async_backlog"),
            ("async_backlog = 5000", "fileio[0].async_backlog"),
            ("io_mode = \"aio\"", "fileio[0].io_mode"),
            (
                "io_mode = \"mmap\"\nextra_flags = \"direct\"",
                "fileio[0].io_mode",
            ),
            ("fill = \"ones\"", "fileio[0].fill"),
        ] {
            let e = err(&format!("{SET}{extra}\n"));
            assert!(e.contains(file) && e.contains(key), "{extra}: {e}");
        }
    }

    #[test]
    fn appliance_profiles_fill_randomly_and_measure_queueing() {
        for name in ["check", "quick", "standard", "reference"] {
            let p = SuiteProfile::load(name).unwrap();
            assert!(
                p.fileio.iter().all(|f| f.base.fill == Fill::Random),
                "{name}"
            );
        }
        for name in ["standard", "reference"] {
            let p = SuiteProfile::load(name).unwrap();
            let mut shapes: Vec<(u64, u32, Vec<TestMode>)> = p
                .fileio
                .iter()
                .filter(|f| f.base.io_mode == IoMode::Async)
                .map(|f| {
                    assert!(f.base.extra_flags.direct && f.threads == [1], "{name}");
                    (f.base.block_size, f.base.async_backlog, f.modes.clone())
                })
                .collect();
            shapes.sort_by_key(|s| (s.0, s.1));
            let both = vec![TestMode::Rndrd, TestMode::Rndwr];
            let mut want = vec![
                (4 << 10, 1, both.clone()),
                (4 << 10, 32, both.clone()),
                (16 << 10, 1, both.clone()),
                (16 << 10, 32, both.clone()),
            ];
            if name == "standard" {
                // With the 4 KiB sets, CrystalDiskMark's four rows (report::cdm).
                let seq = vec![TestMode::Seqrd, TestMode::Seqwr];
                want.extend([(1 << 20, 1, seq.clone()), (1 << 20, 8, seq)]);
                // The A1/A2 check's jobs (report::appclass).
                want.extend([
                    (4 << 10, 4, vec![TestMode::Rndwr, TestMode::Rndrd]),
                    (512 << 10, 4, vec![TestMode::Seqwr]),
                ]);
            }
            want.sort_by_key(|s| (s.0, s.1));
            assert_eq!(shapes, want, "{name}");
        }
    }

    #[test]
    fn total_size_as_multiple_of_ram() {
        let p = SuiteProfile::parse(&SET.replace("1G", "2xRAM"), "x", "x.toml").unwrap();
        assert_eq!(p.fileio[0].total, TotalSize::RamTimes(2.0));
        assert_eq!(p.fileio[0].total.bytes(4 << 30), 8 << 30);
        let cfg = p.fileio[0].config("/d".into(), 1 << 30, Some(TestMode::Rndrd), 4);
        assert_eq!((cfg.total_size, cfg.threads), (2 << 30, 4));
    }
}
