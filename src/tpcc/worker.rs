//! One connection's loop during `run`: deal a card, draw the inputs, run the transaction with
//! tpcc-mysql's retry rule, time it on the wall clock from the first try to the commit, and
//! count it when it completed inside the measured window (ramp-up and the time after the end
//! count nowhere).
//!
//! Errors: deadlock, lock-wait timeout and "record changed" (1213, 1205, 1020) roll back and
//! retry, up to 2000 tries as tpcc-mysql (then the transaction counts as failed); a lost
//! connection reconnects, re-prepares and retries, for up to `reconnect_timeout_s`; anything
//! else, or a server that stays away, ends the run for every connection.

use super::deck::{InputGen, TxKind};
use super::shared::{NewOrderRecord, Shared};
use super::txn::{Done, Session, TxError};
use crate::db::sockets::ThreadIo;
use crate::db::{classify, describe_error, ErrorClass, IgnoreErrors};
use crate::rng::Rng;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// tpcc-mysql's MAX_RETRY: tries of one transaction before it counts as failed.
const MAX_TRIES: u32 = 2000;

/// Response times a connection buffers before adding them to the run's histograms.
const PENDING: usize = 256;

/// What one connection hands back at the end.
pub(crate) struct WorkerOut {
    pub idx: usize,
    /// Counted transactions and the sum of their response times (its share of the work).
    pub events: u64,
    pub busy_ns: u128,
    /// Retried errors per type and code.
    pub errors: [BTreeMap<u16, u64>; 5],
    /// Response times (ns) not yet added to the run's histograms, per type.
    pending: [Vec<u64>; 5],
}

impl WorkerOut {
    /// Adds the buffered response times of type `i` to the run's histograms.
    fn flush(&mut self, shared: &Shared, i: usize) {
        if self.pending[i].is_empty() {
            return;
        }
        let mut r = shared.recorders.lock().unwrap_or_else(|p| p.into_inner());
        for &ns in &self.pending[i] {
            r[i].record(ns);
        }
        self.pending[i].clear();
    }
}

/// How the tries of one transaction ended.
enum Outcome {
    Done(Done),
    /// Given up after [`MAX_TRIES`].
    Failed,
    /// The run is over (stop, deadline, fatal error): not counted.
    Stop,
}

pub(crate) async fn worker(
    idx: usize,
    mut session: Session,
    mut rng: Rng,
    gen: InputGen,
    shared: Arc<Shared>,
    io: ThreadIo,
) -> WorkerOut {
    let mut out = WorkerOut {
        idx,
        events: 0,
        busy_ns: 0,
        errors: Default::default(),
        pending: std::array::from_fn(|_| Vec::with_capacity(PENDING)),
    };
    let live = &shared.live[idx];
    loop {
        if shared.stopping() || shared.past_end(Instant::now()) {
            break;
        }
        let kind = shared.deal();
        let input = gen.draw(kind, &mut rng);
        let wall = shared.log.as_ref().map(|_| SystemTime::now());
        let t0 = Instant::now();
        let outcome = tries(idx, &shared, &mut session, &input, &io, &mut out).await;
        let t1 = Instant::now();
        let counted = shared.in_window(t1);
        match outcome {
            Outcome::Done(done) => {
                let ns = t1.saturating_duration_since(t0).as_nanos() as u64;
                if counted {
                    let late = ns as f64 >= shared.rt_limits_ns[kind as usize];
                    let i = kind as usize;
                    let bucket = shared.buckets.bucket_of(ns);
                    live.completed(kind, ns, bucket, late, done == Done::RolledBack);
                    out.events += 1;
                    out.busy_ns += ns as u128;
                    out.pending[i].push(ns);
                    if out.pending[i].len() >= PENDING {
                        out.flush(&shared, i);
                    }
                }
                if let (Some(log), Some(start), TxKind::NewOrder) = (&shared.log, wall, kind) {
                    log.new_order(&NewOrderRecord {
                        connection: idx as u32,
                        time_count: shared.time_count(t1),
                        rt_ms: ns as f64 / 1e6,
                        start,
                        finish: SystemTime::now(),
                        rolled_back: done == Done::RolledBack,
                    });
                }
            }
            Outcome::Failed => {
                if counted {
                    live.types[kind as usize].failures.fetch_add(1, Relaxed);
                }
            }
            Outcome::Stop => break,
        }
    }
    for i in 0..5 {
        out.flush(&shared, i);
    }
    let _ = session.link.conn.disconnect().await;
    out
}

