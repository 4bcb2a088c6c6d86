//! What a fileio step checks before it starts: the directory (there, writable, room), the
//! prepared files against what the run addresses, the async backlog, the device's block size.

use super::config::{self, FileioConfig, IoMode, TestMode};
use super::device;
use super::error::FileioError;
use super::manifest::Manifest;
use anyhow::Context;
use std::path::Path;

/// Free bytes available to this user on the filesystem holding `dir`, and whether it is read-only.
pub fn fs_space(dir: &Path) -> anyhow::Result<(u64, bool)> {
    use std::os::unix::ffi::OsStrExt;
    let c =
        std::ffi::CString::new(dir.as_os_str().as_bytes()).context("path contains a NUL byte")?;
    // SAFETY: statvfs fills the struct we pass.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("could not stat filesystem of '{}'", dir.display()));
    }
    Ok((
        st.f_bavail as u64 * st.f_frsize as u64,
        st.f_flag & libc::ST_RDONLY != 0,
    ))
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
        let (_, ro) = fs_space(d)?;
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
    check_devices(cfg, mode)?;
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
        match device::len(&path) {
            Ok(len) if len < file_size => {
                return Err(FileioError::FileTooShort {
                    path,
                    len,
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

/// Test files that are block devices (`device`): each must be as large as the run addresses,
/// and a run that writes needs every one of them blank; no test file is a dangling link.
pub(super) fn check_devices(cfg: &FileioConfig, mode: TestMode) -> anyhow::Result<()> {
    let file_size = cfg.file_size();
    for i in 0..cfg.file_num {
        let path = cfg.file_path(i);
        device::check_link(&path)?;
        if !device::is_device(&path) {
            continue;
        }
        let len = device::len(&path)
            .with_context(|| format!("could not read the size of '{}'", path.display()))?;
        if len < file_size {
            return Err(FileioError::DeviceTooSmall {
                device: device::node(&path),
                path,
                len,
                expected: file_size,
            }
            .into());
        }
        if mode.writes() {
            device::check_blank(&path)?;
        }
    }
    Ok(())
}

pub use crate::sys::blockdev::logical_block_size;
