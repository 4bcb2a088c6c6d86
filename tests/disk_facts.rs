//! The facts that make a result trustworthy, on fixtures: SMART from smartctl outputs
//! (tests/fixtures/smart), the USB bridge table against fixture trees, the kernel-log USB
//! trouble counter, the environment block. One test runs the real smartctl on a loop device
//! (needs root and smartmontools; without them it fails saying so).

use spindle::disk::bridges::{parse_quirks, BridgeTable, SmartType};
use spindle::disk::smart::{self, SmartChange, SmartReading, SmartStatus};
use spindle::disk::{scan, Disk};
use spindle::sys::runner::{CommandRunner, ScriptedExec};
use spindle::sys::SysRoot;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn smart_fixture(name: &str) -> String {
    let p = fixtures().join("smart").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn tree(name: &str) -> SysRoot {
    SysRoot::new(fixtures().join(name))
}

fn disk(tree_name: &str, name: &str) -> Disk {
    scan(&tree(tree_name), true)
        .unwrap()
        .into_iter()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("{name} not in fixture {tree_name}"))
}

fn available(r: &SmartReading) -> &smart::SmartData {
    match &r.smart {
        SmartStatus::Available(d) => d,
        SmartStatus::Unavailable { reason } => panic!("SMART unavailable: {reason}"),
    }
}

#[test]
fn sata_ssd_behind_a_jms578_is_read_with_sat_and_parses() {
    let d = disk("pi4-hub", "sda"); // 152d:0578 JMicron JMS578, uas
    let x = ScriptedExec::new().answer(
        "smartctl --json=o -a -d sat /dev/sda",
        0,
        &smart_fixture("sata-ssd-jms578-sat.json"),
    );
    let r = smart::read(&d, &x, BridgeTable::builtin());
    assert_eq!(x.calls(), vec!["smartctl --json=o -a -d sat /dev/sda"]);
    let s = available(&r);
    assert_eq!(s.protocol.as_deref(), Some("ATA"));
    assert_eq!(s.model.as_deref(), Some("Samsung SSD 870 EVO 500GB"));
    assert_eq!(s.serial.as_deref(), Some("S62ANJ0R512345X"));
    assert_eq!(s.firmware.as_deref(), Some("SVT02B6Q"));
    assert_eq!(s.power_on_hours, Some(8760));
    assert_eq!(s.temperature_c, Some(32));
    assert_eq!(
        s.percentage_used,
        Some(3),
        "Wear_Leveling_Count normalized 97"
    );
    assert!(s
        .wear_source
        .as_deref()
        .unwrap()
        .contains("177 Wear_Leveling_Count"));
    assert_eq!(s.data_written_bytes, Some(23_456_789_012 * 512));
    assert!(s
        .written_source
        .as_deref()
        .unwrap()
        .contains("Total_LBAs_Written"));
    assert_eq!(s.rotation_rpm, Some(0));
    assert_eq!(s.health_passed, Some(true));
    assert_eq!(s.reallocated_sectors, Some(0));
    assert_eq!(r.attempts.len(), 1);
    assert_eq!(r.attempts[0].exit_status, Some(0));
    assert_eq!(r.attempts[0].device_type.as_deref(), Some("sat"));
}

#[test]
fn nvme_behind_a_jms583_is_read_with_sntjmicron_and_parses() {
    let d = disk("pi4-usb-boot", "sda"); // 152d:0583 JMicron JMS583
    let x = ScriptedExec::new().answer(
        "smartctl --json=o -a -d sntjmicron /dev/sda",
        0,
        &smart_fixture("nvme-jms583-sntjmicron.json"),
    );
    let r = smart::read(&d, &x, BridgeTable::builtin());
    let s = available(&r);
    assert_eq!(s.protocol.as_deref(), Some("NVMe"));
    assert_eq!(s.device_type.as_deref(), Some("sntjmicron"));
    assert_eq!(s.model.as_deref(), Some("Samsung SSD 970 EVO Plus 1TB"));
    assert_eq!(s.serial.as_deref(), Some("S4EWNX0R123456A"));
    assert_eq!(s.firmware.as_deref(), Some("2B2QEXM7"));
    assert_eq!(s.power_on_hours, Some(4321));
    assert_eq!(s.temperature_c, Some(41));
    assert_eq!(s.percentage_used, Some(3));
    assert_eq!(s.data_written_bytes, Some(34_567_890 * 512_000));
    assert_eq!(s.data_read_bytes, Some(23_456_789 * 512_000));
    assert_eq!((s.media_errors, s.unsafe_shutdowns), (Some(0), Some(45)));
}

