//! `--file-io-mode=async`: sysbench 1.0's asynchronous mode, on io_uring.
//!
//! As sysbench's libaio mode: each worker has its own queue and keeps up to
//! `--file-async-backlog` requests in flight; requests come from the same generator (offsets,
//! rw ratio, periodic fsync rounds, limits) as in sync mode; reads and writes are counted when
//! they complete (the rw ratio rule sees completed counts); every event (read, write, periodic
//! fsync) is timed from its submission to its completion; a worker that stops waits for what it
//! has in flight, then (1.0) fsyncs every file.
//!
//! Where this differs from sysbench, on purpose:
//! * An fsync waits until this worker's writes in flight have completed, then goes through the
//!   ring (sysbench calls fsync(2) while its own AIO writes may still be in flight, and at the
//!   end fsyncs before it waits for them). So a round covers every write issued before it.
//! * With `--validate` every request in flight has its own buffer, so the check sees the bytes
//!   a read returned (sysbench validates its shared buffer right after submitting the read) and
//!   a checksummed write cannot be overwritten while in flight. Without it, reads all land in
//!   one buffer per worker, as sysbench's do (nothing looks at the bytes; a buffer per read
//!   spreads the copies over backlog × request size of memory and, measured on a VM's virtio
//!   disk, moved 7 % fewer reads at queue depth 128), and every random-fill write has its own
//!   freshly stamped buffer. `--file-fsync-all` issues the write's fsync when the write has
//!   completed; the event ends with the fsync.
//! * With `--validate`, a sequential request never overlaps one of the worker's own requests
//!   in flight (random modes already never hand out a block in use).
//!
//! A worker sends its requests to the kernel in chunks of at most `CHUNK` as it queues them
//! (each request's clock starts when its chunk is sent), then takes every completion the ring
//! holds and waits for one only when there is none. Sending a whole refill in the call that
//! also waits had the kernel start the batch together and complete it together: at depth 32
//! the requests settled into one group of 31 and a straggler, and while the worker reaped and
//! refilled the 31 the device had one request to work on (`BENCHMARKS.md`, "Async at queue
//! depth 32 against fio"). Small chunks keep the device fed and still cost fewer system calls
//! per I/O than fio's one per request.
//!
//! Before its first request a worker registers the test files and its request buffers with its
//! ring (`Registered`), so the kernel neither looks a file up nor pins a buffer's pages per
//! request; where the kernel refuses (the locked-memory limit of a user without
//! `CAP_IPC_LOCK`), requests name the file and buffer as they would without: same requests,
//! more kernel CPU each, and the result's notes say which and why (`unregistered_note`).
//!
//! Files the kernel cannot start a request on without blocking (it refuses `RWF_NOWAIT`: every
//! request on tmpfs, buffered writes on ext4) would have io_uring hand each request to a kernel
//! worker thread, which costs more than the copy itself. libaio runs such requests to completion
//! inside `io_submit`; spindle does the same: they run at submission (`pread`/`pwrite`/`fsync`),
//! one at a time per thread, timed from start to end. `probe_blocking` finds them before the run.
//!
//! Here: the worker. `setup`: the ring and why it could not be set up; `nowait`: which files'
//! requests run at submission; `register`: the files and buffers registered with the ring.

use super::checksum;
use super::config::{Fill, FsyncMode};
use super::files::AlignedBuf;
use super::generator::Request;
use super::shared::{account, record_error, worker_rng, Shared, WorkerStats};
use io_uring::{opcode, squeue, types, EnterFlags};
use std::os::unix::io::RawFd;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Instant;

mod nowait;
mod register;
mod setup;
mod state;

pub use nowait::{blocking_note, probe_blocking, Blocking};
use register::random_wbuf;
pub use register::unregistered_note;
pub use setup::{unavailable_reason, Ring};
use state::{Registered, Slot, Worker};

/// Requests queued before they are sent to the kernel. 1 is fio's way (one `io_uring_enter`
/// per request); a whole refill at once groups the completions (see the module doc). Measured
/// at depth 32 on a virtio disk: 4 moved as many requests as 1 with a quarter of the calls.
const CHUNK: usize = 4;

