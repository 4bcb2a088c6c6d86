//! `run` (tpcc_start): connections on their own threads, ramp-up, the measured window, one
//! interval sample per `report_interval_s`, and the result.
//!
//! Every connection connects and prepares its statements first; the clock starts when all are
//! ready (the client threads are `db::clients`'; this file says what a TPC-C connection
//! prepares and runs). Ramp-up runs the same loop but counts nothing; the measured window is
//! [`TpccConfig::measured_s`] long; after it the connections finish the transaction in progress
//! (not counted) and disconnect. The progress lines are tpcc_start's (`RAMP-UP TIME.(N sec.)`,
//! `MEASURING START.`, `STOPPING THREADS`).

use super::deck::{Deck, InputGen, TxKind};
use super::live::{interval_sample, Live, Snapshot};
use super::random::NuConstants;
use super::schema;
use super::shared::{Shared, TransactionLog};
use super::txn::Session;
use super::worker::{worker, WorkerOut};
use super::{HomeWarehouse, TpccConfig, TpccError};
use crate::db::clients::{self, ClientRun, Clients, Sessions};
use crate::db::sockets::ThreadIo;
use crate::db::{describe_error, ClientIo};
use crate::engine::{Controller, Observer};
use crate::engine::{Counters, IntervalSample, Measurement, TpccCounters, TpccTypeCounters};
use crate::rng::Rng;
use crate::stats::{fairness, LatencyRecorder, ThreadShare};
use mysql_async::prelude::Queryable;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// [`run_logged`] without a transaction log.
pub fn run(
    cfg: &TpccConfig,
    controller: &Controller,
    observer: &dyn Observer,
) -> anyhow::Result<Measurement> {
    run_logged(cfg, controller, observer, None)
}

/// Runs the benchmark. `Err` when it could not start (bad options, no server, no tables, too
/// few warehouses loaded, statements that do not prepare); an error during the run returns the
/// partial result with `error` set.
pub fn run_logged(
    cfg: &TpccConfig,
    controller: &Controller,
    observer: &dyn Observer,
    log: Option<Arc<dyn TransactionLog>>,
) -> anyhow::Result<Measurement> {
    cfg.validate()?;
    let seed = if cfg.seed == 0 {
        crate::rng::time_seed()
    } else {
        cfg.seed
    };
    let nu_load = open_database(cfg)?;
    let nu = NuConstants::for_run(&nu_load, &mut Rng::stream(seed, 0xC1));
    let n = cfg.connections as usize;
    let shared = Arc::new(Shared {
        cfg: cfg.clone(),
        live: (0..n).map(|_| Live::new()).collect(),
        log,
        rt_limits_ns: cfg.rt_limits_s.map(|s| s * 1e9),
        window: OnceLock::new(),
        run: ClientRun::new(
            &cfg.connection,
            cfg.client_io,
            cfg.skip_write_wakeups,
            controller,
        ),
        recorders: Mutex::new(std::array::from_fn(|_| LatencyRecorder::new())),
        buckets: crate::stats::SysbenchHistogram::new(),
        deck: Mutex::new((Deck::new(), Rng::stream(seed, 0xDEC))),
    });
    let started_at = crate::sys::clock::now_rfc3339();
    let plan = |i: usize| Plan {
        i,
        rng: Rng::stream(seed, i as u64 + 1),
        gen: InputGen {
            warehouses: cfg.warehouses,
            home: match cfg.home_warehouse {
                HomeWarehouse::Random => None,
                HomeWarehouse::PerConnection => Some(i as u32 % cfg.warehouses + 1),
            },
            nu,
        },
    };
    let (mut clients, (measure_start, measure_end)) = clients::start(
        &shared,
        ClientIo::threads(n, cfg.client_threads),
        n,
        plan,
        || {
            let start = Instant::now();
            let measure_start = start + Duration::from_secs(cfg.rampup_s);
            let measure_end = measure_start + Duration::from_secs(cfg.measured_s());
            let _ = shared.window.set((measure_start, measure_end));
            (measure_start, measure_end)
        },
    )?;
    let phases = drive(cfg, &shared, controller, observer, &mut clients);
    let measured_s = match phases.measured_until {
        Some(t) if t >= measure_end => cfg.measured_s() as f64,
        Some(t) => t.saturating_duration_since(measure_start).as_secs_f64(),
        None => 0.0,
    };
    let outs = clients.join(phases.all_done);
    Ok(build_result(
        cfg,
        &shared,
        outs,
        phases.intervals,
        measured_s,
        started_at,
    ))
}

