//! `fileio prepare` and `cleanup`: create (or reuse, or extend) the test files, and remove them.
//!
//! Prepare checks free space first, writes in large chunks (same bytes as sysbench's
//! block-by-block appends: zeros, or checksummed blocks with `--validate`; fresh random bytes
//! with `--file-fill=random`), fsyncs every file,
//! and records the file set in a small manifest so a later `run` with different options gets a
//! clear error. On failure, files it created are removed and files it extended are cut back.

use super::checks::fs_space;
use super::checksum;
use super::config::{FileioConfig, Fill, TestMode};
use super::files::{open_error, AlignedBuf};
use super::manifest::Manifest;
use crate::engine::{Controller, Observer};
use crate::rng::Rng;
use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::time::Instant;

/// What one prepare did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrepareSummary {
    /// Per file: "created", "extended", "reused" or "device" (a block device, used as it is).
    pub files: Vec<String>,
    pub bytes_written: u64,
    pub seconds: f64,
}

/// Creates, extends or reuses the files; sysbench's progress lines go to `observer`. A stop
/// request ends the preparation early: what it wrote is undone and the error says so.
pub fn prepare(
    cfg: &FileioConfig,
    controller: &Controller,
    observer: &dyn Observer,
) -> anyhow::Result<PrepareSummary> {
    super::checks::check_dir(cfg, true)?;
    let file_size = cfg.file_size();
    observer.message(&format!(
        "{} files, {}Kb each, {}Mb total",
        cfg.file_num,
        file_size / 1024,
        cfg.effective_total() / (1024 * 1024)
    ));
    observer.message("Creating files for the test...");
    observer.message(&format!(
        "Extra file open flags: {}",
        cfg.extra_flags.describe()
    ));

    // What is there already, and how much must be written.
    let mut existing = Vec::with_capacity(cfg.file_num as usize);
    let mut needed = 0u64;
    // A block device is used as it is: never written, extended or created here.
    let devices = (0..cfg.file_num).any(|i| super::device::is_device(&cfg.file_path(i)));
    if devices {
        super::checks::check_devices(cfg, TestMode::Seqrd)?;
    }
    for i in 0..cfg.file_num {
        super::device::check_link(&cfg.file_path(i))?;
        let len = super::device::len(&cfg.file_path(i)).ok();
        needed += file_size.saturating_sub(len.unwrap_or(0));
        existing.push(len);
    }
    let (avail, _) = fs_space(&cfg.dir)?;
    if needed > avail {
        return Err(super::FileioError::NoSpace {
            total: cfg.total_size,
            needed,
            dir: cfg.dir.clone(),
            avail,
        }
        .into());
    }
    let old = Manifest::load(&cfg.dir).ok().flatten();
    if needed > 0
        && old
            .as_ref()
            .is_some_and(|m| m.validate != cfg.validate && existing.iter().any(|e| e.is_some()))
    {
        observer.message("WARNING: existing files were prepared with a different --validate setting; only new blocks follow this one");
    }

    let start = Instant::now();
    let (summary, written) = write_files(cfg, &existing, controller, observer)?;
    let secs = start.elapsed().as_secs_f64();
    if written == 0 {
        observer.message("No bytes written.");
    } else {
        observer.message(&format!(
            "{written} bytes written in {:.2} seconds ({:.2} MiB/sec).",
            secs,
            written as f64 / (1024.0 * 1024.0) / secs.max(1e-9)
        ));
    }
    // Blocks on a device were not written by spindle, so they are not checksummed.
    let validate = if devices {
        false
    } else if written == 0 {
        old.map(|m| m.validate).unwrap_or(cfg.validate)
    } else {
        cfg.validate
    };
    Manifest {
        file_num: cfg.file_num,
        file_size,
        block_size: cfg.block_size,
        validate,
        spindle_version: crate::version::VERSION.into(),
    }
    .save(&cfg.dir)?;
    Ok(PrepareSummary {
        files: summary,
        bytes_written: written,
        seconds: secs,
    })
}