/// Runs worker `t` on `ring` until the run ends, then waits for everything it has in flight.
pub(super) fn worker(shared: &Shared, t: usize, st: &Mutex<WorkerStats>, ring: Ring) {
    if ring.disabled {
        if let Err(e) = ring.ring.submitter().register_enable_rings() {
            record_error(shared, format!("could not enable the io_uring ring: {e}"));
            return;
        }
    }
    let cfg = shared.cfg;
    let backlog = cfg.async_backlog as usize;
    let req_size = cfg.request_size(shared.mode) as usize;
    let mut w = Worker {
        ring: ring.ring,
        shared,
        reg: Registered::default(),
        fds: (0..shared.files.count())
            .map(|i| shared.files.fd(i))
            .collect(),
        slots: (0..backlog)
            .map(|_| Slot {
                req: Request::Stop,
                t0: Instant::now(),
                busy: false,
                syncing: false,
                buf: None,
                wbuf: None,
            })
            .collect(),
        free: (0..backlog).rev().collect(),
        pending: Vec::with_capacity(backlog),
        writes_in_flight: 0,
        deferred: None,
        released: Vec::new(),
        batch: Vec::with_capacity(backlog),
        cqes: Vec::with_capacity(backlog),
        blocking: &shared.blocking,
        inline_done: Vec::with_capacity(backlog),
        scratch: AlignedBuf::new(req_size),
        inline_wbuf: AlignedBuf::new(0),
        zeros: AlignedBuf::new(req_size),
        rng: worker_rng(cfg, t),
        req_size,
        seq_validate: cfg.validate && !shared.mode.is_random(),
        finished: false,
        now: Instant::now(),
    };
    if cfg.fill == Fill::Random && shared.mode.writes() {
        w.inline_wbuf = random_wbuf(req_size, &mut w.rng);
    }
    w.register();
    match w.run(st).and_then(|()| w.drain(st)) {
        Ok(()) => {
            let mut g = shared.gen.lock().unwrap();
            for b in w.released.drain(..) {
                g.release(b);
            }
        }
        Err(msg) => {
            record_error(shared, msg);
            // The ring failed with requests possibly still running: their buffers must outlive
            // them, so the worker (ring and buffers) is leaked rather than freed under the kernel.
            std::mem::forget(w);
        }
    }
}

impl Worker<'_, '_> {
    fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Keeps the queue full until the run ends. Err: the ring itself failed.
    fn run(&mut self, st: &Mutex<WorkerStats>) -> Result<(), String> {
        loop {
            if !self.finished && self.shared.should_stop(self.now) {
                self.finished = true;
            }
            if self.finished && self.deferred.is_none() {
                return Ok(());
            }
            self.fill()?;
            if self.in_flight() == 0 {
                // Every block is in use by other workers (--validate): let them finish one.
                std::thread::yield_now();
                self.now = Instant::now();
                continue;
            }
            self.submit_and_reap(st)?;
        }
    }

    /// Waits for every request in flight (and submits what is still queued).
    fn drain(&mut self, st: &Mutex<WorkerStats>) -> Result<(), String> {
        while self.in_flight() > 0 {
            self.submit_and_reap(st)?;
        }
        Ok(())
    }

    /// Takes requests from the generator (one lock for the batch) while a slot is free, and
    /// starts them, sending them to the kernel a chunk at a time. Err: the ring failed.
    fn fill(&mut self) -> Result<(), String> {
        if let Some(req) = self.deferred {
            if !self.ready(req, &[]) {
                return Ok(());
            }
            self.deferred = None;
            self.push(req);
        }
        if self.finished || self.free.is_empty() {
            return Ok(());
        }
        let mut batch = std::mem::take(&mut self.batch);
        {
            let shared = self.shared;
            let mut g = shared.gen.lock().unwrap();
            for b in self.released.drain(..) {
                g.release(b);
            }
            while batch.len() < self.free.len() {
                let req = g.next(
                    shared.reads_done.load(Ordering::Relaxed),
                    shared.writes_done.load(Ordering::Relaxed),
                );
                match req {
                    Request::Stop => {
                        self.finished = true;
                        break;
                    }
                    Request::Busy => break,
                    _ if !self.ready(req, &batch) => {
                        self.deferred = Some(req);
                        break;
                    }
                    _ => batch.push(req),
                }
            }
        }
        let mut sent = Ok(());
        for &req in &batch {
            self.push(req);
            if self.ring.submission().len() >= CHUNK {
                sent = self.submit(0);
                if sent.is_err() {
                    break;
                }
            }
        }
        batch.clear();
        self.batch = batch;
        sent
    }

