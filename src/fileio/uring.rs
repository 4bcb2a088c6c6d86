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
//! A worker submits everything the generator gave it in one `io_uring_enter`, which also waits
//! for the next completion once its queue is full: one system call per completion batch.
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

use super::checksum;
use super::config::{Fill, FsyncMode};
use super::error::FileioError;
use super::files::AlignedBuf;
use super::generator::Request;
use super::run::{account, record_error, worker_rng, Shared, WorkerStats};
use crate::rng::Rng;
use io_uring::{opcode, squeue, types, IoUring};
use std::os::unix::io::RawFd;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Instant;

/// A worker's ring, set up before the run starts (so "io_uring unavailable" is found first).
pub struct Ring {
    ring: IoUring,
    /// Set up disabled (single-issuer rings): the worker thread enables it and so owns it.
    disabled: bool,
}

impl Ring {
    /// A ring with room for `backlog` requests. Tries the cheapest setup first (one submitter,
    /// completions run when the worker waits: kernel 6.1+), then older kernels' setups.
    pub fn new(backlog: u32) -> Result<Ring, FileioError> {
        type Setup = fn(&mut io_uring::Builder);
        let setups: [(Setup, bool); 3] = [
            (
                |b| {
                    b.setup_single_issuer()
                        .setup_defer_taskrun()
                        .setup_r_disabled();
                },
                true,
            ),
            (
                |b| {
                    b.setup_coop_taskrun();
                },
                false,
            ),
            (|_| {}, false),
        ];
        let mut last = None;
        for (setup, disabled) in setups {
            let mut b = IoUring::builder();
            setup(&mut b);
            match b.build(backlog) {
                Ok(ring) => return Ok(Ring { ring, disabled }),
                // EINVAL: this kernel does not know a setup flag; try the next setup.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
                Err(e) => return Err(unavailable(&e)),
            }
        }
        Err(unavailable(&last.expect("at least one setup was tried")))
    }
}

/// The typed error for a failed `io_uring_setup`, with the cause read from the running system.
fn unavailable(e: &std::io::Error) -> FileioError {
    let sysctl = crate::sys::SysRoot::host().read_parsed("/proc/sys/kernel/io_uring_disabled");
    FileioError::IoUringUnavailable {
        reason: unavailable_reason(e.raw_os_error().unwrap_or(0), sysctl),
    }
}

/// Why `io_uring_setup` failed with `errno`, given the `kernel.io_uring_disabled` setting (when
/// the kernel has it), and what to do about it.
pub fn unavailable_reason(errno: i32, io_uring_disabled: Option<u32>) -> String {
    const SYNC: &str = "or use synchronous I/O";
    match (errno, io_uring_disabled) {
        (libc::EPERM, Some(2)) => format!(
            "the kernel setting kernel.io_uring_disabled = 2 turns io_uring off for every process: set it to 0 (sysctl -w kernel.io_uring_disabled=0), {SYNC}"
        ),
        (libc::EPERM, Some(1)) => format!(
            "the kernel setting kernel.io_uring_disabled = 1 allows io_uring only to members of the group in kernel.io_uring_group: set it to 0, add this user to that group, {SYNC}"
        ),
        (libc::EPERM, _) => format!(
            "io_uring_setup was refused (EPERM): a seccomp filter (a container's default profile, for one) or a security module blocks it: allow io_uring for this process, {SYNC}"
        ),
        (libc::ENOSYS, _) => format!(
            "io_uring_setup does not exist (ENOSYS): the kernel was built without io_uring (CONFIG_IO_URING) or is older than 5.1, or a seccomp filter (a container's, for one) hides it: run on a kernel with io_uring outside such a filter, {SYNC}"
        ),
        (libc::ENOMEM, _) => format!(
            "the kernel could not allocate the ring (ENOMEM): raise the locked-memory limit (ulimit -l), lower the requests in flight, {SYNC}"
        ),
        (libc::EMFILE | libc::ENFILE, _) => format!(
            "no file descriptor left for the ring: raise the open-file limit (ulimit -n), {SYNC}"
        ),
        _ => format!(
            "io_uring_setup failed: {}: {SYNC}",
            std::io::Error::from_raw_os_error(errno)
        ),
    }
}

