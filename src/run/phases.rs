//! What each phase does on one target: the engines called with the profile's typed settings,
//! the private server started and stopped, the system state recorded, and the facts about how a
//! phase ran (notes). Engine progress lines are collected per phase
//! ([`Chatter`](super::target_run::Chatter)) for its text file instead of going to the screen.

use super::target_run::{
    block_on, buffer_pool_bytes, data_set, oltp_config, ram_bytes, ready_or_skip, server_alive,
    server_spec, server_stopped_error, Ctx, DataSet, Outcome, TargetRun,
};
use crate::engine::Observer as _;
use crate::fileio::{self, TestMode};
use crate::model::{BenchResult, TestOptions};
use crate::model::{Phase, Regime, When};
use crate::model::{PhaseResult, ServerInfo, TargetResult};
use crate::oltp::{self, Workload};
use crate::provision::mysqld;
use crate::sys::state;
use std::time::Duration;

/// Runs `phase`. `pr` receives facts about how it ran (notes, the page cache, the data set,
/// the server's I/O counters over a database phase); `target` what the phase records about the
/// target itself (system state, server).
pub fn run_phase(
    ctx: &Ctx<'_>,
    run: &mut TargetRun,
    phase: &Phase,
    pr: &mut PhaseResult,
    target: &mut TargetResult,
) -> anyhow::Result<Outcome> {
    let before = server_counters(run, phase);
    let outcome = run_step(ctx, run, phase, pr, target);
    if let Some(before) = before {
        // A server that died in the phase has no counters to read: the delta stays unknown.
        if let Some(after) = server_counters(run, phase) {
            pr.server_io = Some(mysqld::observe::counter_deltas(&before, &after));
        }
    }
    outcome
}

/// The server's I/O counters, for a phase that works the database while it runs.
fn server_counters(
    run: &TargetRun,
    phase: &Phase,
) -> Option<std::collections::BTreeMap<String, u64>> {
    let works_the_database = matches!(
        phase,
        Phase::OltpPrewarm
            | Phase::OltpPrepare { .. }
            | Phase::OltpRun { .. }
            | Phase::TpccPrepare
            | Phase::TpccRun { .. }
            | Phase::TpccCheck
    );
    let client = run.server.as_ref().filter(|_| works_the_database)?;
    block_on(mysqld::observe::io_counters(client)).ok()?.ok()
}

fn run_step(
    ctx: &Ctx<'_>,
    run: &mut TargetRun,
    phase: &Phase,
    pr: &mut PhaseResult,
    target: &mut TargetResult,
) -> anyhow::Result<Outcome> {
    match *phase {
        Phase::SystemState { when } => {
            let s = state::snapshot(ctx.opts.sys.root.root());
            match when {
                When::Before => target.state_before = Some(s),
                When::After => target.state_after = Some(s),
            }
            Ok(Outcome::Done(None))
        }
        Phase::FileioPrepare { set } => fileio_prepare(ctx, run, set),
        Phase::FileioRun {
            set, mode, threads, ..
        } => fileio_run(ctx, run, set, mode, threads, pr),
        Phase::FileioCleanup { set } => {
            let cfg = fileio_config(ctx, run, set, None, 1);
            if cfg.dir.exists() {
                fileio::cleanup(&cfg, ctx.chatter)?;
                let _ = std::fs::remove_dir(&cfg.dir);
            }
            Ok(Outcome::Done(None))
        }
        Phase::FileioCliff => fileio_cliff(ctx, run, pr, target),
        Phase::MysqldStart => mysqld_start(ctx, run, pr, target),
        Phase::MysqldRestart { regime } => super::regimes::restart(ctx, run, regime, pr),
        Phase::OltpPrewarm => super::regimes::prewarm(ctx, run, pr),
        Phase::OltpPrepare { workload } => oltp_prepare(ctx, run, workload),
        Phase::OltpRun {
            workload,
            threads,
            regime,
        } => oltp_run(ctx, run, (workload, threads, regime), pr),
        Phase::OltpCleanup { workload } => {
            let client = ready_or_skip!(run);
            let cfg = oltp_config(ctx, workload, 1, &client);
            oltp::cleanup(&cfg, ctx.chatter)?;
            run.oltp_tables = None;
            Ok(Outcome::Done(None))
        }
        Phase::TpccPrepare => super::tpcc::prepare(ctx, run),
        Phase::TpccRun { .. } => super::tpcc::run(ctx, run, pr),
        Phase::TpccCheck => super::tpcc::check(ctx, run),
        Phase::TpccCleanup => super::tpcc::cleanup(ctx, run),
        Phase::MysqldStop => {
            let datadir = run.datadir();
            if !datadir.exists() {
                return Ok(Outcome::Skipped("no server was provisioned".into()));
            }
            let peak = mysqld::observe::peak_rss_bytes(&datadir);
            if let (Some(peak), Some(server)) = (peak, target.servers.last_mut()) {
                server.peak_rss_bytes = Some(peak);
                pr.notes.push(format!(
                    "the server's peak memory (VmHWM): {}",
                    crate::units::human_size(peak)
                ));
            }
            let out = block_on(mysqld::stop(&datadir, Duration::from_secs(300)))??;
            pr.notes.push(out.to_string());
            run.server = None;
            Ok(Outcome::Done(None))
        }
    }
}

