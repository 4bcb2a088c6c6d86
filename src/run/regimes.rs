//! The two passes of `[oltp.regimes]` on a target's server (seed 004's lesson in one run):
//! restart the server with a regime's buffer pool — the page cache dropped while it is down —
//! and, before the CPU-bound runs, read the tables into that pool so they start warm. The
//! restart back to the profile's own settings (before TPC-C) is the same phase without a
//! regime.

use super::target_run::{
    block_on, buffer_pool_bytes, data_set, oltp_config, ready_or_skip, server_spec,
    table_files_bytes, Ctx, Outcome, TargetRun,
};
use crate::config::regimes::{auto_pool_bytes, CpuBoundPool};
use crate::engine::Observer as _;
use crate::model::PhaseResult;
use crate::model::Regime;
use crate::provision::mysqld;
use crate::units::human_size;
use std::time::Duration;

/// The buffer pool of `regime` on this target, and how it was chosen; `Err` says why the
/// machine cannot run that regime's pass.
fn pool_for(ctx: &Ctx<'_>, run: &TargetRun, regime: Regime) -> Result<(u64, String), String> {
    let regimes = ctx
        .opts
        .profile
        .oltp
        .as_ref()
        .and_then(|o| o.regimes)
        .ok_or("the profile has no [oltp.regimes]")?;
    let ram = crate::sys::HostInfo::collect().ram_bytes;
    match (regime, regimes.cpu_bound) {
        (Regime::IoBound, _) => Ok((regimes.io_bound, "oltp.regimes.io_bound".into())),
        (Regime::CpuBound, CpuBoundPool::Bytes(b)) if b > ram / 4 * 3 => Err(format!(
            "oltp.regimes.cpu_bound = {} is more than 3/4 of this machine's {} of RAM",
            human_size(b),
            human_size(ram)
        )),
        (Regime::CpuBound, CpuBoundPool::Bytes(b)) => Ok((b, "oltp.regimes.cpu_bound".into())),
        (Regime::CpuBound, CpuBoundPool::Auto) => {
            let db = run.server.as_ref().map(|c| run.datadir().join(&c.database));
            let data = db
                .as_deref()
                .and_then(table_files_bytes)
                .ok_or("the OLTP tables' files could not be measured")?;
            let pool = auto_pool_bytes(data, ram)?;
            Ok((
                pool,
                format!("auto: the {} data set × 1.25", human_size(data)),
            ))
        }
    }
}

/// Stops the server, sets the buffer pool of `regime` (the profile's own when `None`) in its
/// my.cnf, drops the page cache and starts it again.
pub(super) fn restart(
    ctx: &Ctx<'_>,
    run: &mut TargetRun,
    regime: Option<Regime>,
    pr: &mut PhaseResult,
) -> anyhow::Result<Outcome> {
    let datadir = run.datadir();
    if run.buffer_pool == 0 || mysqld::status(&datadir).is_err() {
        return Ok(Outcome::Skipped("no server was provisioned".into()));
    }
    let (pool, why) = match regime {
        None => (buffer_pool_bytes(ctx), "the profile's [mysqld]".to_string()),
        Some(r) => match pool_for(ctx, run, r) {
            Ok(p) => p,
            Err(why) => {
                let why = format!("the {} pass cannot run here: {why}", r.words());
                run.regime_skipped = Some((r, why.clone()));
                return Ok(Outcome::Skipped(why));
            }
        },
    };
    let stopped = block_on(mysqld::stop(&datadir, Duration::from_secs(300)))??;
    ctx.chatter.message(&stopped.to_string());
    run.server = None;
    mysqld::set_setting(
        &datadir,
        "innodb_buffer_pool_size",
        &crate::units::my_cnf_size(pool),
    )?;
    pr.caches_dropped = Some(crate::sys::drop_caches());
    let client = block_on(mysqld::start(&server_spec(ctx, run)))??;
    run.server = Some(client);
    run.buffer_pool = pool;
    pr.notes.push(format!(
        "server restarted, buffer pool {} ({why})",
        human_size(pool)
    ));
    Ok(Outcome::Done(None))
}

/// Reads every OLTP table into the buffer pool (before the CPU-bound runs).
pub(super) fn prewarm(
    ctx: &Ctx<'_>,
    run: &mut TargetRun,
    pr: &mut PhaseResult,
) -> anyhow::Result<Outcome> {
    let client = ready_or_skip!(run);
    if let Some((Regime::CpuBound, why)) = &run.regime_skipped {
        return Ok(Outcome::Skipped(why.clone()));
    }
    let Some(o) = ctx.opts.profile.oltp.as_ref() else {
        return Ok(Outcome::Skipped("the profile has no [oltp]".into()));
    };
    let Some(&workload) = o.workloads.first() else {
        return Ok(Outcome::Skipped("the profile has no OLTP workload".into()));
    };
    let threads = o.threads.iter().copied().max().unwrap_or(1);
    let cfg = oltp_config(ctx, workload, threads, &client);
    let done = crate::oltp::prewarm(&cfg, ctx.controller, ctx.chatter)?;
    let fit = data_set(
        run,
        &client,
        crate::oltp::estimated_data_bytes(cfg.tables, cfg.table_size),
    );
    pr.notes.push(format!(
        "{} of {} tables ({}) read into the {} buffer pool in {:.1} s",
        done.tables,
        cfg.tables,
        human_size(fit.data_bytes),
        human_size(fit.buffer_pool_bytes),
        done.elapsed_s
    ));
    pr.data_set = Some(fit);
    Ok(Outcome::Done(None))
}
