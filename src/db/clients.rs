//! The client threads of a MySQL benchmark run, the same for OLTP and TPC-C: connections spread
//! over OS threads (connection `i` on thread `i % threads`), each thread with its own
//! single-threaded runtime ([`super::sockets::client_runtime`]); every connection connects and
//! prepares first, and the calling thread starts the clock only when all are ready (or learns
//! why one is not); then the sessions run until the run's stop rule ends them, and the threads
//! are joined (or, after an abort, left behind).
//!
//! An engine says what one connection prepares and does by implementing [`Sessions`] on its
//! run's shared state (`oltp/shared.rs`, `tpcc/shared.rs`), which holds the [`ClientRun`]
//! every engine's threads share (connection options, stop flags, the run's error); its driver
//! calls [`start`], watches the run through [`Clients`] and collects the sessions' outputs with
//! [`Clients::join`].

use super::conn::ConnectionConfig;
use super::sockets::{client_runtime, ClientIo, IoStats, ThreadIo};
use crate::engine::Controller;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Barrier, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an aborted run waits for transactions in progress before it abandons them.
const ABORT_GRACE: Duration = Duration::from_millis(500);

/// What every client thread of a run shares, whatever the engine: how to connect and wait
/// for replies, the stop flags and the run's error.
pub(crate) struct ClientRun {
    pub(crate) connection: ConnectionConfig,
    pub(crate) client_io: ClientIo,
    /// Whether the reactor drops the sockets' writable wake-ups (see `db::sockets`).
    pub(crate) skip_write_wakeups: bool,
    /// How the connections waited for replies (see `db::sockets`), for the result's notes.
    pub(crate) io_stats: IoStats,
    /// Set on a fatal error or when connecting failed: every session stops.
    halt: AtomicBool,
    controller: Controller,
    fatal: Mutex<Option<String>>,
}

impl ClientRun {
    pub(crate) fn new(
        connection: &ConnectionConfig,
        client_io: ClientIo,
        skip_write_wakeups: bool,
        controller: &Controller,
    ) -> Self {
        ClientRun {
            connection: connection.clone(),
            client_io,
            skip_write_wakeups,
            io_stats: IoStats::default(),
            halt: AtomicBool::new(false),
            controller: controller.clone(),
            fatal: Mutex::new(None),
        }
    }

    /// Whether every session should stop now (fatal error, failed connect, stop or abort
    /// asked).
    pub(crate) fn stopping(&self) -> bool {
        self.halt.load(Relaxed) || self.controller.stop_requested()
    }

    /// Whether a fatal error or a failed connect stopped the sessions.
    pub(crate) fn halted(&self) -> bool {
        self.halt.load(Relaxed)
    }

    /// The caller's controller (stop and abort requests).
    pub(crate) fn controller(&self) -> &Controller {
        &self.controller
    }

    /// Ends the run with an error; the first one is kept.
    pub(crate) fn set_fatal(&self, msg: String) {
        let mut f = self.fatal.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(msg);
        }
        self.halt.store(true, Relaxed);
    }

    /// The run's error, if any.
    pub(crate) fn fatal(&self) -> Option<String> {
        self.fatal.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether the run has no error yet (false also when the lock is poisoned).
    pub(crate) fn no_error_yet(&self) -> bool {
        self.fatal.lock().map(|f| f.is_none()).unwrap_or(false)
    }
}