/// The engine config of a fileio run of set `set` in the target's work directory.
fn fileio_config(
    ctx: &Ctx<'_>,
    run: &TargetRun,
    set: usize,
    mode: Option<TestMode>,
    threads: u32,
) -> fileio::FileioConfig {
    ctx.opts.profile.fileio[set].config(
        run.work.join(format!("fileio{set}")),
        ram_bytes(),
        mode,
        threads,
    )
}

fn fileio_prepare(ctx: &Ctx<'_>, run: &mut TargetRun, set: usize) -> anyhow::Result<Outcome> {
    let cfg = fileio_config(ctx, run, set, None, 1);
    std::fs::create_dir_all(&cfg.dir)?;
    fileio::prepare(&cfg, ctx.controller, ctx.chatter)?;
    run.fileio_ok[set] = true;
    Ok(Outcome::Done(None))
}

fn fileio_run(
    ctx: &Ctx<'_>,
    run: &mut TargetRun,
    set: usize,
    mode: TestMode,
    threads: u32,
    pr: &mut PhaseResult,
) -> anyhow::Result<Outcome> {
    if !run.fileio_ok[set] {
        return Ok(Outcome::Skipped(
            "the fileio files were not prepared".into(),
        ));
    }
    let cfg = fileio_config(ctx, run, set, Some(mode), threads);
    if cfg.io_mode == fileio::IoMode::Async {
        // Kernels without io_uring (or with it disabled): skipped, saying why and the fix.
        if let Err(e) = fileio::uring::Ring::new(1) {
            return Ok(Outcome::Skipped(e.to_string()));
        }
    }
    if ctx.opts.profile.fileio[set].drop_caches {
        pr.caches_dropped = Some(crate::sys::drop_caches());
    }
    let before = crate::sys::blockdev::Counters::of_dir(&cfg.dir);
    let m = fileio::run(&cfg, ctx.controller, ctx.chatter)?;
    let after = crate::sys::blockdev::Counters::of_dir(&cfg.dir);
    pr.device_io = before.zip(after).map(|(b, a)| b.until(&a));
    if mode == TestMode::Seqwr {
        // seqwr truncates and rewrites the files; give later modes full files again.
        let again = fileio_config(ctx, run, set, None, 1);
        if let Err(e) = fileio::prepare(&again, ctx.controller, ctx.chatter) {
            run.fileio_ok[set] = false;
            pr.notes
                .push(format!("re-prepare after seqwr failed: {e:#}"));
        }
    }
    let mut r = BenchResult::new(TestOptions::Fileio(cfg), m);
    r.judge_steady(&ctx.opts.profile.fileio[set].steady);
    Ok(Outcome::Done(Some(Box::new(r))))
}

/// The sustained write that finds the SLC-cache cliff, in `<work>/cliff` (removed after). A
/// RAM-backed target is skipped: it has no cache to fall out of; so is a filesystem with no room
/// beyond `keep_free`. A stop keeps the series so far
/// (and its finding) and marks the phase interrupted.
fn fileio_cliff(
    ctx: &Ctx<'_>,
    run: &TargetRun,
    pr: &mut PhaseResult,
    target: &TargetResult,
) -> anyhow::Result<Outcome> {
    let Some(base) = &ctx.opts.profile.cliff else {
        return Ok(Outcome::Skipped("the profile has no [cliff] table".into()));
    };
    if let Some(fs) = target.filesystem.as_ref().filter(|f| f.in_ram) {
        return Ok(Outcome::Skipped(format!(
            "the target is in RAM ({}): no disk cache to fall out of",
            fs.describe()
        )));
    }
    let cfg = fileio::sustained::SustainedConfig {
        dir: run.work.join("cliff"),
        ..base.clone()
    };
    std::fs::create_dir_all(&cfg.dir)?;
    // A disk with no room beyond what the write keeps free is not a failed disk.
    if let Err(why) = fileio::sustained::room(&cfg)? {
        let _ = std::fs::remove_dir(&cfg.dir);
        return Ok(Outcome::Skipped(why));
    }
    let w = fileio::sustained::sustained_write(&cfg, ctx.controller, ctx.chatter);
    let _ = std::fs::remove_dir(&cfg.dir);
    let w = w?;
    let record = crate::model::CliffRecord::new(cfg, w.planned_bytes, w.bound, w.samples);
    ctx.chatter.message(&record.summary_line());
    let stopped = w.bound == fileio::sustained::WriteBound::Stopped;
    pr.cliff = Some(record);
    if stopped {
        anyhow::bail!("stopped: the series so far is kept");
    }
    Ok(Outcome::Done(None))
}