/// Which requests to a file the kernel can only run by blocking (so io_uring would hand them to
/// a kernel worker thread): they run at submission instead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Blocking {
    pub reads: bool,
    /// Writes, and the fsyncs that follow them.
    pub writes: bool,
}

/// Probes every file with `RWF_NOWAIT` (the flag io_uring's first, non-blocking attempt uses):
/// `EOPNOTSUPP` means the kernel never starts such a request without blocking. The write probe
/// writes back the `len` bytes just read at offset 0, so no byte of a file changes. Runs before
/// the workers start (nothing else touches the files). A file that cannot be probed (shorter
/// than `len`, read error) keeps the ring: the run itself reports any real error.
pub fn probe_blocking(fds: &[RawFd], len: usize) -> Vec<Blocking> {
    let mut buf = AlignedBuf::new(len);
    fds.iter()
        .map(|&fd| {
            let iov = libc::iovec {
                iov_base: buf.as_mut_ptr() as *mut libc::c_void,
                iov_len: len,
            };
            let unsupported = |r: isize| {
                r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EOPNOTSUPP)
            };
            // SAFETY (the three calls): `iov` points into `buf`, which holds `len` bytes and
            // outlives them.
            let full = unsafe { libc::pread(fd, iov.iov_base, len, 0) } == len as isize;
            if unsupported(unsafe { libc::preadv2(fd, &iov, 1, 0, libc::RWF_NOWAIT) }) {
                return Blocking {
                    reads: true,
                    writes: true,
                };
            }
            Blocking {
                reads: false,
                writes: full
                    && unsupported(unsafe { libc::pwritev2(fd, &iov, 1, 0, libc::RWF_NOWAIT) }),
            }
        })
        .collect()
}

/// The result's note when some of the run's requests ran at submission (None: all on the ring).
pub fn blocking_note(blocking: &[Blocking], mode: super::config::TestMode) -> Option<String> {
    let reads = mode.reads() && blocking.iter().any(|b| b.reads);
    let writes = mode.writes() && blocking.iter().any(|b| b.writes);
    let what = match (reads, writes) {
        (false, false) => return None,
        (true, true) => "reads and writes",
        (true, false) => "reads",
        (false, true) => "writes",
    };
    Some(format!(
        "async I/O: this file system cannot start {what} without blocking (the kernel refuses RWF_NOWAIT for them, as tmpfs does for every request and ext4 for buffered writes), so they run at submission, one at a time per thread, as libaio's do: the queue depth does not apply to them"
    ))
}

/// The result's note when a worker could not register its files or buffers with its ring
/// (`what`: which, and the kernel's error).
pub fn unregistered_note(what: &str) -> String {
    let memlock = if what.contains("os error 12") {
        " (ENOMEM: the locked-memory limit, `ulimit -l`, of a user without CAP_IPC_LOCK; raise it or run as root)"
    } else {
        ""
    };
    format!(
        "async I/O: io_uring could not register the {what}{memlock}, so requests named them one by one: the same requests, more kernel CPU each"
    )
}

/// One request in flight and its buffers (kept between requests; made on first use, or before
/// the run when they are registered with the ring).
struct Slot {
    req: Request,
    /// When the request was submitted.
    t0: Instant,
    busy: bool,
    /// `--file-fsync-all`: the write has completed, its fsync is in flight.
    syncing: bool,
    /// `--validate`: the read lands here, the checksummed write comes from here.
    buf: Option<AlignedBuf>,
    /// Random-fill writes come from here (never read into).
    wbuf: Option<AlignedBuf>,
}

/// What a worker registered with its ring: the files (a request names the file's index) and
/// its request buffers (a request names the buffer's index). Buffers are numbered in this
/// order: every `Slot::buf`, every `Slot::wbuf`, `Worker::zeros`, `Worker::scratch` — those of
/// them that ring requests of this test use.
#[derive(Clone, Copy, Debug, Default)]
struct Registered {
    files: bool,
    /// Index of slot 0's `buf`; slot i's is `buf + i`.
    buf: Option<u16>,
    /// Index of slot 0's `wbuf`.
    wbuf: Option<u16>,
    zeros: Option<u16>,
    scratch: Option<u16>,
}

