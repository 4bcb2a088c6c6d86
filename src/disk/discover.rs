//! Scanning block devices through a [`SysRoot`]: sysfs attributes, udev's database,
//! /dev/disk/by-* links, mounts, swaps, holders, the boot device, USB facts, and the signatures
//! in each device's first and last MiB.

use super::bridges::{check_disk, BridgeCheck, BridgeTable, UsbStorageQuirks};
use super::signature::{self, parse_partition_table, SignatureKind};
use super::sysfiles::{self, UdevData};
use super::usb::usb_info;
use super::view::{dev_path_to_name, link_names_to, SystemView};
use super::{classify, Disk, DiskPolicy, Partition, Transport, Verdict};
use crate::sys::SysRoot;
use anyhow::{bail, Context};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Mount points that make a disk the boot/root device.
const BOOT_MOUNTS: &[&str] = &["/", "/boot", "/boot/firmware", "/boot/efi", "/efi"];

/// A disk with its verdict under a policy, as `spindle disks --json` prints it.
#[derive(Clone, Debug, Serialize)]
pub struct DiskReport {
    #[serde(flatten)]
    pub disk: Disk,
    pub verdict: Verdict,
    /// The verdict in words ("eligible" or the reason it is excluded).
    pub verdict_text: String,
    /// The USB bridge's entry in the table of bridges with reported UAS trouble on the Pi.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bridge: Option<BridgeCheck>,
    /// The `usb-storage.quirks` flags active for this disk's VID:PID (`u` = UAS off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usb_quirk: Option<String>,
}

impl DiskReport {
    pub fn new(disk: Disk, policy: &DiskPolicy) -> Self {
        let verdict = classify(&disk, policy);
        let verdict_text = verdict.to_string();
        DiskReport {
            disk,
            verdict,
            verdict_text,
            bridge: None,
            usb_quirk: None,
        }
    }

    /// Adds the bridge check and the active quirk flags of the disk's USB device.
    pub fn with_usb_facts(mut self, quirks: &UsbStorageQuirks, table: &BridgeTable) -> Self {
        self.bridge = check_disk(&self.disk, quirks, table);
        self.usb_quirk = self
            .disk
            .usb
            .as_ref()
            .and_then(|u| u.vid_pid())
            .and_then(|id| quirks.flags_for(&id).map(str::to_string));
        self
    }
}

fn udev_data(root: &SysRoot, dev: Option<&str>) -> UdevData {
    dev.and_then(|d| root.read_string(format!("/run/udev/data/b{d}")).ok())
        .map(|t| sysfiles::parse_udev_data(&t))
        .unwrap_or_default()
}

fn transport_of(name: &str, sys_path: &str, is_usb: bool) -> Transport {
    let starts = |p: &str| name.starts_with(p);
    if is_usb {
        Transport::Usb
    } else if starts("loop") {
        Transport::Loop
    } else if starts("zram") || starts("ram") {
        Transport::Ram
    } else if starts("dm-") {
        Transport::DeviceMapper
    } else if starts("md") {
        Transport::Md
    } else if starts("nvme") {
        Transport::Nvme
    } else if starts("mmcblk") {
        Transport::Mmc
    } else if starts("vd") || sys_path.contains("/virtio") {
        Transport::Virtio
    } else if starts("sr") {
        Transport::Optical
    } else if sys_path.contains("/ata") {
        Transport::Sata
    } else if starts("sd") {
        Transport::Scsi
    } else {
        Transport::Other
    }
}