#[test]
fn hdd_behind_an_asmedia_bridge_parses_and_says_what_it_lacks() {
    let d = disk("pi4-usb3", "sda"); // 174c:55aa ASMedia ASM1153E
    let x = ScriptedExec::new().answer(
        "smartctl --json=o -a -d sat /dev/sda",
        0,
        &smart_fixture("hdd-asm1153e-sat.json"),
    );
    let r = smart::read(&d, &x, BridgeTable::builtin());
    let s = available(&r);
    assert_eq!(s.model.as_deref(), Some("WDC WD40EFRX-68N32N0"));
    assert_eq!(s.model_family.as_deref(), Some("Western Digital Red"));
    assert_eq!(s.firmware.as_deref(), Some("82.00A82"));
    assert_eq!(s.rotation_rpm, Some(5400));
    assert_eq!(s.power_on_hours, Some(31234));
    assert_eq!(s.temperature_c, Some(34));
    assert_eq!(s.percentage_used, None, "an HDD has no wear attribute");
    assert_eq!(
        s.data_written_bytes, None,
        "WD drives count no data written"
    );
    assert_eq!(s.pending_sectors, Some(0));
    // Before/after of a drive without a written counter: the change says so.
    let c = SmartChange::between(&r, &r);
    let SmartChange::Known(delta) = c else {
        panic!("expected a known change")
    };
    assert_eq!(delta.written_bytes, None);
    assert!(delta
        .notes
        .iter()
        .any(|n| n.contains("no data-written counter")));
}

/// The NVMe fixture with the counters a run of `written` data units and one hour later shows.
fn nvme_after(written_units: u64) -> String {
    let mut v: serde_json::Value =
        serde_json::from_str(&smart_fixture("nvme-jms583-sntjmicron.json")).unwrap();
    let log = &mut v["nvme_smart_health_information_log"];
    log["data_units_written"] = (34_567_890 + written_units).into();
    log["power_on_hours"] = 4322.into();
    log["temperature"] = 55.into();
    v["power_on_time"]["hours"] = 4322.into();
    v["temperature"]["current"] = 55.into();
    v.to_string()
}

#[test]
fn before_and_after_give_what_the_run_wrote() {
    let d = disk("pi4-usb-boot", "sda");
    let line = "smartctl --json=o -a -d sntjmicron /dev/sda";
    let before_x =
        ScriptedExec::new().answer(line, 0, &smart_fixture("nvme-jms583-sntjmicron.json"));
    let after_x = ScriptedExec::new().answer(line, 0, &nvme_after(8192));
    let t = BridgeTable::builtin();
    let before = smart::read(&d, &before_x, t);
    let after = smart::read(&d, &after_x, t);
    let SmartChange::Known(delta) = SmartChange::between(&before, &after) else {
        panic!("expected a known change")
    };
    assert_eq!(delta.written_bytes, Some(8192 * 512_000));
    assert_eq!(delta.power_on_hours, Some(1));
    assert_eq!(
        (delta.temperature_before_c, delta.temperature_after_c),
        (Some(41), Some(55))
    );
    assert_eq!(delta.percentage_used_points, Some(0));
    // The record round-trips through JSON (the results document stores it).
    let json = serde_json::to_string(&(&before, &delta)).unwrap();
    assert!(json.contains("\"status\":\"available\""), "{json}");
    let back: SmartReading =
        serde_json::from_value(serde_json::to_value(&before).unwrap()).unwrap();
    assert_eq!(back, before);
}

