//! The numbers of an OLTP run: interval samples from the workers' live counters, and the
//! final [`Measurement`] from their latency recorders.

use super::shared::{Live, Shared, WorkerOut};
use super::OltpConfig;
use crate::engine::{Counters, IntervalRates, IntervalSample, Measurement, OltpCounters};
use crate::engine::{IntervalLatencies, Percentiles};
use crate::stats::{fairness, LatencyRecorder, ThreadShare};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

#[derive(Default, Clone, Copy)]
pub(super) struct Snapshot {
    events: u64,
    reads: u64,
    writes: u64,
    other: u64,
    errors: u64,
    reconnects: u64,
}

pub(super) fn interval_sample(
    shared: &Shared,
    prev: &mut Snapshot,
    prev_t: Instant,
    now: Instant,
    start: Instant,
) -> IntervalSample {
    let mut cur = Snapshot::default();
    let mut latencies = IntervalLatencies::default();
    for l in &shared.live {
        cur.events += l.events.load(Relaxed);
        cur.reads += l.reads.load(Relaxed);
        cur.writes += l.writes.load(Relaxed);
        cur.other += l.other.load(Relaxed);
        cur.errors += l.errors.load(Relaxed);
        cur.reconnects += l.reconnects.load(Relaxed);
        latencies.take(&l.latencies);
    }
    let secs = now.duration_since(prev_t).as_secs_f64().max(1e-9);
    let d = |a: u64, b: u64| a.saturating_sub(b) as f64 / secs;
    let percentile = (shared.cfg.percentile > 0).then_some(shared.cfg.percentile as f64);
    let sample = IntervalSample::new(
        now.duration_since(start).as_secs_f64(),
        shared.running.load(Relaxed),
        cur.events - prev.events,
        latencies.figures(percentile, Percentiles::BucketValue),
        IntervalRates::Oltp {
            tps: d(cur.events, prev.events),
            qps: d(
                cur.reads + cur.writes + cur.other,
                prev.reads + prev.writes + prev.other,
            ),
            reads_per_s: d(cur.reads, prev.reads),
            writes_per_s: d(cur.writes, prev.writes),
            other_per_s: d(cur.other, prev.other),
            errors_per_s: d(cur.errors, prev.errors),
            reconnects_per_s: d(cur.reconnects, prev.reconnects),
        },
    );
    *prev = cur;
    sample
}

pub(super) fn build_result(
    cfg: &OltpConfig,
    shared: &Shared,
    outs: Vec<WorkerOut>,
    intervals: Vec<IntervalSample>,
    total_time_s: f64,
    started_at: String,
) -> Measurement {
    let mut merged = LatencyRecorder::new();
    let mut errors_by_code = BTreeMap::new();
    let mut shares = Vec::with_capacity(outs.len());
    for o in &outs {
        merged.merge(&o.recorder);
        for (c, n) in &o.errors_by_code {
            *errors_by_code.entry(c.to_string()).or_insert(0) += n;
        }
        shares.push(ThreadShare {
            events: o.recorder.count(),
            busy_s: o.recorder.sum_ns() as f64 / 1e9,
        });
    }
    let sum =
        |f: fn(&Live) -> &AtomicU64| shared.live.iter().map(|l| f(l).load(Relaxed)).sum::<u64>();
    let reads = sum(|l| &l.reads);
    let writes = sum(|l| &l.writes);
    let other = sum(|l| &l.other);
    let ignored_errors = sum(|l| &l.errors);
    let reconnects = sum(|l| &l.reconnects);
    let events = merged.count();
    let secs = total_time_s.max(1e-9);
    let queries = reads + writes + other;
    let mut notes = Vec::new();
    if cfg.ps_mode == super::PsMode::Disable {
        notes.push("prepared statements off: statements sent as SQL text".into());
    }
    if shared.begin_as_text.load(Relaxed) {
        notes.push(
            "the server does not prepare BEGIN (error 1295): BEGIN sent as SQL text, the other \
             statements prepared, as sysbench does"
                .into(),
        );
    }
    let diagnostics = shared.run.io_stats.notes();
    let error = shared.run.fatal();
    if error.is_some() {
        notes.push("the run ended early on an error: the numbers are partial".into());
    }
    Measurement {
        started_at,
        threads: cfg.threads,
        total_time_s,
        events,
        counters: Counters::Oltp(OltpCounters {
            reads,
            writes,
            other,
            queries,
            transactions: events,
            ignored_errors,
            reconnects,
            tps: events as f64 / secs,
            qps: queries as f64 / secs,
            ignored_errors_per_s: ignored_errors as f64 / secs,
            reconnects_per_s: reconnects as f64 / secs,
            errors_by_code,
        }),
        latency: merged.summary(cfg.percentile as f64),
        intervals,
        fairness: fairness(shares),
        histogram: merged.histogram_data(),
        notes,
        diagnostics,
        error,
    }
}