    /// Whether `req` may be submitted now, after this worker's requests in flight and `batch`.
    fn ready(&self, req: Request, batch: &[Request]) -> bool {
        match req {
            Request::Fsync { .. } => {
                self.writes_in_flight == 0
                    && !batch.iter().any(|r| matches!(r, Request::Write { .. }))
            }
            Request::Read { file, pos, len } | Request::Write { file, pos, len }
                if self.seq_validate =>
            {
                let hit = |r: &Request| overlaps(r, file, pos, len);
                !batch.iter().any(hit) && !self.slots.iter().any(|s| s.busy && hit(&s.req))
            }
            _ => true,
        }
    }

    /// Takes a free slot for `req` and starts it (on the ring, or at once for a blocking file).
    fn push(&mut self, req: Request) {
        let cfg = self.shared.cfg;
        // Only a write's buffer depends on it (reads land in `scratch` or the slot's buffer).
        let write_inline = match req {
            Request::Write { file, .. } => self.inline(file).writes,
            _ => false,
        };
        let i = self.free.pop().expect("a free slot");
        let slot = &mut self.slots[i];
        slot.req = req;
        slot.busy = true;
        slot.syncing = false;
        let size = self.req_size;
        let reg = self.reg;
        let (file, op) = match req {
            Request::Read { file, pos, len } => {
                let (ptr, idx) = if !cfg.validate {
                    (self.scratch.as_mut_ptr(), reg.scratch)
                } else {
                    let b = slot.buf.get_or_insert_with(|| AlignedBuf::new(size));
                    (b.as_mut_ptr(), Registered::slot(reg.buf, i))
                };
                (file, Op::Read(ptr, len, pos, idx))
            }
            Request::Write { file, pos, len } => {
                self.writes_in_flight += 1;
                let rng = &mut self.rng;
                let (ptr, idx) = if cfg.validate {
                    let b = slot.buf.get_or_insert_with(|| AlignedBuf::new(size));
                    checksum::fill(
                        &mut b.as_mut_slice()[..len as usize],
                        pos,
                        cfg.block_size,
                        rng,
                    );
                    (b.as_mut_ptr(), Registered::slot(reg.buf, i))
                } else if cfg.fill == Fill::Random && write_inline {
                    let b = &mut self.inline_wbuf;
                    super::fill::stamp(&mut b.as_mut_slice()[..len as usize], rng);
                    (b.as_mut_ptr(), None)
                } else if cfg.fill == Fill::Random {
                    let b = slot.wbuf.get_or_insert_with(|| random_wbuf(size, rng));
                    super::fill::stamp(&mut b.as_mut_slice()[..len as usize], rng);
                    (b.as_mut_ptr(), Registered::slot(reg.wbuf, i))
                } else {
                    (self.zeros.as_mut_ptr(), reg.zeros)
                };
                (file, Op::Write(ptr, len, pos, idx))
            }
            Request::Fsync { file } => (file, Op::Fsync),
            Request::Busy | Request::Stop => unreachable!("not a request for the disk"),
        };
        self.issue(i, file, op, true);
    }

    /// Which requests to `file` run at submission.
    fn inline(&self, file: u32) -> Blocking {
        self.blocking
            .get(file as usize)
            .copied()
            .unwrap_or_default()
    }

