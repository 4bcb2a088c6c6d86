//! Registering a worker's test files and request buffers with its ring: the kernel then neither
//! looks a file up nor pins a buffer's pages per request.

use super::state::Worker;
use crate::fileio::config::Fill;
use crate::fileio::files::AlignedBuf;
use crate::rng::Rng;

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

/// A buffer for random-fill writes: random bytes, stamped per request.
pub(super) fn random_wbuf(size: usize, rng: &mut Rng) -> AlignedBuf {
    let mut b = AlignedBuf::new(size);
    crate::fileio::fill::randomize(b.as_mut_slice(), rng);
    b
}

impl Worker<'_, '_> {
    /// Registers the files and the buffers this test's ring requests use (made now, for every
    /// slot, instead of on first use). Nothing to do when every request runs at submission.
    pub(super) fn register(&mut self) {
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
}

#[cfg(test)]
mod tests {
    use super::super::setup::Ring;
    use super::*;
    use io_uring::{opcode, squeue, types};
    use std::os::unix::io::AsRawFd;

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
}
