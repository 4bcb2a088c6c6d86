//! Eligibility rules: which disks may be benchmarked, and how (erase, or use an existing
//! filesystem), decided purely from a [`Disk`] and a [`DiskPolicy`].

use super::{Disk, Transport};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Filesystems spindle can create on an erased disk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsKind {
    #[default]
    Ext4,
    Xfs,
    Btrfs,
    F2fs,
}

impl FsKind {
    /// The `mkfs.<name>` / mount type name.
    pub fn name(self) -> &'static str {
        match self {
            FsKind::Ext4 => "ext4",
            FsKind::Xfs => "xfs",
            FsKind::Btrfs => "btrfs",
            FsKind::F2fs => "f2fs",
        }
    }

    /// Longest label the filesystem accepts.
    pub fn max_label_len(self) -> usize {
        match self {
            FsKind::Ext4 => 16,
            FsKind::Xfs => 12,
            FsKind::Btrfs => 255,
            FsKind::F2fs => 512,
        }
    }
}

/// Which disks spindle may use and how (the `[disks]` table of the configuration).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DiskPolicy {
    /// Accept disks whose USB link is slower than 5 Gb/s (a USB 2 port or a USB 2 disk).
    pub allow_usb2: bool,
    /// Accept disks that are not on USB (SATA, NVMe, virtio, SD card, loop devices): for laptops
    /// and tests. The boot device is never accepted.
    pub allow_non_usb: bool,
    /// Smallest disk accepted, in bytes (default 1 GiB).
    pub min_size_bytes: u64,
    /// Filesystem label of the results stick, compared case-insensitively (default `SPINDLE`).
    pub stick_label: String,
    /// Disks that may be erased even though they hold data: serials, /dev/disk/by-id names
    /// (with or without the `/dev/disk/by-id/` prefix), or stable ids as `spindle disks` shows
    /// them (`file:/path` for loop devices). Never `/dev/sdX`: those names change.
    pub erase: Vec<String>,
    /// Use an existing filesystem (ext2/3/4, xfs, btrfs, f2fs) non-destructively, in a `spindle/`
    /// directory removed after the run, instead of skipping a disk that holds data.
    pub use_existing_filesystem: bool,
    /// Filesystem created when a disk is erased.
    pub filesystem: FsKind,
    /// Prepare again, without naming it, a disk spindle formatted on an earlier run: one
    /// partition with a filesystem labelled `spindle-…` whose marker names this disk and which
    /// holds nothing but spindle's own files (checked read-only right before erasing; a single
    /// foreign file and it is a data disk). On by default: the appliance's second run.
    pub reuse_spindle_disks: bool,
}

impl Default for DiskPolicy {
    fn default() -> Self {
        DiskPolicy {
            allow_usb2: false,
            allow_non_usb: false,
            min_size_bytes: 1 << 30,
            stick_label: "SPINDLE".to_string(),
            erase: Vec::new(),
            use_existing_filesystem: false,
            filesystem: FsKind::Ext4,
            reuse_spindle_disks: true,
        }
    }
}

impl DiskPolicy {
    /// True if the configuration names this disk for erasing.
    pub fn names_for_erase(&self, disk: &Disk) -> bool {
        self.erase.iter().any(|e| disk.is_named_by(e))
    }
}

/// Why a disk is not a benchmark target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Exclusion {
    /// The system boots or runs from it.
    BootDevice {
        detail: String,
    },
    /// It is the stick results are written to.
    ResultsStick {
        detail: String,
    },
    /// No medium, or a size that cannot be read.
    NoMedium {
        detail: String,
    },
    ReadOnly,
    /// Mounted, swap, or used by device-mapper/RAID.
    Busy {
        detail: String,
    },
    NotUsb {
        transport: Transport,
    },
    /// On a link slower than SuperSpeed.
    Usb2Link {
        speed_mbps: f64,
        usb3_capable: bool,
    },
    TooSmall {
        size_bytes: u64,
        min_size_bytes: u64,
    },
    /// Holds a partition table, filesystem or RAID/LVM signature and is not offered.
    HoldsData {
        detail: String,
    },
}

fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