impl Registered {
    fn slot(base: Option<u16>, i: usize) -> Option<u16> {
        base.map(|b| b + i as u16)
    }
}

/// One async worker's state. The ring is the first field, so it is closed (and the kernel lets
/// go of the registered buffers) before the buffers are freed.
struct Worker<'s, 'a> {
    ring: IoUring,
    shared: &'s Shared<'a>,
    reg: Registered,
    fds: Vec<RawFd>,
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// Slots pushed since the last submission (their clock starts at the next one).
    pending: Vec<usize>,
    writes_in_flight: u32,
    /// A generated request that must wait: an fsync behind this worker's writes in flight, or a
    /// checksummed sequential request overlapping one in flight.
    deferred: Option<Request>,
    /// Blocks finished since the generator was last asked (`--validate`).
    released: Vec<(u32, u64)>,
    batch: Vec<Request>,
    /// Completions to account: (slot, result, when it completed).
    cqes: Vec<(usize, i32, Instant)>,
    /// Per file: which requests run at submission (`probe_blocking`).
    blocking: &'s [Blocking],
    /// Requests that ran at submission, not yet accounted.
    inline_done: Vec<(usize, i32, Instant)>,
    /// Where every read lands without `--validate` (its bytes are never looked at).
    scratch: AlignedBuf,
    /// Source of the random-fill writes that run at submission: each is done before the next
    /// starts, so one buffer serves them all and stays in the cache. Never read into, so its
    /// bytes stay random.
    inline_wbuf: AlignedBuf,
    /// Source of zero-fill writes (its bytes never change, so writes in flight share it).
    zeros: AlignedBuf,
    rng: Rng,
    req_size: usize,
    /// Checksummed sequential mode: requests must not overlap this worker's in flight.
    seq_validate: bool,
    /// The generator said stop, or the run ended: take no new requests.
    finished: bool,
    now: Instant,
}

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

/// A buffer for random-fill writes: random bytes, stamped per request.
fn random_wbuf(size: usize, rng: &mut Rng) -> AlignedBuf {
    let mut b = AlignedBuf::new(size);
    super::fill::randomize(b.as_mut_slice(), rng);
    b
}

