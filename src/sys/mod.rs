//! Access to the running system: host facts, a root path for /sys, /proc and /dev so tests can
//! use fixture trees (`SysRoot`), the one runner all shell-outs go through, signals, and the
//! system state recorded with results.

pub mod clock;
pub mod fs;
pub mod host;
pub mod root;
pub mod runner;
pub mod signals;
pub mod state;

pub use host::HostInfo;
pub use root::SysRoot;
pub use runner::CommandRunner;
