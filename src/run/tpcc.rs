//! The TPC-C phases on a target's private server, after OLTP: load the warehouses, run, check
//! TPC-C's consistency conditions on what the run left, drop the tables. The tables go into the
//! server's benchmark database (OLTP's tables are dropped before TPC-C starts).

use super::target_run::{
    ready_or_skip, server_alive, server_stopped_error, Ctx, Outcome, TargetRun,
};
use crate::config::profile::TpccPlan;
use crate::model::PhaseResult;
use crate::model::{BenchResult, TestOptions};
use crate::provision::mysqld;
use crate::tpcc::{self, TpccConfig};

fn plan<'a>(ctx: &Ctx<'a>) -> &'a TpccPlan {
    ctx.opts
        .profile
        .tpcc
        .as_ref()
        .expect("the plan has TPC-C phases only with [tpcc]")
}

/// The engine config on the target's server.
fn config(ctx: &Ctx<'_>, client: &mysqld::ClientInfo) -> TpccConfig {
    let mut cfg = plan(ctx).base.clone();
    cfg.connection.socket = Some(client.socket.clone());
    cfg.connection.user = client.user.clone();
    cfg.connection.password = client.password.clone();
    cfg.connection.database = client.database.clone();
    cfg
}

pub(super) fn prepare(ctx: &Ctx<'_>, run: &mut TargetRun) -> anyhow::Result<Outcome> {
    let client = ready_or_skip!(run);
    let mut cfg = config(ctx, &client);
    // Tables of an earlier, interrupted phase on this server are ours to replace.
    cfg.replace = true;
    tpcc::prepare(&cfg, ctx.controller, ctx.chatter)?;
    run.tpcc_loaded = true;
    Ok(Outcome::Done(None))
}

pub(super) fn run(
    ctx: &Ctx<'_>,
    run: &mut TargetRun,
    pr: &mut PhaseResult,
) -> anyhow::Result<Outcome> {
    let client = ready_or_skip!(run);
    if !run.tpcc_loaded {
        return Ok(Outcome::Skipped(
            "the TPC-C warehouses were not loaded (tpcc-prepare did not complete)".into(),
        ));
    }
    let cfg = config(ctx, &client);
    let estimate = tpcc::estimated_data_bytes(cfg.warehouses);
    pr.data_set = Some(super::target_run::data_set(run, &client, estimate));
    pr.caches_dropped = Some(crate::sys::drop_caches());
    let m = tpcc::run(&cfg, ctx.controller, ctx.chatter)?;
    let mut r = BenchResult::new(TestOptions::Tpcc(Box::new(cfg)), m);
    r.judge_steady(&plan(ctx).steady);
    if r.error.is_none() && !server_alive(&run.datadir()) {
        r.error = Some(server_stopped_error(&run.datadir()));
    }
    Ok(Outcome::Done(Some(Box::new(r))))
}

pub(super) fn check(ctx: &Ctx<'_>, run: &TargetRun) -> anyhow::Result<Outcome> {
    let client = ready_or_skip!(run);
    if !run.tpcc_loaded {
        return Ok(Outcome::Skipped(
            "the TPC-C warehouses were not loaded".into(),
        ));
    }
    let cfg = config(ctx, &client);
    let report = tpcc::check(&cfg, ctx.controller, ctx.chatter)?;
    Ok(Outcome::Checked(Box::new(report)))
}

pub(super) fn cleanup(ctx: &Ctx<'_>, run: &mut TargetRun) -> anyhow::Result<Outcome> {
    let client = ready_or_skip!(run);
    tpcc::cleanup(&config(ctx, &client), ctx.chatter)?;
    run.tpcc_loaded = false;
    Ok(Outcome::Done(None))
}

/// The error of a failed check: the conditions that failed, per warehouse.
pub fn check_failure(r: &tpcc::CheckReport) -> Option<String> {
    let failed: Vec<String> = r
        .failures()
        .map(|c| format!("{} (warehouse {})", c.clause(), c.warehouse))
        .collect();
    (!failed.is_empty()).then(|| {
        format!(
            "TPC-C consistency check failed: {}",
            crate::units::shorten(&failed.join(", "), 400)
        )
    })
}
