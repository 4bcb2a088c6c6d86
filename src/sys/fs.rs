//! Atomic file writing: temp file in the same directory, fsync, rename, fsync the directory. A
//! crash leaves either the old file or the new one, never a half-written result. The one helper
//! for results, bundles, manifests and private records (with a file mode). Also which kind of
//! filesystem a path is on (statfs(2)), and whether that filesystem keeps its data in RAM.

use anyhow::Context;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Writes `data` to `path` atomically (mode 0644 before the umask). The parent must exist.
pub fn write_atomic(path: &Path, data: &[u8]) -> anyhow::Result<()> {
    write_atomic_mode(path, data, 0o644)
}

/// Writes `data` to `path` atomically with file mode `mode` (exactly `mode`, whatever the umask:
/// a 0600 credentials record is never readable by others, not even for a moment).
pub fn write_atomic_mode(path: &Path, data: &[u8], mode: u32) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("'{}' is not a file path", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> anyhow::Result<()> {
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)
            .with_context(|| format!("could not create '{}'", tmp.display()))?;
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(mode))
            .with_context(|| format!("could not set the mode of '{}'", tmp.display()))?;
        f.write_all(data)
            .with_context(|| format!("could not write '{}'", tmp.display()))?;
        f.sync_all()
            .with_context(|| format!("could not fsync '{}'", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| {
            format!(
                "could not rename '{}' to '{}'",
                tmp.display(),
                path.display()
            )
        })?;
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("could not save '{}'", path.display()))
}

/// The filesystem type of `path`: statfs(2)'s `f_type`, a magic number of `<linux/magic.h>`.
pub fn statfs_magic(path: &Path) -> std::io::Result<u32> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `c` is a NUL-terminated path and `st` a statfs buffer the call fills in.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // `f_type` is a signed word on some architectures; the magic numbers are 32 bits.
    Ok(st.f_type as u32)
}

/// Filesystems that keep their data in memory (tmpfs, ramfs): nothing reaches a disk.
const IN_RAM: &[u32] = &[0x0102_1994, 0x8584_58f6];

/// The magic numbers spindle names, with the name the mount table uses.
const NAMES: &[(u32, &str)] = &[
    (0xef53, "ext2/3/4"),
    (0x5846_5342, "xfs"),
    (0x9123_683e, "btrfs"),
    (0xf2f5_2010, "f2fs"),
    (0x0102_1994, "tmpfs"),
    (0x8584_58f6, "ramfs"),
    (0xca45_1a4e, "bcachefs"),
    (0x2fc1_2fc1, "zfs"),
    (0x4d44, "vfat"),
    (0x2011_bab0, "exfat"),
    (0x5346_544e, "ntfs"),
    (0x6573_5546, "fuse"),
    (0x6969, "nfs"),
    (0xff53_4d42, "cifs"),
    (0xfe53_4d42, "smb2"),
    (0x0102_1997, "9p"),
    (0x794c_7630, "overlay"),
    (0x7371_7368, "squashfs"),
];

/// The name of a statfs magic number (`tmpfs`), if spindle knows it.
pub fn fs_magic_name(magic: u32) -> Option<&'static str> {
    NAMES.iter().find(|(m, _)| *m == magic).map(|(_, n)| *n)
}

/// Whether a filesystem of this magic number keeps its files in RAM.
pub fn fs_magic_in_ram(magic: u32) -> bool {
    IN_RAM.contains(&magic)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn statfs_names_the_filesystem_and_knows_ram() {
        assert_eq!(fs_magic_name(0x0102_1994), Some("tmpfs"));
        assert_eq!(fs_magic_name(0xef53), Some("ext2/3/4"));
        assert_eq!(fs_magic_name(0x1234), None);
        assert!(fs_magic_in_ram(0x0102_1994) && fs_magic_in_ram(0x8584_58f6));
        assert!(!fs_magic_in_ram(0xef53));
        // /proc is procfs everywhere; /dev/shm is tmpfs on every Linux this runs on.
        assert_eq!(statfs_magic(Path::new("/proc")).unwrap(), 0x9fa0);
        let shm = statfs_magic(Path::new("/dev/shm")).expect("/dev/shm exists");
        assert_eq!(fs_magic_name(shm), Some("tmpfs"), "/dev/shm is tmpfs");
        let e = statfs_magic(Path::new("/nonexistent-dir")).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn replaces_whole_file_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn private_files_get_their_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("credentials.json");
        write_atomic_mode(&p, b"{}", 0o600).unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn missing_directory_names_the_path() {
        let err = write_atomic(Path::new("/nonexistent-dir/x.json"), b"x").unwrap_err();
        assert!(format!("{err:#}").contains("/nonexistent-dir/x.json"));
    }
}
