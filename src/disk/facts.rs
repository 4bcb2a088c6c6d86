//! The environment block of a result: the machine (board model, kernel, active
//! `usb-storage.quirks`) and, per disk, what it is and how it is attached (model, serial, size,
//! USB bridge and link, driver, quirk, the bridge table's flag, filesystems). Built from
//! discovery's [`Disk`] and read through the same [`SysRoot`], so tests use fixture trees.

use super::bridges::{
    check_disk, read_quirks, uas_advice, BridgeCheck, BridgeTable, UsbStorageQuirks,
};
use super::kernel_log::UsbTrouble;
use super::{Disk, Transport, UsbInfo};
use crate::sys::SysRoot;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A filesystem on a disk (whole disk or partition).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FsFacts {
    /// Kernel name of the device holding it (`sda1`, or `sda` for a whole-disk filesystem).
    pub device: String,
    pub fs_type: String,
    pub label: Option<String>,
    pub mount_points: Vec<PathBuf>,
}

/// One disk as the environment block shows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskFacts {
    /// Kernel name at the time of the run (`sda`).
    pub name: String,
    pub path: PathBuf,
    /// The stable identifier results are matched by across runs.
    pub stable_id: Option<String>,
    pub vendor: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub size_bytes: Option<u64>,
    pub transport: Option<Transport>,
    pub rotational: Option<bool>,
    pub logical_block_size: Option<u32>,
    /// USB facts: bridge VID:PID and strings, driver (`uas`/`usb-storage`), link speed, hubs.
    pub usb: Option<UsbInfo>,
    /// `vvvv:pppp` of the USB device (the bridge), for tables.
    pub usb_id: Option<String>,
    /// The `usb-storage.quirks` flags active for this device (`u` = UAS off).
    pub usb_quirk: Option<String>,
    /// The bridge table's verdict, when the bridge has reported UAS trouble.
    pub bridge: Option<BridgeCheck>,
    pub filesystems: Vec<FsFacts>,
}

fn filesystems(d: &Disk) -> Vec<FsFacts> {
    let mut out = Vec::new();
    for s in d.signatures.iter().filter(|s| !s.kind.is_partition_table()) {
        out.push(FsFacts {
            device: d.name.clone(),
            fs_type: s.kind.blkid_name().to_string(),
            label: s.label.clone(),
            mount_points: d.mounts.iter().map(|m| m.mount_point.clone()).collect(),
        });
    }
    for p in &d.partitions {
        if let Some(t) = &p.fs_type {
            out.push(FsFacts {
                device: p.name.clone(),
                fs_type: t.clone(),
                label: p.label.clone(),
                mount_points: p.mounts.iter().map(|m| m.mount_point.clone()).collect(),
            });
        }
    }
    out
}

impl DiskFacts {
    /// The facts of a discovered disk, with its quirk and the bridge table's check.
    pub fn from_disk(d: &Disk, quirks: &UsbStorageQuirks, table: &BridgeTable) -> Self {
        let usb_id = d.usb.as_ref().and_then(|u| u.vid_pid());
        DiskFacts {
            name: d.name.clone(),
            path: d.path.clone(),
            stable_id: d.stable_id.clone(),
            vendor: d.vendor.clone(),
            model: d.model.clone(),
            serial: d.serial.clone(),
            size_bytes: d.size_bytes,
            transport: d.transport,
            rotational: d.rotational,
            logical_block_size: d.logical_block_size,
            usb: d.usb.clone(),
            usb_quirk: usb_id
                .as_deref()
                .and_then(|id| quirks.flags_for(id))
                .map(str::to_string),
            usb_id,
            bridge: check_disk(d, quirks, table),
            filesystems: filesystems(d),
        }
    }

    /// The storage driver (`uas`, `usb-storage`), when on USB.
    pub fn driver(&self) -> Option<&str> {
        self.usb.as_ref()?.driver.as_deref()
    }

    /// What to tell a person about this disk's USB health after a run (summary.txt, the
    /// report): the bridge table's flag, made stronger by the UAS errors and USB resets the
    /// kernel logged for it during the run, or raised by them for a bridge not in the table.
    pub fn uas_advice(&self, quirks: &UsbStorageQuirks, during_run: &UsbTrouble) -> Option<String> {
        uas_advice(
            self.usb.as_ref()?,
            self.bridge.as_ref(),
            quirks,
            during_run.uas_errors(),
            during_run.usb_resets,
        )
    }
}

/// The machine and the disks a result was measured on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    /// RFC 3339 UTC, when the facts were collected.
    pub at: String,
    /// Device-tree model ("Raspberry Pi 4 Model B Rev 1.4"); `None` off a Pi/ARM board.
    pub board_model: Option<String>,
    /// Kernel release.
    pub kernel: Option<String>,
    /// The running kernel's `usb-storage.quirks`.
    pub usb_storage_quirks: UsbStorageQuirks,
    pub disks: Vec<DiskFacts>,
}

impl Environment {
    /// Collects the machine's facts through `root` and the facts of `disks` (discovered through
    /// the same root, e.g. the run's targets).
    pub fn collect(root: &SysRoot, disks: &[Disk]) -> Self {
        let quirks = read_quirks(root);
        let table = BridgeTable::builtin();
        Environment {
            at: crate::sys::clock::now_rfc3339(),
            board_model: crate::sys::host::board_model(root.root()),
            kernel: crate::sys::state::kernel_release(root.root()),
            disks: disks
                .iter()
                .map(|d| DiskFacts::from_disk(d, &quirks, table))
                .collect(),
            usb_storage_quirks: quirks,
        }
    }

    /// Like [`collect`](Self::collect) for every disk `spindle disks` lists.
    pub fn collect_all(root: &SysRoot) -> anyhow::Result<Self> {
        Ok(Self::collect(root, &super::scan(root, false)?))
    }

    /// The facts of one disk by kernel name.
    pub fn disk(&self, name: &str) -> Option<&DiskFacts> {
        self.disks.iter().find(|d| d.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_root_gives_unknowns_and_says_why_quirks_are_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let e = Environment::collect(&SysRoot::new(dir.path()), &[]);
        assert_eq!((e.board_model, e.kernel), (None, None));
        assert!(e.usb_storage_quirks.unreadable.is_some());
        // Older documents without the block's newer fields still read.
        let old: Environment = serde_json::from_str(r#"{"kernel":"6.1"}"#).unwrap();
        assert_eq!(old.kernel.as_deref(), Some("6.1"));
        assert!(old.disks.is_empty());
    }
}