/// Writes what is missing of every file (`existing`: each file's length, if it exists).
/// Returns what was done per file and the bytes written. On an error or a stop request the
/// files are put back as they were (created ones removed, extended ones truncated).
fn write_files(
    cfg: &FileioConfig,
    existing: &[Option<u64>],
    controller: &Controller,
    observer: &dyn Observer,
) -> anyhow::Result<(Vec<String>, u64)> {
    let file_size = cfg.file_size();
    let mut undo: Vec<(PathBuf, Option<u64>)> = Vec::new();
    let mut summary = Vec::new();
    let mut written = 0u64;
    let result = (|| -> anyhow::Result<()> {
        let chunk = chunk_size(cfg);
        let mut buf = AlignedBuf::new(chunk as usize);
        let mut rng = Rng::new(cfg.rand_seed);
        for i in 0..cfg.file_num {
            let path = cfg.file_path(i);
            let name = format!("test_file.{i}");
            let start_len = match existing[i as usize] {
                Some(_) if super::device::is_device(&path) => {
                    observer.message(&format!(
                        "Using block device {name} ({}) as it is",
                        super::device::node(&path).display()
                    ));
                    summary.push("device".to_string());
                    continue;
                }
                Some(len) if len >= file_size => {
                    observer.message(&format!("Reusing existing file {name}"));
                    summary.push("reused".to_string());
                    continue;
                }
                Some(len) => {
                    observer.message(&format!("Extending existing file {name}"));
                    summary.push("extended".to_string());
                    // Restart at a block boundary so every block is whole (and checksummed).
                    len - len % cfg.block_size
                }
                None => {
                    observer.message(&format!("Creating file {name}"));
                    summary.push("created".to_string());
                    0
                }
            };
            undo.push((path.clone(), existing[i as usize]));
            let f = OpenOptions::new()
                .create(true)
                .write(true)
                .custom_flags(cfg.extra_flags.open_flags())
                .open(&path)
                .map_err(|e| open_error(&path, e, cfg))?;
            let mut pos = start_len;
            while pos < file_size {
                if controller.stop_requested() {
                    bail!("the preparation was stopped before it finished");
                }
                let n = chunk.min(file_size - pos) as usize;
                let b = &mut buf.as_mut_slice()[..n];
                if cfg.validate {
                    checksum::fill(b, pos, cfg.block_size, &mut rng);
                } else if cfg.fill == Fill::Random {
                    super::fill::randomize(b, &mut rng);
                } else {
                    b.fill(0);
                }
                f.write_all_at(b, pos).with_context(|| {
                    format!("could not write '{}' at offset {pos}", path.display())
                })?;
                pos += n as u64;
                written += n as u64;
            }
            f.sync_all()
                .with_context(|| format!("could not fsync '{}'", path.display()))?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        for (path, len) in undo.iter().rev() {
            match len {
                None => {
                    let _ = std::fs::remove_file(path);
                }
                Some(l) => {
                    if let Ok(f) = OpenOptions::new().write(true).open(path) {
                        let _ = f.set_len(*l);
                    }
                }
            }
        }
        return Err(e.context("prepare failed; the files it created were removed"));
    }
    Ok((summary, written))
}

/// Write size for prepare: 1 MiB rounded to whole blocks (at least one block).
fn chunk_size(cfg: &FileioConfig) -> u64 {
    let blocks = ((1u64 << 20) / cfg.block_size).max(1);
    blocks * cfg.block_size
}

/// Removes the test files (and files a larger earlier prepare left) and the manifest.
pub fn cleanup(cfg: &FileioConfig, observer: &dyn Observer) -> anyhow::Result<u32> {
    super::checks::check_dir(cfg, true)?;
    observer.message("Removing test files...");
    let extra = Manifest::load(&cfg.dir)
        .ok()
        .flatten()
        .map(|m| m.file_num)
        .unwrap_or(0);
    let mut removed = 0;
    for i in 0..cfg.file_num.max(extra) {
        let p = cfg.file_path(i);
        if super::device::is_device(&p) {
            observer.message(&format!(
                "Leaving block device test_file.{i} ({}) in place",
                super::device::node(&p).display()
            ));
            continue;
        }
        match std::fs::remove_file(&p) {
            Ok(()) => removed += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("could not remove '{}'", p.display())),
        }
    }
    let _ = std::fs::remove_file(Manifest::path(&cfg.dir));
    Ok(removed)
}
