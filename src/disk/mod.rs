//! Disk discovery from sysfs and the eligibility rules for benchmark targets.
//!
//! [`scan`] lists the block devices of a [`SysRoot`](crate::sys::SysRoot) with everything known
//! about them (a [`Disk`]); [`classify`] decides, purely from a `Disk` and a [`DiskPolicy`],
//! whether it may be benchmarked. Reading goes only through the root path, so tests run on
//! fixture trees; device nodes are opened (read-only) only to look for signatures.

pub mod bridges;
pub mod classify;
pub mod discover;
pub mod facts;
pub mod kernel_log;
mod presence;
pub mod render;
pub mod signature;
pub mod smart;
pub mod sysfiles;
pub mod usb;
mod view;

pub use classify::{classify, intended_use, DiskPolicy, Exclusion, FsKind, TargetUse, Verdict};
pub use discover::{find_disk, find_named, scan, scan_all, DiskReport, Naming};
pub use presence::vanished;
pub use signature::{probe_signature, probe_tail_signature, Signature, SignatureKind};
pub use usb::{LinkSpeed, UsbHop, UsbInfo};

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How a block device is attached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    Usb,
    Sata,
    Scsi,
    Nvme,
    /// SD card or eMMC.
    Mmc,
    Virtio,
    Loop,
    /// RAM disk or zram.
    Ram,
    DeviceMapper,
    /// Software RAID.
    Md,
    Optical,
    Other,
}

impl Transport {
    /// Words for a person ("USB", "SD card/eMMC", …).
    pub fn describe(self) -> &'static str {
        match self {
            Transport::Usb => "USB",
            Transport::Sata => "SATA",
            Transport::Scsi => "SCSI",
            Transport::Nvme => "NVMe",
            Transport::Mmc => "SD card/eMMC",
            Transport::Virtio => "virtio",
            Transport::Loop => "loop device",
            Transport::Ram => "RAM disk",
            Transport::DeviceMapper => "device-mapper",
            Transport::Md => "software RAID",
            Transport::Optical => "optical drive",
            Transport::Other => "unknown bus",
        }
    }

    /// True for real disks (what `spindle disks` lists without `--all`).
    pub fn is_disk(self) -> bool {
        matches!(
            self,
            Transport::Usb
                | Transport::Sata
                | Transport::Scsi
                | Transport::Nvme
                | Transport::Mmc
                | Transport::Virtio
                | Transport::Other
        )
    }
}

/// A filesystem mount of a disk or partition, from /proc/self/mountinfo or /proc/mounts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountPoint {
    pub mount_point: PathBuf,
    pub fs_type: String,
    pub read_only: bool,
}

/// A partition of a disk (from sysfs, or read from the partition table when the kernel has no
/// device for it, as with loop devices attached without partition scanning).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    /// Kernel name (`sda1`, `mmcblk0p2`, `loop0p1`).
    pub name: String,
    /// Device node (`/dev/sda1`); may not exist when `in_kernel` is false.
    pub path: PathBuf,
    pub number: Option<u32>,
    /// `major:minor`, when the kernel has a device for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dev: Option<String>,
    /// False when known only from the partition table on disk (no kernel device).
    pub in_kernel: bool,
    pub start_bytes: Option<u64>,
    pub size_bytes: Option<u64>,
    pub fs_type: Option<String>,
    pub label: Option<String>,
    pub uuid: Option<String>,
    pub partuuid: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mounts: Vec<MountPoint>,
    /// Devices stacked on it (`dm-0`, `md0`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holders: Vec<String>,
    /// In use as swap (/proc/swaps).
    pub swap: bool,
}

/// Whether `name` names a disk stably, as a configuration must ([`Disk::is_named_by`]):
/// kernel names (`/dev/sda`, `loop3`) change between boots and never match. The error says
/// what is accepted (the name echoed cut short).
pub fn check_stable_name(name: &str) -> Result<(), String> {
    let n = name.trim();
    let kernel_name = n.starts_with("/dev/") && !n.starts_with("/dev/disk/by-id/");
    if n.is_empty() || kernel_name || name.chars().any(|c| c.is_control()) {
        return Err(format!(
            "'{}' is not a disk serial, /dev/disk/by-id name or stable id such as file:/path (/dev/sdX names change between boots; `spindle disks --all` shows the ids)",
            crate::units::shorten(name, 60)
        ));
    }
    Ok(())
}

