//! Access to the running system: host facts, and (for discovery) a root path for /sys, /proc and
//! /dev so tests can use fixture trees, and the one runner all shell-outs go through.

pub mod host;
pub mod root;
pub mod runner;
pub mod signals;

pub use host::HostInfo;
pub use root::SysRoot;
pub use runner::CommandRunner;