/// The my.cnf settings recorded with the results: the ones that change the numbers.
const SETTINGS_THAT_MATTER: &[&str] = &[
    "performance_schema",
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_redo_log_capacity",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_method",
    "innodb_doublewrite",
    "innodb_io_capacity",
    "sync_binlog",
    "log_bin",
    "skip_log_bin",
    "binlog_format",
    "max_connections",
];

fn mysqld_start(
    ctx: &Ctx<'_>,
    run: &mut TargetRun,
    pr: &mut PhaseResult,
    target: &mut TargetResult,
) -> anyhow::Result<Outcome> {
    let spec = server_spec(ctx, run);
    // A new server (the next of several) starts with no tables of the last one's.
    run.oltp_tables = None;
    run.tpcc_loaded = false;
    run.regime_skipped = None;
    mysqld::init(&spec)?;
    let client = block_on(mysqld::start(&spec))??;
    // Where the server listened is for the phase's log, not the report (it is gone after).
    ctx.chatter
        .message(&format!("server socket {}", client.socket.display()));
    run.buffer_pool = buffer_pool_bytes(ctx);
    if let Ok(st) = mysqld::status(&spec.datadir) {
        pr.notes.push(format!("{} {}", st.flavor, st.version));
        let cnf = std::fs::read_to_string(&st.config)
            .map(|t| mysqld::config::parse_cnf_section(&t, "mysqld"))
            .unwrap_or_default();
        target.servers.push(ServerInfo {
            flavor: st.flavor.to_string(),
            version: st.version.clone(),
            settings: cnf
                .into_iter()
                .filter(|(k, _)| SETTINGS_THAT_MATTER.contains(&k.replace('-', "_").as_str()))
                .collect(),
            effective: match block_on(mysqld::observe::io_variables(&client))? {
                Ok(v) => v,
                Err(e) => {
                    pr.notes.push(format!(
                        "the server's I/O variables could not be read: {e:#}"
                    ));
                    Default::default()
                }
            },
            peak_rss_bytes: None,
        });
    }
    run.server = Some(client);
    Ok(Outcome::Done(None))
}

fn oltp_prepare(ctx: &Ctx<'_>, run: &mut TargetRun, workload: Workload) -> anyhow::Result<Outcome> {
    let client = ready_or_skip!(run);
    let o = ctx.opts.profile.oltp.as_ref().expect("oltp");
    let threads = o.threads.iter().copied().max().unwrap_or(1);
    let cfg = oltp_config(ctx, workload, threads, &client);
    oltp::prepare(&cfg, ctx.controller, ctx.chatter)?;
    run.oltp_tables = Some(DataSet {
        prepared_for: workload,
        used_by: vec![],
    });
    Ok(Outcome::Done(None))
}

/// One OLTP run: (workload, threads, the regime of a two-regime profile).
fn oltp_run(
    ctx: &Ctx<'_>,
    run: &mut TargetRun,
    (workload, threads, regime): (Workload, u32, Option<Regime>),
    pr: &mut PhaseResult,
) -> anyhow::Result<Outcome> {
    let client = ready_or_skip!(run);
    if let Some((skipped, why)) = &run.regime_skipped {
        if Some(*skipped) == regime {
            return Ok(Outcome::Skipped(why.clone()));
        }
    }
    let Some(tables) = run.oltp_tables.as_mut() else {
        return Ok(Outcome::Skipped("the OLTP tables were not prepared".into()));
    };
    pr.notes.push(tables.describe());
    if !tables.used_by.contains(&workload) {
        tables.used_by.push(workload);
    }
    let cfg = oltp_config(ctx, workload, threads, &client);
    let estimate = oltp::estimated_data_bytes(cfg.tables, cfg.table_size);
    pr.data_set = Some(data_set(run, &client, estimate));
    pr.caches_dropped = Some(crate::sys::drop_caches());
    let m = oltp::run(&cfg, ctx.controller, ctx.chatter)?;
    let mut r = BenchResult::new(TestOptions::Oltp(Box::new(cfg)), m);
    if let Some(o) = &ctx.opts.profile.oltp {
        r.judge_steady(&o.steady);
    }
    if r.error.is_none() && !server_alive(&run.datadir()) {
        // The engine may have spent the end of the run trying to reconnect; a server that is
        // gone makes the numbers partial whatever the engine saw.
        r.error = Some(server_stopped_error(&run.datadir()));
    }
    Ok(Outcome::Done(Some(Box::new(r))))
}
