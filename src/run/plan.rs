//! The run plan: which phases run on each target, in order. Pure: built from a resolved profile,
//! so it is unit-tested and shown to the user (`spindle suite --dry-run`) before anything runs.

use crate::config::profile::SuiteProfile;
use crate::config::repeat::RepeatPlan;
use crate::config::spindle::ServerChoice;
use crate::fileio::IoMode;
use crate::model::{Phase, Queue, Regime, When};
use crate::oltp::Workload;

/// One step of a target's plan: a phase, and the server it runs on when the suite runs its
/// database phases on several (`[mysqld] flavors`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub phase: Phase,
    pub server: Option<crate::provision::mysqld::Flavor>,
}

impl Step {
    /// The phase's name, with the server's flavor after it when there are several servers
    /// (`oltp-read_write-t4-mysql`): also the name of its result and of its text file.
    pub fn name(&self) -> String {
        match self.server {
            Some(f) => format!("{}-{}", self.phase.name(), f.key()),
            None => self.phase.name(),
        }
    }
}

/// The steps for one target: [`phases`], with the database block (the server's start to its
/// stop) once per server, in order, when `servers` holds several.
pub fn steps(profile: &SuiteProfile, servers: &[ServerChoice]) -> Vec<Step> {
    let phases = phases(profile);
    let step = |phase: &Phase| Step {
        phase: *phase,
        server: None,
    };
    let start = phases.iter().position(|p| *p == Phase::MysqldStart);
    let stop = phases.iter().position(|p| *p == Phase::MysqldStop);
    let (Some(a), Some(b), true) = (start, stop, servers.len() > 1) else {
        return phases.iter().map(step).collect();
    };
    let mut v: Vec<Step> = phases[..a].iter().map(step).collect();
    for server in servers {
        v.extend(phases[a..=b].iter().map(|&phase| Step {
            phase,
            server: server.flavor,
        }));
    }
    v.extend(phases[b + 1..].iter().map(step));
    v
}

/// The phases for one target, in order (with one server).
pub fn phases(profile: &SuiteProfile) -> Vec<Phase> {
    let mut v = vec![Phase::SystemState { when: When::Before }];
    for (set, f) in profile.fileio.iter().enumerate() {
        v.push(Phase::FileioPrepare { set });
        // Async sets are named by block size and queue depth (sync names stay as they were).
        let queue = (f.base.io_mode == IoMode::Async).then_some(Queue {
            block: f.base.block_size,
            depth: f.base.async_backlog,
        });
        for &mode in &f.modes {
            for &threads in &f.threads {
                v.push(Phase::FileioRun {
                    set,
                    mode,
                    threads,
                    queue,
                });
            }
        }
        v.push(Phase::FileioCleanup { set });
    }
    if profile.cliff.is_some() {
        v.push(Phase::FileioCliff);
    }
    if profile.oltp.is_none() && profile.tpcc.is_none() {
        v.push(Phase::SystemState { when: When::After });
        return v;
    }
    v.push(Phase::MysqldStart);
    let regimes = profile.oltp.as_ref().is_some_and(|o| o.regimes.is_some());
    if let Some(o) = &profile.oltp {
        if regimes {
            oltp_in_both_regimes(o, &mut v);
        } else {
            oltp_once(o, &mut v);
        }
    }
    if let Some(t) = &profile.tpcc {
        if regimes {
            // Back to the profile's own server settings.
            v.push(Phase::MysqldRestart { regime: None });
        }
        v.push(Phase::TpccPrepare);
        v.push(Phase::TpccRun {
            warehouses: t.base.warehouses,
            connections: t.base.connections,
        });
        if t.check {
            v.push(Phase::TpccCheck);
        }
        v.push(Phase::TpccCleanup);
    }
    v.push(Phase::MysqldStop);
    v.push(Phase::SystemState { when: When::After });
    rounds(v, profile)
}

/// How phase `p` is repeated: `[repeat]`, or more for a fileio set with its own `repeat`.
pub fn repeat_of(profile: &SuiteProfile, p: &Phase) -> RepeatPlan {
    match p {
        Phase::FileioRun { set, .. } => profile.repeat.at_least(profile.fileio[*set].repeat),
        _ => profile.repeat,
    }
}

