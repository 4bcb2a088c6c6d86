//! `run` (tpcc_start): connections on their own threads, ramp-up, the measured window, one
//! interval sample per `report_interval_s`, and the result.
//!
//! Every connection connects and prepares its statements first; the clock starts when all are
//! ready. Ramp-up runs the same loop but counts nothing; the measured window is
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
use crate::db::{describe_error, ClientIo, IoStats};
use crate::engine::{Controller, Observer};
use crate::engine::{Counters, IntervalSample, Measurement, TpccCounters, TpccTypeCounters};
use crate::rng::Rng;
use crate::stats::{fairness, LatencyRecorder, ThreadShare};
use mysql_async::prelude::Queryable;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long an aborted run waits for transactions in progress before it abandons them.
const ABORT_GRACE: Duration = Duration::from_millis(500);

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
        abort: AtomicBool::new(false),
        controller: controller.clone(),
        fatal: Mutex::new(None),
        io_stats: IoStats::default(),
        recorders: Mutex::new(std::array::from_fn(|_| LatencyRecorder::new())),
        buckets: crate::stats::SysbenchHistogram::new(),
        deck: Mutex::new((Deck::new(), Rng::stream(seed, 0xDEC))),
    });
    let started_at = crate::sys::clock::now_rfc3339();
    let Clients {
        threads,
        handles,
        barrier,
        ready_rx,
        done_rx,
    } = spawn_clients(&shared, seed, nu)?;
    let mut connect_error = None;
    for _ in 0..threads {
        match ready_rx.recv() {
            Ok(None) => {}
            Ok(Some(e)) => {
                connect_error.get_or_insert(e);
            }
            Err(_) => {
                connect_error.get_or_insert_with(|| "a client thread died while connecting".into());
            }
        }
    }
    if connect_error.is_some() {
        shared.abort.store(true, Relaxed);
    }
    let start = Instant::now();
    let measure_start = start + Duration::from_secs(cfg.rampup_s);
    let measure_end = measure_start + Duration::from_secs(cfg.measured_s());
    let _ = shared.window.set((measure_start, measure_end));
    barrier.wait();
    if let Some(e) = connect_error {
        for h in handles {
            let _ = h.join();
        }
        anyhow::bail!(e);
    }
    let phases = drive(cfg, &shared, controller, observer, &done_rx, threads);
    let measured_s = match phases.measured_until {
        Some(t) if t >= measure_end => cfg.measured_s() as f64,
        Some(t) => t.saturating_duration_since(measure_start).as_secs_f64(),
        None => 0.0,
    };
    let outs = crate::db::sockets::join_clients(
        handles,
        phases.all_done,
        || shared.set_fatal("a client thread panicked".into()),
        |o: &WorkerOut| o.idx,
    );
    Ok(build_result(
        cfg,
        &shared,
        outs,
        phases.intervals,
        measured_s,
        started_at,
    ))
}

/// The client threads and how the calling thread talks to them.
struct Clients {
    threads: usize,
    handles: Vec<std::thread::JoinHandle<Vec<WorkerOut>>>,
    /// Released once every thread has reported whether it connected.
    barrier: Arc<Barrier>,
    /// One message per thread: connected (`None`) or why not.
    ready_rx: std::sync::mpsc::Receiver<Option<String>>,
    /// One message per thread when it is done.
    done_rx: std::sync::mpsc::Receiver<()>,
}

/// Spreads the connections over the client threads and starts them.
fn spawn_clients(shared: &Arc<Shared>, seed: u64, nu: NuConstants) -> anyhow::Result<Clients> {
    let cfg = &shared.cfg;
    let n = cfg.connections as usize;
    let threads = match (cfg.client_threads as usize, cfg.client_io) {
        (0, ClientIo::Reactor) => n.div_ceil(2),
        // One connection per thread: each is read through io_uring (see `db::sockets`).
        (0, _) => n,
        (t, _) => t.min(n),
    };
    let barrier = Arc::new(Barrier::new(threads + 1));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Option<String>>();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let mut plans: Vec<Vec<Plan>> = (0..threads).map(|_| Vec::new()).collect();
    for i in 0..n {
        plans[i % threads].push(Plan {
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
        });
    }
    let mut handles = Vec::with_capacity(threads);
    for (k, plan) in plans.into_iter().enumerate() {
        let (shared, barrier) = (shared.clone(), barrier.clone());
        let (ready_tx, done_tx) = (ready_tx.clone(), done_tx.clone());
        let h = std::thread::Builder::new()
            .name(format!("tpcc-{k}"))
            .spawn(move || {
                let out = client_thread(plan, &shared, &barrier, &ready_tx);
                let _ = done_tx.send(());
                out
            })
            .map_err(|e| anyhow::anyhow!("could not start a client thread: {e}"))?;
        handles.push(h);
    }
    Ok(Clients {
        threads,
        handles,
        barrier,
        ready_rx,
        done_rx,
    })
}