/// What an engine's run shares with its client threads, and what each of its connections
/// prepares and does. Implemented on the run's shared state.
pub(crate) trait Sessions: Send + Sync + Sized + 'static {
    /// What one connection starts from (its number, random stream …), made on the calling
    /// thread before the client threads start.
    type Plan: Send + 'static;
    /// One connected connection with its statements prepared.
    type Session: Send + 'static;
    /// What one session hands back at the end.
    type Out: Send + 'static;
    /// The client threads are named `<NAME>-<k>`.
    const NAME: &'static str;
    /// What a session's task is called when it fails: "a `<TASK>` task failed: …".
    const TASK: &'static str;
    /// A thread with a single connection polls it directly, without a task per session.
    const POLL_ALONE: bool;

    /// What every client thread of the run shares, whatever the engine.
    fn client_run(&self) -> &ClientRun;
    /// Prepares a new connection for `plan`; `Err` is the run's error, in the engine's words.
    fn prepare(
        &self,
        conn: mysql_async::Conn,
        plan: &Self::Plan,
    ) -> impl Future<Output = Result<Self::Session, String>>;
    /// Applies the thread's way of waiting (`io.apply`) to the session's connection, and
    /// keeps the [`super::Wire`] it gives if the engine's measured loop can use one.
    fn use_io(session: &mut Self::Session, io: &ThreadIo, stats: &IoStats);
    /// Runs one session to its end.
    fn run(
        self: Arc<Self>,
        plan: Self::Plan,
        session: Self::Session,
        io: ThreadIo,
    ) -> impl Future<Output = Self::Out> + Send + 'static;
    /// The connection number of a session's output (outputs are returned in this order).
    fn index(out: &Self::Out) -> usize;
}

/// A run's client threads, started and past the ready handshake.
pub(crate) struct Clients<S: Sessions> {
    shared: Arc<S>,
    handles: Vec<JoinHandle<Vec<S::Out>>>,
    /// One message per thread when it is done.
    done_rx: Receiver<()>,
    aborted_at: Option<Instant>,
}

/// Starts `threads` client threads for `connections` connections (`plan(i)` for connection
/// `i`, on thread `i % threads`) and waits until every thread has connected and prepared its
/// sessions. Then `at_start` runs (it starts the run's clock; after a failed connect every
/// session has already been told to end) and the threads are released. `Err` when a thread
/// could not start or a connection could not be made ready (the first error).
pub(crate) fn start<S: Sessions, R>(
    shared: &Arc<S>,
    threads: usize,
    connections: usize,
    mut plan: impl FnMut(usize) -> S::Plan,
    at_start: impl FnOnce() -> R,
) -> anyhow::Result<(Clients<S>, R)> {
    if shared.client_run().client_io == ClientIo::Retired {
        anyhow::bail!(
            "this result's --client-io was retired: run it with direct, direct-epoll or reactor"
        );
    }
    let barrier = Arc::new(Barrier::new(threads + 1));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Option<String>>();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let mut plans: Vec<Vec<S::Plan>> = (0..threads).map(|_| Vec::new()).collect();
    for i in 0..connections {
        plans[i % threads].push(plan(i));
    }
    let mut handles = Vec::with_capacity(threads);
    for (k, plans) in plans.into_iter().enumerate() {
        let (shared, barrier) = (shared.clone(), barrier.clone());
        let (ready_tx, done_tx) = (ready_tx.clone(), done_tx.clone());
        let h = std::thread::Builder::new()
            .name(format!("{}-{k}", S::NAME))
            .spawn(move || {
                let out = client_thread(plans, &shared, &barrier, &ready_tx);
                let _ = done_tx.send(());
                out
            })
            .map_err(|e| anyhow::anyhow!("could not start a client thread: {e}"))?;
        handles.push(h);
    }
    drop((ready_tx, done_tx));
    let connect_error = await_ready(&ready_rx, threads);
    if connect_error.is_some() {
        shared.client_run().halt.store(true, Relaxed);
    }
    let started = at_start();
    barrier.wait();
    if let Some(e) = connect_error {
        for h in handles {
            let _ = h.join();
        }
        anyhow::bail!(e);
    }
    let clients = Clients {
        shared: shared.clone(),
        handles,
        done_rx,
        aborted_at: None,
    };
    Ok((clients, started))
}

/// Waits until every client thread has connected and prepared; the first error, if any.
fn await_ready(ready_rx: &Receiver<Option<String>>, threads: usize) -> Option<String> {
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
    connect_error
}

impl<S: Sessions> Clients<S> {
    /// How many client threads run.
    pub(crate) fn threads(&self) -> usize {
        self.handles.len()
    }

    /// Waits up to `timeout` for a client thread to finish.
    pub(crate) fn wait(&self, timeout: Duration) -> Result<(), RecvTimeoutError> {
        self.done_rx.recv_timeout(timeout)
    }

