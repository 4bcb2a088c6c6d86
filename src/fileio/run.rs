//! `fileio run`: worker threads executing generated requests, per-thread statistics, interval
//! reports, and the result document. The synchronous worker (pread/pwrite, or memory copies in
//! mmap mode) is here; the asynchronous one (io_uring) is in `uring`.

use super::checksum;
use super::config::{Compat, FileioConfig, Fill, IoMode, TestMode};
use super::files::{AlignedBuf, TestFiles};
use super::generator::{Generator, Request};
use super::shared::{account, record_error, worker_rng, Shared, Tally, WorkerStats, MIB};
use crate::engine::{Controller, IntervalLatencies, Observer, Percentiles};
use crate::engine::{Counters, FileioCounters, IntervalRates, IntervalSample, Measurement};
use crate::rng::Rng;
use crate::stats::{fairness, LatencyRecorder, ThreadShare};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Runs the test described by `cfg` (its `test_mode` must be set). The controller ends the run
/// early (Ctrl-C, abort button): each worker finishes its request in progress (a system call
/// cannot be abandoned, so stop and abort end a fileio run alike); the result then covers what
/// was done.
pub fn run(
    cfg: &FileioConfig,
    controller: &Controller,
    observer: &dyn Observer,
) -> anyhow::Result<Measurement> {
    let mode = cfg.test_mode.ok_or(super::FileioError::NoTestMode)?;
    super::checks::check_run(cfg, mode)?;
    // One ring per worker, set up before anything runs so "no io_uring here" is a clear error.
    let mut rings = match cfg.io_mode {
        IoMode::Async => (0..cfg.threads)
            .map(|_| super::uring::Ring::new(cfg.async_backlog).map(Some))
            .collect::<Result<Vec<_>, _>>()?,
        _ => (0..cfg.threads).map(|_| None).collect(),
    };
    let files = TestFiles::open(cfg, mode)?;
    let blocking = match cfg.io_mode {
        IoMode::Async => {
            let fds: Vec<_> = (0..files.count()).map(|i| files.fd(i)).collect();
            super::uring::probe_blocking(&fds, cfg.block_size as usize, mode.writes())
        }
        _ => Vec::new(),
    };
    let started_at = crate::sys::clock::now_rfc3339();
    let start = Instant::now();
    let shared = Shared {
        cfg,
        mode,
        files,
        gen: Mutex::new(Generator::new(cfg, mode)),
        reads_done: AtomicU64::new(0),
        writes_done: AtomicU64::new(0),
        controller,
        deadline: cfg.time_limit.map(|d| start + d),
        blocking,
        unregistered: Mutex::new(None),
        error: Mutex::new(None),
        failed: AtomicBool::new(false),
    };
    let stats: Vec<Arc<Mutex<WorkerStats>>> = (0..cfg.threads)
        .map(|_| Arc::new(Mutex::new(WorkerStats::new())))
        .collect();
    let mut intervals = Vec::new();

    std::thread::scope(|scope| {
        let (done_tx, done_rx) = mpsc::channel::<()>();
        for (t, (st, ring)) in stats.iter().zip(rings.drain(..)).enumerate() {
            let shared = &shared;
            let st = Arc::clone(st);
            let done_tx = done_tx.clone();
            std::thread::Builder::new()
                .name(format!("fileio-{t}"))
                .spawn_scoped(scope, move || {
                    match ring {
                        Some(ring) => super::uring::worker(shared, t, &st, ring),
                        None => worker(shared, t, &st),
                    }
                    end_fsyncs(shared, &st);
                    drop(done_tx);
                })
                .expect("spawning a worker thread");
        }
        drop(done_tx);
        // Reporter: wake at each interval until every worker has hung up.
        let mut last = start;
        loop {
            let wait = match cfg.report_interval {
                Some(iv) => {
                    let next = last + iv;
                    next.saturating_duration_since(Instant::now())
                }
                None => Duration::from_secs(3600),
            };
            match done_rx.recv_timeout(wait) {
                Err(mpsc::RecvTimeoutError::Timeout) if cfg.report_interval.is_some() => {
                    let now = Instant::now();
                    let sample = interval_sample(&stats, cfg, now - last, now - start);
                    observer.interval(&sample);
                    intervals.push(sample);
                    last = now;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Ok(()) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
    });
    let total_time = start.elapsed().as_secs_f64();
    let error = shared.error.lock().unwrap().take();
    let mut m = build_result(cfg, mode, &stats, intervals, total_time, started_at, error);
    m.notes
        .extend(super::uring::blocking_note(&shared.blocking, mode));
    if let Some(what) = shared.unregistered.lock().unwrap().take() {
        m.notes.push(super::uring::unregistered_note(&what));
    }
    Ok(m)
}

fn worker(shared: &Shared, t: usize, st: &Mutex<WorkerStats>) {
    let cfg = shared.cfg;
    let req_size = cfg.request_size(shared.mode) as usize;
    let mut bufs = SyncBufs {
        read: AlignedBuf::new(req_size),
        write: AlignedBuf::new(req_size),
        rng: worker_rng(cfg, t),
    };
    if cfg.fill == Fill::Random {
        super::fill::randomize(bufs.write.as_mut_slice(), &mut bufs.rng);
    }
    let validate = cfg.validate;
    let mut held = None;
    let mut now = Instant::now();
    loop {
        if shared.should_stop(now) {
            break;
        }
        let req = {
            let mut g = shared.gen.lock().unwrap();
            if let Some(b) = held.take() {
                g.release(b);
            }
            g.next(
                shared.reads_done.load(Ordering::Relaxed),
                shared.writes_done.load(Ordering::Relaxed),
            )
        };
        match req {
            Request::Stop => break,
            Request::Busy => {
                std::thread::yield_now();
                now = Instant::now();
                continue;
            }
            Request::Read { file, pos, .. } | Request::Write { file, pos, .. } if validate => {
                held = Some((file, pos))
            }
            _ => {}
        }
        let t0 = Instant::now();
        let outcome = execute(shared, req, &mut bufs);
        now = Instant::now();
        let ns = (now - t0).as_nanos() as u64;
        match outcome {
            Ok(validated) => account(shared, &mut st.lock().unwrap(), req, ns, validated),
            Err(msg) => {
                record_error(shared, msg);
                break;
            }
        }
    }
    if let Some(b) = held {
        shared.gen.lock().unwrap().release(b);
    }
}

/// 1.0: every thread fsyncs every file when it finishes (not events; counted as fsyncs).
fn end_fsyncs(shared: &Shared, st: &Mutex<WorkerStats>) {
    let cfg = shared.cfg;
    if cfg.compat != Compat::V1_0 || !cfg.fsync_end || cfg.fsync_all || !shared.mode.writes() {
        return;
    }
    let mut n = 0;
    for i in 0..shared.files.count() {
        if let Err(e) = shared.files.sync(i) {
            record_error(
                shared,
                format!("fsync of test_file.{i} at end of test failed: {e}"),
            );
            break;
        }
        n += 1;
    }
    st.lock().unwrap().interval.fsyncs += n;
}

/// A synchronous worker's buffers: reads land in `read`; writes come from `write` (zeros, the
/// random pool, or checksummed blocks), so a read never changes what the next write carries.
struct SyncBufs {
    read: AlignedBuf,
    write: AlignedBuf,
    rng: Rng,
}

/// Executes one request; returns the number of blocks validated.
#[inline]
fn execute(shared: &Shared, req: Request, bufs: &mut SyncBufs) -> Result<u64, String> {
    let cfg = shared.cfg;
    match req {
        Request::Read { file, pos, len } => {
            let b = &mut bufs.read.as_mut_slice()[..len as usize];
            shared
                .files
                .read(file as usize, pos, b)
                .map_err(|e| format!("read of test_file.{file} at offset {pos} failed: {e}"))?;
            if cfg.validate {
                return checksum::verify(b, pos, cfg.block_size)
                    .map_err(|m| format!("checksum validation of test_file.{file} failed: {m}"));
            }
            Ok(0)
        }
        Request::Write { file, pos, len } => {
            let b = &mut bufs.write.as_mut_slice()[..len as usize];
            if cfg.validate {
                checksum::fill(b, pos, cfg.block_size, &mut bufs.rng);
            } else if cfg.fill == Fill::Random {
                super::fill::stamp(b, &mut bufs.rng);
            }
            shared
                .files
                .write(file as usize, pos, b)
                .map_err(|e| format!("write to test_file.{file} at offset {pos} failed: {e}"))?;
            if cfg.fsync_all {
                shared
                    .files
                    .sync(file as usize)
                    .map_err(|e| format!("fsync of test_file.{file} failed: {e}"))?;
            }
            Ok(0)
        }
        Request::Fsync { file } => {
            shared
                .files
                .sync(file as usize)
                .map_err(|e| format!("fsync of test_file.{file} failed: {e}"))?;
            Ok(0)
        }
        Request::Busy | Request::Stop => Ok(0),
    }
}

fn interval_sample(
    stats: &[Arc<Mutex<WorkerStats>>],
    cfg: &FileioConfig,
    len: Duration,
    elapsed: Duration,
) -> IntervalSample {
    let mut sum = Tally::default();
    let mut latencies = IntervalLatencies::default();
    for st in stats {
        let mut s = st.lock().unwrap();
        sum.add(&s.interval);
        let it = std::mem::take(&mut s.interval);
        s.total.add(&it);
        let s = &mut *s;
        latencies.take_histogram(&mut s.interval_hist, &mut s.interval_max_ns);
    }
    let secs = len.as_secs_f64().max(1e-9);
    let percentile = (cfg.percentile > 0.0).then_some(cfg.percentile);
    IntervalSample::new(
        elapsed.as_secs_f64(),
        cfg.threads,
        sum.events,
        latencies.figures(percentile, Percentiles::BucketValue),
        IntervalRates::Fileio {
            read_mib_per_s: sum.bytes_read as f64 / MIB / secs,
            written_mib_per_s: sum.bytes_written as f64 / MIB / secs,
            reads_per_s: sum.reads as f64 / secs,
            writes_per_s: sum.writes as f64 / secs,
            fsyncs_per_s: sum.fsyncs as f64 / secs,
        },
    )
}

fn build_result(
    cfg: &FileioConfig,
    mode: TestMode,
    stats: &[Arc<Mutex<WorkerStats>>],
    intervals: Vec<IntervalSample>,
    total_time: f64,
    started_at: String,
    error: Option<String>,
) -> Measurement {
    let mut total = Tally::default();
    let mut latency = LatencyRecorder::new();
    let mut shares = Vec::new();
    let mut validated = 0;
    for st in stats {
        let mut s = st.lock().unwrap();
        let it = std::mem::take(&mut s.interval);
        s.total.add(&it);
        total.add(&s.total);
        latency.merge(&s.latency);
        validated += s.validated_blocks;
        shares.push(ThreadShare {
            events: s.latency.count(),
            busy_s: s.latency.sum_ns() as f64 / 1e9,
        });
    }
    let secs = total_time.max(1e-9);
    let mut notes = Vec::new();
    if cfg.extra_flags.direct {
        notes.push("O_DIRECT: reads and writes bypass the page cache".to_string());
    }
    match cfg.io_mode {
        IoMode::Mmap => notes.push(
            "mmap I/O mode: reads and writes are memory copies through the page cache".to_string(),
        ),
        IoMode::Async => notes.push(format!(
            "async I/O mode (io_uring): up to {} requests in flight per thread; latency is from submission to completion",
            cfg.async_backlog
        )),
        IoMode::Sync => {}
    }
    if cfg.fill == Fill::Random && mode.writes() && !cfg.validate {
        notes.push("write data: random bytes (incompressible, every sector distinct)".to_string());
    }
    // A file set smaller than RAM without O_DIRECT is a doubt about the figures, which the
    // report derives from the options (`report::doubts`), not a note of the engine.
    Measurement {
        started_at,
        threads: cfg.threads,
        total_time_s: total_time,
        events: latency.count(),
        counters: Counters::Fileio(FileioCounters {
            reads: total.reads,
            writes: total.writes,
            fsyncs: total.fsyncs,
            bytes_read: total.bytes_read,
            bytes_written: total.bytes_written,
            reads_per_s: total.reads as f64 / secs,
            writes_per_s: total.writes as f64 / secs,
            fsyncs_per_s: total.fsyncs as f64 / secs,
            read_mib_per_s: total.bytes_read as f64 / MIB / secs,
            written_mib_per_s: total.bytes_written as f64 / MIB / secs,
            validated_blocks: validated,
        }),
        latency: latency.summary(cfg.percentile),
        intervals,
        fairness: fairness(shares),
        histogram: latency.histogram_data(),
        notes,
        diagnostics: vec![],
        error,
    }
}
