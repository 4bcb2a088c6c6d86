//! Files the kernel cannot start a request on without blocking: found before the run, so their
//! requests run at submission instead of on an io-wq kernel thread.

use crate::fileio::config::TestMode;
use crate::fileio::files::AlignedBuf;
use std::os::unix::io::RawFd;

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
/// writes back the `len` bytes just read at offset 0, so no byte of a file changes, and only
/// when the run writes (`writes`: a read run never writes, not even a device's). Runs before
/// the workers start (nothing else touches the files). A file that cannot be probed (shorter
/// than `len`, read error) keeps the ring: the run itself reports any real error.
pub fn probe_blocking(fds: &[RawFd], len: usize, writes: bool) -> Vec<Blocking> {
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
                writes: writes
                    && full
                    && unsupported(unsafe { libc::pwritev2(fd, &iov, 1, 0, libc::RWF_NOWAIT) }),
            }
        })
        .collect()
}

/// The result's note when some of the run's requests ran at submission (None: all on the ring).
pub fn blocking_note(blocking: &[Blocking], mode: TestMode) -> Option<String> {
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
        let b = probe_blocking(&[f.as_raw_fd()], 16384, true)[0];
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
}