impl fmt::Display for Exclusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exclusion::BootDevice { detail } => {
                write!(f, "boot/root device ({detail}): never touched")
            }
            Exclusion::ResultsStick { detail } => write!(f, "results stick ({detail})"),
            Exclusion::NoMedium { detail } => write!(f, "no medium ({detail})"),
            Exclusion::ReadOnly => write!(f, "read-only (write-protect switch or read-only device)"),
            Exclusion::Busy { detail } => {
                write!(f, "busy: {detail}; spindle never writes to a disk in use (unmount it, or stop the swap/volume, to use it)")
            }
            Exclusion::NotUsb { transport } => write!(
                f,
                "not a USB disk ({}); set allow_non_usb = true to benchmark it",
                transport.describe()
            ),
            Exclusion::Usb2Link {
                speed_mbps,
                usb3_capable: true,
            } => write!(
                f,
                "USB 3 disk on a {speed_mbps} Mb/s link: plug it into a blue USB3 port (or set allow_usb2 = true)"
            ),
            Exclusion::Usb2Link { speed_mbps, .. } => write!(
                f,
                "USB 2 link ({speed_mbps} Mb/s): a USB 2 disk or port; use a USB 3 disk in a blue USB3 port (or set allow_usb2 = true)"
            ),
            Exclusion::TooSmall {
                size_bytes,
                min_size_bytes,
            } => write!(
                f,
                "too small: {} < {} (min_size_bytes)",
                gib(*size_bytes),
                gib(*min_size_bytes)
            ),
            Exclusion::HoldsData { detail } => write!(
                f,
                "holds data ({detail}): not erased; name it in erase = [...] by serial or by-id to allow erasing, or set use_existing_filesystem = true"
            ),
        }
    }
}

/// How an eligible disk will be used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "use", rename_all = "snake_case")]
pub enum TargetUse {
    /// Partition and format it. `named` is true when the configuration named it for erasing
    /// (it may hold data); false when it is blank.
    Erase { named: bool },
    /// spindle's own scratch disk from an earlier run: check (read-only) that its filesystem on
    /// `partition` holds only spindle's files and its marker names this disk, then partition
    /// and format it again.
    Reuse {
        /// Kernel name of its one partition.
        partition: String,
        fs_type: String,
    },
    /// Mount an existing filesystem and work in a `spindle/` directory on it.
    UseExisting {
        /// Kernel name of the partition (or the disk itself) holding the filesystem.
        device: String,
        fs_type: String,
    },
}

/// A disk's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    Eligible {
        #[serde(flatten)]
        how: TargetUse,
    },
    Excluded {
        #[serde(flatten)]
        reason: Exclusion,
    },
}

impl Verdict {
    pub fn is_eligible(&self) -> bool {
        matches!(self, Verdict::Eligible { .. })
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Eligible {
                how: TargetUse::Erase { named: false },
            } => write!(f, "eligible (blank: will be partitioned and formatted)"),
            Verdict::Eligible {
                how: TargetUse::Erase { named: true },
            } => write!(f, "eligible (named in erase: will be ERASED)"),
            Verdict::Eligible {
                how: TargetUse::Reuse { partition, .. },
            } => write!(
                f,
                "eligible (spindle's scratch disk from an earlier run: {partition} is checked to hold only spindle's files, then formatted again)"
            ),
            Verdict::Eligible {
                how: TargetUse::UseExisting { device, fs_type },
            } => write!(
                f,
                "eligible (uses the existing {fs_type} on {device} in a spindle/ folder)"
            ),
            Verdict::Excluded { reason } => write!(f, "excluded: {reason}"),
        }
    }
}

/// Filesystems spindle will use non-destructively (MySQL needs POSIX ownership and modes,
/// so FAT, exFAT and NTFS are not used).
const USABLE_EXISTING: &[&str] = &["ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs"];

fn describe_data(disk: &Disk) -> String {
    let mut parts = Vec::new();
    if let Some(t) = &disk.partition_table {
        parts.push(format!("{t} partition table"));
    }
    for (dev, fs, label) in disk.filesystems() {
        match label {
            Some(l) => parts.push(format!("{dev} {fs} '{l}'")),
            None => parts.push(format!("{dev} {fs}")),
        }
    }
    if spindle_made(disk) {
        parts.push(
            "formatted by spindle earlier; reuse_spindle_disks = true prepares it again".into(),
        );
    }
    if parts.is_empty() && !disk.partitions.is_empty() {
        let names: Vec<&str> = disk.partitions.iter().map(|p| p.name.as_str()).collect();
        parts.push(format!("partitions {}", names.join(", ")));
    }
    parts.join(", ")
}

/// True if the disk holds only what spindle made: one partition with a `spindle-…` label.
pub fn spindle_made(disk: &Disk) -> bool {
    let only_table = disk.signatures.iter().all(|s| s.kind.is_partition_table());
    match disk.partitions.as_slice() {
        [p] => {
            only_table
                && p.label
                    .as_deref()
                    .is_some_and(|l| l.starts_with("spindle-"))
        }
        _ => false,
    }
}