fn clean(s: Option<String>) -> Option<String> {
    s.map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

fn dev_node_readable(root: &SysRoot, path: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let p = root.path(path);
    let ft = std::fs::metadata(&p).ok()?.file_type();
    (ft.is_block_device() || ft.is_file()).then_some(p)
}

/// Fills partition fs facts from its udev entry.
fn apply_udev_fs(p: &mut Partition, u: &UdevData) {
    p.fs_type = p.fs_type.take().or_else(|| u.get("ID_FS_TYPE"));
    p.label = p.label.take().or_else(|| u.get("ID_FS_LABEL"));
    p.uuid = p.uuid.take().or_else(|| u.get("ID_FS_UUID"));
    p.partuuid = p.partuuid.take().or_else(|| u.get("ID_PART_ENTRY_UUID"));
}

/// Reads everything known about block device `name` (without the boot check).
/// Serial, vendor/model fallbacks from udev, by-id names and the stable id of `d`.
fn identify(root: &SysRoot, d: &mut Disk, udev: &UdevData, attr: &dyn Fn(&str) -> Option<String>) {
    d.serial = udev
        .get("ID_SERIAL_SHORT")
        .or_else(|| clean(attr("device/serial")))
        .or_else(|| clean(attr("serial")))
        .or_else(|| d.usb.as_ref().and_then(|u| u.serial.clone()));
    if d.vendor.is_none() {
        d.vendor = udev.get("ID_VENDOR");
    }
    if d.model.is_none() {
        d.model = udev.get("ID_MODEL");
    }
    let mut by_id = link_names_to(root, "/dev/disk/by-id", &d.name);
    for s in &udev.symlinks {
        if let Some(n) = s.strip_prefix("disk/by-id/") {
            if !by_id.iter().any(|b| b == n) {
                by_id.push(n.to_string());
            }
        }
    }
    by_id.sort();
    d.by_id = by_id;
    d.stable_id = d
        .by_id
        .iter()
        .find(|b| !b.starts_with("wwn-") && !b.starts_with("nvme-eui."))
        .or(d.by_id.first())
        .cloned()
        .or_else(|| d.serial.as_ref().map(|s| format!("serial:{s}")))
        .or_else(|| {
            d.backing_file
                .as_ref()
                .map(|f| format!("file:{}", f.display()))
        });
}

/// The partitions the kernel knows under `sys` (`/sys/block/NAME`), in number order.
fn kernel_partitions(root: &SysRoot, view: &SystemView, sys: &str) -> Vec<Partition> {
    let mut parts = Vec::new();
    for p in root.list_dir(sys) {
        let psys = format!("{sys}/{p}");
        if !root.exists(format!("{psys}/partition")) {
            continue;
        }
        let pattr = |a: &str| root.read_attr(format!("{psys}/{a}"));
        let mut part = Partition {
            name: p.clone(),
            path: PathBuf::from(format!("/dev/{p}")),
            number: pattr("partition").and_then(|v| v.parse().ok()),
            dev: pattr("dev"),
            in_kernel: true,
            start_bytes: pattr("start")
                .and_then(|v| v.parse::<u64>().ok())
                .map(|s| s * 512),
            size_bytes: pattr("size")
                .and_then(|v| v.parse::<u64>().ok())
                .map(|s| s * 512),
            holders: root.list_dir(format!("{psys}/holders")),
            ..Partition::default()
        };
        let pudev = udev_data(root, part.dev.as_deref());
        apply_udev_fs(&mut part, &pudev);
        part.mounts = view.mounts_of(root, &p);
        part.swap = view.is_swap(root, &p);
        parts.push(part);
    }
    parts.sort_by_key(|p| p.number.unwrap_or(u32::MAX));
    parts
}

/// The bus mode of the MMC host above `sys_path` (`…/mmc_host/mmc0/mmc0:aaaa/block/mmcblk0`):
/// the name in parentheses on the `timing spec:` line of debugfs's `mmc0/ios`.
fn sd_timing(root: &SysRoot, sys_path: &str) -> Option<String> {
    let host = sys_path.split('/').find(|c| {
        c.strip_prefix("mmc")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })?;
    let ios = root
        .read_string(format!("/sys/kernel/debug/{host}/ios"))
        .ok()?;
    parse_ios_timing(&ios)
}

/// `timing spec:\t6 (sd uhs SDR104)` → `sd uhs SDR104`.
fn parse_ios_timing(ios: &str) -> Option<String> {
    let line = ios.lines().find_map(|l| l.strip_prefix("timing spec:"))?;
    let (_, name) = line.split_once('(')?;
    let name = name.strip_suffix(')')?.trim();
    (!name.is_empty()).then(|| name.to_string())
}

fn read_disk(root: &SysRoot, view: &SystemView, name: &str) -> Disk {
    let sys = format!("/sys/block/{name}");
    let mut d = Disk {
        name: name.to_string(),
        path: PathBuf::from(format!("/dev/{name}")),
        ..Disk::default()
    };
    d.sysfs_path = root.canonical(&sys);
    if d.sysfs_path.is_none() {
        d.notes.push(format!("{sys} could not be resolved"));
    }
    let attr = |a: &str| root.read_attr(format!("{sys}/{a}"));
    d.dev = attr("dev");
    d.size_bytes = attr("size")
        .and_then(|s| s.parse::<u64>().ok())
        .map(|s| s.saturating_mul(512));
    if d.size_bytes.is_none() {
        d.notes
            .push(format!("{sys}/size is missing or not a number"));
    }
    d.read_only = attr("ro").as_deref() == Some("1");
    d.removable = attr("removable").as_deref() == Some("1");
    d.rotational = attr("queue/rotational").map(|v| v == "1");
    d.logical_block_size = attr("queue/logical_block_size").and_then(|v| v.parse().ok());
    d.physical_block_size = attr("queue/physical_block_size").and_then(|v| v.parse().ok());
    // virtio's device/vendor is a PCI id ("0x1af4"), not a name.
    d.vendor = clean(attr("device/vendor")).filter(|v| !v.starts_with("0x"));
    d.model = clean(attr("device/model").or_else(|| attr("device/name")));
    d.backing_file = attr("loop/backing_file").map(PathBuf::from);

    let sys_path = d
        .sysfs_path
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    d.usb = d.sysfs_path.as_ref().and_then(|p| usb_info(root, p));
    d.transport = Some(transport_of(name, &sys_path, d.usb.is_some()));
    if d.transport == Some(Transport::Mmc) {
        d.sd_timing = sd_timing(root, &sys_path);
    }

    let udev = udev_data(root, d.dev.as_deref());
    identify(root, &mut d, &udev, &attr);
    d.partition_table = udev.get("ID_PART_TABLE_TYPE");
    if let Some(t) = udev.get("ID_FS_TYPE") {
        if let Some(kind) = SignatureKind::from_blkid_name(&t) {
            d.signatures.push(signature::Signature {
                kind,
                label: udev.get("ID_FS_LABEL"),
                uuid: udev.get("ID_FS_UUID"),
            });
        } else {
            d.notes
                .push(format!("udev reports an unknown signature '{t}'"));
        }
    }

    d.partitions = kernel_partitions(root, view, &sys);
    d.mounts = view.mounts_of(root, name);
    d.holders = root.list_dir(format!("{sys}/holders"));
    d.swap = view.is_swap(root, name);

    probe_content(root, &mut d);

    if let Some(mp) = d
        .mounts
        .iter()
        .chain(d.partitions.iter().flat_map(|p| p.mounts.iter()))
        .map(|m| m.mount_point.clone())
        .find(|mp| root.is_dir(mp.join("spindle")))
    {
        d.stick_marker = true;
        d.notes.push(format!(
            "{}/spindle exists (results stick marker)",
            mp.display()
        ));
    }
    d
}

/// Reads the disk's first and last MiB (and each partition's) to find signatures.
fn probe_content(root: &SysRoot, d: &mut Disk) {
    if matches!(d.transport, Some(Transport::Optical)) || d.size_bytes == Some(0) {
        return;
    }
    let Some(node) = dev_node_readable(root, &d.path) else {
        if root.is_host() {
            d.notes.push(format!(
                "{} does not exist; content not read",
                d.path.display()
            ));
        }
        return;
    };
    let ht = match signature::read_head_tail(&node, 0, None) {
        Ok(ht) => ht,
        Err(e) => {
            d.notes
                .push(format!("could not read {}: {e}", d.path.display()));
            return;
        }
    };
    d.content_read = true;
    for s in ht.signatures() {
        if !d.signatures.iter().any(|o| o.kind == s.kind) {
            d.signatures.push(s);
        }
    }
    let table_sig = d.signatures.iter().find(|s| s.kind.is_partition_table());
    if d.partition_table.is_none() {
        d.partition_table = table_sig.map(|s| s.kind.blkid_name().to_string());
    }
    let ss = d.logical_block_size.unwrap_or(512) as u64;
    let table = parse_partition_table(&ht.head, ss);
    if let Some(t) = &table {
        // Partitions the kernel does not show (loop devices without partition scanning).
        for e in &t.entries {
            let known = d
                .partitions
                .iter_mut()
                .find(|p| p.number == Some(e.number) || p.start_bytes == Some(e.start_bytes));
            match known {
                Some(p) => {
                    if p.partuuid.is_none() {
                        p.partuuid = e.partuuid.clone();
                    }
                }
                None => {
                    let sep = if d.name.ends_with(|c: char| c.is_ascii_digit()) {
                        "p"
                    } else {
                        ""
                    };
                    let name = format!("{}{sep}{}", d.name, e.number);
                    d.partitions.push(Partition {
                        path: PathBuf::from(format!("/dev/{name}")),
                        name,
                        number: Some(e.number),
                        in_kernel: false,
                        start_bytes: Some(e.start_bytes),
                        size_bytes: Some(e.size_bytes),
                        partuuid: e.partuuid.clone(),
                        ..Partition::default()
                    });
                }
            }
        }
    }
    for p in d.partitions.iter_mut() {
        if p.fs_type.is_some() {
            continue;
        }
        let (Some(start), Some(size)) = (p.start_bytes, p.size_bytes) else {
            continue;
        };
        match signature::read_head_tail(&node, start, Some(size)) {
            Ok(pht) => {
                if let Some(s) = pht.signatures().into_iter().next() {
                    p.fs_type = Some(s.kind.blkid_name().to_string());
                    p.label = p.label.take().or(s.label);
                    p.uuid = p.uuid.take().or(s.uuid);
                }
            }
            Err(e) => d
                .notes
                .push(format!("could not read partition {}: {e}", p.name)),
        }
    }
}

/// Kernel names of the disks (not partitions) underneath a device: itself if it is a disk, its
/// parent if a partition, the disks under a dm/md device's slaves otherwise.
fn disks_under(root: &SysRoot, name: &str, depth: u32) -> Vec<String> {
    if depth > 8 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let is_disk = root.exists(format!("/sys/block/{name}"));
    if !is_disk {
        for d in root.list_dir("/sys/block") {
            if root.exists(format!("/sys/block/{d}/{name}/partition")) {
                out.push(d);
            }
        }
        return out;
    }
    let slaves = root.list_dir(format!("/sys/block/{name}/slaves"));
    if slaves.is_empty() {
        out.push(name.to_string());
    }
    for s in slaves {
        out.extend(disks_under(root, &s, depth + 1));
    }
    out
}

/// Marks the disks that hold `/`, `/boot`, `/boot/firmware` or the kernel's `root=` device.
fn mark_boot(root: &SysRoot, view: &SystemView, disks: &mut [Disk]) {
    let mut reasons: BTreeMap<String, String> = BTreeMap::new();
    for m in &view.mounts {
        let mp = m.mount_point.to_string_lossy();
        if !BOOT_MOUNTS.contains(&mp.as_ref()) {
            continue;
        }
        if let Some(dev) = view.mount_device(root, m) {
            let mut under = disks_under(root, &dev, 0);
            if root.exists(format!("/sys/block/{dev}")) && !under.contains(&dev) {
                under.push(dev.clone());
            }
            for disk in under {
                reasons
                    .entry(disk)
                    .or_insert_with(|| format!("{dev} is mounted at {mp}"));
            }
        }
    }
    if let Some(r) = &view.cmdline_root {
        let target = resolve_root_spec(root, r, disks);
        for dev in target {
            for disk in disks_under(root, &dev, 0) {
                reasons
                    .entry(disk)
                    .or_insert_with(|| format!("{dev} is the kernel's root={r}"));
            }
        }
    }
    for d in disks.iter_mut() {
        if let Some(r) = reasons.get(&d.name) {
            d.boot = Some(r.clone());
        }
    }
}

/// Resolves a `root=` value (`/dev/sda2`, `PARTUUID=…`, `UUID=…`, `LABEL=…`) to device names.
fn resolve_root_spec(root: &SysRoot, spec: &str, disks: &[Disk]) -> Vec<String> {
    let by = |dir: &str, val: &str| -> Option<String> {
        root.read_link(format!("/dev/disk/{dir}/{val}"))
            .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()))
    };
    let matching = |f: &dyn Fn(&Partition) -> Option<String>,
                    w: &dyn Fn(&super::Signature) -> Option<String>,
                    val: &str| {
        let mut out = Vec::new();
        for d in disks {
            if d.signatures
                .iter()
                .any(|s| w(s).is_some_and(|x| x.eq_ignore_ascii_case(val)))
            {
                out.push(d.name.clone());
            }
            for p in &d.partitions {
                if f(p).is_some_and(|x| x.eq_ignore_ascii_case(val)) {
                    out.push(p.name.clone());
                }
            }
        }
        out
    };
    if let Some(v) = spec.strip_prefix("PARTUUID=") {
        if let Some(n) = by("by-partuuid", v) {
            return vec![n];
        }
        return matching(&|p| p.partuuid.clone(), &|_| None, v);
    }
    if let Some(v) = spec.strip_prefix("UUID=") {
        if let Some(n) = by("by-uuid", v) {
            return vec![n];
        }
        return matching(&|p| p.uuid.clone(), &|s| s.uuid.clone(), v);
    }
    if let Some(v) = spec.strip_prefix("LABEL=") {
        if let Some(n) = by("by-label", v) {
            return vec![n];
        }
        return matching(&|p| p.label.clone(), &|s| s.label.clone(), v);
    }
    dev_path_to_name(root, spec).into_iter().collect()
}

