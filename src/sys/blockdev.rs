//! The block device under a directory, read from sysfs: its directory there
//! (`/sys/dev/block/MAJ:MIN`, a partition's or a whole disk's), its logical block size and its
//! I/O counters (`stat`), so a phase can say how many bytes reached the device.

use std::path::{Path, PathBuf};

/// `/sys/dev/block/MAJ:MIN` of the filesystem holding `dir`; `None` when it has no block
/// device (tmpfs, overlay, an anonymous device) or `dir` cannot be read.
pub fn sysfs_dir(dir: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).ok()?.dev();
    let p = PathBuf::from(format!(
        "/sys/dev/block/{}:{}",
        libc::major(dev),
        libc::minor(dev)
    ));
    p.exists().then_some(p)
}

/// The logical block size of the block device holding `dir`.
pub fn logical_block_size(dir: &Path) -> Option<u64> {
    let base = sysfs_dir(dir)?;
    // A partition has no queue/ of its own: its disk's is one level up.
    ["queue/logical_block_size", "../queue/logical_block_size"]
        .iter()
        .find_map(|f| {
            std::fs::read_to_string(base.join(f))
                .ok()?
                .trim()
                .parse()
                .ok()
        })
}

/// Bytes read and written by a block device, from its `stat` file: since boot, or over a
/// phase ([`Counters::until`]; recorded in results.json as a phase's `device_io`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    /// The device's kernel name (`sda1`, `vda`, `loop3`).
    pub device: String,
    pub read_bytes: u64,
    pub written_bytes: u64,
}

impl Counters {
    /// The counters of the device holding `dir` now; `None` without a block device.
    pub fn of_dir(dir: &Path) -> Option<Counters> {
        let base = sysfs_dir(dir)?;
        let device = std::fs::canonicalize(&base)
            .ok()?
            .file_name()?
            .to_string_lossy()
            .into_owned();
        parse_stat(&device, &std::fs::read_to_string(base.join("stat")).ok()?)
    }

    /// What moved from `self` to `later` (the same device).
    pub fn until(&self, later: &Counters) -> Counters {
        Counters {
            device: self.device.clone(),
            read_bytes: later.read_bytes.saturating_sub(self.read_bytes),
            written_bytes: later.written_bytes.saturating_sub(self.written_bytes),
        }
    }
}

/// A `stat` file (Documentation/block/stat.rst): field 3 is sectors read, field 7 sectors
/// written, in 512-byte units whatever the device's sector size.
fn parse_stat(device: &str, text: &str) -> Option<Counters> {
    let f: Vec<u64> = text
        .split_whitespace()
        .map(|w| w.parse().ok())
        .collect::<Option<_>>()?;
    Some(Counters {
        device: device.into(),
        read_bytes: f.get(2)? * 512,
        written_bytes: f.get(6)? * 512,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_512_byte_sectors() {
        let line = "   26467     6553  2459474    17335   110513   163005 10230808   377414        0   171596   446838        0        0        0        0    14352    52088\n";
        let c = parse_stat("vda1", line).unwrap();
        assert_eq!(c.read_bytes, 2_459_474 * 512);
        assert_eq!(c.written_bytes, 10_230_808 * 512);
        let later = Counters {
            read_bytes: c.read_bytes + 4096,
            ..c.clone()
        };
        assert_eq!(c.until(&later).read_bytes, 4096);
        assert_eq!(c.until(&later).written_bytes, 0);
        assert!(parse_stat("x", "1 2").is_none());
        assert!(parse_stat("x", "a b c d e f g").is_none());
    }

    #[test]
    fn a_directory_on_a_disk_has_counters_and_tmpfs_has_none() {
        // /dev/shm is tmpfs: no block device under it.
        assert!(Counters::of_dir(Path::new("/dev/shm")).is_none());
        let d = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        if let Some(c) = Counters::of_dir(d.path()) {
            assert!(!c.device.is_empty() && !c.device.contains('/'), "{c:?}");
        }
    }
}