/// Checks the tables and the warehouses loaded, marks the data as run on, and returns the
/// NURand constants of the load (from spindle's marker; arbitrary ones for data loaded by
/// another tool).
fn open_database(cfg: &TpccConfig) -> anyhow::Result<NuConstants> {
    let rt = super::load::runtime()?;
    rt.block_on(async {
        let mut conn = cfg.connection.connect(true).await?;
        let sql = |what: &'static str| move |e| anyhow::anyhow!("{what}: {}", describe_error(&e));
        schema::require_tables(&mut conn, &cfg.connection.database).await?;
        let loaded: u32 = conn
            .query_first("SELECT COUNT(*) FROM warehouse")
            .await
            .map_err(sql("counting warehouses"))?
            .unwrap_or(0);
        if loaded == 0 {
            return Err(TpccError::Empty {
                database: cfg.connection.database.clone(),
            }
            .into());
        }
        if cfg.warehouses > loaded {
            return Err(TpccError::TooManyWarehouses {
                database: cfg.connection.database.clone(),
                asked: cfg.warehouses,
                loaded,
            }
            .into());
        }
        let marker = schema::read_marker(&mut conn)
            .await
            .map_err(sql("reading spindle_tpcc"))?;
        if marker.is_some() {
            conn.query_drop("UPDATE spindle_tpcc SET runs = runs + 1 WHERE id = 1")
                .await
                .map_err(sql("updating spindle_tpcc"))?;
        }
        let _ = conn.disconnect().await;
        Ok(marker.map(|m| m.nu).unwrap_or(NuConstants {
            c_last: 0,
            c_id: 0,
            ol_i_id: 0,
        }))
    })
}

/// One connection's number, random stream and input generator.
pub(crate) struct Plan {
    i: usize,
    rng: Rng,
    gen: InputGen,
}

/// What a TPC-C connection prepares (tpcc-mysql's statements) and runs ([`worker`]).
impl Sessions for Shared {
    type Plan = Plan;
    type Session = Session;
    type Out = WorkerOut;
    const NAME: &'static str = "tpcc";
    const TASK: &'static str = "connection";
    const POLL_ALONE: bool = true;

    fn client_run(&self) -> &ClientRun {
        &self.run
    }

    async fn prepare(&self, conn: mysql_async::Conn, _: &Plan) -> Result<Session, String> {
        Session::new(conn, self.cfg.statements).await.map_err(|e| {
            format!(
                "could not prepare the TPC-C statements: {}",
                describe_error(&e)
            )
        })
    }

    fn use_io(session: &mut Session, io: &ThreadIo, stats: &crate::db::IoStats) {
        session.link.wire = io.apply(&mut session.link.conn, stats);
    }

    fn run(
        self: Arc<Self>,
        p: Plan,
        session: Session,
        io: ThreadIo,
    ) -> impl Future<Output = WorkerOut> + Send + 'static {
        worker(p.i, session, p.rng, p.gen, self, io)
    }

    fn index(out: &WorkerOut) -> usize {
        out.idx
    }
}

/// What the calling thread saw while the connections ran.
struct Phases {
    intervals: Vec<IntervalSample>,
    /// When counting ended (the end of the window, or a stop/error inside it); `None` when
    /// the run ended during ramp-up.
    measured_until: Option<Instant>,
    /// Every connection finished (false: abandoned after an abort).
    all_done: bool,
}

