//! sysbench-compatible fileio engine: prepare, run, cleanup for every test mode.
//!
//! Semantics follow sysbench 1.0.20 (and 0.4.12 with [`Compat::V0_4`]): see
//! `generator` for request generation and fsync rules, `checksum` for `--validate`, `run` for
//! what is counted and timed, `uring` for the asynchronous mode (io_uring), `fill` for
//! `--file-fill=random`. The engine takes a [`FileioConfig`] and returns a
//! [`crate::engine::Measurement`]; it never prints and never writes result files (see
//! [`crate::engine`] for the contract every engine follows).

mod checksum;
pub mod config;
pub mod error;
mod files;
mod fill;
mod generator;
pub mod prepare;
mod run;
pub mod uring;

pub use config::{Compat, ExtraFlags, FileioConfig, Fill, FsyncMode, IoMode, TestMode};
pub use error::FileioError;
pub use prepare::{cleanup, prepare, Manifest, PrepareSummary};

use crate::engine::{Controller, Observer};
use std::path::Path;

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

/// The directory must exist, be a directory, and (when `write`) be writable.
pub(crate) fn check_dir(cfg: &FileioConfig, write: bool) -> anyhow::Result<()> {
    let d = &cfg.dir;
    match std::fs::metadata(d) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(FileioError::DirMissing(d.clone()).into())
        }
        Err(e) => return Err(FileioError::DirUnreadable(d.clone(), e).into()),
        Ok(m) if !m.is_dir() => return Err(FileioError::NotADirectory(d.clone()).into()),
        Ok(_) => {}
    }
    if write {
        let (_, ro) = prepare::fs_space(d)?;
        if ro {
            return Err(FileioError::ReadOnly(d.clone()).into());
        }
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(d.as_os_str().as_bytes())?;
        // SAFETY: access(2) on a valid C string.
        if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
            return Err(FileioError::NotWritable(d.clone()).into());
        }
    }
    Ok(())
}

/// Requests in flight per thread and their buffers must be within bounds (async mode).
pub fn check_backlog(cfg: &FileioConfig, mode: TestMode) -> Result<(), FileioError> {
    use config::{MAX_ASYNC_BACKLOG, MAX_INFLIGHT_BYTES};
    if cfg.async_backlog == 0 || cfg.async_backlog > MAX_ASYNC_BACKLOG {
        return Err(FileioError::AsyncBacklog {
            backlog: cfg.async_backlog,
            max: MAX_ASYNC_BACKLOG,
        });
    }
    let request = cfg.request_size(mode);
    if cfg.async_backlog as u64 * request > MAX_INFLIGHT_BYTES {
        return Err(FileioError::AsyncBuffers {
            backlog: cfg.async_backlog as u64,
            request,
            max: MAX_INFLIGHT_BYTES,
        });
    }
    Ok(())
}

/// Checks before a run: the directory, the prepared set, O_DIRECT alignment, the async
/// backlog. Cheap (no file is opened), so the CLI calls it before it prints sysbench's header.
///
/// A prepared set serves the run when it has at least the run's files, each at least the size
/// the run addresses — as sysbench, which only checks that every file it opens is long enough
/// (seed 003 prepares 80G and runs with 81900M). Only a set that cannot serve the run is refused.
pub fn check_run(cfg: &FileioConfig, mode: TestMode) -> anyhow::Result<()> {
    if cfg.io_mode == IoMode::Async {
        check_backlog(cfg, mode)?;
    }
    check_dir(cfg, mode.writes())?;
    let manifest = Manifest::load(&cfg.dir)?;
    if mode != TestMode::Seqwr {
        if let Some(m) = &manifest {
            if m.file_num < cfg.file_num || m.file_size < cfg.file_size() {
                return Err(FileioError::SetTooSmall {
                    dir: cfg.dir.clone(),
                    prepared_num: m.file_num,
                    prepared_size: m.file_size,
                    num: cfg.file_num,
                    file_size: cfg.file_size(),
                }
                .into());
            }
        }
        check_files(cfg)?;
    }
    if let Some(m) = &manifest {
        if cfg.validate
            && !m.validate
            && !matches!(mode, TestMode::Seqwr | TestMode::Seqrewr | TestMode::Rndwr)
        {
            return Err(FileioError::NotChecksummed(cfg.dir.clone()).into());
        }
        if cfg.validate && m.block_size != cfg.block_size && mode.is_random() {
            return Err(FileioError::ValidateBlockSize {
                prepared: m.block_size,
                block: cfg.block_size,
            }
            .into());
        }
    }
    if cfg.extra_flags.direct {
        let lbs = logical_block_size(&cfg.dir).unwrap_or(512);
        let req = cfg.request_size(mode);
        if !req.is_multiple_of(lbs) || !cfg.file_size().is_multiple_of(lbs) {
            return Err(FileioError::DirectAlignment {
                request: req,
                file_size: cfg.file_size(),
                lbs,
            }
            .into());
        }
    }
    Ok(())
}

/// Every file the run opens exists and is at least as long as the run addresses (also for
/// files sysbench prepared, which have no manifest).
fn check_files(cfg: &FileioConfig) -> anyhow::Result<()> {
    let file_size = cfg.file_size();
    for i in 0..cfg.file_num {
        let path = cfg.file_path(i);
        match std::fs::metadata(&path) {
            Ok(m) if m.len() < file_size => {
                return Err(FileioError::FileTooShort {
                    path,
                    len: m.len(),
                    expected: file_size,
                }
                .into())
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(FileioError::FileMissing(path).into())
            }
            Err(e) => {
                return Err(
                    anyhow::Error::from(e).context(format!("could not stat '{}'", path.display()))
                )
            }
        }
    }
    Ok(())
}

/// The logical block size of the block device holding `dir`, from sysfs.
pub fn logical_block_size(dir: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).ok()?.dev();
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    let base = std::path::PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
    for p in [
        base.join("queue/logical_block_size"),
        base.join("../queue/logical_block_size"),
    ] {
        if let Ok(t) = std::fs::read_to_string(&p) {
            if let Ok(v) = t.trim().parse() {
                return Some(v);
            }
        }
    }
    None
}
