//! `run`: the event loop of sysbench 1.0 for OLTP scripts.
//!
//! Connections are spread over OS threads (one per two connections by default,
//! `db::ClientIo::threads`; sysbench has one per connection; another share with
//! `client_threads`), each driving its share with a
//! single-threaded tokio runtime, so a query costs no cross-thread wake-up (the threads are
//! `db::clients`'; this file says what an OLTP connection prepares and runs).
//! Every connection connects and prepares first; the clock starts when all are ready (sysbench's
//! "Threads started!"). Per transaction the worker keeps its latency in its own
//! [`LatencyRecorder`] and bumps a few relaxed atomics (counters, the interval histogram) that the
//! calling thread reads every `--report-interval`.
//!
//! Errors: codes in `--mysql-ignore-errors` roll back and restart the whole transaction (its
//! latency includes the retries); a lost connection reconnects, re-prepares and restarts (for up
//! to `reconnect_timeout_s`); anything else stops every worker and the partial result is returned
//! with `error` set.

use super::numbers::{build_result, interval_sample, Snapshot};
use super::rand::{time_seed, Dist, Rng, UniqueSeq};
use super::shared::{Live, Shared, WorkerOut};
use super::workload::{Session, Tally};
use super::OltpConfig;
use crate::db::clients::{self, ClientRun, Clients, Sessions};
use crate::db::sockets::ThreadIo;
use crate::db::{classify, describe_error, ClientIo, ErrorClass};
use crate::engine::{Controller, Observer};
use crate::engine::{IntervalSample, Measurement};
use crate::stats::LatencyRecorder;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Runs the benchmark. `Err` only when it could not start (bad options, cannot connect or
/// prepare statements); an error during the run returns the partial result with `error` set.
///
/// A stop request lets every connection finish its transaction in progress. An abort ends the
/// run at once: the result covers the transactions finished by then, and connections still
/// waiting for the server are left to end on their own (their threads are detached).
pub fn run(
    cfg: &OltpConfig,
    controller: &Controller,
    observer: &dyn Observer,
) -> anyhow::Result<Measurement> {
    cfg.validate()?;
    let threads = cfg.threads as usize;
    // A thread's connections wait together in its ring, so the thread sleeps once for the
    // replies that came while it worked, and the server's threads meet half as many client
    // threads on the CPUs they share (`ClientIo::threads`, TPC-C's rule too).
    let os_threads = ClientIo::threads(threads, cfg.client_threads);
    let seed = if cfg.rand.seed == 0 {
        time_seed()
    } else {
        cfg.rand.seed
    };
    let shared = Arc::new(Shared {
        cfg: cfg.clone(),
        start: OnceLock::new(),
        deadline: OnceLock::new(),
        run: ClientRun::new(
            &cfg.connection,
            cfg.client_io,
            cfg.drops_write_wakeups(),
            controller,
        ),
        tickets: AtomicU64::new(0),
        running: AtomicU32::new(0),
        live: (0..threads).map(|_| Live::new()).collect(),
        unique: UniqueSeq::new(seed),
        begin_as_text: AtomicBool::new(false),
    });
    let started_at = crate::sys::clock::now_rfc3339();
    // Phase 1: every connection connected and prepared, then the clock starts.
    let (mut clients, start) = clients::start(
        &shared,
        os_threads,
        threads,
        |i| Plan { i, seed },
        || {
            let start = Instant::now();
            let _ = shared.start.set(start);
            let _ = shared
                .deadline
                .set((cfg.time_s > 0).then(|| start + Duration::from_secs(cfg.time_s)));
            shared.running.store(threads as u32, Relaxed);
            start
        },
    )?;
    observer.message("Threads started!\n");

    // Phase 2: intervals until every client thread is done (or an abort gives up on them).
    let (intervals, finished) = watch(&shared, start, &mut clients, controller, observer);
    let total_time_s = start.elapsed().as_secs_f64();

    let outs = clients.join(finished >= os_threads);
    Ok(build_result(
        cfg,
        &shared,
        outs,
        intervals,
        total_time_s,
        started_at,
    ))
}

/// Takes the interval samples while the client threads run; returns them and how many threads
/// finished (fewer than all when an abort gave up waiting).
fn watch(
    shared: &Shared,
    start: Instant,
    clients: &mut Clients<Shared>,
    controller: &Controller,
    observer: &dyn Observer,
) -> (Vec<IntervalSample>, usize) {
    let cfg = &shared.cfg;
    let mut intervals = Vec::new();
    let mut finished = 0;
    let interval = Duration::from_secs(cfg.report_interval_s);
    let mut tick = 1u32;
    let mut prev = Snapshot::default();
    let mut prev_t = start;
    while finished < clients.threads() {
        let wait = if cfg.report_interval_s > 0 {
            (start + interval * tick).saturating_duration_since(Instant::now())
        } else {
            Duration::from_secs(3600)
        }
        .min(Duration::from_millis(100));
        if clients.abandon(controller) {
            break;
        }
        match clients.wait(wait) {
            Ok(()) => finished += 1,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if cfg.report_interval_s > 0 && Instant::now() >= start + interval * tick {
                    let now = Instant::now();
                    let sample = interval_sample(shared, &mut prev, prev_t, now, start);
                    prev_t = now;
                    observer.interval(&sample);
                    intervals.push(sample);
                    tick += 1;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    // The last tick often coincides with the end of a --time run (sysbench prints it too).
    if cfg.report_interval_s > 0
        && start.elapsed() + Duration::from_millis(50) >= interval * tick
        && shared.run.no_error_yet()
    {
        let now = Instant::now();
        let mut sample = interval_sample(shared, &mut prev, prev_t, now, start);
        // The workers ran through this interval; they exited only at its very end.
        sample.threads = cfg.threads;
        observer.interval(&sample);
        intervals.push(sample);
    }
    (intervals, finished)
}

/// One connection: its number and the run's seed (its random stream is made when it starts).
pub(super) struct Plan {
    i: usize,
    seed: u64,
}

/// What an OLTP connection prepares (the workload's statements) and runs ([`worker`]).
impl Sessions for Shared {
    type Plan = Plan;
    type Session = Session;
    type Out = WorkerOut;
    const NAME: &'static str = "oltp";
    const TASK: &'static str = "worker";
    const POLL_ALONE: bool = false;

    fn client_run(&self) -> &ClientRun {
        &self.run
    }

    async fn prepare(&self, conn: mysql_async::Conn, plan: &Plan) -> Result<Session, String> {
        let cfg = &self.cfg;
        let session = Session::new(conn, cfg, plan.i as u32).await.map_err(|e| {
            format!(
                "could not prepare the {} statements: {}",
                cfg.workload.name(),
                describe_error(&e)
            ) + if describe_error(&e).contains("1146") {
                " (the tables are missing: run `spindle oltp ... prepare` first, with the same --tables)"
            } else {
                ""
            }
        })?;
        if session.begin_as_text {
            self.begin_as_text.store(true, Relaxed);
        }
        Ok(session)
    }

    fn use_io(session: &mut Session, io: &ThreadIo, stats: &crate::db::IoStats) {
        session.wire = io.apply(&mut session.conn, stats);
    }

    fn run(
        self: Arc<Self>,
        plan: Plan,
        session: Session,
        io: ThreadIo,
    ) -> impl Future<Output = WorkerOut> + Send + 'static {
        let rng = Rng::new(plan.seed, plan.i as u64, Dist::new(&self.cfg.rand));
        worker(plan.i, session, rng, self, io)
    }

    fn index(out: &WorkerOut) -> usize {
        out.idx
    }
}

enum Reconnect {
    Done(Box<Session>),
    /// The run is stopping anyway.
    Stopped,
    Failed(String),
}

/// A new connection for client thread `thread`, its statements prepared again.
async fn reconnect(shared: &Shared, thread: u32) -> Reconnect {
    let cfg = &shared.cfg;
    let until = Instant::now() + Duration::from_secs_f64(cfg.reconnect_timeout_s.max(0.0));
    loop {
        if shared.stopping() || shared.past_deadline() {
            return Reconnect::Stopped;
        }
        let err = match cfg.connection.connect(true).await {
            Ok(conn) => match Session::new(conn, cfg, thread).await {
                Ok(s) => return Reconnect::Done(Box::new(s)),
                Err(e) => describe_error(&e),
            },
            Err(e) => format!("{e:#}"),
        };
        if Instant::now() >= until {
            return Reconnect::Failed(err);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn worker(
    idx: usize,
    mut session: Session,
    mut rng: Rng,
    shared: Arc<Shared>,
    io: ThreadIo,
) -> WorkerOut {
    let cfg = &shared.cfg;
    let live = &shared.live[idx];
    let mut recorder = LatencyRecorder::new();
    let mut errors_by_code = BTreeMap::new();
    let events_limit = cfg.events;
    // The clock is read twice per transaction: at its start, and at its end (which also serves
    // the next deadline check).
    let mut now = Instant::now();
    'events: loop {
        if shared.stopping() || shared.past(now) {
            break;
        }
        if events_limit > 0 && shared.tickets.fetch_add(1, Relaxed) >= events_limit {
            break;
        }
        let t0 = Instant::now();
        loop {
            let mut tally = Tally::default();
            let r = session
                .event(cfg, &mut rng, &shared.unique, &mut tally)
                .await;
            live.add_tally(&tally);
            let e = match r {
                Ok(()) => break,
                Err(e) => e,
            };
            if !recover(&shared, idx, &io, &mut session, &e, &mut errors_by_code).await {
                break 'events;
            }
            if shared.stopping() || shared.past_deadline() {
                // Give up on this transaction: it is not counted.
                break 'events;
            }
        }
        now = Instant::now();
        let ns = now.saturating_duration_since(t0).as_nanos() as u64;
        let bucket = recorder.record(ns);
        live.events.fetch_add(1, Relaxed);
        live.latencies.record(bucket, ns);
    }
    if !shared.run.halted() && !shared.run.controller().abort_requested() {
        let mut tally = Tally::default();
        if let Err(e) = session.finish(&mut tally).await {
            shared.set_fatal(format!(
                "{} failed on connection {} at its end: {}",
                cfg.workload.name(),
                idx + 1,
                describe_error(&e)
            ));
        }
        live.add_tally(&tally);
    }
    shared.running.fetch_sub(1, Relaxed);
    let _ = session.conn.disconnect().await;
    WorkerOut {
        idx,
        recorder,
        errors_by_code,
    }
}

/// After a failed statement: counts it, rolls back (ignorable errors) or reconnects (a lost
/// connection) so the transaction can be retried. `false` ends the worker (a fatal error,
/// recorded in `shared`).
async fn recover(
    shared: &Shared,
    idx: usize,
    io: &ThreadIo,
    session: &mut Session,
    e: &mysql_async::Error,
    errors_by_code: &mut BTreeMap<u16, u64>,
) -> bool {
    let cfg = &shared.cfg;
    let live = &shared.live[idx];
    match classify(e, &cfg.ignore_errors) {
        ErrorClass::Ignorable(code) => {
            live.errors.fetch_add(1, Relaxed);
            *errors_by_code.entry(code).or_insert(0) += 1;
            match session.rollback().await {
                Ok(()) => true,
                Err(e2) => match classify(&e2, &cfg.ignore_errors) {
                    ErrorClass::Lost(c) => {
                        lost(shared, live, io, session, c, &e2, errors_by_code).await
                    }
                    _ => {
                        shared.set_fatal(format!(
                            "ROLLBACK after an ignored error failed: {}",
                            describe_error(&e2)
                        ));
                        false
                    }
                },
            }
        }
        ErrorClass::Lost(code) => lost(shared, live, io, session, code, e, errors_by_code).await,
        ErrorClass::Fatal => {
            shared.set_fatal(format!(
                "{} failed on connection {}: {} (not one of the errors that retry a transaction)",
                cfg.workload.name(),
                idx + 1,
                describe_error(e)
            ));
            false
        }
    }
}

/// Handles a lost connection: count it, reconnect and re-prepare. `false` ends the worker.
async fn lost(
    shared: &Shared,
    live: &Live,
    io: &ThreadIo,
    session: &mut Session,
    code: u16,
    e: &mysql_async::Error,
    errors_by_code: &mut BTreeMap<u16, u64>,
) -> bool {
    live.errors.fetch_add(1, Relaxed);
    *errors_by_code.entry(code).or_insert(0) += 1;
    match reconnect(shared, session.thread).await {
        Reconnect::Done(mut s) => {
            // A bulk INSERT in the making goes on on the new connection.
            s.bulk = std::mem::take(&mut session.bulk);
            *session = *s;
            session.wire = io.apply(&mut session.conn, &shared.run.io_stats);
            live.reconnects.fetch_add(1, Relaxed);
            true
        }
        Reconnect::Stopped => false,
        Reconnect::Failed(why) => {
            shared.set_fatal(format!(
                "lost the connection to the server ({}) and could not reconnect within {} s: {why}",
                describe_error(e),
                shared.cfg.reconnect_timeout_s
            ));
            false
        }
    }
}