    /// Whether to give up waiting for the sessions: an abort was asked and the transactions
    /// in progress had their grace; the run's error then says they were abandoned.
    pub(crate) fn abandon(&mut self, controller: &Controller) -> bool {
        if controller.abort_requested() {
            let since = *self.aborted_at.get_or_insert_with(Instant::now);
            if since.elapsed() >= ABORT_GRACE {
                self.shared.client_run().set_fatal(
                    "the run was aborted: transactions in progress were abandoned".into(),
                );
                return true;
            }
        }
        false
    }

    /// Joins the client threads and returns the sessions' outputs in connection order. After
    /// an abort (`all_done` false) a thread still waiting on the server is left behind: its
    /// numbers are lost with it. A thread that panicked ends the run with an error.
    pub(crate) fn join(self, all_done: bool) -> Vec<S::Out> {
        let mut outs = Vec::with_capacity(self.handles.len());
        for h in self.handles {
            if !all_done && !h.is_finished() {
                continue;
            }
            match h.join() {
                Ok(v) => outs.extend(v),
                Err(_) => self
                    .shared
                    .client_run()
                    .set_fatal("a client thread panicked".into()),
            }
        }
        outs.sort_by_key(|o| S::index(o));
        outs
    }
}

/// One OS thread driving its connections on a single-threaded runtime: connect and prepare
/// them all, report ready (or why not), wait for the start, run them to the end.
fn client_thread<S: Sessions>(
    plans: Vec<S::Plan>,
    shared: &Arc<S>,
    barrier: &Barrier,
    ready_tx: &Sender<Option<String>>,
) -> Vec<S::Out> {
    let run = shared.client_run();
    let Some((rt, io)) = client_runtime(
        run.client_io,
        run.skip_write_wakeups,
        &run.connection,
        ready_tx,
        barrier,
    ) else {
        return Vec::new();
    };
    let mut sessions: Result<Vec<S::Session>, String> = rt.block_on(async {
        let mut v = Vec::with_capacity(plans.len());
        for p in &plans {
            let conn = run
                .connection
                .connect(true)
                .await
                .map_err(|e| format!("{e:#}"))?;
            v.push(shared.prepare(conn, p).await?);
        }
        Ok(v)
    });
    {
        // A connection that shares the thread registers its socket in this runtime's reactor.
        let _rt = rt.enter();
        sessions_ready::<S>(&mut sessions, &io, &run.io_stats, ready_tx, barrier);
    }
    let Ok(sessions) = sessions else {
        return Vec::new();
    };
    if run.stopping() {
        return Vec::new();
    }
    if super::ringdrive::installed() {
        // The connections wait for their replies in the thread's epoll instance or io_uring.
        let sessions = plans
            .into_iter()
            .zip(sessions)
            .map(|(p, s)| Box::pin(S::run(shared.clone(), p, s, io.clone())) as Pin<Box<_>>)
            .collect();
        return super::ringdrive::drive(&rt, sessions);
    }
    if S::POLL_ALONE && plans.len() == 1 {
        // One connection: poll it directly, no task scheduling per wake-up.
        let (p, s) = plans.into_iter().zip(sessions).next().expect("one plan");
        return vec![rt.block_on(S::run(shared.clone(), p, s, io))];
    }
    rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for (p, s) in plans.into_iter().zip(sessions) {
            set.spawn(S::run(shared.clone(), p, s, io.clone()));
        }
        let mut outs = Vec::new();
        while let Some(r) = set.join_next().await {
            match r {
                Ok(o) => outs.push(o),
                Err(e) => run.set_fatal(format!("a {} task failed: {e}", S::TASK)),
            }
        }
        outs
    })
}

/// A client thread's sessions are connected (or not): apply the thread's way of waiting to
/// each one's connection when they are, tell the starting thread, wait at the start `barrier`.
fn sessions_ready<S: Sessions>(
    sessions: &mut Result<Vec<S::Session>, String>,
    io: &ThreadIo,
    stats: &IoStats,
    ready_tx: &Sender<Option<String>>,
    barrier: &Barrier,
) {
    if let Ok(v) = sessions {
        for s in v.iter_mut() {
            S::use_io(s, io, stats);
        }
    }
    let _ = ready_tx.send(sessions.as_ref().err().cloned());
    barrier.wait();
}
