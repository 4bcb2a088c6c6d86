//! What the whole system shows that every disk is checked against: the mounts, the swaps, the
//! kernel command line's root, and which kernel name a `major:minor` or a `/dev/...` path has.

use super::sysfiles::{self, MountEntry};
use super::MountPoint;
use crate::sys::SysRoot;
use std::collections::BTreeMap;
use std::path::Path;

/// The system-wide facts every disk is checked against.
pub(super) struct SystemView {
    pub(super) mounts: Vec<MountEntry>,
    pub(super) swaps: Vec<String>,
    pub(super) cmdline_root: Option<String>,
    /// `major:minor` → kernel name, for disks and partitions.
    pub(super) dev_names: BTreeMap<String, String>,
}

pub(super) fn link_names_to(root: &SysRoot, dir: &str, name: &str) -> Vec<String> {
    root.list_dir(dir)
        .into_iter()
        .filter(|l| {
            root.read_link(format!("{dir}/{l}"))
                .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()))
                .as_deref()
                == Some(name)
        })
        .collect()
}

/// Resolves `/dev/...` (following by-uuid, mapper and similar links) to a kernel device name.
pub(super) fn dev_path_to_name(root: &SysRoot, path: &str) -> Option<String> {
    let rest = path.strip_prefix("/dev/")?;
    if rest == "root" {
        return None;
    }
    if let Some(t) = root.read_link(path) {
        return Some(t.file_name()?.to_string_lossy().into_owned());
    }
    Some(Path::new(rest).file_name()?.to_string_lossy().into_owned())
}

impl SystemView {
    pub(super) fn read(root: &SysRoot) -> Self {
        let mounts = match root.read_string("/proc/self/mountinfo") {
            Ok(t) => sysfiles::parse_mountinfo(&t),
            Err(_) => root
                .read_string("/proc/mounts")
                .map(|t| sysfiles::parse_proc_mounts(&t))
                .unwrap_or_default(),
        };
        let swaps = root
            .read_string("/proc/swaps")
            .map(|t| sysfiles::parse_swaps(&t))
            .unwrap_or_default();
        let cmdline_root = root
            .read_string("/proc/cmdline")
            .ok()
            .and_then(|t| sysfiles::parse_cmdline_root(&t));
        let mut dev_names = BTreeMap::new();
        for d in root.list_dir("/sys/block") {
            if let Some(dev) = root.read_attr(format!("/sys/block/{d}/dev")) {
                dev_names.insert(dev, d.clone());
            }
            for p in root.list_dir(format!("/sys/block/{d}")) {
                if root.exists(format!("/sys/block/{d}/{p}/partition")) {
                    if let Some(dev) = root.read_attr(format!("/sys/block/{d}/{p}/dev")) {
                        dev_names.insert(dev, p);
                    }
                }
            }
        }
        SystemView {
            mounts,
            swaps,
            cmdline_root,
            dev_names,
        }
    }

    /// Kernel name of the device a mount entry is on (`sda1`), if it is a block device.
    pub(super) fn mount_device(&self, root: &SysRoot, m: &MountEntry) -> Option<String> {
        if let Some(name) = m.dev.as_ref().and_then(|d| self.dev_names.get(d)) {
            return Some(name.clone());
        }
        dev_path_to_name(root, &m.source)
    }

    pub(super) fn mounts_of(&self, root: &SysRoot, name: &str) -> Vec<MountPoint> {
        self.mounts
            .iter()
            .filter(|m| self.mount_device(root, m).as_deref() == Some(name))
            .map(|m| MountPoint {
                mount_point: m.mount_point.clone(),
                fs_type: m.fs_type.clone(),
                read_only: m.read_only,
            })
            .collect()
    }

    pub(super) fn is_swap(&self, root: &SysRoot, name: &str) -> bool {
        self.swaps
            .iter()
            .any(|s| dev_path_to_name(root, s).as_deref() == Some(name))
    }
}