impl Worker<'_, '_> {
    /// Registers the files and the buffers this test's ring requests use (made now, for every
    /// slot, instead of on first use). Nothing to do when every request runs at submission.
    fn register(&mut self) {
        let cfg = self.shared.cfg;
        let mode = self.shared.mode;
        let on_ring = (0..self.fds.len()).any(|f| {
            let b = self.inline(f as u32);
            (mode.reads() && !b.reads) || (mode.writes() && !b.writes)
        });
        if !on_ring {
            return;
        }
        let unregistered = |what: &str, e: std::io::Error| {
            let mut u = self.shared.unregistered.lock().unwrap();
            u.get_or_insert_with(|| format!("{what} ({e})"));
        };
        match self.ring.submitter().register_files(&self.fds) {
            Ok(()) => self.reg.files = true,
            Err(e) => unregistered("test files", e),
        }

        let size = self.req_size;
        let writes = mode.writes() && !cfg.validate;
        let (bufs, wbufs, zeros, scratch) = (
            cfg.validate,
            writes && cfg.fill == Fill::Random,
            writes && cfg.fill != Fill::Random,
            mode.reads() && !cfg.validate,
        );
        let mut iovecs = Vec::new();
        let mut add = |b: &mut AlignedBuf| {
            iovecs.push(libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: size,
            })
        };
        if bufs {
            for s in &mut self.slots {
                add(s.buf.get_or_insert_with(|| AlignedBuf::new(size)));
            }
        }
        if wbufs {
            for s in &mut self.slots {
                add(s
                    .wbuf
                    .get_or_insert_with(|| random_wbuf(size, &mut self.rng)));
            }
        }
        if zeros {
            add(&mut self.zeros);
        }
        if scratch {
            add(&mut self.scratch);
        }
        if iovecs.is_empty() {
            return;
        }
        // SAFETY: every iovec is a live buffer of `size` bytes owned by this worker; none is
        // freed or replaced before the ring (the first field of `Worker`) is closed.
        if let Err(e) = unsafe { self.ring.submitter().register_buffers(&iovecs) } {
            unregistered("request buffers", e);
            return;
        }
        let n = self.slots.len() as u16;
        let mut next = 0u16;
        let mut take = |used: bool, count: u16| {
            used.then(|| {
                next += count;
                next - count
            })
        };
        self.reg.buf = take(bufs, n);
        self.reg.wbuf = take(wbufs, n);
        self.reg.zeros = take(zeros, 1);
        self.reg.scratch = take(scratch, 1);
    }

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
            self.fill();
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

    /// Takes requests from the generator (one lock for the batch) while a slot is free.
    fn fill(&mut self) {
        if let Some(req) = self.deferred {
            if !self.ready(req, &[]) {
                return;
            }
            self.deferred = None;
            self.push(req);
        }
        if self.finished || self.free.is_empty() {
            return;
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
        for &req in &batch {
            self.push(req);
        }
        batch.clear();
        self.batch = batch;
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
        let blk = match req {
            Request::Read { file, .. } | Request::Write { file, .. } => self.inline(file),
            _ => Blocking::default(),
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
                } else if cfg.fill == Fill::Random && blk.writes {
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

    /// Starts `op` on `file` for slot `i`: queued on the ring (submitted with the next
    /// `submit_and_reap`; `fresh`: its clock starts then) or, for a file the kernel can only
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

    /// Submits what is queued and waits for at least one completion (unless requests that ran
    /// at submission are waiting); accounts for all there are.
    fn submit_and_reap(&mut self, st: &Mutex<WorkerStats>) -> Result<(), String> {
        let t0 = Instant::now();
        for &i in &self.pending {
            self.slots[i].t0 = t0;
        }
        self.pending.clear();
        let want = usize::from(self.inline_done.is_empty());
        if want == 1 || !self.ring.submission().is_empty() {
            loop {
                match self.ring.submit_and_wait(want) {
                    Ok(_) => break,
                    // A signal (Ctrl-C) during the wait; what was queued is submitted.
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => {
                        if !self.ring.completion().is_empty() {
                            break;
                        }
                    }
                    Err(e) => return Err(format!("io_uring submission failed: {e}")),
                }
            }
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
    use std::os::unix::io::AsRawFd;

    /// Probes a 64 KiB file of known bytes in `dir`; the bytes must be unchanged afterwards.
    fn probe_in(dir: &std::path::Path, direct: bool) -> Blocking {
        let path = dir.join("probe");
        let bytes: Vec<u8> = (0..65536u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let mut oo = std::fs::OpenOptions::new();
        oo.read(true).write(true);
        if direct {
            std::os::unix::fs::OpenOptionsExt::custom_flags(&mut oo, libc::O_DIRECT);
        }
        let f = oo.open(&path).unwrap();
        let b = probe_blocking(&[f.as_raw_fd()], 16384)[0];
        drop(f);
        assert!(
            std::fs::read(&path).unwrap() == bytes,
            "the probe changed {path:?}"
        );
        b
    }

    #[test]
    fn probe_finds_tmpfs_blocking_and_leaves_the_bytes_alone() {
        let d = tempfile::tempdir().unwrap();
        // The test disk: buffered reads and O_DIRECT never block before starting (ext4, xfs,
        // btrfs); whether buffered writes do depends on the file system and kernel.
        assert!(!probe_in(d.path(), false).reads);
        if probe_in(d.path(), true) != Blocking::default() {
            eprintln!("O_DIRECT refused RWF_NOWAIT here (file system without it)");
        }
        let shm = std::path::Path::new("/dev/shm");
        if shm.is_dir() {
            let d = tempfile::tempdir_in(shm).unwrap();
            assert_eq!(
                probe_in(d.path(), false),
                Blocking {
                    reads: true,
                    writes: true
                },
                "tmpfs has no non-blocking path"
            );
        }
    }

    #[test]
    fn the_note_names_what_ran_at_submission_for_the_mode() {
        use crate::fileio::TestMode;
        let w = [Blocking {
            reads: false,
            writes: true,
        }];
        assert_eq!(blocking_note(&w, TestMode::Rndrd), None);
        assert!(blocking_note(&w, TestMode::Rndrw)
            .unwrap()
            .contains("start writes"));
        let rw = [Blocking {
            reads: true,
            writes: true,
        }];
        assert!(blocking_note(&rw, TestMode::Rndrw)
            .unwrap()
            .contains("reads and writes"));
        assert!(blocking_note(&rw, TestMode::Seqrd)
            .unwrap()
            .contains("start reads without"));
        assert_eq!(blocking_note(&[Blocking::default()], TestMode::Rndrw), None);
    }

    #[test]
    fn unavailable_reasons_name_the_cause_and_the_fix() {
        let r = unavailable_reason(libc::EPERM, Some(2));
        assert!(
            r.contains("kernel.io_uring_disabled = 2") && r.contains("sysctl"),
            "{r}"
        );
        let r = unavailable_reason(libc::EPERM, Some(1));
        assert!(r.contains("io_uring_group"), "{r}");
        let r = unavailable_reason(libc::EPERM, Some(0));
        assert!(r.contains("seccomp"), "{r}");
        let r = unavailable_reason(libc::EPERM, None);
        assert!(r.contains("seccomp"), "{r}");
        let r = unavailable_reason(libc::ENOSYS, None);
        assert!(
            r.contains("CONFIG_IO_URING") && r.contains("seccomp"),
            "{r}"
        );
        let r = unavailable_reason(libc::ENOMEM, Some(0));
        assert!(r.contains("ulimit -l"), "{r}");
        for errno in [libc::EPERM, libc::ENOSYS, libc::ENOMEM, libc::EFAULT] {
            assert!(
                unavailable_reason(errno, Some(0)).ends_with("synchronous I/O"),
                "{errno}"
            );
        }
        let e = FileioError::IoUringUnavailable {
            reason: unavailable_reason(libc::ENOSYS, None),
        };
        assert_eq!(e.option(), Some("file-io-mode"));
        assert!(e.to_string().starts_with("asynchronous I/O uses io_uring"));
    }

    #[test]
    fn a_ring_can_be_set_up_here() {
        // The machines this project builds and tests on have io_uring; if one does not, the
        // error says why (and this test shows it).
        if let Err(e) = Ring::new(8) {
            panic!("{e}");
        }
    }

    #[test]
    fn a_registered_file_and_buffer_are_named_by_index() {
        // What `Worker::issue` builds for a registered file: the file's index in the fd field
        // and FIXED_FILE (as `types::Fixed` does), with a registered buffer (ReadFixed).
        let d = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..8192u32).map(|i| (i * 13 % 251) as u8).collect();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        std::fs::write(&a, vec![0u8; 8192]).unwrap();
        std::fs::write(&b, &bytes).unwrap();
        let (fa, fb) = (
            std::fs::File::open(&a).unwrap(),
            std::fs::File::open(&b).unwrap(),
        );
        let Ring { mut ring, disabled } = Ring::new(8).unwrap();
        if disabled {
            ring.submitter().register_enable_rings().unwrap();
        }
        ring.submitter()
            .register_files(&[fa.as_raw_fd(), fb.as_raw_fd()])
            .unwrap();
        let mut bufs = [AlignedBuf::new(4096), AlignedBuf::new(4096)];
        let iovecs: Vec<libc::iovec> = bufs
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: 4096,
            })
            .collect();
        // SAFETY: both buffers outlive the ring (dropped first below).
        unsafe { ring.submitter().register_buffers(&iovecs) }.unwrap();
        let sqe = opcode::ReadFixed::new(types::Fd(1), bufs[1].as_mut_ptr(), 4096, 1)
            .offset(4096)
            .build()
            .flags(squeue::Flags::FIXED_FILE);
        // SAFETY: the buffer is registered and lives until the completion is reaped.
        unsafe { ring.submission().push(&sqe) }.unwrap();
        ring.submit_and_wait(1).unwrap();
        let res = ring.completion().next().unwrap().result();
        drop(ring);
        assert_eq!(res, 4096);
        assert_eq!(
            bufs[1].as_slice(),
            &bytes[4096..],
            "file 1 (b) at offset 4096"
        );
        assert!(bufs[0].as_slice().iter().all(|&x| x == 0));
    }

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