/// A loop device whose backing file is a disk or partition (`/dev/sdb1`) uses that device:
/// record it as a holder so the disk counts as busy.
fn mark_loop_backed(disks: &mut [Disk]) {
    let users: Vec<(String, String)> = disks
        .iter()
        .filter_map(|d| {
            let target = d.backing_file.as_ref()?.to_str()?.strip_prefix("/dev/")?;
            Some((target.to_string(), d.name.clone()))
        })
        .collect();
    for (target, user) in users {
        for d in disks.iter_mut() {
            if d.name == target {
                d.holders.push(user.clone());
            }
            for p in d.partitions.iter_mut().filter(|p| p.name == target) {
                p.holders.push(user.clone());
            }
        }
    }
}

/// Every block device of the root, with the boot device marked (nothing filtered out).
pub fn scan_all(root: &SysRoot) -> anyhow::Result<Vec<Disk>> {
    if !root.is_dir("/sys/block") {
        bail!(
            "{} has no sys/block directory: not a Linux sysfs tree (pass the directory that holds sys/, proc/ and dev/ with --sysroot)",
            root.root().display()
        );
    }
    let view = SystemView::read(root);
    let mut disks: Vec<Disk> = root
        .list_dir("/sys/block")
        .iter()
        .map(|n| read_disk(root, &view, n))
        .collect();
    mark_boot(root, &view, &mut disks);
    mark_loop_backed(&mut disks);
    Ok(disks)
}

