//! The sustained sequential write that finds a disk's SLC-cache cliff: one file written from
//! start to end with O_DIRECT in large requests (incompressible data), bounded by the free space
//! (less a margin), a size and a time, with the bytes written in every second recorded
//! ([`WriteSample`]). The file is removed afterwards, also after an error. Not a sysbench mode:
//! sysbench's fileio semantics stay in `run`/`generator`; this shares their aligned buffers,
//! random fill and free-space check. The cliff itself is found by [`crate::stats::cliff`].

use super::checks::fs_space;
use super::files::AlignedBuf;
use crate::engine::{Controller, Observer};
use crate::stats::cliff::WriteSample;
use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The file the write fills, in the target's directory.
pub const FILE_NAME: &str = "spindle-cliff.dat";

/// What to write and when to stop.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SustainedConfig {
    /// The directory the file goes into.
    pub dir: PathBuf,
    /// The most bytes to write.
    pub max_bytes: u64,
    /// The longest time to write.
    pub time_limit: Duration,
    /// Bytes the filesystem keeps free: the write stops this far from full.
    pub keep_free: u64,
    /// Bytes per request (O_DIRECT: a multiple of the device's block size).
    pub block_size: u64,
}

impl Default for SustainedConfig {
    fn default() -> Self {
        SustainedConfig {
            dir: PathBuf::from("."),
            max_bytes: 64 << 30,
            time_limit: Duration::from_secs(600),
            keep_free: 1 << 30,
            block_size: 4 << 20,
        }
    }
}

/// Which bound ended the write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteBound {
    /// `max_bytes` (or the free space, whichever was smaller) was written.
    Size,
    /// The free space less the margin was written (smaller than `max_bytes`).
    FreeSpace,
    Time,
    /// A stop was asked for.
    Stopped,
}

/// What the write did.
#[derive(Clone, Debug, PartialEq)]
pub struct SustainedWrite {
    /// Bytes per second of the write, in order.
    pub samples: Vec<WriteSample>,
    /// The bytes it set out to write (the size bound, or the free space less the margin).
    pub planned_bytes: u64,
    pub bound: WriteBound,
}

/// The bytes to write: the size bound or the free space less the margin, whole requests.
pub fn planned_bytes(cfg: &SustainedConfig, free: u64) -> (u64, WriteBound) {
    let room = free.saturating_sub(cfg.keep_free);
    let (bytes, bound) = if room < cfg.max_bytes {
        (room, WriteBound::FreeSpace)
    } else {
        (cfg.max_bytes, WriteBound::Size)
    };
    (bytes - bytes % cfg.block_size.max(1), bound)
}

/// The bytes the write would take on `cfg.dir`'s filesystem now and the bound that sets them,
/// or why there is no room (a sentence); an error when the filesystem cannot be read or is
/// read-only.
pub fn room(cfg: &SustainedConfig) -> anyhow::Result<Result<(u64, WriteBound), String>> {
    let (free, read_only) = fs_space(&cfg.dir)?;
    if read_only {
        bail!("'{}' is on a read-only filesystem", cfg.dir.display());
    }
    let (planned, bound) = planned_bytes(cfg, free);
    if planned == 0 {
        return Ok(Err(format!(
            "'{}' has {} free, not more than the {} the write leaves free (keep_free): nothing to write",
            cfg.dir.display(),
            crate::units::human_size(free),
            crate::units::human_size(cfg.keep_free)
        )));
    }
    Ok(Ok((planned, bound)))
}

/// Removes the file when dropped (the write's end, an error or a panic).
struct Remove<'a>(&'a Path);

impl Drop for Remove<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0);
    }
}

/// Writes until a bound, then removes the file.
pub fn sustained_write(
    cfg: &SustainedConfig,
    controller: &Controller,
    observer: &dyn Observer,
) -> anyhow::Result<SustainedWrite> {
    if cfg.block_size == 0 || !cfg.block_size.is_multiple_of(4096) {
        bail!(
            "the request size {} is not a multiple of 4 KiB (O_DIRECT)",
            cfg.block_size
        );
    }
    let (planned, size_bound) = room(cfg)?.map_err(|why| anyhow::anyhow!(why))?;
    let path = cfg.dir.join(FILE_NAME);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EINVAL) => anyhow::anyhow!(
                "the filesystem of '{}' does not take O_DIRECT (a RAM disk?): a sustained write cannot bypass the page cache there",
                cfg.dir.display()
            ),
            _ => anyhow::anyhow!("could not create '{}': {e}", path.display()),
        })?;
    let _remove = Remove(&path);
    observer.message(&format!(
        "Writing up to {} sequentially with O_DIRECT in {} requests, for at most {} s",
        crate::units::human_size(planned),
        crate::units::human_size(cfg.block_size),
        cfg.time_limit.as_secs()
    ));
    let mut buf = AlignedBuf::new(cfg.block_size as usize);
    super::fill::randomize(
        buf.as_mut_slice(),
        &mut crate::rng::Rng::new(crate::rng::time_seed()),
    );
    let (samples, bound) = write_loop(cfg, &file, &buf, planned, size_bound, controller, observer)
        .with_context(|| format!("writing '{}'", path.display()))?;
    Ok(SustainedWrite {
        samples,
        planned_bytes: planned,
        bound,
    })
}

