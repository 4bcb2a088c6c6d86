//! Discovery and classification on the fixture trees under tests/fixtures/ (built by
//! tests/fixtures/build.py from real Raspberry Pi OS / Debian arm64 sysfs layouts).

mod common;

use common::fixture_root;
use spindle::disk::{
    classify, find_disk, scan, Disk, DiskPolicy, DiskReport, Exclusion, TargetUse, Transport,
    Verdict,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn disks(name: &str, all: bool) -> BTreeMap<String, Disk> {
    scan(&fixture_root(name), all)
        .unwrap_or_else(|e| panic!("scan of fixture {name} failed: {e:#}"))
        .into_iter()
        .map(|d| (d.name.clone(), d))
        .collect()
}

fn verdicts(name: &str, policy: &DiskPolicy) -> BTreeMap<String, Verdict> {
    disks(name, false)
        .into_iter()
        .map(|(n, d)| (n, classify(&d, policy)))
        .collect()
}

const BLANK: Verdict = Verdict::Eligible {
    how: TargetUse::Erase { named: false },
};

fn reason(v: &Verdict) -> &Exclusion {
    match v {
        Verdict::Excluded { reason } => reason,
        other => panic!("expected an exclusion, got {other}"),
    }
}

#[test]
fn pi4_sd_card_root_and_two_usb3_disks_on_the_vl805() {
    let v = verdicts("pi4-usb3", &DiskPolicy::default());
    assert_eq!(v.keys().collect::<Vec<_>>(), ["mmcblk0", "sda", "sdb"]);
    assert!(matches!(
        reason(&v["mmcblk0"]),
        Exclusion::BootDevice { .. }
    ));
    assert_eq!(v["sda"], BLANK);
    assert_eq!(v["sdb"], BLANK);

    let d = disks("pi4-usb3", false);
    let ssd = &d["sda"];
    let usb = ssd.usb.as_ref().unwrap();
    assert_eq!(usb.driver.as_deref(), Some("uas"));
    assert_eq!(usb.interface_protocol.as_deref(), Some("62"));
    assert_eq!(usb.link_speed.unwrap().0, 5000.0);
    assert_eq!(usb.vid_pid().as_deref(), Some("174c:55aa"));
    assert_eq!(usb.port_path, "2-1");
    assert_eq!(usb.hubs.len(), 1, "only the usb2 root hub above 2-1");
    assert_eq!(
        ssd.stable_id.as_deref(),
        Some("usb-CT500MX5_00SSD1_SSD0123456789-0:0")
    );
    assert_eq!(ssd.serial.as_deref(), Some("SSD0123456789"));
    assert_eq!(
        (ssd.vendor.as_deref(), ssd.model.as_deref()),
        (Some("CT500MX5"), Some("00SSD1"))
    );
    assert_eq!(ssd.size_bytes, Some(500107862016));
    assert_eq!(ssd.rotational, Some(false));
    assert_eq!(ssd.logical_block_size, Some(512));
    let hdd = &d["sdb"];
    assert_eq!(
        hdd.usb.as_ref().unwrap().driver.as_deref(),
        Some("usb-storage")
    );
    assert_eq!(hdd.rotational, Some(true));
    // Both on the VL805, named by its PCI id; one controller for every port.
    let vl805 = usb.controller.as_ref().unwrap();
    assert_eq!(vl805.name, "VIA VL805");
    assert_eq!(vl805.pci_address.as_deref(), Some("0000:01:00.0"));
    assert!(usb.same_controller(hdd.usb.as_ref().unwrap()));
    assert_eq!(usb.attachment(), "port 2-1 on VIA VL805, PCIe 0000:01:00.0");
    let sd = &d["mmcblk0"];
    assert_eq!(sd.transport, Some(Transport::Mmc));
    assert_eq!(sd.partitions.len(), 2);
    assert_eq!(sd.partitions[1].fs_type.as_deref(), Some("ext4"));
    assert_eq!(sd.partitions[1].mounts[0].mount_point, PathBuf::from("/"));
}

#[test]
fn pi4_hub_blank_data_readonly_and_mounted() {
    let p = DiskPolicy::default();
    let v = verdicts("pi4-hub", &p);
    assert_eq!(v["sda"], BLANK);
    assert!(matches!(reason(&v["sdb"]), Exclusion::HoldsData { .. }));
    assert!(
        v["sdb"].to_string().contains("sdb1 ext4 'backup'"),
        "{}",
        v["sdb"]
    );
    assert_eq!(reason(&v["sdc"]), &Exclusion::ReadOnly);
    assert!(matches!(reason(&v["sdd"]), Exclusion::Busy { .. }));
    assert!(v["sdd"].to_string().contains("/media/pi/T7"));

    let d = disks("pi4-hub", false);
    let usb = d["sda"].usb.as_ref().unwrap();
    assert_eq!(usb.port_path, "2-1.1");
    let hubs: Vec<&str> = usb.hubs.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(hubs, ["2-1", "usb2"]);

    // Reusing existing filesystems, or naming the disk for erase.
    let reuse = DiskPolicy {
        use_existing_filesystem: true,
        ..DiskPolicy::default()
    };
    assert_eq!(
        classify(&d["sdb"], &reuse),
        Verdict::Eligible {
            how: TargetUse::UseExisting {
                device: "sdb1".into(),
                fs_type: "ext4".into()
            }
        }
    );
    for name in [
        "WX11A1234567",
        "usb-WD_Elements_25A2_WX11A1234567-0:0",
        "/dev/disk/by-id/usb-WD_Elements_25A2_WX11A1234567-0:0",
    ] {
        let named = DiskPolicy {
            erase: vec![name.into()],
            ..DiskPolicy::default()
        };
        assert_eq!(
            classify(&d["sdb"], &named),
            Verdict::Eligible {
                how: TargetUse::Erase { named: true }
            },
            "{name}"
        );
    }
    let by_dev_name = DiskPolicy {
        erase: vec!["/dev/sdb".into()],
        ..DiskPolicy::default()
    };
    assert!(
        !classify(&d["sdb"], &by_dev_name).is_eligible(),
        "sdX names are not stable ids"
    );
    // Still never a mounted one, even when named.
    let named_busy = DiskPolicy {
        erase: vec!["S6XKNS0T123456A".into()],
        use_existing_filesystem: true,
        ..DiskPolicy::default()
    };
    assert!(matches!(
        reason(&classify(&d["sdd"], &named_busy)),
        Exclusion::Busy { .. }
    ));
}

#[test]
fn pi4_usb3_disk_in_a_usb2_port_says_use_the_blue_port() {
    let v = verdicts("pi4-usb2-port", &DiskPolicy::default());
    assert_eq!(
        reason(&v["sda"]),
        &Exclusion::Usb2Link {
            speed_mbps: 480.0,
            usb3_capable: true
        }
    );
    assert!(v["sda"]
        .to_string()
        .contains("USB 3 disk on a 480 Mb/s link: plug it into a blue USB3 port"));
    assert_eq!(
        reason(&v["sdb"]),
        &Exclusion::Usb2Link {
            speed_mbps: 480.0,
            usb3_capable: false
        }
    );
    let allow = DiskPolicy {
        allow_usb2: true,
        ..DiskPolicy::default()
    };
    let v = verdicts("pi4-usb2-port", &allow);
    assert_eq!(v["sda"], BLANK);
    assert_eq!(v["sdb"], BLANK);
}

#[test]
fn pi4_results_stick_and_too_small() {
    let v = verdicts("pi4-stick", &DiskPolicy::default());
    assert_eq!(v["sda"], BLANK);
    assert!(matches!(reason(&v["sdb"]), Exclusion::ResultsStick { .. }));
    assert!(matches!(reason(&v["sdc"]), Exclusion::TooSmall { .. }));
    // A different stick label makes sdb an ordinary (USB2-linked) disk.
    let other = DiskPolicy {
        stick_label: "RESULTS".into(),
        ..DiskPolicy::default()
    };
    assert!(matches!(
        reason(&verdicts("pi4-stick", &other)["sdb"]),
        Exclusion::Usb2Link { .. }
    ));
    let small_ok = DiskPolicy {
        min_size_bytes: 256 << 20,
        ..DiskPolicy::default()
    };
    assert_eq!(verdicts("pi4-stick", &small_ok)["sdc"], BLANK);
}

#[test]
fn pi4_booted_from_usb_ssd_via_cmdline_partuuid() {
    let v = verdicts("pi4-usb-boot", &DiskPolicy::default());
    assert_eq!(v.keys().collect::<Vec<_>>(), ["sda", "sdb"]);
    match reason(&v["sda"]) {
        Exclusion::BootDevice { detail } => {
            assert!(detail.contains("PARTUUID=e8af6eb2-02"), "{detail}")
        }
        other => panic!("{other}"),
    }
    assert_eq!(v["sdb"], BLANK);
}

#[test]
fn qemu_virt_layout_from_the_image_spec() {
    let v = verdicts("qemu-virt", &DiskPolicy::default());
    assert!(matches!(reason(&v["vda"]), Exclusion::BootDevice { .. }));
    assert_eq!(v["sda"], BLANK);
    assert_eq!(v["sdb"], BLANK);
    assert!(matches!(reason(&v["sdc"]), Exclusion::ResultsStick { .. }));
    assert_eq!(
        reason(&v["sdd"]),
        &Exclusion::Usb2Link {
            speed_mbps: 480.0,
            usb3_capable: false
        }
    );
    let d = disks("qemu-virt", false);
    let t7 = &d["sda"];
    assert_eq!(
        t7.model.as_deref(),
        Some("PortableSSD_T7"),
        "SCSI padding trimmed"
    );
    let u = t7.usb.as_ref().unwrap();
    assert_eq!(
        (u.port_path.as_str(), u.driver.as_deref()),
        ("2-2", Some("uas"))
    );
    assert_eq!(u.serial.as_deref(), Some("UASBRIDGE"));
    assert_eq!(
        d["sdd"].usb.as_ref().unwrap().usb_version.as_deref(),
        Some("2.00")
    );
}

#[test]
fn laptop_nvme_root_under_dm_crypt_sata_probe_and_odd_usb() {
    let v = verdicts("laptop-odd", &DiskPolicy::default());
    assert!(matches!(
        reason(&v["nvme0n1"]),
        Exclusion::BootDevice { .. }
    ));
    assert!(matches!(
        reason(&v["sda"]),
        Exclusion::NotUsb {
            transport: Transport::Sata
        }
    ));
    assert!(matches!(reason(&v["sdb"]), Exclusion::NoMedium { .. }));
    assert!(
        matches!(reason(&v["sde"]), Exclusion::NoMedium { .. }),
        "dangling /sys/block link"
    );
    assert!(
        matches!(reason(&v["sdc"]), Exclusion::Usb2Link { speed_mbps, .. } if *speed_mbps == 480.0),
        "a 480 Mb/s hub bounds a 5000 Mb/s device"
    );
    assert!(!v.contains_key("loop0") && !v.contains_key("zram0") && !v.contains_key("sr0"));

    // The SATA disk's ext4 was found by reading the device, not from udev.
    let d = disks("laptop-odd", false);
    assert!(d["sda"].content_read);
    assert_eq!(d["sda"].filesystems()[0].1, "ext4");
    let non_usb = DiskPolicy {
        allow_non_usb: true,
        ..DiskPolicy::default()
    };
    assert!(matches!(
        reason(&classify(&d["sda"], &non_usb)),
        Exclusion::HoldsData { .. }
    ));
    // The odd USB device: what is known is reported.
    let odd = &d["sdb"];
    assert_eq!(odd.size_bytes, None);
    assert_eq!(odd.usb.as_ref().unwrap().link_speed, None);
    assert_eq!(
        odd.usb.as_ref().unwrap().vid_pid().as_deref(),
        Some("abcd:1234")
    );

    let all = disks("laptop-odd", true);
    assert!(all.contains_key("loop0") && all.contains_key("zram0") && all.contains_key("dm-0"));
    assert!(
        !all.contains_key("loop1"),
        "detached loop devices are hidden"
    );
    assert!(matches!(
        reason(&classify(&all["dm-0"], &non_usb)),
        Exclusion::BootDevice { .. }
    ));
    assert!(matches!(
        reason(&classify(&all["zram0"], &non_usb)),
        Exclusion::Busy { .. }
    ));
    assert_eq!(
        all["loop0"].stable_id.as_deref(),
        Some("file:/var/tmp/test.img")
    );
}

#[test]
fn find_disk_by_path_by_id_serial_and_loop() {
    let r = fixture_root("pi4-usb3");
    for arg in [
        "/dev/sda",
        "sda",
        "SSD0123456789",
        "usb-CT500MX5_00SSD1_SSD0123456789-0:0",
        "/dev/disk/by-id/usb-CT500MX5_00SSD1_SSD0123456789-0:0",
    ] {
        assert_eq!(find_disk(&r, arg).unwrap().name, "sda", "{arg}");
    }
    let err = find_disk(&r, "/dev/sdz").unwrap_err();
    assert!(format!("{err:#}").contains("no block device matches '/dev/sdz'"));
    assert_eq!(
        find_disk(&fixture_root("laptop-odd"), "/dev/loop1")
            .unwrap()
            .name,
        "loop1"
    );
}

#[test]
fn json_report_has_verdict_and_reason_text() {
    let d = disks("pi4-usb2-port", false);
    let rep = DiskReport::new(d["sda"].clone(), &DiskPolicy::default());
    let j = serde_json::to_value(&rep).unwrap();
    assert_eq!(j["verdict"]["verdict"], "excluded");
    assert_eq!(j["verdict"]["reason"], "usb2_link");
    assert_eq!(j["usb"]["link_speed"], 480.0);
    assert!(j["verdict_text"]
        .as_str()
        .unwrap()
        .contains("blue USB3 port"));
    assert_eq!(j["name"], "sda");
}

#[test]
fn cli_runs_on_a_fixture() {
    let root = fixture_root("qemu-virt");
    let code = spindle::run_from_args([
        "spindle",
        "disks",
        "--json",
        "--sysroot",
        root.root().to_str().unwrap(),
    ])
    .unwrap();
    assert_eq!(code, 0);
    let err =
        spindle::run_from_args(["spindle", "disks", "--sysroot", "/nonexistent-root"]).unwrap_err();
    assert!(format!("{err:#}").contains("not a Linux sysfs tree"));
}

#[test]
fn pi5_one_controller_per_usb3_port_and_a_disk_used_by_a_loop_device() {
    let v = verdicts("pi5-usb3", &DiskPolicy::default());
    assert!(matches!(
        reason(&v["mmcblk0"]),
        Exclusion::BootDevice { .. }
    ));
    assert_eq!(v["sda"], BLANK);
    match reason(&v["sdb"]) {
        Exclusion::Busy { detail } => assert_eq!(detail, "sdb is used by loop0"),
        other => panic!("{other}"),
    }
    let d = disks("pi5-usb3", false);
    let hubs: Vec<&str> = d["sdb"]
        .usb
        .as_ref()
        .unwrap()
        .hubs
        .iter()
        .map(|h| h.name.as_str())
        .collect();
    assert_eq!(hubs, ["usb4"]);
    // Raspberry Pi OS's layout: the RP1's controllers straight under the PCIe host bridge.
    let (a, b) = (
        d["sda"].usb.as_ref().unwrap(),
        d["sdb"].usb.as_ref().unwrap(),
    );
    let names = [a, b].map(|u| u.controller.as_ref().unwrap().name.clone());
    assert_eq!(
        names,
        [
            "RP1 USB controller usb@40200000",
            "RP1 USB controller usb@40300000"
        ]
    );
    assert!(!a.same_controller(b));
    assert_eq!(a.controller.as_ref().unwrap().pci_address, None);
}

fn usb(d: &BTreeMap<String, Disk>, name: &str) -> spindle::disk::UsbInfo {
    d[name]
        .usb
        .clone()
        .unwrap_or_else(|| panic!("{name} is not on USB"))
}

#[test]
fn pi5_debian_kernel_rp1_controllers_below_the_pci_function() {
    // Debian's 7.3.4: the RP1 is PCI function 0002:01:00.0 and its dwc3 controllers hang off
    // it through pci-ep-bus@1, each with an xhci-hcd.N.auto (not Raspberry Pi OS's xhci-hcd.N).
    let v = verdicts("pi5-debian-usb3", &DiskPolicy::default());
    assert_eq!(
        v.keys().collect::<Vec<_>>(),
        ["mmcblk0", "sda", "sdb", "sdc"]
    );
    match reason(&v["mmcblk0"]) {
        Exclusion::BootDevice { detail } => assert_eq!(detail, "mmcblk0p2 is mounted at /"),
        other => panic!("{other}"),
    }
    assert_eq!(v["sda"], BLANK);
    assert_eq!(v["sdb"], BLANK);
    assert_eq!(
        reason(&v["sdc"]),
        &Exclusion::Usb2Link {
            speed_mbps: 480.0,
            usb3_capable: false
        }
    );

    let d = disks("pi5-debian-usb3", false);
    let (a, b, stick) = (usb(&d, "sda"), usb(&d, "sdb"), usb(&d, "sdc"));
    assert_eq!(a.link_speed.unwrap().0, 5000.0);
    assert_eq!(a.driver.as_deref(), Some("uas"));
    let hubs: Vec<&str> = b.hubs.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(hubs, ["usb4"], "the USB3 port sits on its own root hub");
    let ca = a.controller.as_ref().unwrap();
    let cb = b.controller.as_ref().unwrap();
    assert_eq!(ca.name, "RP1 USB controller usb@40200000");
    assert_eq!(cb.name, "RP1 USB controller usb@40300000");
    assert_eq!(ca.pci_address.as_deref(), Some("0002:01:00.0"), "the RP1");
    assert!(ca.sysfs_path.ends_with("1f00200000.usb/xhci-hcd.0.auto"));
    assert!(!a.same_controller(&b), "one controller per USB3 port");
    // The stick is on bus 1, the SSD on bus 2: one controller all the same.
    assert_ne!(stick.busnum, a.busnum);
    assert!(stick.same_controller(&a));
    assert_eq!(
        a.attachment(),
        "port 2-1 on RP1 USB controller usb@40200000 (its USB3 port), PCIe 0002:01:00.0"
    );
    assert_eq!(
        stick.attachment(),
        "port 1-2 on RP1 USB controller usb@40200000 (its USB 2 bus), PCIe 0002:01:00.0"
    );
    let sd = &d["mmcblk0"];
    assert_eq!(sd.transport, Some(Transport::Mmc));
    assert!(sd
        .sysfs_path
        .as_ref()
        .unwrap()
        .starts_with("/sys/devices/platform/soc@107c000000/1000fff000.mmc"));

    // The table says where each disk is plugged in.
    let reports: Vec<DiskReport> = d
        .into_values()
        .map(|d| DiskReport::new(d, &DiskPolicy::default()))
        .collect();
    let table = spindle::disk::render::render_table(&reports);
    assert!(
        table.contains("    attached: port 4-1 on RP1 USB controller usb@40300000 (its USB3 port)"),
        "{table}"
    );
}

#[test]
fn sd_cards_record_the_bus_mode_debugfs_names() {
    // The timing spec of /sys/kernel/debug/mmc0/ios: DDR50 on the Pi 4, SDR104 on the Pi 5.
    let pi4 = disks("pi4-usb3", true);
    assert_eq!(pi4["mmcblk0"].sd_timing.as_deref(), Some("sd uhs DDR50"));
    assert_eq!(pi4["sda"].sd_timing, None, "a USB disk has no SD bus");
    let pi5 = disks("pi5-debian-usb3", true);
    assert_eq!(pi5["mmcblk0"].sd_timing.as_deref(), Some("sd uhs SDR104"));
    // Without debugfs (not root, not mounted) the mode is not read, and says nothing.
    let pi4_boot = disks("pi4-usb-boot", true);
    assert!(pi4_boot.values().all(|d| d.sd_timing.is_none()));
}