/// The block devices `spindle disks` shows: real disks, or with `all` also attached loop
/// devices, RAM disks, dm/md devices and optical drives. Hidden: detached loop devices, and
/// eMMC boot/RPMB areas.
pub fn scan(root: &SysRoot, all: bool) -> anyhow::Result<Vec<Disk>> {
    Ok(scan_all(root)?
        .into_iter()
        .filter(|d| is_listed(d, all))
        .collect())
}

/// True if [`scan`] lists `d`: real disks always; with `all`, also loop devices attached to a
/// file, RAM disks and the like. eMMC boot and RPMB areas never.
pub fn is_listed(d: &Disk, all: bool) -> bool {
    let t = d.transport.unwrap_or(Transport::Other);
    if d.name.contains("boot") && t == Transport::Mmc || d.name.contains("rpmb") {
        return false;
    }
    // Network/flash block devices that are listed by the hundred when unused.
    let pseudo = ["nbd", "mtdblock", "ubiblock"]
        .iter()
        .any(|p| d.name.starts_with(p));
    if t.is_disk() && !pseudo {
        return true;
    }
    let unused = (t == Transport::Loop && d.backing_file.is_none())
        || (pseudo && d.size_bytes.unwrap_or(0) == 0);
    all && !unused
}

/// How a person may name a disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// Only names that survive a reboot: serial, /dev/disk/by-id name, stable id, a loop
    /// device's backing file ([`Disk::is_named_by`]). The appliance's configuration uses this.
    Stable,
    /// Also the kernel name (`sda`, `/dev/sda`) and any /dev symlink to it: for a person at a
    /// terminal who just ran `spindle disks` (the interactive CLI's explicit choice).
    AlsoKernelNames,
}

