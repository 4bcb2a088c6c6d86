//! spindle's own scratch disks: the marker written at the root of every filesystem spindle
//! makes, and the read-only check that lets the next run prepare such a disk again without
//! anyone naming it — only when its filesystem holds nothing but spindle's own files and its
//! marker names this very disk. A single foreign file and the disk is a data disk.

use super::steps::{mount_dir, partition_device, Recorder, Undo};
use crate::disk::Disk;
use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The marker file at the root of a filesystem spindle made.
pub const DISK_MARKER: &str = ".spindle-disk.json";
/// The marker file inside a work directory spindle made (it only ever removes its own).
pub const WORK_MARKER: &str = ".spindle-work";
/// The work directory of a run on a target.
pub const WORK_DIR: &str = "spindle-work";

/// What the marker says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskMarker {
    /// The disk's stable id (`spindle disks` shows it).
    pub disk: Option<String>,
    pub serial: Option<String>,
    /// The filesystem label spindle gave it.
    pub label: String,
    /// The run the disk was prepared for.
    pub run_id: Option<String>,
    /// RFC 3339 UTC.
    pub prepared_at: String,
    pub spindle_version: String,
}

impl DiskMarker {
    /// Whether the marker was written for `disk`.
    pub fn names(&self, disk: &Disk) -> bool {
        let same = |a: &Option<String>, b: &Option<String>| a.is_some() && a == b;
        same(&self.disk, &disk.stable_id) || same(&self.serial, &disk.serial)
    }
}

/// Writes the marker at the root of the filesystem mounted at `mount_point`.
pub fn write_marker(
    mount_point: &Path,
    disk: &Disk,
    label: &str,
    run_id: Option<&str>,
) -> anyhow::Result<()> {
    let m = DiskMarker {
        disk: disk.stable_id.clone(),
        serial: disk.serial.clone(),
        label: label.to_string(),
        run_id: run_id.map(str::to_string),
        prepared_at: crate::sys::clock::now_rfc3339(),
        spindle_version: crate::version::VERSION.to_string(),
    };
    let mut text = serde_json::to_string_pretty(&m)?;
    text.push('\n');
    crate::sys::fs::write_atomic_mode(&mount_point.join(DISK_MARKER), text.as_bytes(), 0o644)
}

/// The marker at the root of a filesystem that holds only spindle's files for `disk`, or why
/// the entries there show it is not (only) spindle's: allowed are `lost+found`, the marker (it
/// must name `disk`) and spindle's work directory (with its own marker, left by a run that
/// was cut short).
pub fn own_marker(root: &Path, disk: &Disk) -> anyhow::Result<Result<DiskMarker, String>> {
    let mut marker_ok = None;
    let rd =
        std::fs::read_dir(root).with_context(|| format!("could not list '{}'", root.display()))?;
    for e in rd {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        match name.as_str() {
            "lost+found" => {}
            DISK_MARKER => {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                match serde_json::from_str::<DiskMarker>(&text) {
                    Ok(m) if m.names(disk) => marker_ok = Some(m),
                    Ok(m) => {
                        return Ok(Err(format!(
                            "its spindle marker names another disk ({})",
                            m.disk.or(m.serial).unwrap_or_else(|| "?".into())
                        )))
                    }
                    Err(_) => return Ok(Err(format!("'{DISK_MARKER}' is not spindle's marker"))),
                }
            }
            WORK_DIR if e.path().join(WORK_MARKER).is_file() => {}
            other => {
                return Ok(Err(format!(
                    "'{}' on it was not made by spindle",
                    crate::units::shorten(other, 60)
                )))
            }
        }
    }
    Ok(marker_ok.ok_or_else(|| format!("it has no spindle marker ({DISK_MARKER})")))
}

impl DiskMarker {
    /// How a disk with this marker on `partition` was recognised as spindle's scratch disk.
    pub fn recognised(&self, partition: &str, fs_type: &str) -> String {
        let run = self
            .run_id
            .as_deref()
            .map_or(String::new(), |r| format!("run {r}, "));
        format!(
            "reused as spindle's scratch disk: {partition} ({fs_type}, label {}) holds only spindle's files and its marker {DISK_MARKER} names this disk ({}; {run}prepared {} by spindle {}); erased and prepared again",
            self.label,
            self.disk.as_deref().or(self.serial.as_deref()).unwrap_or("?"),
            self.prepared_at,
            self.spindle_version
        )
    }
}