/// The runs of fileio set `set`, once each whatever `[repeat]`'s rounds make of them.
pub fn set_runs(profile: &SuiteProfile, set: usize) -> Vec<Phase> {
    let mut v: Vec<Phase> = Vec::new();
    for p in phases(profile) {
        if matches!(p, Phase::FileioRun { set: s, .. } if s == set) && !v.contains(&p) {
            v.push(p);
        }
    }
    v
}

/// `[repeat]`'s rounds: every stretch of measurements between two other phases (a fileio
/// set's runs, the OLTP runs on one data set or in one regime, a TPC-C run) run `count` times
/// over, so a figure's repeats are spread over its stretch rather than back to back, and what
/// drifts meanwhile (the disk's state, the machine's load) shows in their spread.
fn rounds(v: Vec<Phase>, profile: &SuiteProfile) -> Vec<Phase> {
    let mut out = Vec::with_capacity(v.len());
    let mut stretch: Vec<Phase> = Vec::new();
    let flush = |stretch: &mut Vec<Phase>, out: &mut Vec<Phase>| {
        let count = stretch.iter().map(|p| repeat_of(profile, p).count).max();
        for _ in 0..count.unwrap_or(1) {
            out.extend_from_slice(stretch);
        }
        stretch.clear();
    };
    for ph in v {
        if ph.is_measurement() {
            stretch.push(ph);
        } else {
            flush(&mut stretch, &mut out);
            out.push(ph);
        }
    }
    flush(&mut stretch, &mut out);
    out
}

/// One data set per target: prepared once before the first workload (and again only before
/// the workloads the profile asks to reprepare), dropped after the last.
fn oltp_once(o: &crate::config::profile::OltpPlan, v: &mut Vec<Phase>) {
    let mut prepared: Option<Workload> = None;
    for &workload in &o.workloads {
        match prepared {
            None => v.push(Phase::OltpPrepare { workload }),
            Some(previous) if o.reprepare.contains(&workload) => {
                v.push(Phase::OltpCleanup { workload: previous });
                v.push(Phase::OltpPrepare { workload });
            }
            Some(_) => {}
        }
        if prepared.is_none() || o.reprepare.contains(&workload) {
            prepared = Some(workload);
        }
        for &threads in &o.threads {
            v.push(Phase::OltpRun {
                workload,
                threads,
                regime: None,
            });
        }
    }
    if let Some(last) = prepared {
        v.push(Phase::OltpCleanup { workload: last });
    }
}

/// `[oltp.regimes]`: one data set, every workload run once per regime — CPU-bound first (the
/// server restarted with the large buffer pool and the tables read into it), then I/O-bound
/// (restarted with the small one) — and dropped after the last.
fn oltp_in_both_regimes(o: &crate::config::profile::OltpPlan, v: &mut Vec<Phase>) {
    let Some(&first) = o.workloads.first() else {
        return;
    };
    v.push(Phase::OltpPrepare { workload: first });
    for regime in Regime::ALL {
        v.push(Phase::MysqldRestart {
            regime: Some(regime),
        });
        if regime == Regime::CpuBound {
            v.push(Phase::OltpPrewarm);
        }
        for &workload in &o.workloads {
            for &threads in &o.threads {
                v.push(Phase::OltpRun {
                    workload,
                    threads,
                    regime: Some(regime),
                });
            }
        }
    }
    v.push(Phase::OltpCleanup { workload: first });
}

/// Rows per second an OLTP prepare loads, and bytes per second a fileio prepare writes, on a
/// Raspberry Pi 4 with a USB3 SSD (rough: for the time estimates only).
const PREPARE_ROWS_PER_S: u64 = 40_000;
const PREPARE_BYTES_PER_S: u64 = 200 << 20;