/// The disk among `disks` that `name` names under `naming`.
pub fn find_named<'a>(
    disks: &'a [Disk],
    root: &SysRoot,
    name: &str,
    naming: Naming,
) -> Option<&'a Disk> {
    if let Some(d) = disks.iter().find(|d| d.is_named_by(name)) {
        return Some(d);
    }
    if naming == Naming::Stable {
        return None;
    }
    let want = name.trim();
    let link_target = root
        .read_link(want)
        .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()));
    let bare = want.strip_prefix("/dev/").unwrap_or(want);
    disks
        .iter()
        .find(|d| d.name == bare || link_target.as_deref() == Some(d.name.as_str()))
}

/// Finds one block device by any name a person may type ([`Naming::AlsoKernelNames`]).
pub fn find_disk(root: &SysRoot, arg: &str) -> anyhow::Result<Disk> {
    let disks = scan_all(root)?;
    find_named(&disks, root, arg, Naming::AlsoKernelNames)
        .cloned()
        .with_context(|| {
            format!("no block device matches '{arg}' (use /dev/NAME, a /dev/disk/by-id name, or a serial; `spindle disks --all` lists them)")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_from_names_and_paths() {
        assert_eq!(
            transport_of("sda", "/sys/devices/x/ata1/host0", false),
            Transport::Sata
        );
        assert_eq!(
            transport_of("sda", "/sys/devices/x/usb2", true),
            Transport::Usb
        );
        assert_eq!(transport_of("mmcblk0", "", false), Transport::Mmc);
        let ios = "clock:\t\t50000000 Hz\nbus width:\t2 (4 bits)\ntiming spec:\t6 (sd uhs SDR104)\nsignal voltage:\t1 (1.80 V)\n";
        assert_eq!(parse_ios_timing(ios).as_deref(), Some("sd uhs SDR104"));
        assert_eq!(parse_ios_timing("timing spec:\t2\n"), None);
        assert_eq!(transport_of("loop0", "", false), Transport::Loop);
        assert_eq!(transport_of("vda", "", false), Transport::Virtio);
        assert_eq!(transport_of("weird", "", false), Transport::Other);
    }

    #[test]
    fn root_spec_resolves_without_by_links_from_udev_or_probed_facts() {
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::new(dir.path());
        let disks = vec![Disk {
            name: "sda".into(),
            partitions: vec![Partition {
                name: "sda2".into(),
                partuuid: Some("e8af6eb2-02".into()),
                label: Some("rootfs".into()),
                uuid: Some("0d1b2c3a-1111".into()),
                ..Partition::default()
            }],
            ..Disk::default()
        }];
        for spec in [
            "PARTUUID=E8AF6EB2-02",
            "LABEL=rootfs",
            "UUID=0d1b2c3a-1111",
            "/dev/sda2",
        ] {
            assert_eq!(
                resolve_root_spec(&root, spec, &disks),
                vec!["sda2"],
                "{spec}"
            );
        }
        assert!(resolve_root_spec(&root, "LABEL=other", &disks).is_empty());
    }

    #[test]
    fn missing_sys_block_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = scan(&SysRoot::new(dir.path()), false).unwrap_err();
        assert!(format!("{err:#}").contains("--sysroot"));
    }
}
