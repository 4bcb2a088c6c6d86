//! sysbench-compatible fileio engine: prepare, run, cleanup for every test mode.
//!
//! Semantics follow sysbench 1.0.20 (and 0.4.12 with [`Compat::V0_4`]): see
//! `generator` for request generation and fsync rules, `checksum` for `--validate`, `run` for
//! what is counted and timed. The engine takes a [`FileioConfig`] and returns a
//! [`crate::report::BenchResult`]; it never prints and never writes result files.

mod checksum;
pub mod config;
mod files;
mod generator;
pub mod prepare;
mod rng;
mod run;

pub use config::{Compat, ExtraFlags, FileioConfig, FsyncMode, IoMode, TestMode};
pub use prepare::{cleanup, prepare, Manifest, PrepareSummary};
pub use run::{NoObserver, RunObserver};

use anyhow::bail;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// Runs the test; see [`run::run`]. After a write run without `--validate`, the manifest is
/// updated so a later `--validate` run is refused instead of failing on zeroed blocks.
pub fn run(
    cfg: &FileioConfig,
    observer: &dyn RunObserver,
    stop: &AtomicBool,
) -> anyhow::Result<crate::report::BenchResult> {
    let result = run::run(cfg, observer, stop)?;
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
            bail!(
                "--dir '{}' does not exist: create it or choose another directory",
                d.display()
            )
        }
        Err(e) => bail!("--dir '{}' cannot be read: {e}", d.display()),
        Ok(m) if !m.is_dir() => bail!("--dir '{}' is not a directory", d.display()),
        Ok(_) => {}
    }
    if write {
        let (_, ro) = prepare::fs_space(d)?;
        if ro {
            bail!(
                "--dir '{}' is on a read-only filesystem: choose a writable directory",
                d.display()
            );
        }
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(d.as_os_str().as_bytes())?;
        // SAFETY: access(2) on a valid C string.
        if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
            bail!(
                "--dir '{}' is not writable by this user: choose a writable directory or fix its permissions",
                d.display()
            );
        }
    }
    Ok(())
}

/// Checks before a run: the directory, the manifest of the prepared set, O_DIRECT alignment.
pub(crate) fn check_run(cfg: &FileioConfig, mode: TestMode) -> anyhow::Result<()> {
    check_dir(cfg, mode.writes())?;
    if let Some(m) = Manifest::load(&cfg.dir)? {
        if mode != TestMode::Seqwr && (m.file_num != cfg.file_num || m.file_size != cfg.file_size())
        {
            bail!(
                "the files in '{}' were prepared with --file-num={} and {} bytes per file (--file-total-size={}), but this run asks for --file-num={} --file-total-size={}: run with the prepared values, or run `spindle fileio cleanup` and prepare again",
                cfg.dir.display(),
                m.file_num,
                m.file_size,
                m.file_size * m.file_num as u64,
                cfg.file_num,
                cfg.total_size
            );
        }
        if cfg.validate
            && !m.validate
            && mode != TestMode::Seqwr
            && !matches!(mode, TestMode::Seqrewr | TestMode::Rndwr)
        {
            bail!(
                "--validate needs checksummed files, but the files in '{}' were prepared (or last written) without --validate: run `spindle fileio --validate prepare` after cleanup",
                cfg.dir.display()
            );
        }
        if cfg.validate && m.block_size != cfg.block_size && mode.is_random() {
            bail!(
                "--validate: the files were prepared with --file-block-size={}, this run uses {}: use the same block size",
                m.block_size,
                cfg.block_size
            );
        }
    }
    if cfg.extra_flags.direct {
        let lbs = logical_block_size(&cfg.dir).unwrap_or(512);
        let req = if mode.is_random() {
            cfg.block_size
        } else {
            cfg.seq_request_size()
        };
        if !req.is_multiple_of(lbs) || !cfg.file_size().is_multiple_of(lbs) {
            bail!(
                "--file-extra-flags=direct needs --file-block-size ({}) and the per-file size ({}) to be multiples of the device's logical block size ({lbs} bytes)",
                req,
                cfg.file_size()
            );
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