/// Expected duration of a phase in seconds (for the progress line and `suite --dry-run`), from
/// the profile's run times; preparations and server starts are rough guesses for a Raspberry
/// Pi 4 with a USB3 SSD (a set given as `NxRAM` counts as 4 GiB).
pub fn estimate_s(phase: &Phase, p: &SuiteProfile) -> u64 {
    use crate::config::profile::TotalSize;
    match phase {
        Phase::FileioPrepare { set } => {
            let bytes = match p.fileio.get(*set).map(|f| f.total) {
                Some(TotalSize::Bytes(b)) => b,
                _ => 4 << 30,
            };
            5 + bytes / PREPARE_BYTES_PER_S
        }
        Phase::OltpPrepare { .. } => p.oltp.as_ref().map_or(10, |o| {
            10 + o.base.tables as u64 * o.base.table_size as u64 / PREPARE_ROWS_PER_S
        }),
        Phase::FileioRun { set, .. } => p
            .fileio
            .get(*set)
            .and_then(|f| f.base.time_limit)
            .map(|t| t.as_secs().max(1))
            .unwrap_or(1),
        Phase::OltpRun { .. } => p.oltp.as_ref().map(|o| o.base.time_s).unwrap_or(1),
        Phase::FileioCliff => p.cliff.as_ref().map_or(1, |c| c.time_limit.as_secs()),
        Phase::TpccPrepare => p
            .tpcc
            .as_ref()
            .map(|t| 20 + 30 * t.base.warehouses as u64)
            .unwrap_or(1),
        Phase::TpccRun { .. } => p
            .tpcc
            .as_ref()
            .map(|t| t.base.rampup_s + t.base.measured_s())
            .unwrap_or(1),
        Phase::TpccCheck => 10,
        Phase::MysqldStart | Phase::MysqldRestart { .. } => 10,
        // Reading the data set at ≈ 100 MiB/s.
        Phase::OltpPrewarm => p.oltp.as_ref().map_or(1, |o| {
            crate::oltp::estimated_data_bytes(o.base.tables, o.base.table_size) / (100 << 20) + 5
        }),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_servers_repeat_the_database_block_named_after_each() {
        use crate::provision::mysqld::Flavor;
        let p = SuiteProfile::load("quick").unwrap();
        let one = steps(&p, &[ServerChoice::default()]);
        assert_eq!(
            one.iter().map(Step::name).collect::<Vec<_>>(),
            phases(&p).iter().map(Phase::name).collect::<Vec<_>>()
        );
        let two = [Flavor::MariaDb, Flavor::MySql].map(|f| ServerChoice {
            mysqld: None,
            flavor: Some(f),
        });
        let names: Vec<String> = steps(&p, &two).iter().map(Step::name).collect();
        let db =
            |n: &String| n.starts_with("mysqld") || n.starts_with("oltp") || n.starts_with("tpcc");
        let fileio = names.iter().filter(|n| n.starts_with("fileio")).count();
        assert_eq!(
            fileio,
            phases(&p)
                .iter()
                .filter(|ph| ph.name().starts_with("fileio"))
                .count()
        );
        let db_one = one.iter().map(Step::name).filter(db).count();
        assert_eq!(names.iter().filter(|n| db(n)).count(), 2 * db_one);
        let start = |s: &str| names.iter().position(|n| n == s).unwrap();
        assert!(start("mysqld-stop-mariadb") < start("mysqld-start-mysql"));
        assert!(names.contains(&"oltp-read_write-t4-mysql".to_string()));
        assert!(names.contains(&"tpcc-w1-c4-mariadb".to_string()));
        assert_eq!(names.last().unwrap(), "system-state-after");
    }

    #[test]
    fn quick_plan_order() {
        let p = SuiteProfile::load("quick").unwrap();
        let names: Vec<String> = phases(&p).iter().map(Phase::name).collect();
        assert_eq!(names.first().unwrap(), "system-state-before");
        assert_eq!(names[1], "fileio-prepare");
        assert_eq!(names[2], "fileio-seqwr-t4");
        let mysqld = names.iter().position(|n| n == "mysqld-start").unwrap();
        assert!(names[..mysqld].contains(&"fileio-cleanup".to_string()));
        // one data set: prepared once, read-only workloads first, dropped at the end
        assert_eq!(
            names[mysqld + 1..names.len() - 2],
            [
                "oltp-read_only-prepare",
                "oltp-read_only-t4",
                "oltp-point_select-t4",
                "oltp-read_write-t4",
                "oltp-write_only-t4",
                "oltp-read_only-cleanup",
                "tpcc-prepare",
                "tpcc-w1-c4",
                "tpcc-check",
                "tpcc-cleanup"
            ],
            "TPC-C after OLTP on the same server"
        );
        assert_eq!(names[names.len() - 2], "mysqld-stop");
        assert_eq!(names.last().unwrap(), "system-state-after");
        let total: u64 = phases(&p).iter().map(|ph| estimate_s(ph, &p)).sum();
        assert!(total > 60, "{total}");
    }

    #[test]
    fn reprepare_gives_a_workload_fresh_tables() {
        let text = "[oltp]\nworkloads = [\"read_write\", \"read_only\", \"write_only\"]\ntables = 1\ntable_size = 10\nthreads = [2]\ntime = 1\nreprepare = [\"write_only\"]\n";
        let p = SuiteProfile::parse(text, "x", "x.toml").unwrap();
        let names: Vec<String> = phases(&p).iter().map(Phase::name).collect();
        assert_eq!(
            names[2..names.len() - 2],
            [
                "oltp-read_only-prepare",
                "oltp-read_only-t2",
                "oltp-read_write-t2",
                "oltp-read_only-cleanup",
                "oltp-write_only-prepare",
                "oltp-write_only-t2",
                "oltp-write_only-cleanup"
            ]
        );
    }

    #[test]
    fn reference_plan_has_two_fileio_sets_and_legacy_oltp() {
        let p = SuiteProfile::load("reference").unwrap();
        let names: Vec<String> = phases(&p).iter().map(Phase::name).collect();
        assert!(names.contains(&"fileio-rndrw-t1".to_string()));
        assert!(names.contains(&"fileio2-rndrw-t50".to_string()));
        assert!(names.contains(&"fileio2-seqrd-t50".to_string()));
        assert!(names.contains(&"oltp-legacy-t10-cpu_bound".to_string()));
        assert!(names.contains(&"oltp-legacy-t10-io_bound".to_string()));
        assert!(
            names.contains(&"tpcc-w10-c50".to_string()),
            "seed 003's TPC-C"
        );
    }

    #[test]
    fn regimes_run_every_workload_twice_on_one_data_set() {
        let text = "[mysqld]\nbuffer_pool_size = \"64M\"\n[oltp]\nworkloads = [\"read_write\", \"read_only\"]\ntables = 4\ntable_size = 100000\nthreads = [4]\ntime = 5\n[oltp.regimes]\ncpu_bound = \"auto\"\nio_bound = \"16M\"\n[tpcc]\nwarehouses = 1\nconnections = 2\ntime = 5\ncheck = false\n";
        let p = SuiteProfile::parse(text, "x", "x.toml").unwrap();
        let names: Vec<String> = phases(&p).iter().map(Phase::name).collect();
        assert_eq!(
            names[1..names.len() - 2],
            [
                "mysqld-start",
                "oltp-read_only-prepare",
                "mysqld-restart-cpu_bound",
                "oltp-prewarm",
                "oltp-read_only-t4-cpu_bound",
                "oltp-read_write-t4-cpu_bound",
                "mysqld-restart-io_bound",
                "oltp-read_only-t4-io_bound",
                "oltp-read_write-t4-io_bound",
                "oltp-read_only-cleanup",
                "mysqld-restart",
                "tpcc-prepare",
                "tpcc-w1-c2",
                "tpcc-cleanup"
            ]
        );
        // reprepare would give the second regime another data set
        let e = SuiteProfile::parse(
            &text.replace(
                "time = 5\n[oltp.regimes]",
                "time = 5\nreprepare = [\"read_write\"]\n[oltp.regimes]",
            ),
            "x",
            "x.toml",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("profile file 'x.toml': oltp.regimes: cannot be combined with reprepare"),
            "{e}"
        );
    }

    #[test]
    fn tpcc_alone_still_gets_a_server() {
        let text = "[tpcc]\nwarehouses = 2\nconnections = 3\ntime = 5\ncheck = false\n";
        let p = SuiteProfile::parse(text, "x", "x.toml").unwrap();
        let names: Vec<String> = phases(&p).iter().map(Phase::name).collect();
        assert_eq!(
            names,
            [
                "system-state-before",
                "mysqld-start",
                "tpcc-prepare",
                "tpcc-w2-c3",
                "tpcc-cleanup",
                "mysqld-stop",
                "system-state-after"
            ]
        );
    }

    #[test]
    fn async_sets_are_named_by_block_size_and_queue_depth() {
        for name in ["standard", "reference"] {
            let p = SuiteProfile::load(name).unwrap();
            // Each phase once (a repeated one is in the plan once per round).
            let mut distinct: Vec<Phase> = Vec::new();
            for ph in phases(&p) {
                if !distinct.contains(&ph) {
                    distinct.push(ph);
                }
            }
            let names: Vec<String> = distinct.iter().map(Phase::name).collect();
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
        let p = SuiteProfile::load("standard").unwrap();
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

    #[test]
    fn the_cliff_write_follows_the_fileio_sets_in_the_profiles_that_have_it() {
        for name in ["standard", "reference"] {
            let p = SuiteProfile::load(name).unwrap();
            let v = phases(&p);
            let cliff = v.iter().position(|ph| *ph == Phase::FileioCliff);
            let last_fileio = v
                .iter()
                .rposition(|ph| matches!(ph, Phase::FileioCleanup { .. }));
            assert_eq!(cliff, last_fileio.map(|i| i + 1), "{name}");
            let limit = p.cliff.as_ref().unwrap().time_limit.as_secs();
            assert_eq!(estimate_s(&Phase::FileioCliff, &p), limit);
        }
        let quick = SuiteProfile::load("quick").unwrap();
        assert!(!phases(&quick).contains(&Phase::FileioCliff));
    }

    #[test]
    fn repeats_run_each_stretch_of_measurements_in_rounds() {
        let once = SuiteProfile::load("quick").unwrap();
        let mut thrice = once.clone();
        thrice.repeat = thrice.repeat.with_count(3).unwrap();
        let (a, b) = (phases(&once), phases(&thrice));
        let runs = |v: &[Phase]| v.iter().filter(|p| p.is_measurement()).count();
        assert_eq!(runs(&b), 3 * runs(&a));
        assert_eq!(b.len() - runs(&b), a.len() - runs(&a), "the rest once");
        // The first set's runs: all of them, then all again, then again, then its cleanup.
        let set0: Vec<Phase> = a
            .iter()
            .filter(|p| matches!(p, Phase::FileioRun { set: 0, .. }))
            .copied()
            .collect();
        let start = b.iter().position(|p| *p == set0[0]).unwrap();
        let n = set0.len();
        for r in 0..3 {
            assert_eq!(b[start + r * n..start + (r + 1) * n], set0[..], "round {r}");
        }
        assert_eq!(b[start + 3 * n], Phase::FileioCleanup { set: 0 });
    }

    #[test]
    fn a_set_with_its_own_repeat_runs_its_stretch_that_often_and_the_rest_as_repeat_says() {
        let mut p = SuiteProfile::load("quick").unwrap();
        p.fileio[0].repeat = 5;
        let count = |p: &SuiteProfile, set: usize| {
            let v = phases(p);
            let n = v
                .iter()
                .filter(|ph| matches!(ph, Phase::FileioRun { set: s, .. } if *s == set));
            n.count()
        };
        let once = SuiteProfile::load("quick").unwrap();
        assert_eq!(count(&p, 0), 5 * count(&once, 0));
        let others = |p: &SuiteProfile| phases(p).iter().filter(|ph| ph.is_measurement()).count();
        assert_eq!(others(&p) - count(&p, 0), others(&once) - count(&once, 0));
        let run = set_runs(&p, 0)[0];
        assert_eq!(repeat_of(&p, &run).count, 5);
        assert_eq!(repeat_of(&p, &run).max, 5);
        // [repeat] above the set's own count wins; below it, the set's.
        p.repeat = p.repeat.with_count(7).unwrap();
        assert_eq!(repeat_of(&p, &run).count, 7);
        assert_eq!(count(&p, 0), 7 * count(&once, 0));
        p.repeat = p.repeat.with_count(3).unwrap();
        assert_eq!(repeat_of(&p, &run).count, 5);
        assert_eq!(
            repeat_of(
                &p,
                &Phase::TpccRun {
                    warehouses: 1,
                    connections: 1
                }
            )
            .count,
            3
        );
    }
}