/// Runs one transaction until it completes, fails for good, or the run ends.
async fn tries(
    idx: usize,
    shared: &Shared,
    session: &mut Session,
    input: &super::deck::Input,
    io: &ThreadIo,
    out: &mut WorkerOut,
) -> Outcome {
    let kind = input.kind();
    let ignore = IgnoreErrors::default();
    for _ in 0..MAX_TRIES {
        let e = match session.execute(input).await {
            Ok(done) => return Outcome::Done(done),
            Err(TxError::Missing(what)) => {
                shared.set_fatal(format!(
                    "{} on connection {}: {what}: the database does not hold consistent TPC-C data (run check, or clean up and prepare again)",
                    kind.label(),
                    idx + 1
                ));
                return Outcome::Stop;
            }
            Err(TxError::Sql(e)) => e,
        };
        let code = match classify(&e, &ignore) {
            ErrorClass::Ignorable(code) => {
                count_retry(shared, kind, code, out);
                match session.rollback().await {
                    Ok(()) => code,
                    Err(e2) => match classify(&e2, &ignore) {
                        ErrorClass::Lost(c) => {
                            if !lost(idx, shared, session, io, c, &e2).await {
                                return Outcome::Stop;
                            }
                            c
                        }
                        _ => {
                            shared.set_fatal(format!(
                                "ROLLBACK after {} failed: {}",
                                describe_error(&e),
                                describe_error(&e2)
                            ));
                            return Outcome::Stop;
                        }
                    },
                }
            }
            ErrorClass::Lost(code) => {
                count_retry(shared, kind, code, out);
                if !lost(idx, shared, session, io, code, &e).await {
                    return Outcome::Stop;
                }
                code
            }
            ErrorClass::Fatal => {
                shared.set_fatal(format!(
                    "{} failed on connection {}: {}",
                    kind.label(),
                    idx + 1,
                    describe_error(&e)
                ));
                return Outcome::Stop;
            }
        };
        let _ = code;
        if shared.stopping() || shared.past_end(Instant::now()) {
            return Outcome::Stop;
        }
    }
    Outcome::Failed
}

/// Counts one retried try (inside the measured window only).
fn count_retry(shared: &Shared, kind: TxKind, code: u16, out: &mut WorkerOut) {
    let now = Instant::now();
    if !shared.in_window(now) {
        return;
    }
    let i = kind as usize;
    shared.live[out.idx].types[i].retries.fetch_add(1, Relaxed);
    *out.errors[i].entry(code).or_insert(0) += 1;
}

/// A lost connection: reconnect and re-prepare. `false` ends this connection's loop (the run
/// is stopping, or the server stayed away: then the run ends with an error).
async fn lost(
    idx: usize,
    shared: &Shared,
    session: &mut Session,
    io: &ThreadIo,
    code: u16,
    e: &mysql_async::Error,
) -> bool {
    let cfg = &shared.cfg;
    let until = Instant::now() + Duration::from_secs_f64(cfg.reconnect_timeout_s);
    let mut why;
    loop {
        why = match cfg.connection.connect(true).await {
            Ok(conn) => match Session::new(conn, cfg.statements).await {
                Ok(s) => {
                    *session = s;
                    session.link.wire = io.apply(&mut session.link.conn, &shared.run.io_stats);
                    if shared.in_window(Instant::now()) {
                        shared.live[idx].reconnects.fetch_add(1, Relaxed);
                    }
                    return true;
                }
                Err(e) => describe_error(&e),
            },
            Err(e) => format!("{e:#}"),
        };
        if shared.external_stop() {
            return false;
        }
        let now = Instant::now();
        if now >= until || shared.past_end(now) || shared.stopping() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if !shared.stopping() {
        shared.set_fatal(format!(
            "connection {} lost the server ({}, code {code}) and could not reconnect within {} s: {why}",
            idx + 1,
            describe_error(e),
            cfg.reconnect_timeout_s
        ));
    }
    false
}