/// Everything discovery knows about one block device. Unknown facts are `None`/empty.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Disk {
    /// Kernel name (`sda`, `mmcblk0`, `loop3`).
    pub name: String,
    /// Device node (`/dev/sda`).
    pub path: PathBuf,
    pub transport: Option<Transport>,
    /// `major:minor`.
    pub dev: Option<String>,
    /// The best stable identifier: a /dev/disk/by-id name, else `serial:<serial>`, else (loop
    /// devices) `file:<backing file>`. `sdX` names are not stable across boots or replugging.
    pub stable_id: Option<String>,
    /// All /dev/disk/by-id names pointing at this disk.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_id: Vec<String>,
    pub serial: Option<String>,
    pub vendor: Option<String>,
    pub model: Option<String>,
    pub size_bytes: Option<u64>,
    pub rotational: Option<bool>,
    pub logical_block_size: Option<u32>,
    pub physical_block_size: Option<u32>,
    pub removable: bool,
    pub read_only: bool,
    /// Partition table type (`gpt`, `dos`), from udev or the disk's first sectors.
    pub partition_table: Option<String>,
    /// Signatures read from the disk's first and last MiB (or reported by udev).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<Signature>,
    /// True when the first and last MiB were actually read (so "no signature" means blank).
    pub content_read: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<Partition>,
    /// Mounts of the whole disk (a filesystem without a partition table).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mounts: Vec<MountPoint>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holders: Vec<String>,
    /// The whole disk is active swap.
    pub swap: bool,
    /// Why this is the boot/root device (e.g. "sda2 is mounted at /"), if it is.
    pub boot: Option<String>,
    /// A mounted filesystem of this disk has a `spindle/` folder at its root (results stick marker).
    pub stick_marker: bool,
    pub usb: Option<UsbInfo>,
    /// SD cards and eMMC: the bus mode the host negotiated, as the kernel names it
    /// (`sd uhs SDR104`, `sd high-speed`; `timing spec` of `/sys/kernel/debug/mmcN/ios`, which
    /// needs debugfs and root). Absent when not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sd_timing: Option<String>,
    /// Loop devices: the backing file.
    pub backing_file: Option<PathBuf>,
    /// The device's directory in sysfs (`/sys/devices/…/block/sda`).
    pub sysfs_path: Option<PathBuf>,
    /// Things that could not be read, in words (never fatal).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Disk {
    /// Every filesystem signature on the disk or its partitions: (device name, type, label).
    pub fn filesystems(&self) -> Vec<(String, String, Option<String>)> {
        let mut out = Vec::new();
        for s in &self.signatures {
            if !s.kind.is_partition_table() {
                out.push((
                    self.name.clone(),
                    s.kind.blkid_name().to_string(),
                    s.label.clone(),
                ));
            }
        }
        for p in &self.partitions {
            if let Some(t) = &p.fs_type {
                out.push((p.name.clone(), t.clone(), p.label.clone()));
            }
        }
        out
    }

    /// True if nothing on the disk shows data: no partitions, no partition table, no signature.
    /// Only trustworthy when `content_read` is true.
    pub fn looks_blank(&self) -> bool {
        self.partitions.is_empty() && self.partition_table.is_none() && self.signatures.is_empty()
    }

    /// True if `name` names this disk the stable way a configuration does: its serial, a
    /// /dev/disk/by-id name (with or without the `/dev/disk/by-id/` prefix), its stable id as
    /// `spindle disks` shows it (`file:/path` for loop devices), or a loop device's backing
    /// file. Kernel names (`sda`, `/dev/sda`) never match: they change between boots.
    pub fn is_named_by(&self, name: &str) -> bool {
        let e = name.trim();
        let bare = e.strip_prefix("/dev/disk/by-id/").unwrap_or(e);
        !e.is_empty()
            && (self.serial.as_deref() == Some(e)
                || self.stable_id.as_deref() == Some(e)
                || self.by_id.iter().any(|b| b == bare)
                || self
                    .backing_file
                    .as_ref()
                    .is_some_and(|f| f.as_os_str() == e))
    }

    /// A short human id for tables and labels: the stable id without its by-id decoration.
    pub fn short_id(&self) -> String {
        let raw = self
            .serial
            .clone()
            .or_else(|| self.stable_id.clone())
            .unwrap_or_else(|| self.name.clone());
        let alnum: String = raw.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
        let n = alnum.len();
        alnum[n.saturating_sub(8)..].to_lowercase()
    }
}
