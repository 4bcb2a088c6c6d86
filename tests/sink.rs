//! The results stick against the disk fixtures and a real (loop-device) filesystem: detection,
//! and a write-protected stick that must leave everything as it was. The loop-device test needs
//! root and fails saying so.

mod common;

use common::{fixture_root, sh, LoopDevice};
use spindle::config::appliance::StickConfig;
use spindle::sink::{copy_pending, find_sticks, RunStore};
use spindle::status::StickProblem;
use spindle::sys::{CommandRunner, SysRoot};
use std::path::PathBuf;

#[test]
fn the_labelled_usb_stick_is_found_and_nothing_else() {
    let sticks = find_sticks(&fixture_root("pi4-stick"), &StickConfig::default()).unwrap();
    assert_eq!(sticks.len(), 1, "{sticks:?}");
    assert_eq!(sticks[0].disk, "sdb");
    assert_eq!(sticks[0].device, PathBuf::from("/dev/sdb1"));
    assert_eq!(sticks[0].fs_type, "vfat");
    assert_eq!(sticks[0].label.as_deref(), Some("SPINDLE"));
    // the label is compared case-insensitively; another label finds nothing
    let lower = StickConfig {
        label: "spindle".into(),
        ..StickConfig::default()
    };
    assert_eq!(
        find_sticks(&fixture_root("pi4-stick"), &lower)
            .unwrap()
            .len(),
        1
    );
    let other = StickConfig {
        label: "RESULTS".into(),
        ..StickConfig::default()
    };
    assert!(find_sticks(&fixture_root("pi4-stick"), &other)
        .unwrap()
        .is_empty());
    // the SD card's vfat boot partition is never a stick, whatever its label
    let boot = StickConfig {
        label: "bootfs".into(),
        allow_non_usb: true,
        ..StickConfig::default()
    };
    assert!(find_sticks(&fixture_root("pi4-stick"), &boot)
        .unwrap()
        .is_empty());
    for f in ["pi4-usb3", "pi4-hub", "pi5-usb3"] {
        let s = find_sticks(&fixture_root(f), &StickConfig::default()).unwrap();
        assert!(s.is_empty(), "{f}: {s:?}");
    }
    // the emulated Pi's image test attaches a stick as the third USB disk
    let q = find_sticks(&fixture_root("qemu-virt"), &StickConfig::default()).unwrap();
    assert_eq!(q.len(), 1);
    assert_eq!(q[0].device, PathBuf::from("/dev/sdc1"));
}

#[test]
fn unlabelled_fat_filesystems_are_probed_for_a_spindle_folder() {
    let root = fixture_root("pi4-stick");
    let disks = spindle::disk::scan_all(&root).unwrap();
    let cfg = StickConfig {
        label: "RESULTS".into(),
        ..StickConfig::default()
    };
    let mut asked = Vec::new();
    let found = spindle::sink::stick::sticks_among(&disks, &root, &cfg, &mut |s| {
        asked.push(s.device.clone());
        true
    });
    // only the USB FAT filesystem is asked about: not the SD card's boot partition, not blank disks
    assert_eq!(asked, vec![PathBuf::from("/dev/sdb1")]);
    assert_eq!(found.len(), 1);
    let none = spindle::sink::stick::sticks_among(&disks, &root, &cfg, &mut |_| false);
    assert!(none.is_empty());
}

#[test]
fn write_protected_stick_is_read_only_and_the_run_stays_pending() {
    common::require_root(
        "write_protected_stick_is_read_only_and_the_run_stays_pending",
        &[("losetup", "mount"), ("mkfs.ext4", "e2fsprogs")],
    );
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("stick.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let label = format!("SPR{:05X}", std::process::id() & 0xfffff);
    sh(
        "mkfs.ext4",
        &["-q", "-F", "-L", &label, img.to_str().unwrap()],
    );
    // -r: a write-protected device, like a stick with its lock switch on
    let dev = LoopDevice::attach_read_only(&img);
    let cfg = StickConfig {
        label: label.clone(),
        allow_non_usb: true,
        mount_dir: d.path().join("mnt"),
        ..StickConfig::default()
    };
    let sticks = find_sticks(&SysRoot::host(), &cfg).unwrap();
    assert_eq!(sticks.len(), 1, "{sticks:?}");
    assert_eq!(sticks[0].device, PathBuf::from(dev.dev()));
    let store = RunStore::open(&d.path().join("runs")).unwrap();
    let r = store.create_run("pi").unwrap();
    std::fs::write(r.dir.join("summary.txt"), "ok").unwrap();
    let report = copy_pending(&sticks[0], &store, &cfg, &CommandRunner::new());
    assert_eq!(report.problem, Some(StickProblem::ReadOnly), "{report:?}");
    assert_eq!(report.remaining, 1);
    assert!(report.copied.is_empty());
    assert_eq!(store.pending().len(), 1);
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(!mounts.contains(dev.dev()), "the stick was left mounted");
}

#[test]
fn a_mount_left_by_a_killed_daemon_is_cleared() {
    common::require_root(
        "a_mount_left_by_a_killed_daemon_is_cleared",
        &[("mount", "mount")],
    );
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("stick dir");
    std::fs::create_dir(&dir).unwrap();
    sh(
        "mount",
        &[
            "-t",
            "tmpfs",
            "-o",
            "size=1m",
            "tmpfs",
            dir.to_str().unwrap(),
        ],
    );
    let mounted = || {
        std::fs::read_to_string("/proc/self/mounts")
            .unwrap()
            .contains(&d.path().display().to_string())
    };
    assert!(mounted());
    spindle::sink::stick::clear_stale_mount(&dir, &CommandRunner::new());
    assert!(!mounted(), "still mounted");
    // nothing mounted: nothing happens
    spindle::sink::stick::clear_stale_mount(&dir, &CommandRunner::new());
}