/// How the disk would be used if nothing else excludes it; `Err` if it holds data that the
/// policy does not offer.
pub fn intended_use(disk: &Disk, policy: &DiskPolicy) -> Result<TargetUse, Exclusion> {
    if disk.looks_blank() {
        return Ok(TargetUse::Erase { named: false });
    }
    if policy.names_for_erase(disk) {
        return Ok(TargetUse::Erase { named: true });
    }
    if policy.reuse_spindle_disks && spindle_made(disk) {
        let p = &disk.partitions[0];
        return Ok(TargetUse::Reuse {
            partition: p.name.clone(),
            fs_type: p.fs_type.clone().unwrap_or_default(),
        });
    }
    if policy.use_existing_filesystem {
        let whole = disk
            .signatures
            .iter()
            .find(|s| USABLE_EXISTING.contains(&s.kind.blkid_name()))
            .map(|s| {
                (
                    disk.name.clone(),
                    s.kind.blkid_name().to_string(),
                    disk.size_bytes,
                )
            });
        let best_part = disk
            .partitions
            .iter()
            .filter_map(|p| {
                let t = p.fs_type.as_deref()?;
                USABLE_EXISTING
                    .contains(&t)
                    .then(|| (p.name.clone(), t.to_string(), p.size_bytes))
            })
            .max_by_key(|(_, _, s)| s.unwrap_or(0));
        if let Some((device, fs_type, _)) = whole.or(best_part) {
            return Ok(TargetUse::UseExisting { device, fs_type });
        }
    }
    Err(Exclusion::HoldsData {
        detail: describe_data(disk),
    })
}

fn busy_detail(disk: &Disk) -> Option<String> {
    let mut why = Vec::new();
    for m in &disk.mounts {
        why.push(format!(
            "{} is mounted at {}",
            disk.name,
            m.mount_point.display()
        ));
    }
    if !disk.holders.is_empty() {
        why.push(format!(
            "{} is used by {}",
            disk.name,
            disk.holders.join(", ")
        ));
    }
    if disk.swap {
        why.push(format!("{} is active swap", disk.name));
    }
    for p in &disk.partitions {
        for m in &p.mounts {
            why.push(format!(
                "{} is mounted at {}",
                p.name,
                m.mount_point.display()
            ));
        }
        if !p.holders.is_empty() {
            why.push(format!("{} is used by {}", p.name, p.holders.join(", ")));
        }
        if p.swap {
            why.push(format!("{} is active swap", p.name));
        }
    }
    (!why.is_empty()).then(|| why.join("; "))
}

fn stick_detail(disk: &Disk, label: &str) -> Option<String> {
    if !label.is_empty() {
        for (dev, _, l) in disk.filesystems() {
            if l.is_some_and(|l| l.eq_ignore_ascii_case(label)) {
                return Some(format!("{dev} is labelled {label}"));
            }
        }
    }
    disk.stick_marker
        .then(|| "a spindle/ folder at the root of a mounted filesystem".to_string())
}

