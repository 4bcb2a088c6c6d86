//! A test file that is a block device: `test_file.N` in `--dir` is (or is a symbolic link to)
//! a device node, the way sysbench users run fileio on a raw device. spindle reads its size
//! from the device (a device node's `st_size` is 0), never creates, extends, truncates or
//! removes it (`prepare` uses it as it is, `cleanup` leaves it), opens it read-only for the
//! read modes, and writes to it only when it is blank: no partition table and no file system,
//! RAID, LVM or swap signature in its first and last MiB (`disk::signature`, the same probe
//! the disk preparation uses), opened with `O_EXCL` so the kernel refuses it while it is
//! mounted or otherwise held.

use super::error::FileioError;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// True when `path` is a block device or a link to one.
pub(super) fn is_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// The length of test file `path`: a regular file's size, or a block device's capacity.
pub(super) fn len(path: &Path) -> std::io::Result<u64> {
    let m = std::fs::metadata(path)?;
    if !m.file_type().is_block_device() {
        return Ok(m.len());
    }
    std::fs::File::open(path)?.seek(SeekFrom::End(0))
}

/// Where a test file that is a device leads (for messages): the device node behind a link.
pub(super) fn node(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.into())
}

/// A test file that is a link must lead somewhere: `prepare` would otherwise create the link's
/// target (a file named after a device that is not there, in `/dev`).
pub(super) fn check_link(path: &Path) -> anyhow::Result<()> {
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if link && std::fs::metadata(path).is_err() {
        let to = std::fs::read_link(path).unwrap_or_default();
        anyhow::bail!(
            "test file '{}' is a link to '{}', which does not exist: attach the device (or fix the link), or remove the link to prepare a file",
            path.display(),
            to.display()
        );
    }
    Ok(())
}

/// A run that writes may use device `path` only when it is blank; Err names what it holds.
pub(super) fn check_blank(path: &Path) -> anyhow::Result<()> {
    let dev = node(path);
    let ht = crate::disk::signature::read_head_tail(&dev, 0, None).map_err(|e| {
        anyhow::anyhow!(
            "could not read the first and last MiB of {} (test file '{}') to check that it is blank: {e}",
            dev.display(),
            path.display()
        )
    })?;
    let sigs = ht.signatures();
    if sigs.is_empty() {
        return Ok(());
    }
    let found: Vec<&str> = sigs.iter().map(|s| s.kind.blkid_name()).collect();
    Err(FileioError::DeviceNotBlank {
        path: path.into(),
        device: dev,
        found: found.join(", "),
    }
    .into())
}
