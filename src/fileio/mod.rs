//! sysbench-compatible fileio engine: prepare, run, cleanup for every test mode.
//!
//! Semantics follow sysbench 1.0.20 (and 0.4.12 with [`Compat::V0_4`]): see
//! `generator` for request generation and fsync rules, `checksum` for `--validate`, `run` for
//! what is counted and timed, `uring` for the asynchronous mode (io_uring), `fill` for
//! `--file-fill=random`; `sustained` for the sustained write that finds the SLC-cache cliff
//! (not a sysbench mode). The engine takes a [`FileioConfig`] and returns a
//! [`crate::engine::Measurement`]; it never prints and never writes result files (see
//! [`crate::engine`] for the contract every engine follows).

mod checks;
mod checksum;
pub mod config;
mod device;
pub mod error;
mod files;
mod fill;
mod generator;
mod manifest;
pub mod prepare;
mod run;
mod shared;
pub mod sustained;
pub mod uring;

pub use checks::{check_backlog, check_run, logical_block_size};
pub use config::{Compat, ExtraFlags, FileioConfig, Fill, FsyncMode, IoMode, TestMode};
pub use error::FileioError;
pub use manifest::{Manifest, MANIFEST};
pub use prepare::{cleanup, prepare, PrepareSummary};

use crate::engine::{Controller, Observer};

/// Runs the test; see [`run::run`]. After a write run without `--validate`, the manifest is
/// updated so a later `--validate` run is refused instead of failing on zeroed blocks.
pub fn run(
    cfg: &FileioConfig,
    controller: &Controller,
    observer: &dyn Observer,
) -> anyhow::Result<crate::engine::Measurement> {
    let result = run::run(cfg, controller, observer)?;
    if let Some(mode) = cfg.test_mode {
        if mode.writes() && !cfg.validate {
            if let Ok(Some(mut m)) = Manifest::load(&cfg.dir) {
                if m.validate {
                    m.validate = false;
                    m.save(&cfg.dir)?;
                }
            }
        }
    }
    Ok(result)
}
