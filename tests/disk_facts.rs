//! The facts that make a result trustworthy, on fixtures: SMART from smartctl outputs
//! (tests/fixtures/smart), the USB bridge table against fixture trees, the kernel-log USB
//! trouble counter, the environment block. One test runs the real smartctl on a loop device
//! (needs root and smartmontools; without them it fails saying so).

mod common;

use common::LoopDevice;
use spindle::disk::bridges::{parse_quirks, BridgeTable, SmartType, UasState};
use spindle::disk::facts::Environment;
use spindle::disk::kernel_log::{self, KernelLogMark, UsbTroubleCount};
use spindle::disk::smart::{self, SmartChange, SmartReading, SmartStatus};
use spindle::disk::{scan, Disk, Transport};
use spindle::sys::runner::{CommandRunner, Recording};
use spindle::sys::SysRoot;
use std::path::{Path, PathBuf};

fn smart_fixture(name: &str) -> String {
    let p = common::fixture("smart").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn tree(name: &str) -> SysRoot {
    common::fixture_root(name)
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
    let x = Recording::new().answer(
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
    let x = Recording::new().answer(
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
    let x = Recording::new().answer(
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
    let before_x = Recording::new().answer(line, 0, &smart_fixture("nvme-jms583-sntjmicron.json"));
    let after_x = Recording::new().answer(line, 0, &nvme_after(8192));
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
    assert_eq!(
        before.describe(),
        "Samsung SSD 970 EVO Plus 1TB (firmware 2B2QEXM7): health PASSED, 4321 h powered on, 41 °C, 3 % of rated endurance used, 16.1 TiB written in its life"
    );
    assert_eq!(
        SmartChange::between(&before, &after).describe(),
        "the drive counted 3.9 GiB written, 0 B read, 41 → 55 °C"
    );
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
    let x = Recording::new()
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
    let x = Recording::new().answer(
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

    let x = Recording::new().answer(
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

#[test]
fn real_smartctl_on_a_loop_device_says_why_there_is_no_smart() {
    common::require_root(
        "real_smartctl_on_a_loop_device_says_why_there_is_no_smart",
        &[("smartctl", "smartmontools"), ("losetup", "mount")],
    );
    let dir = tempfile::tempdir().unwrap();
    let dev = LoopDevice::new(dir.path(), "disk", 64);
    let runner = CommandRunner::quiet();
    let r = smart::read_device(
        &runner,
        Path::new(dev.dev()),
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

/// The USB disks of the environment fixture: sda (JMS583, uas, flagged), sdb (JMS578, quirk).
fn uas_trouble_targets() -> (SysRoot, Vec<Disk>) {
    let root = tree("pi4-uas-trouble");
    let disks = scan(&root, false)
        .unwrap()
        .into_iter()
        .filter(|d| d.transport == Some(Transport::Usb))
        .collect();
    (root, disks)
}

#[test]
fn environment_block_from_a_pi4_with_a_jmicron_on_uas_and_an_active_quirk() {
    let (root, targets) = uas_trouble_targets();
    let env = Environment::collect(&root, &targets);
    assert_eq!(
        env.board_model.as_deref(),
        Some("Raspberry Pi 4 Model B Rev 1.4")
    );
    assert_eq!(env.kernel.as_deref(), Some("6.6.51+rpt-rpi-v8"));
    assert_eq!(env.usb_storage_quirks.raw.as_deref(), Some("152d:0578:u"));
    assert_eq!(env.disks.len(), 2);

    let a = env.disk("sda").unwrap();
    assert_eq!(
        (a.vendor.as_deref(), a.model.as_deref()),
        (Some("Samsung"), Some("SSD 970 EVO Plus"))
    );
    assert_eq!(a.serial.as_deref(), Some("0123456789ABCDEF"));
    assert_eq!(a.size_bytes, Some(1000204886016));
    assert_eq!(a.usb_id.as_deref(), Some("152d:0583"));
    assert_eq!(a.driver(), Some("uas"));
    assert_eq!(a.usb.as_ref().unwrap().link_speed.unwrap().0, 5000.0);
    assert_eq!(a.usb_quirk, None);
    let fs = &a.filesystems[0];
    assert_eq!((fs.device.as_str(), fs.fs_type.as_str()), ("sda1", "ext4"));
    assert_eq!(fs.mount_points, vec![PathBuf::from("/mnt/spindle/sda1")]);
    let flag = a.bridge.as_ref().expect("JMS583 is in the table");
    assert_eq!(flag.state, UasState::Flagged);
    assert_eq!(flag.chip, "JMicron JMS583 (USB 3.1 Gen 2 to PCIe NVMe)");
    // The remedy keeps the quirk already active for the other bridge.
    assert_eq!(flag.remedy, "usb-storage.quirks=152d:0578:u,152d:0583:u");
    assert!(flag.summary().contains("remedy: add usb-storage.quirks="));

    let b = env.disk("sdb").unwrap();
    assert_eq!(b.usb_id.as_deref(), Some("152d:0578"));
    assert_eq!(b.driver(), Some("usb-storage"));
    assert_eq!(b.usb_quirk.as_deref(), Some("u"));
    let q = b.bridge.as_ref().unwrap();
    assert_eq!(q.state, UasState::QuirkActive);
    assert!(!q.is_flagged());

    // The block round-trips through JSON.
    let back: Environment = serde_json::from_str(&serde_json::to_string(&env).unwrap()).unwrap();
    assert_eq!(back, env);
}

#[test]
fn the_same_bridge_is_flagged_without_the_quirk_and_not_with_it() {
    let (_, targets) = uas_trouble_targets();
    let sdb = targets.iter().find(|d| d.name == "sdb").unwrap();
    let t = BridgeTable::builtin();
    let mut on_uas = sdb.clone();
    on_uas.usb.as_mut().unwrap().driver = Some("uas".into());
    let without = spindle::disk::bridges::check_disk(&on_uas, &parse_quirks(""), t).unwrap();
    assert_eq!(without.state, UasState::Flagged);
    assert_eq!(without.remedy, "usb-storage.quirks=152d:0578:u");
    let with = spindle::disk::bridges::check_disk(sdb, &parse_quirks("152d:0578:u"), t).unwrap();
    assert_eq!(with.state, UasState::QuirkActive);
}

#[test]
fn kernel_log_counts_two_uas_aborts_for_that_disk() {
    let (root, targets) = uas_trouble_targets();
    let start = KernelLogMark {
        seq: None,
        at: String::new(),
    };
    let UsbTroubleCount::Counted(c) = kernel_log::count_since(&root, &start, &targets) else {
        panic!("the fixture's /dev/kmsg is readable")
    };
    let sda = c.of("sda");
    assert_eq!(sda.uas_aborts, 2);
    assert_eq!(
        (sda.uas_resets, sda.usb_resets, sda.usb_disconnects),
        (1, 1, 0)
    );
    assert!(sda.examples[0].contains("uas_eh_abort_handler"));
    assert!(c.of("sdb").is_empty());
    assert!(c.other.is_empty());
    assert!(c.notes.is_empty());
    // The quirk-active disk had a quiet run: nothing to say beyond the table's line.
    let sdb_facts = Environment::collect(&root, &targets);
    let sdb_facts = sdb_facts.disk("sdb").unwrap();
    assert_eq!(
        sdb_facts.uas_advice(&parse_quirks("152d:0578:u"), &c.of("sdb")),
        None
    );
    // The report's sentence for sda: the table's flag, confirmed by the run.
    let env = Environment::collect(&root, &targets);
    let facts = env.disk("sda").unwrap();
    let advice = facts.uas_advice(&env.usb_storage_quirks, &sda).unwrap();
    assert!(
        advice.contains("3 UAS abort/reset(s) and 1 USB reset(s)"),
        "{advice}"
    );
    assert!(
        advice.contains("usb-storage.quirks=152d:0578:u,152d:0583:u"),
        "{advice}"
    );
}

#[test]
fn kernel_log_mark_counts_only_what_came_after_it() {
    let (root, targets) = uas_trouble_targets();
    let end = kernel_log::mark(&root).unwrap();
    assert_eq!(end.seq, Some(821), "the fixture's last record");
    let UsbTroubleCount::Counted(nothing) = kernel_log::count_since(&root, &end, &targets) else {
        panic!()
    };
    assert_eq!((nothing.records, nothing.of("sda").uas_aborts), (0, 0));
    // A mark between the two aborts (record 817 is the second one).
    let mid = KernelLogMark {
        seq: Some(816),
        at: String::new(),
    };
    let UsbTroubleCount::Counted(c) = kernel_log::count_since(&root, &mid, &targets) else {
        panic!()
    };
    assert_eq!(c.of("sda").uas_aborts, 1);
    // A root without /dev/kmsg: counted as unavailable, with the reason.
    let none = kernel_log::count_since(&tree("pi4-usb3"), &mid, &targets);
    let UsbTroubleCount::Unavailable { reason } = none else {
        panic!("{none:?}")
    };
    assert!(
        reason.contains("/dev/kmsg") && reason.contains("not counted"),
        "{reason}"
    );
}

#[test]
fn real_kmsg_is_read_record_by_record_after_a_mark() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    assert_eq!(
        uid, 0,
        "this test writes a line to /dev/kmsg: run it as root"
    );
    let host = SysRoot::host();
    let before = kernel_log::mark(&host).expect("/dev/kmsg is readable as root");
    let line = format!("spindle test {} {}", std::process::id(), before.at);
    std::fs::write("/dev/kmsg", format!("{line}\n")).expect("write /dev/kmsg");
    let (records, _) = kernel_log::records_since(&host, &before).unwrap();
    assert!(
        records.iter().any(|r| r.message.ends_with(&line)),
        "{records:?}"
    );
    assert!(records.iter().all(|r| r.seq > before.seq));
    let after = kernel_log::mark(&host).unwrap();
    let (none, _) = kernel_log::records_since(&host, &after).unwrap();
    assert!(!none.iter().any(|r| r.message.ends_with(&line)));
}

#[test]
fn spindle_disks_flags_the_bridge_and_shows_the_active_quirk() {
    let root = common::fixture("pi4-uas-trouble");
    let run = |json: bool| {
        let mut args = vec!["disks", "--sysroot", root.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_spindle"))
            .args(&args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let table = run(false);
    assert!(
        table.contains("warning: 152d:0583 JMicron JMS583"),
        "{table}"
    );
    assert!(table.contains("remedy: add usb-storage.quirks=152d:0578:u,152d:0583:u"));
    assert!(
        table.contains("the usb-storage quirk is active (UAS is off)"),
        "{table}"
    );
    let v: serde_json::Value = serde_json::from_str(&run(true)).unwrap();
    let by_name = |n: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(by_name("sda")["bridge"]["state"], "flagged");
    assert_eq!(
        by_name("sda")["bridge"]["remedy"],
        "usb-storage.quirks=152d:0578:u,152d:0583:u"
    );
    assert_eq!(by_name("sdb")["bridge"]["state"], "quirk_active");
    assert_eq!(by_name("sdb")["usb_quirk"], "u");
    assert!(by_name("mmcblk0").get("bridge").is_none());
}