/// Ramp-up, intervals, the end; returns when every connection is done (or was abandoned).
fn drive(
    cfg: &TpccConfig,
    shared: &Shared,
    controller: &Controller,
    observer: &dyn Observer,
    clients: &mut Clients<Shared>,
) -> Phases {
    let (measure_start, measure_end) = shared.window();
    observer.message(&format!("RAMP-UP TIME.({} sec.)", cfg.rampup_s));
    let mut phases = Phases {
        intervals: Vec::new(),
        measured_until: None,
        all_done: false,
    };
    let mut finished = 0;
    let mut announced = false;
    let mut prev = Snapshot::default();
    let interval = cfg.report_interval_s;
    let mut tick = 1u64;
    while finished < clients.threads() {
        let now = Instant::now();
        if !announced && now >= measure_start && !shared.stopping() {
            announced = true;
            observer.message("MEASURING START.");
        }
        let next_tick = measure_start + Duration::from_secs(interval * tick);
        if interval > 0 && announced && now >= next_tick && next_tick <= measure_end {
            let s = interval_sample(
                &shared.live,
                &mut prev,
                (interval * tick) as f64,
                interval as f64,
                cfg.connections,
            );
            observer.interval(&s);
            phases.intervals.push(s);
            tick += 1;
            continue;
        }
        if phases.measured_until.is_none() && (now >= measure_end || shared.stopping()) {
            if now >= measure_start {
                phases.measured_until = Some(now.min(measure_end));
            } else {
                phases.measured_until = Some(measure_start);
            }
            if now >= measure_end {
                observer.message("STOPPING THREADS");
            }
        }
        if clients.abandon(controller) {
            return phases;
        }
        let wait = if interval > 0 && next_tick <= measure_end {
            next_tick.saturating_duration_since(now)
        } else {
            measure_end.saturating_duration_since(now)
        }
        .clamp(Duration::from_millis(1), Duration::from_millis(100));
        match clients.wait(wait) {
            Ok(()) => finished += 1,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    if phases.measured_until.is_none() {
        let now = Instant::now();
        phases.measured_until = (now >= measure_start).then(|| now.min(measure_end));
    }
    phases.all_done = true;
    phases
}

fn build_result(
    cfg: &TpccConfig,
    shared: &Shared,
    outs: Vec<WorkerOut>,
    intervals: Vec<IntervalSample>,
    measured_s: f64,
    started_at: String,
) -> Measurement {
    let mut merged = LatencyRecorder::new();
    let mut per_type = Vec::with_capacity(5);
    let mut errors_all: BTreeMap<String, u64> = BTreeMap::new();
    let recorders = shared.recorders.lock().unwrap_or_else(|p| p.into_inner());
    for k in TxKind::ALL {
        let i = k as usize;
        let rec = &recorders[i];
        let mut errors: BTreeMap<String, u64> = BTreeMap::new();
        for o in &outs {
            for (c, n) in &o.errors[i] {
                *errors.entry(c.to_string()).or_insert(0) += n;
                *errors_all.entry(c.to_string()).or_insert(0) += n;
            }
        }
        merged.merge(rec);
        let sum = |f: fn(&super::live::LiveType) -> &AtomicU64| -> u64 {
            shared
                .live
                .iter()
                .map(|l| f(&l.types[i]).load(Relaxed))
                .sum()
        };
        let s = rec.summary(95.0);
        // HDR percentiles are bucket values, up to 0.1 % above the exact maximum: clamp.
        let q = |us: f64| us.min(s.max_us) / 1e3;
        per_type.push(TpccTypeCounters {
            name: k.name().into(),
            success: sum(|t| &t.success),
            late: sum(|t| &t.late),
            retries: sum(|t| &t.retries),
            failures: sum(|t| &t.failures),
            rollbacks: sum(|t| &t.rollbacks),
            rt_limit_s: cfg.rt_limits_s[i],
            avg_ms: s.avg_us / 1e3,
            p50_ms: q(s.p50_us),
            p90_ms: q(s.p90_us),
            p95_ms: q(s.p95_us),
            p99_ms: q(s.p99_us),
            p99_9_ms: q(s.p99_9_us),
            max_ms: s.max_us / 1e3,
            errors_by_code: errors,
        });
    }
    let completed: u64 = per_type.iter().map(|t| t.success + t.late).sum();
    let per_min = |n: u64| {
        if measured_s > 0.0 {
            n as f64 * 60.0 / measured_s
        } else {
            0.0
        }
    };
    let shares = outs
        .iter()
        .map(|o| ThreadShare {
            events: o.events,
            busy_s: o.busy_ns as f64 / 1e9,
        })
        .collect();
    let error = shared.fatal();
    let counters = TpccCounters {
        warehouses: cfg.warehouses,
        tpmc: per_min(per_type[0].success + per_type[0].late),
        tpm_total: per_min(completed),
        measured_s,
        rampup_s: cfg.rampup_s as f64,
        per_type,
        reconnects: shared.live.iter().map(|l| l.reconnects.load(Relaxed)).sum(),
        errors_by_code: errors_all,
    };
    Measurement {
        started_at,
        threads: cfg.connections,
        total_time_s: measured_s,
        events: completed,
        counters: Counters::Tpcc(counters),
        latency: merged.summary(95.0),
        intervals,
        fairness: fairness(shares),
        histogram: merged.histogram_data(),
        notes: notes(cfg, error.is_some()),
        diagnostics: diagnostics(shared),
        error,
    }
}

/// What a developer wants to know about the run (not shown with the figures): how the
/// connections waited for replies.
fn diagnostics(shared: &Shared) -> Vec<String> {
    shared.run.io_stats.notes()
}

fn notes(cfg: &TpccConfig, failed: bool) -> Vec<String> {
    let mut notes = vec![
        "no keying or think time: every connection runs its transactions back to back (tpcc-mysql's model)".to_string(),
        match cfg.home_warehouse {
            HomeWarehouse::Random => "home warehouse drawn per transaction (tpcc-mysql)".into(),
            HomeWarehouse::PerConnection => {
                "one fixed home warehouse per connection (HammerDB's model)".into()
            }
        },
        format!(
            "response-time limits in seconds (TPC-C's 90th-percentile limits): {}",
            cfg.rt_limits_s.map(|s| format!("{s}")).join("/")
        ),
        format!("ramp-up of {} s excluded from every figure", cfg.rampup_s),
    ];
    if cfg.measured_s() != cfg.time_s {
        notes.push(format!(
            "measured {} s: the measured time is rounded down to whole report intervals, as tpcc_start does",
            cfg.measured_s()
        ));
    }
    if failed {
        notes.push("the run ended early on an error: the numbers are partial".into());
    }
    notes
}