    /// Starts `op` on `file` for slot `i`: queued on the ring (sent with the next `submit`;
    /// `fresh`: its clock starts then) or, for a file the kernel can only
    /// serve by blocking, run now and kept for the next `submit_and_reap` to account.
    fn issue(&mut self, i: usize, file: u32, op: Op, fresh: bool) {
        let fd = self.fds[file as usize];
        let b = self.inline(file);
        let inline = match op {
            Op::Read(..) => b.reads,
            Op::Write(..) | Op::Fsync => b.writes,
        };
        if !inline {
            // A registered file is named by its index and the FIXED_FILE flag (what
            // `types::Fixed` builds), so one builder serves both.
            let (target, flags) = match self.reg.files {
                true => (types::Fd(file as RawFd), squeue::Flags::FIXED_FILE),
                false => (types::Fd(fd), squeue::Flags::empty()),
            };
            let sqe = match op {
                Op::Read(ptr, len, pos, Some(idx)) => opcode::ReadFixed::new(target, ptr, len, idx)
                    .offset(pos)
                    .build(),
                Op::Read(ptr, len, pos, None) => {
                    opcode::Read::new(target, ptr, len).offset(pos).build()
                }
                Op::Write(ptr, len, pos, Some(idx)) => {
                    opcode::WriteFixed::new(target, ptr, len, idx)
                        .offset(pos)
                        .build()
                }
                Op::Write(ptr, len, pos, None) => {
                    opcode::Write::new(target, ptr, len).offset(pos).build()
                }
                Op::Fsync => fsync_sqe(target, self.shared.cfg.fsync_mode),
            };
            self.enqueue(&sqe.flags(flags).user_data(i as u64));
            if fresh {
                self.pending.push(i);
            }
            return;
        }
        if fresh {
            self.slots[i].t0 = Instant::now();
        }
        let errno = |e: std::io::Error| -e.raw_os_error().unwrap_or(libc::EIO);
        let bytes = |r: isize| match r {
            r if r < 0 => errno(std::io::Error::last_os_error()),
            r => r as i32,
        };
        // SAFETY (pread, pwrite): the buffers live in `self.slots`, `self.scratch`,
        // `self.inline_wbuf` or `self.zeros` and hold `len` bytes.
        let res = match op {
            Op::Read(ptr, len, pos, _) => bytes(unsafe {
                libc::pread(
                    fd,
                    ptr as *mut libc::c_void,
                    len as usize,
                    pos as libc::off_t,
                )
            }),
            Op::Write(ptr, len, pos, _) => bytes(unsafe {
                libc::pwrite(
                    fd,
                    ptr as *const libc::c_void,
                    len as usize,
                    pos as libc::off_t,
                )
            }),
            // The sync mode's fsync (or fdatasync, per --file-fsync-mode).
            Op::Fsync => self
                .shared
                .files
                .sync(file as usize)
                .map_or_else(errno, |()| 0),
        };
        self.inline_done.push((i, res, Instant::now()));
    }

    fn enqueue(&mut self, sqe: &squeue::Entry) {
        // SAFETY: every buffer the entry points to lives in `self.slots` or is `self.zeros` or
        // `self.scratch`, is not freed before the ring is closed, and is not written by this
        // process while a request uses it (`scratch` only takes reads, whose bytes nobody
        // looks at).
        unsafe { self.ring.submission().push(sqe) }
            .expect("the ring has room for every request in flight");
    }

    /// Sends what is queued and, when nothing is known to have completed (no completion in the
    /// ring, no request that ran at submission), waits for one, in the same system call;
    /// accounts for every completion there is.
    fn submit_and_reap(&mut self, st: &Mutex<WorkerStats>) -> Result<(), String> {
        let idle = self.inline_done.is_empty() && self.ring.completion().is_empty();
        if idle || !self.ring.submission().is_empty() {
            self.submit(u32::from(idle))?;
        }
        let now = Instant::now();
        self.now = now;
        self.cqes.clear();
        self.cqes.extend(
            self.ring
                .completion()
                .map(|c| (c.user_data() as usize, c.result(), now)),
        );
        self.cqes.append(&mut self.inline_done);
        let mut s = st.lock().unwrap();
        for k in 0..self.cqes.len() {
            let (i, res, end) = self.cqes[k];
            if let Err(msg) = self.complete(i, res, end, &mut s) {
                // The run stops; the other requests in flight still complete and count.
                record_error(self.shared, msg);
            }
        }
        Ok(())
    }

    /// Sends every queued request to the kernel (their clocks start now) and waits until the
    /// ring holds `want` completions. GETEVENTS even when not waiting: on a ring that defers
    /// completion work to the worker (`setup`), only an enter with it posts finished requests
    /// to the completion ring, so each chunk also brings in what completed meanwhile.
    fn submit(&mut self, mut want: u32) -> Result<(), String> {
        let t0 = Instant::now();
        for &i in &self.pending {
            self.slots[i].t0 = t0;
        }
        self.pending.clear();
        loop {
            let queued = self.ring.submission().len() as u32;
            // SAFETY: no argument is passed; every queued entry's buffers are kept alive and
            // untouched while the kernel uses them (`enqueue`).
            let r = unsafe {
                self.ring.submitter().enter::<libc::sigset_t>(
                    queued,
                    want,
                    EnterFlags::GETEVENTS.bits(),
                    None,
                )
            };
            match r {
                Ok(_) => return Ok(()),
                // A signal (Ctrl-C): send what is still queued; stop waiting once one completed.
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {
                    if !self.ring.completion().is_empty() {
                        want = 0;
                    }
                    if want == 0 && self.ring.submission().is_empty() {
                        return Ok(());
                    }
                }
                Err(e) => return Err(format!("io_uring submission failed: {e}")),
            }
        }
    }