/// Classifies a disk. The first matching reason wins, in this order: boot device, results
/// stick, no medium, read-only, busy, not USB, USB 2 link, too small, holds data.
pub fn classify(disk: &Disk, policy: &DiskPolicy) -> Verdict {
    let excluded = |reason| Verdict::Excluded { reason };
    if let Some(b) = &disk.boot {
        return excluded(Exclusion::BootDevice { detail: b.clone() });
    }
    if let Some(detail) = stick_detail(disk, &policy.stick_label) {
        return excluded(Exclusion::ResultsStick { detail });
    }
    match disk.size_bytes {
        None => {
            return excluded(Exclusion::NoMedium {
                detail: "size unknown".into(),
            })
        }
        Some(0) => {
            let detail = if disk.transport == Some(Transport::Loop) {
                "loop device not attached to a file".to_string()
            } else {
                "size 0: empty card reader or no medium".to_string()
            };
            return excluded(Exclusion::NoMedium { detail });
        }
        Some(_) => {}
    }
    if disk.read_only {
        return excluded(Exclusion::ReadOnly);
    }
    if let Some(detail) = busy_detail(disk) {
        return excluded(Exclusion::Busy { detail });
    }
    let transport = disk.transport.unwrap_or(Transport::Other);
    if transport != Transport::Usb && !policy.allow_non_usb {
        return excluded(Exclusion::NotUsb { transport });
    }
    if let Some(usb) = &disk.usb {
        if let Some(speed) = usb.link_speed {
            if !speed.is_superspeed() && !policy.allow_usb2 {
                return excluded(Exclusion::Usb2Link {
                    speed_mbps: speed.0,
                    usb3_capable: usb.usb3_capable(),
                });
            }
        }
    }
    if let Some(size) = disk.size_bytes {
        if size < policy.min_size_bytes {
            return excluded(Exclusion::TooSmall {
                size_bytes: size,
                min_size_bytes: policy.min_size_bytes,
            });
        }
    }
    match intended_use(disk, policy) {
        Ok(how) => Verdict::Eligible { how },
        Err(reason) => excluded(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::{LinkSpeed, Partition, UsbInfo};

    fn usb_disk() -> Disk {
        Disk {
            name: "sda".into(),
            transport: Some(Transport::Usb),
            size_bytes: Some(500 << 30),
            serial: Some("S1".into()),
            by_id: vec!["usb-X_Y_S1-0:0".into()],
            usb: Some(UsbInfo {
                link_speed: Some(LinkSpeed(5000.0)),
                ..UsbInfo::default()
            }),
            ..Disk::default()
        }
    }

    #[test]
    fn blank_usb3_disk_is_eligible_for_erase() {
        let v = classify(&usb_disk(), &DiskPolicy::default());
        assert_eq!(
            v,
            Verdict::Eligible {
                how: TargetUse::Erase { named: false }
            }
        );
    }

    #[test]
    fn data_is_kept_unless_named_or_reused() {
        let mut d = usb_disk();
        d.partition_table = Some("gpt".into());
        d.partitions.push(Partition {
            name: "sda1".into(),
            fs_type: Some("ext4".into()),
            label: Some("photos".into()),
            ..Partition::default()
        });
        let p = DiskPolicy::default();
        let v = classify(&d, &p);
        assert!(
            v.to_string()
                .contains("holds data (gpt partition table, sda1 ext4 'photos')"),
            "{v}"
        );
        let named = DiskPolicy {
            erase: vec!["/dev/disk/by-id/usb-X_Y_S1-0:0".into()],
            ..DiskPolicy::default()
        };
        assert_eq!(
            classify(&d, &named),
            Verdict::Eligible {
                how: TargetUse::Erase { named: true }
            }
        );
        let reuse = DiskPolicy {
            use_existing_filesystem: true,
            ..DiskPolicy::default()
        };
        assert_eq!(
            classify(&d, &reuse),
            Verdict::Eligible {
                how: TargetUse::UseExisting {
                    device: "sda1".into(),
                    fs_type: "ext4".into()
                }
            }
        );
    }

    #[test]
    fn spindle_formatted_disk_is_reused_unless_turned_off() {
        let mut d = usb_disk();
        d.partition_table = Some("gpt".into());
        d.partitions.push(Partition {
            name: "sda1".into(),
            fs_type: Some("ext4".into()),
            label: Some("spindle-a1234567".into()),
            ..Partition::default()
        });
        let p = DiskPolicy::default();
        assert_eq!(
            classify(&d, &p),
            Verdict::Eligible {
                how: TargetUse::Reuse {
                    partition: "sda1".into(),
                    fs_type: "ext4".into()
                }
            }
        );
        let off = DiskPolicy {
            reuse_spindle_disks: false,
            ..DiskPolicy::default()
        };
        let v = classify(&d, &off);
        assert!(
            v.to_string().contains("formatted by spindle earlier"),
            "{v}"
        );
        d.partitions[0].label = Some("photos".into());
        assert!(!classify(&d, &p).is_eligible());
    }

    #[test]
    fn usb2_link_message_names_the_blue_port() {
        let mut d = usb_disk();
        let u = d.usb.as_mut().unwrap();
        u.link_speed = Some(LinkSpeed(480.0));
        u.usb_version = Some("3.20".into());
        let v = classify(&d, &DiskPolicy::default());
        assert_eq!(
            v.to_string(),
            "excluded: USB 3 disk on a 480 Mb/s link: plug it into a blue USB3 port (or set allow_usb2 = true)"
        );
        let allow = DiskPolicy {
            allow_usb2: true,
            ..DiskPolicy::default()
        };
        assert!(classify(&d, &allow).is_eligible());
    }

    #[test]
    fn policy_rejects_unknown_keys_and_has_defaults() {
        let p: DiskPolicy = toml::from_str("allow_usb2 = true\nfilesystem = \"xfs\"").unwrap();
        assert!(p.allow_usb2);
        assert_eq!(p.filesystem, FsKind::Xfs);
        assert_eq!(p.stick_label, "SPINDLE");
        assert!(toml::from_str::<DiskPolicy>("alow_usb2 = true").is_err());
    }

    #[test]
    fn empty_disk_struct_does_not_panic() {
        let v = classify(&Disk::default(), &DiskPolicy::default());
        assert!(!v.is_eligible());
    }
}
