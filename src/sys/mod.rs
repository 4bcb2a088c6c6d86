//! Access to the running system: host facts, a root path for /sys, /proc and /dev so tests can
//! use fixture trees (`SysRoot`), the one runner all shell-outs go through, signals, and the
//! system state recorded with results.

pub mod blockdev;
pub mod clock;
pub mod fs;
pub mod governor;
pub mod host;
pub mod log;
pub mod root;
pub mod runner;
pub mod sensors;
pub mod signals;
pub mod state;

pub use host::HostInfo;
pub use root::SysRoot;
pub use runner::CommandRunner;

/// The system spindle works on: where /sys, /proc, /dev and /run are read ([`SysRoot`]) and
/// how external commands run ([`CommandRunner`]). Made once at the entry point and passed down
/// to discovery, disk preparation (its re-check and partition wait included), stick detection
/// and host facts, so tests give a fixture tree and a recording runner instead of the machine.
#[derive(Clone, Debug, Default)]
pub struct System {
    pub root: SysRoot,
    pub runner: CommandRunner,
}

impl System {
    /// The running machine, commands logged.
    pub fn host() -> Self {
        System {
            root: SysRoot::host(),
            runner: CommandRunner::new(),
        }
    }

    pub fn new(root: SysRoot, runner: CommandRunner) -> Self {
        System { root, runner }
    }
}

/// Whether spindle runs as root (disk preparation, page-cache drops and loop devices need it).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Flushes dirty pages and drops the page cache (root only). Returns whether it happened.
pub fn drop_caches() -> bool {
    if !is_root() {
        return false;
    }
    // SAFETY: sync(2) has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").is_ok()
}