    /// One completion: checks it, frees its slot and accounts for the event.
    fn complete(
        &mut self,
        i: usize,
        res: i32,
        end: Instant,
        s: &mut WorkerStats,
    ) -> Result<(), String> {
        let cfg = self.shared.cfg;
        let slot = &mut self.slots[i];
        let req = slot.req;
        let ns = end.saturating_duration_since(slot.t0).as_nanos() as u64;
        let outcome = match req {
            Request::Read { file, pos, len } => {
                check_len(res, len, "read of", file, pos).and_then(|()| {
                    if !cfg.validate {
                        return Ok(0);
                    }
                    let b =
                        &slot.buf.as_ref().expect("a read has a buffer").as_slice()[..len as usize];
                    checksum::verify(b, pos, cfg.block_size)
                        .map_err(|m| format!("checksum validation of test_file.{file} failed: {m}"))
                })
            }
            Request::Write { file, .. } if slot.syncing => check_fsync(res, file).map(|()| 0),
            Request::Write { file, pos, len } => {
                self.writes_in_flight -= 1;
                let r = check_len(res, len, "write to", file, pos);
                if r.is_ok() && cfg.fsync_all {
                    // The event goes on: the file's fsync, now that the write is done.
                    slot.syncing = true;
                    self.issue(i, file, Op::Fsync, false);
                    return Ok(());
                }
                r.map(|()| 0)
            }
            Request::Fsync { file } => check_fsync(res, file).map(|()| 0),
            Request::Busy | Request::Stop => Ok(0),
        };
        let slot = &mut self.slots[i];
        slot.busy = false;
        self.free.push(i);
        if let Request::Read { file, pos, .. } | Request::Write { file, pos, .. } = req {
            if cfg.validate && !self.seq_validate {
                self.released.push((file, pos));
            }
        }
        account(self.shared, s, req, ns, outcome?);
        Ok(())
    }
}

/// A request's system call: buffer, length, offset, the buffer's registered index.
#[derive(Clone, Copy)]
enum Op {
    Read(*mut u8, u32, u64, Option<u16>),
    Write(*mut u8, u32, u64, Option<u16>),
    Fsync,
}

fn fsync_sqe(target: types::Fd, mode: FsyncMode) -> squeue::Entry {
    let flags = match mode {
        FsyncMode::Fsync => types::FsyncFlags::empty(),
        FsyncMode::Fdatasync => types::FsyncFlags::DATASYNC,
    };
    opcode::Fsync::new(target).flags(flags).build()
}

/// A read or write completion must have moved exactly `len` bytes.
fn check_len(res: i32, len: u32, what: &str, file: u32, pos: u64) -> Result<(), String> {
    if res < 0 {
        let e = std::io::Error::from_raw_os_error(-res);
        return Err(format!(
            "{what} test_file.{file} at offset {pos} failed: {e}"
        ));
    }
    if res as u32 != len {
        return Err(format!(
            "{what} test_file.{file} at offset {pos} failed: short transfer: {res} of {len} bytes"
        ));
    }
    Ok(())
}

fn check_fsync(res: i32, file: u32) -> Result<(), String> {
    if res < 0 {
        let e = std::io::Error::from_raw_os_error(-res);
        return Err(format!("fsync of test_file.{file} failed: {e}"));
    }
    Ok(())
}

/// Whether `r` touches any byte of `len` bytes at `pos` of `file`.
fn overlaps(r: &Request, file: u32, pos: u64, len: u32) -> bool {
    match *r {
        Request::Read {
            file: f,
            pos: p,
            len: l,
        }
        | Request::Write {
            file: f,
            pos: p,
            len: l,
        } => f == file && p < pos + len as u64 && pos < p + l as u64,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_by_byte_range_in_the_same_file() {
        let w = Request::Write {
            file: 1,
            pos: 4096,
            len: 4096,
        };
        assert!(overlaps(&w, 1, 0, 4097));
        assert!(!overlaps(&w, 1, 0, 4096));
        assert!(!overlaps(&w, 2, 4096, 4096));
        assert!(overlaps(&w, 1, 8191, 1));
        assert!(!overlaps(&Request::Fsync { file: 1 }, 1, 4096, 1));
    }
}
