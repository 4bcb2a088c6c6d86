//! A worker's ring: set up before the run starts, with the cheapest setup this kernel knows,
//! and, where io_uring is unavailable, an error that says why and what to do.

use crate::fileio::error::FileioError;
use io_uring::IoUring;

/// A worker's ring, set up before the run starts (so "io_uring unavailable" is found first).
pub struct Ring {
    pub(super) ring: IoUring,
    /// Set up disabled (single-issuer rings): the worker thread enables it and so owns it.
    pub(super) disabled: bool,
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