/// The mount options that read a filesystem without writing a byte (no journal replay).
fn read_only_options(fs_type: &str) -> &'static str {
    match fs_type {
        "ext2" | "ext3" | "ext4" => "ro,noload",
        "xfs" | "f2fs" => "ro,norecovery",
        "btrfs" => "ro,rescue=nologreplay",
        _ => "ro",
    }
}

/// Mounts `partition` of `fresh` read-only, checks it holds only spindle's files for this disk
/// ([`own_marker`]), unmounts. Says how the disk was recognised; an error says why the disk is
/// treated as holding data.
pub(super) fn check_own(
    fresh: &Disk,
    partition: &str,
    fs_type: &str,
    run_dir: &Path,
    rec: &mut Recorder<'_>,
    undo: &mut Undo,
) -> anyhow::Result<String> {
    let node = partition_device(fresh, partition, rec, undo)?;
    let mp = {
        let mut p = mount_dir(run_dir, fresh).into_os_string();
        p.push("-check");
        std::path::PathBuf::from(p)
    };
    std::fs::create_dir_all(&mp)
        .with_context(|| format!("could not create mount point {}", mp.display()))?;
    undo.created_mount_dir = Some(mp.clone());
    let d = node.to_string_lossy().into_owned();
    let mps = mp.to_string_lossy().into_owned();
    rec.run(
        "mount",
        &["-t", fs_type, "-o", read_only_options(fs_type), &d, &mps],
    )?;
    undo.mounted = Some(mp.clone());
    let verdict = own_marker(&mp, fresh);
    undo.run(rec);
    match verdict? {
        Ok(marker) => Ok(marker.recognised(partition, fs_type)),
        Err(why) => bail!(
            "{} holds data: {why}; not erasing it (name it in erase = [...] to allow erasing)",
            fresh.path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk() -> Disk {
        Disk {
            name: "sda".into(),
            stable_id: Some("usb-X_Y-0:0".into()),
            serial: Some("WX1".into()),
            ..Disk::default()
        }
    }

    #[test]
    fn only_spindles_own_files_for_this_disk_pass() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        assert!(own_marker(r, &disk())
            .unwrap()
            .unwrap_err()
            .contains("no spindle marker"));
        write_marker(r, &disk(), "spindle-wx1", Some("run")).unwrap();
        std::fs::create_dir(r.join("lost+found")).unwrap();
        std::fs::create_dir(r.join(WORK_DIR)).unwrap();
        std::fs::write(r.join(WORK_DIR).join(WORK_MARKER), "").unwrap();
        let m = own_marker(r, &disk()).unwrap().unwrap();
        assert_eq!(
            m.recognised("sda1", "ext4"),
            format!(
                "reused as spindle's scratch disk: sda1 (ext4, label spindle-wx1) holds only spindle's files and its marker .spindle-disk.json names this disk (usb-X_Y-0:0; run run, prepared {} by spindle {}); erased and prepared again",
                m.prepared_at,
                crate::version::VERSION
            )
        );
        // another disk's marker
        let other = Disk {
            stable_id: Some("usb-Other-0:0".into()),
            serial: Some("OTHER".into()),
            ..disk()
        };
        assert!(own_marker(r, &other)
            .unwrap()
            .unwrap_err()
            .contains("names another disk"));
        // a single foreign file
        std::fs::write(r.join("holiday.jpg"), "x").unwrap();
        assert!(own_marker(r, &disk())
            .unwrap()
            .unwrap_err()
            .contains("'holiday.jpg' on it was not made by spindle"));
        // a work directory without spindle's marker is someone else's
        std::fs::remove_file(r.join("holiday.jpg")).unwrap();
        std::fs::remove_file(r.join(WORK_DIR).join(WORK_MARKER)).unwrap();
        assert!(own_marker(r, &disk()).unwrap().is_err());
    }
}
