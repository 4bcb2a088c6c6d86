//! What a preparation decides ([`Preparation`]) and what it leaves mounted
//! ([`PreparedTarget`]): the types that preparing, reusing and releasing a disk share.

use crate::disk::FsKind;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What will be done to a disk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Preparation {
    /// Create a GPT with one partition, make `filesystem` on it labelled `label`, mount it.
    /// `named` is true when the policy named the disk for erasing (it may hold data).
    Erase {
        filesystem: FsKind,
        label: String,
        named: bool,
    },
    /// spindle's scratch disk from an earlier run: check read-only that the `fs_type`
    /// filesystem on `partition` holds only spindle's files and its marker names this disk,
    /// then erase it like a blank disk (a fresh filesystem: results never depend on what the
    /// previous run left).
    Reuse {
        filesystem: FsKind,
        label: String,
        partition: String,
        fs_type: String,
    },
    /// Mount the existing filesystem on `device` (a partition or the whole disk, kernel name)
    /// and work in a `spindle/` directory on it, removed by [`release`](super::release::release).
    UseExisting { device: String, fs_type: String },
    /// Leave the disk alone.
    Skip { reason: String },
}

/// A prepared, mounted benchmark target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreparedTarget {
    /// Kernel name of the disk (`sda`, `loop3`).
    pub disk: String,
    /// The block device that is mounted: the partition node, the whole disk, or a loop device
    /// spindle attached over the partition's byte range (see `offset_loop`).
    pub device: PathBuf,
    pub mount_point: PathBuf,
    /// Where benchmarks write: the mount point after erasing, `<mount point>/spindle` when an
    /// existing filesystem is used.
    pub work_dir: PathBuf,
    pub filesystem: String,
    /// Filesystem label spindle gave it (erase only).
    pub label: Option<String>,
    /// True if spindle partitioned and formatted the disk.
    pub erased: bool,
    /// A loop device spindle attached over the partition because the kernel made no partition
    /// node (loop devices without partition scanning); detached by [`release`](super::release::release).
    pub offset_loop: Option<PathBuf>,
    /// The exact command lines run, in order.
    pub commands: Vec<String>,
    /// A spindle scratch disk erased again: how it was recognised as one.
    #[serde(default)]
    pub reused: Option<String>,
}