/// Checks the tables and the warehouses loaded, marks the data as run on, and returns the
/// NURand constants of the load (from spindle's marker; arbitrary ones for data loaded by
/// another tool).
fn open_database(cfg: &TpccConfig) -> anyhow::Result<NuConstants> {
    let rt = super::load::runtime()?;
    rt.block_on(async {
        let mut conn = cfg.connection.connect(true).await?;
        let sql = |what: &'static str| move |e| anyhow::anyhow!("{what}: {}", describe_error(&e));
        let existing = schema::existing_tables(&mut conn)
            .await
            .map_err(sql("reading the table list"))?;
        let missing = schema::missing(&existing);
        if !missing.is_empty() {
            return Err(TpccError::TablesMissing {
                database: cfg.connection.database.clone(),
                missing: missing.iter().map(|s| s.to_string()).collect(),
            }
            .into());
        }
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
struct Plan {
    i: usize,
    rng: Rng,
    gen: InputGen,
}

/// One OS thread driving its connections on a single-threaded runtime: connect and prepare
/// them all, wait for the start, run them to the end.
fn client_thread(
    plans: Vec<Plan>,
    shared: &Arc<Shared>,
    barrier: &Barrier,
    ready_tx: &std::sync::mpsc::Sender<Option<String>>,
) -> Vec<WorkerOut> {
    let cfg = &shared.cfg;
    let Some((rt, io)) = crate::db::sockets::client_runtime(
        cfg.client_io,
        cfg.skip_write_wakeups,
        &cfg.connection,
        plans.len(),
        ready_tx,
        barrier,
    ) else {
        return Vec::new();
    };
    let mut sessions: Result<Vec<Session>, String> = rt.block_on(async {
        let mut v = Vec::with_capacity(plans.len());
        for _ in &plans {
            let conn = shared
                .cfg
                .connection
                .connect(true)
                .await
                .map_err(|e| format!("{e:#}"))?;
            v.push(
                Session::new(conn, shared.cfg.statements)
                    .await
                    .map_err(|e| {
                        format!(
                            "could not prepare the TPC-C statements: {}",
                            describe_error(&e)
                        )
                    })?,
            );
        }
        Ok(v)
    });
    crate::db::sockets::sessions_ready(
        &mut sessions,
        |s| &mut s.conn,
        &io,
        &shared.io_stats,
        ready_tx,
        barrier,
    );
    let Ok(sessions) = sessions else {
        return Vec::new();
    };
    if shared.stopping() {
        return Vec::new();
    }
    if plans.len() == 1 {
        // One connection: poll it directly, no task scheduling per wake-up.
        let (p, s) = plans.into_iter().zip(sessions).next().expect("one plan");
        return vec![rt.block_on(worker(p.i, s, p.rng, p.gen, shared.clone(), io))];
    }
    rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for (p, s) in plans.into_iter().zip(sessions) {
            set.spawn(worker(p.i, s, p.rng, p.gen, shared.clone(), io.clone()));
        }
        let mut outs = Vec::new();
        while let Some(r) = set.join_next().await {
            match r {
                Ok(o) => outs.push(o),
                Err(e) => shared.set_fatal(format!("a connection task failed: {e}")),
            }
        }
        outs
    })
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
    done_rx: &std::sync::mpsc::Receiver<()>,
    n: usize,
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
    let mut aborted_at: Option<Instant> = None;
    while finished < n {
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
        if controller.abort_requested() {
            let since = *aborted_at.get_or_insert_with(Instant::now);
            if since.elapsed() >= ABORT_GRACE {
                shared.set_fatal(
                    "the run was aborted: transactions in progress were abandoned".into(),
                );
                return phases;
            }
        }
        let wait = if interval > 0 && next_tick <= measure_end {
            next_tick.saturating_duration_since(now)
        } else {
            measure_end.saturating_duration_since(now)
        }
        .clamp(Duration::from_millis(1), Duration::from_millis(100));
        match done_rx.recv_timeout(wait) {
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
    shared.io_stats.notes()
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