#[test]
fn unknown_usb_bridges_try_smartctls_choice_then_sat_and_keep_both_reasons() {
    let d = disk("qemu-virt", "sdb"); // QEMU USB storage, 46f4:0001
                                      // QEMU's own smartctl output is not at hand here: the VM's real loop-device captures stand
                                      // in for the failure shapes of the two attempts.
    let x = ScriptedExec::new()
        .answer(
            "smartctl --json=o -a /dev/sdb",
            1,
            &smart_fixture("vm-loop-auto.json"),
        )
        .answer(
            "smartctl --json=o -a -d sat /dev/sdb",
            2,
            &smart_fixture("vm-loop-sat.json"),
        );
    let r = smart::read(&d, &x, BridgeTable::builtin());
    assert_eq!(
        x.calls(),
        vec![
            "smartctl --json=o -a /dev/sdb",
            "smartctl --json=o -a -d sat /dev/sdb"
        ]
    );
    let reason = r.unavailable_reason().expect("QEMU's disk has no SMART");
    assert!(
        reason.starts_with("QEMU's emulated disk has no SMART"),
        "{reason}"
    );
    assert!(reason.contains("Unable to detect device type"), "{reason}");
    assert!(
        reason.ends_with("-d sat: Read Device Identity failed: Invalid argument)"),
        "{reason}"
    );
    assert_eq!(r.attempts.len(), 2);
    assert_eq!(r.attempts[1].exit_status, Some(2));
    assert!(r.attempts[1].exit_flags[0].starts_with("bit 1:"));
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains("\"status\":\"unavailable\""), "{json}");
    // And a change involving it says why it is unknown.
    match SmartChange::between(&r, &r) {
        SmartChange::Unknown { reason } => assert!(reason.contains("before the run")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn virtio_disk_and_permission_problems_give_smartctls_words() {
    let d = disk("qemu-virt", "vda");
    let x = ScriptedExec::new().answer(
        "smartctl --json=o -a /dev/vda",
        1,
        &smart_fixture("vm-virtio-auto.json"),
    );
    let r = smart::read(&d, &x, BridgeTable::builtin());
    let reason = r.unavailable_reason().unwrap();
    assert!(
        reason.contains("virtio disk of a virtual machine"),
        "{reason}"
    );
    assert!(
        reason.contains("/dev/vda: Unable to detect device type"),
        "{reason}"
    );

    let x = ScriptedExec::new().answer(
        "smartctl --json=o -a -d sat /dev/sda",
        2,
        &smart_fixture("vm-not-root-sat.json"),
    );
    let r = smart::read(&disk("pi4-hub", "sda"), &x, BridgeTable::builtin());
    assert!(r
        .unavailable_reason()
        .unwrap()
        .contains("Permission denied"));
}

fn require_root_and_smartctl() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    assert_eq!(
        uid, 0,
        "this test attaches a loop device and runs smartctl on it: run it as root"
    );
    assert!(
        spindle::sys::runner::which("smartctl").is_some(),
        "this test runs the real smartctl: install smartmontools (bash scripts/deps.sh)"
    );
}

/// Detaches the loop device on drop (also after a failed assertion).
struct Loop(String);
impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.0])
            .status();
    }
}

#[test]
fn real_smartctl_on_a_loop_device_says_why_there_is_no_smart() {
    require_root_and_smartctl();
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("disk.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let out = std::process::Command::new("losetup")
        .args(["-f", "--show", img.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "losetup: {out:?}");
    let dev = Loop(String::from_utf8_lossy(&out.stdout).trim().to_string());
    let runner = CommandRunner { quiet: true };
    let r = smart::read_device(
        &runner,
        Path::new(&dev.0),
        &[SmartType::Auto, SmartType::Sat],
    );
    let reason = r.unavailable_reason().expect("a loop device has no SMART");
    assert!(reason.contains("Unable to detect device type"), "{reason}");
    assert!(reason.contains("-d sat: "), "{reason}");
    assert_eq!(r.attempts.len(), 2);
    assert!(r.attempts.iter().all(|a| a.exit_status.unwrap_or(0) != 0));
}

#[test]
fn quirk_param_in_a_tree_is_read_through_the_root() {
    let q = spindle::disk::bridges::read_quirks(&tree("pi4-usb3"));
    assert!(q.unreadable.as_deref().unwrap().contains("usb_storage"));
    assert_eq!(parse_quirks("").entries.len(), 0);
}
