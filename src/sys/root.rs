//! `SysRoot`: the root path through which /sys, /proc, /dev and /run are read, so discovery runs
//! unchanged on the live system (`/`) and on fixture trees in tests.
//!
//! All paths given to its methods are absolute paths *as seen on the target system*
//! (`/sys/block/sda/size`); `SysRoot` maps them under its root. Paths it returns (for example from
//! [`SysRoot::canonical`]) are again target-system paths, so callers never see the fixture prefix.

use std::io;
use std::path::{Component, Path, PathBuf};

/// A root directory under which the system's /sys, /proc, /dev and /run are found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SysRoot {
    root: PathBuf,
}

impl Default for SysRoot {
    fn default() -> Self {
        Self::host()
    }
}

impl SysRoot {
    /// The running system (`/`).
    pub fn host() -> Self {
        SysRoot {
            root: PathBuf::from("/"),
        }
    }

    /// A fixture tree (or a mounted image) rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        SysRoot { root: root.into() }
    }

    /// The root directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// True when this is the running system, so device nodes are real and may be opened.
    pub fn is_host(&self) -> bool {
        self.root == Path::new("/")
    }

    /// Maps a target-system path (`/sys/block`) to the path on this machine.
    pub fn path(&self, target: impl AsRef<Path>) -> PathBuf {
        let target = target.as_ref();
        let rel: PathBuf = target
            .components()
            .filter(|c| !matches!(c, Component::RootDir | Component::Prefix(_)))
            .collect();
        self.root.join(rel)
    }

    /// Reads a whole file as text.
    pub fn read_string(&self, target: impl AsRef<Path>) -> io::Result<String> {
        std::fs::read_to_string(self.path(target))
    }

    /// Reads a sysfs-style attribute: trimmed, `None` if missing, unreadable or empty.
    pub fn read_attr(&self, target: impl AsRef<Path>) -> Option<String> {
        let bytes = std::fs::read(self.path(target)).ok()?;
        let text = String::from_utf8_lossy(&bytes);
        let t = text.trim_matches(|c: char| c.is_whitespace() || c == '\0');
        (!t.is_empty()).then(|| t.to_string())
    }

    /// Reads an attribute and parses it (e.g. a number); `None` if missing or malformed.
    pub fn read_parsed<T: std::str::FromStr>(&self, target: impl AsRef<Path>) -> Option<T> {
        self.read_attr(target)?.parse().ok()
    }

    /// True if the path exists (following symlinks).
    pub fn exists(&self, target: impl AsRef<Path>) -> bool {
        self.path(target).exists()
    }

    /// True if the path is a directory (following symlinks).
    pub fn is_dir(&self, target: impl AsRef<Path>) -> bool {
        self.path(target).is_dir()
    }

    /// The raw target of a symlink.
    pub fn read_link(&self, target: impl AsRef<Path>) -> Option<PathBuf> {
        std::fs::read_link(self.path(target)).ok()
    }

    /// The last component of a symlink's target (e.g. the driver name of a `driver` link).
    pub fn link_name(&self, target: impl AsRef<Path>) -> Option<String> {
        let t = self.read_link(target)?;
        Some(t.file_name()?.to_string_lossy().into_owned())
    }

    /// Resolves every symlink of `target` and returns the result as a target-system path.
    /// Fixture trees use relative links (as sysfs does), so they resolve inside the root.
    pub fn canonical(&self, target: impl AsRef<Path>) -> Option<PathBuf> {
        let real = std::fs::canonicalize(self.path(target)).ok()?;
        let base = std::fs::canonicalize(&self.root).ok()?;
        let rel = real.strip_prefix(&base).ok()?;
        Some(Path::new("/").join(rel))
    }

    /// Sorted names of the entries of a directory; empty if it is missing or unreadable.
    pub fn list_dir(&self, target: impl AsRef<Path>) -> Vec<String> {
        let mut names: Vec<String> = match std::fs::read_dir(self.path(target)) {
            Ok(rd) => rd
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        };
        names.sort();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_absolute_paths_under_the_root() {
        let r = SysRoot::new("/tmp/fx");
        assert_eq!(r.path("/sys/block"), PathBuf::from("/tmp/fx/sys/block"));
        assert_eq!(
            SysRoot::host().path("/proc/mounts"),
            PathBuf::from("/proc/mounts")
        );
        assert!(SysRoot::host().is_host());
        assert!(!r.is_host());
    }

    #[test]
    fn canonical_strips_the_root_and_attrs_trim() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("sys/devices/x/block/sda")).unwrap();
        std::fs::create_dir_all(d.join("sys/block")).unwrap();
        std::os::unix::fs::symlink("../devices/x/block/sda", d.join("sys/block/sda")).unwrap();
        std::fs::write(d.join("sys/devices/x/block/sda/size"), "  42\n").unwrap();
        let r = SysRoot::new(d);
        assert_eq!(
            r.canonical("/sys/block/sda").unwrap(),
            PathBuf::from("/sys/devices/x/block/sda")
        );
        assert_eq!(r.read_parsed::<u64>("/sys/block/sda/size"), Some(42));
        assert_eq!(r.read_attr("/sys/block/sda/missing"), None);
        assert_eq!(r.list_dir("/sys/block"), vec!["sda".to_string()]);
        assert!(r.list_dir("/nope").is_empty());
    }
}