/// The writes, one sample per second (each ends at the first request done after its second).
fn write_loop(
    cfg: &SustainedConfig,
    file: &std::fs::File,
    buf: &AlignedBuf,
    planned: u64,
    size_bound: WriteBound,
    controller: &Controller,
    observer: &dyn Observer,
) -> anyhow::Result<(Vec<WriteSample>, WriteBound)> {
    let start = Instant::now();
    let mut samples = Vec::new();
    let (mut offset, mut in_sample, mut next_mark) = (0u64, 0u64, 1.0f64);
    let bound = loop {
        if offset >= planned {
            break size_bound;
        }
        if controller.stop_requested() {
            break WriteBound::Stopped;
        }
        let t = start.elapsed().as_secs_f64();
        if t >= cfg.time_limit.as_secs_f64() {
            break WriteBound::Time;
        }
        let n = cfg.block_size.min(planned - offset) as usize;
        file.write_all_at(&buf.as_slice()[..n], offset)?;
        offset += n as u64;
        in_sample += n as u64;
        let t = start.elapsed().as_secs_f64();
        if t >= next_mark {
            samples.push(WriteSample {
                t_s: t,
                bytes: in_sample,
            });
            let prev = samples.len().checked_sub(2).map_or(0.0, |i| samples[i].t_s);
            observer.message(&format!(
                "[ {:.0}s ] {:.1} MB/s, {:.2} GiB written",
                t,
                in_sample as f64 / (t - prev) / 1e6,
                offset as f64 / crate::stats::cliff::GIB
            ));
            in_sample = 0;
            next_mark = t.floor() + 1.0;
        }
    };
    if in_sample > 0 {
        samples.push(WriteSample {
            t_s: start.elapsed().as_secs_f64(),
            bytes: in_sample,
        });
    }
    Ok((samples, bound))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smaller_of_the_size_and_the_free_space_less_the_margin_in_whole_requests() {
        let cfg = SustainedConfig {
            max_bytes: 10 << 30,
            keep_free: 1 << 30,
            block_size: 4 << 20,
            ..Default::default()
        };
        assert_eq!(planned_bytes(&cfg, 100 << 30), (10 << 30, WriteBound::Size));
        let (b, why) = planned_bytes(&cfg, (5 << 30) + 12345);
        assert_eq!((b, why), (4 << 30, WriteBound::FreeSpace));
        assert_eq!(planned_bytes(&cfg, 1 << 29).0, 0);
    }

    #[test]
    fn a_short_write_records_its_seconds_and_removes_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = SustainedConfig {
            dir: dir.path().to_path_buf(),
            max_bytes: 8 << 20,
            keep_free: 0,
            block_size: 1 << 20,
            time_limit: Duration::from_secs(5),
        };
        let w = match sustained_write(&cfg, &Controller::new(), &crate::engine::Silent) {
            Ok(w) => w,
            // A filesystem without O_DIRECT (tmpfs) says so by name.
            Err(e) => return assert!(format!("{e:#}").contains("O_DIRECT"), "{e:#}"),
        };
        assert_eq!(w.bound, WriteBound::Size);
        assert_eq!(w.samples.iter().map(|s| s.bytes).sum::<u64>(), 8 << 20);
        assert!(!dir.path().join(FILE_NAME).exists());
        let full = SustainedConfig {
            keep_free: u64::MAX,
            ..cfg.clone()
        };
        let why = room(&full).unwrap().unwrap_err();
        assert!(why.contains("keep_free"), "{why}");
        let e = sustained_write(&full, &Controller::new(), &crate::engine::Silent).unwrap_err();
        assert!(format!("{e:#}").contains("nothing to write"), "{e:#}");
        let bad = SustainedConfig {
            block_size: 1000,
            ..cfg
        };
        let e = sustained_write(&bad, &Controller::new(), &crate::engine::Silent);
        assert!(format!("{:#}", e.unwrap_err()).contains("4 KiB"));
    }
}
