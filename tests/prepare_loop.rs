//! Safe preparation against real loop devices, mkfs and mount. Needs root: without it every test
//! fails with a message saying so (it never silently passes).
//!
//! Run: `sudo -E cargo test --test prepare_loop` (needs parted, e2fsprogs, util-linux).

mod common;

use common::{sh, sha256, LoopDevice};
use spindle::disk::signature::{parse_partition_table, read_head_tail, SignatureKind};
use spindle::disk::{find_disk, Disk, DiskPolicy};
use spindle::provision::prepare::{
    plan_preparation, prepare, prepare_with, Preparation, PrepareOptions,
};
use spindle::provision::release::{release, ReleaseGuard};
use spindle::sys::{CommandRunner, SysRoot, System};
use std::path::{Path, PathBuf};

fn require_root() {
    common::require_root(
        "tests/prepare_loop.rs",
        &[
            ("losetup", "mount"),
            ("parted", "parted"),
            ("mkfs.ext4", "e2fsprogs"),
            ("mount", "mount"),
            ("sha256sum", "coreutils"),
        ],
    );
}

/// A temporary directory with images on [`LoopDevice`]s (each undone on drop, spindle's offset
/// loops and mounts included).
struct Lab {
    loops: Vec<LoopDevice>,
    dir: tempfile::TempDir,
}

impl Lab {
    fn new() -> Self {
        require_root();
        Lab {
            dir: tempfile::Builder::new()
                .prefix("spindle-prepare-")
                .tempdir_in("/var/tmp")
                .unwrap(),
            loops: Vec::new(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Creates a sparse, zero-filled image file of `mib` MiB (not attached).
    fn file(&self, name: &str, mib: u64) -> PathBuf {
        let img = self.path(name);
        std::fs::File::create(&img)
            .unwrap()
            .set_len(mib << 20)
            .unwrap();
        img
    }

    /// Creates a sparse image of `mib` MiB and attaches it; returns (image, /dev/loopN).
    fn image(&mut self, name: &str, mib: u64) -> (PathBuf, String) {
        let img = self.file(name, mib);
        let dev = self.attach(&img);
        (img, dev)
    }

    fn attach(&mut self, img: &Path) -> String {
        let l = LoopDevice::attach(img);
        let dev = l.dev().to_string();
        self.loops.push(l);
        dev
    }

    fn disk(&self, dev: &str) -> Disk {
        find_disk(&SysRoot::host(), dev).expect("loop device is found by discovery")
    }

    fn run_dir(&self) -> PathBuf {
        let d = self.path("run");
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}

fn loop_policy() -> DiskPolicy {
    DiskPolicy {
        allow_non_usb: true,
        min_size_bytes: 16 << 20,
        ..DiskPolicy::default()
    }
}

fn mount_options(mp: &Path) -> Option<String> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(1) == Some(&mp.to_str().unwrap())).then(|| f[3].to_string())
    })
}

/// Makes an ext4 filesystem holding a few files directly in `img` (no mount needed).
fn ext4_with_files(lab: &Lab, img: &Path) {
    let src = lab.path("content");
    std::fs::create_dir_all(src.join("photos")).unwrap();
    std::fs::write(src.join("photos/cat.txt"), "meow\n").unwrap();
    std::fs::write(src.join("notes.txt"), "do not lose me\n").unwrap();
    sh(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-L",
            "family",
            "-d",
            src.to_str().unwrap(),
            img.to_str().unwrap(),
        ],
    );
}

#[test]
fn blank_image_is_partitioned_formatted_mounted_and_released() {
    blank_image_is_prepared(&PrepareOptions::default());
}

/// The fallback for devices that get no partition node (as `losetup -P` on some machines):
/// a loop device over the partition's byte range.
#[test]
fn blank_image_without_partition_node_uses_an_offset_loop() {
    let t = blank_image_is_prepared(&PrepareOptions {
        use_partition_node: false,
        ..PrepareOptions::default()
    });
    assert!(t.offset_loop.is_some());
    assert!(t
        .commands
        .iter()
        .any(|c| c.starts_with("losetup --find --show --offset 1048576 --sizelimit")));
}

fn blank_image_is_prepared(opts: &PrepareOptions) -> spindle::provision::prepare::PreparedTarget {
    let mut lab = Lab::new();
    let (img, dev) = lab.image("blank.img", 64);
    let disk = lab.disk(&dev);
    assert!(disk.content_read, "discovery read {dev}: {:?}", disk.notes);
    let policy = loop_policy();
    let plan = plan_preparation(&disk, &policy);
    let Preparation::Erase {
        ref label,
        named: false,
        ..
    } = plan
    else {
        panic!("blank loop device should be erased, got {plan:?}");
    };
    let sys = System::new(SysRoot::host(), CommandRunner::quiet());
    let runner = sys.runner.clone();
    let t = prepare_with(&disk, &plan, &policy, &lab.run_dir(), &sys, opts)
        .unwrap_or_else(|e| panic!("prepare {dev}: {e:#}"));
    eprintln!("commands run for {dev}:\n  {}", t.commands.join("\n  "));
    assert!(t.erased);
    assert!(t.mount_point.starts_with(lab.run_dir()));
    assert_eq!(t.work_dir, t.mount_point);
    assert_eq!(t.label.as_deref(), Some(label.as_str()));
    assert!(label.starts_with("spindle-"));
    let opts = mount_options(&t.mount_point).expect("target is mounted");
    assert!(opts.split(',').any(|o| o == "noatime"), "{opts}");
    assert!(t
        .commands
        .iter()
        .any(|c| c.starts_with("parted -s -a optimal")));
    assert!(t
        .commands
        .iter()
        .any(|c| c.starts_with("mkfs.ext4 -F -q -L spindle-")));
    assert!(t.commands.iter().any(|c| c.contains("-o noatime")));
    std::fs::write(t.work_dir.join("probe"), "x").unwrap();

    // The table read back: GPT, one partition named spindle at 1 MiB, holding our ext4.
    let ht = read_head_tail(&img, 0, None).unwrap();
    let table = parse_partition_table(&ht.head, 512).expect("a partition table");
    assert_eq!(table.kind, SignatureKind::Gpt);
    assert_eq!(table.entries.len(), 1);
    let e = &table.entries[0];
    assert_eq!(
        (e.start_bytes, e.name.as_deref()),
        (1 << 20, Some("spindle"))
    );
    let parted = sh(
        "parted",
        &["-m", "-s", img.to_str().unwrap(), "unit", "B", "print"],
    );
    assert!(
        parted.contains(":gpt:") && parted.contains("1:1048576B:"),
        "{parted}"
    );
    let part = read_head_tail(&img, e.start_bytes, Some(e.size_bytes)).unwrap();
    let sig = part.signatures().into_iter().next().expect("a filesystem");
    assert_eq!(sig.kind, SignatureKind::Ext4);
    assert_eq!(sig.label.as_deref(), Some(label.as_str()));

    release(&t, &runner).unwrap_or_else(|e| panic!("release: {e:#}"));
    assert!(
        mount_options(&t.mount_point).is_none(),
        "unmounted after release"
    );
    if let Some(l) = &t.offset_loop {
        let all = sh("losetup", &["-a"]);
        assert!(
            !all.contains(&format!("{}:", l.display())),
            "offset loop detached"
        );
    }
    t
}

#[test]
fn image_with_files_is_left_byte_for_byte_unchanged() {
    let mut lab = Lab::new();
    let img = lab.file("data.img", 64);
    ext4_with_files(&lab, &img);
    let before = sha256(&img);
    let dev = lab.attach(&img);
    let disk = lab.disk(&dev);
    let policy = loop_policy();
    let plan = plan_preparation(&disk, &policy);
    match &plan {
        Preparation::Skip { reason } => {
            assert!(
                reason.contains("holds data") && reason.contains("ext4 'family'"),
                "{reason}"
            )
        }
        other => panic!("a disk with data must be skipped, got {other:?}"),
    }
    let sys = System::new(SysRoot::host(), CommandRunner::quiet());
    assert!(prepare(&disk, &plan, &policy, &lab.run_dir(), &sys).is_err());
    // A stale or forged erase plan is refused by the re-check right before erasing.
    let forged = Preparation::Erase {
        filesystem: policy.filesystem,
        label: "spindle-x".into(),
        named: false,
    };
    let err = prepare(&disk, &forged, &policy, &lab.run_dir(), &sys).unwrap_err();
    assert!(format!("{err:#}").contains("holds data"), "{err:#}");
    assert_eq!(sha256(&img), before, "image bytes changed");
}

#[test]
fn named_image_is_erased() {
    let mut lab = Lab::new();
    let img = lab.file("named.img", 64);
    ext4_with_files(&lab, &img);
    let dev = lab.attach(&img);
    let disk = lab.disk(&dev);
    let policy = DiskPolicy {
        erase: vec![disk.stable_id.clone().expect("loop stable id")],
        ..loop_policy()
    };
    assert!(disk.stable_id.as_deref().unwrap().starts_with("file:"));
    let plan = plan_preparation(&disk, &policy);
    assert!(
        matches!(plan, Preparation::Erase { named: true, .. }),
        "{plan:?}"
    );
    let sys = System::new(SysRoot::host(), CommandRunner::quiet());
    let runner = sys.runner.clone();
    let t = prepare(&disk, &plan, &policy, &lab.run_dir(), &sys)
        .unwrap_or_else(|e| panic!("prepare {dev}: {e:#}"));
    assert!(t.commands.iter().any(|c| c.starts_with("wipefs -a")));
    release(&t, &runner).unwrap();
    let ht = read_head_tail(&img, 0, None).unwrap();
    assert_eq!(
        parse_partition_table(&ht.head, 512).unwrap().kind,
        SignatureKind::Gpt
    );
}

#[test]
fn existing_filesystem_is_used_in_a_spindle_folder_then_cleaned() {
    let mut lab = Lab::new();
    let img = lab.file("reuse.img", 64);
    ext4_with_files(&lab, &img);
    let dev = lab.attach(&img);
    let disk = lab.disk(&dev);
    let policy = DiskPolicy {
        use_existing_filesystem: true,
        ..loop_policy()
    };
    let plan = plan_preparation(&disk, &policy);
    assert_eq!(
        plan,
        Preparation::UseExisting {
            device: disk.name.clone(),
            fs_type: "ext4".into()
        }
    );
    let sys = System::new(SysRoot::host(), CommandRunner::quiet());
    let runner = sys.runner.clone();
    let guard = ReleaseGuard::new(
        prepare(&disk, &plan, &policy, &lab.run_dir(), &sys)
            .unwrap_or_else(|e| panic!("prepare {dev}: {e:#}")),
        runner.clone(),
    );
    let t = guard.target().clone();
    assert!(!t.erased);
    assert_eq!(t.work_dir, t.mount_point.join("spindle"));
    std::fs::write(t.work_dir.join("sbtest.dat"), vec![7u8; 4096]).unwrap();
    assert_eq!(
        std::fs::read_to_string(t.mount_point.join("notes.txt")).unwrap(),
        "do not lose me\n"
    );
    drop(guard); // releases
    assert!(mount_options(&t.mount_point).is_none());

    // Look again, read-only: the user's files are there, spindle/ is gone.
    let check = lab.path("check");
    std::fs::create_dir_all(&check).unwrap();
    sh("mount", &["-o", "ro", &dev, check.to_str().unwrap()]);
    let notes = std::fs::read_to_string(check.join("notes.txt")).unwrap();
    let cat = std::fs::read_to_string(check.join("photos/cat.txt")).unwrap();
    let leftover = check.join("spindle").exists();
    sh("umount", &[check.to_str().unwrap()]);
    assert_eq!(
        (notes.as_str(), cat.as_str()),
        ("do not lose me\n", "meow\n")
    );
    assert!(!leftover, "spindle/ removed after the run");
}

#[test]
fn mounted_filesystem_is_refused_and_stays_mounted() {
    let mut lab = Lab::new();
    let img = lab.file("mounted.img", 64);
    ext4_with_files(&lab, &img);
    let dev = lab.attach(&img);
    let user_mp = lab.path("user-mount");
    std::fs::create_dir_all(&user_mp).unwrap();
    sh("mount", &[&dev, user_mp.to_str().unwrap()]);
    let disk = lab.disk(&dev);
    // Even named for erase and with reuse allowed, a mounted disk is busy.
    let policy = DiskPolicy {
        use_existing_filesystem: true,
        erase: vec![disk.stable_id.clone().unwrap()],
        ..loop_policy()
    };
    match plan_preparation(&disk, &policy) {
        Preparation::Skip { reason } => assert!(reason.contains("busy"), "{reason}"),
        other => panic!("a mounted disk must be skipped, got {other:?}"),
    }
    let sys = System::new(SysRoot::host(), CommandRunner::quiet());
    for forged in [
        Preparation::Erase {
            filesystem: policy.filesystem,
            label: "spindle-x".into(),
            named: true,
        },
        Preparation::UseExisting {
            device: disk.name.clone(),
            fs_type: "ext4".into(),
        },
    ] {
        let err = prepare(&disk, &forged, &policy, &lab.run_dir(), &sys).unwrap_err();
        assert!(format!("{err:#}").contains("busy"), "{err:#}");
    }
    assert!(
        mount_options(&user_mp).is_some(),
        "the user's mount is untouched"
    );
    assert_eq!(
        std::fs::read_to_string(user_mp.join("notes.txt")).unwrap(),
        "do not lose me\n"
    );
}

#[test]
fn xfs_and_btrfs_when_configured() {
    for (fs, tool) in [
        (spindle::disk::FsKind::Xfs, "mkfs.xfs"),
        (spindle::disk::FsKind::Btrfs, "mkfs.btrfs"),
    ] {
        assert!(
            spindle::sys::runner::which(tool).is_some(),
            "this test needs {tool} (apt-get install xfsprogs btrfs-progs)"
        );
        let mut lab = Lab::new();
        let (img, dev) = lab.image("fs.img", 320);
        let disk = lab.disk(&dev);
        let policy = DiskPolicy {
            filesystem: fs,
            ..loop_policy()
        };
        let plan = plan_preparation(&disk, &policy);
        let sys = System::new(SysRoot::host(), CommandRunner::quiet());
        let runner = sys.runner.clone();
        let t = prepare(&disk, &plan, &policy, &lab.run_dir(), &sys)
            .unwrap_or_else(|e| panic!("prepare {dev} as {}: {e:#}", fs.name()));
        assert_eq!(t.filesystem, fs.name());
        let label = t.label.clone().unwrap();
        assert!(label.len() <= fs.max_label_len(), "{label}");
        let opts = mount_options(&t.mount_point).expect("mounted");
        assert!(opts.contains("noatime"), "{opts}");
        std::fs::write(t.work_dir.join("probe"), "x").unwrap();
        release(&t, &runner).unwrap();
        let ht = read_head_tail(&img, 0, None).unwrap();
        let e = parse_partition_table(&ht.head, 512).unwrap().entries[0].clone();
        let sig = read_head_tail(&img, e.start_bytes, Some(e.size_bytes))
            .unwrap()
            .signatures()
            .into_iter()
            .next()
            .unwrap();
        assert_eq!(sig.kind.blkid_name(), fs.name());
        assert_eq!(sig.label.as_deref(), Some(label.as_str()));
    }
}

/// A GPT image with ext4 in partition 1, attached without partition scanning: discovery reads
/// the partition from the table, and existing-filesystem mode mounts it through an offset loop.
#[test]
fn existing_filesystem_on_a_partition_the_kernel_does_not_show() {
    let mut lab = Lab::new();
    let img = lab.file("gpt-data.img", 64);
    let i = img.to_str().unwrap();
    sh(
        "parted",
        &["-s", i, "mklabel", "gpt", "mkpart", "data", "1MiB", "63MiB"],
    );
    let src = lab.path("content");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("notes.txt"), "do not lose me\n").unwrap();
    sh(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-L",
            "data",
            "-d",
            src.to_str().unwrap(),
            "-E",
            "offset=1048576",
            i,
            "60M",
        ],
    );
    let before = sha256(&img);
    let dev = lab.attach(&img);
    let disk = lab.disk(&dev);
    let p1 = disk
        .partitions
        .first()
        .expect("partition read from the GPT");
    assert!(!p1.in_kernel);
    assert_eq!(
        (p1.fs_type.as_deref(), p1.label.as_deref()),
        (Some("ext4"), Some("data"))
    );
    assert_eq!(disk.partition_table.as_deref(), Some("gpt"));

    // Default policy: holds data, skipped, bytes unchanged.
    let plan = plan_preparation(&disk, &loop_policy());
    assert!(matches!(plan, Preparation::Skip { .. }), "{plan:?}");
    assert_eq!(sha256(&img), before);

    let policy = DiskPolicy {
        use_existing_filesystem: true,
        ..loop_policy()
    };
    let plan = plan_preparation(&disk, &policy);
    assert_eq!(
        plan,
        Preparation::UseExisting {
            device: format!("{}p1", disk.name),
            fs_type: "ext4".into()
        }
    );
    let sys = System::new(SysRoot::host(), CommandRunner::quiet());
    let runner = sys.runner.clone();
    let t = prepare(&disk, &plan, &policy, &lab.run_dir(), &sys)
        .unwrap_or_else(|e| panic!("prepare {dev}: {e:#}"));
    assert!(t.offset_loop.is_some(), "{:?}", t.commands);
    assert_eq!(
        std::fs::read_to_string(t.mount_point.join("notes.txt")).unwrap(),
        "do not lose me\n"
    );
    assert!(t.work_dir.is_dir());
    release(&t, &runner).unwrap();
    assert!(mount_options(&t.mount_point).is_none());
}

/// A second run finds the disk spindle formatted in the first: it is spindle's own scratch
/// disk (its label, its marker, nothing but spindle's files) and is prepared again without being
/// named, on a fresh filesystem. With one foreign file on it, it is a data disk: refused and
/// left byte-for-byte unchanged.
#[test]
fn spindle_formatted_disk_is_reused_and_a_foreign_file_makes_it_a_data_disk() {
    let mut lab = Lab::new();
    let (img, dev) = lab.image("again.img", 64);
    let policy = loop_policy();
    let sys = System::new(SysRoot::host(), CommandRunner::quiet());
    let runner = sys.runner.clone();
    let disk = lab.disk(&dev);
    let t = prepare(
        &disk,
        &plan_preparation(&disk, &policy),
        &policy,
        &lab.run_dir(),
        &sys,
    )
    .unwrap_or_else(|e| panic!("first prepare {dev}: {e:#}"));
    // what a run leaves: spindle's work directory (and its marker) with files in it
    let work = t.work_dir.join("spindle-work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join(".spindle-work"), "").unwrap();
    std::fs::write(work.join("test_file.0"), vec![7u8; 4096]).unwrap();
    release(&t, &runner).unwrap();

    let disk = lab.disk(&dev);
    let plan = plan_preparation(&disk, &policy);
    assert!(matches!(plan, Preparation::Reuse { .. }), "{plan:?}");
    let t = prepare(&disk, &plan, &policy, &lab.run_dir(), &sys)
        .unwrap_or_else(|e| panic!("second prepare {dev}: {e:#}"));
    assert!(
        t.commands.iter().any(|c| c.starts_with("mkfs.ext4")),
        "a fresh filesystem: {:?}",
        t.commands
    );
    // How it was recognised, for the console and the summary.
    let how = t.reused.as_deref().expect("a reused disk says so");
    assert!(
        how.starts_with("reused as spindle's scratch disk: ")
            && how.contains("its marker .spindle-disk.json names this disk (file:")
            && how.contains("again.img"),
        "{how}"
    );
    assert!(
        !t.work_dir.join("spindle-work").exists(),
        "nothing of the first run is left"
    );
    // a person puts one file of their own on it
    std::fs::write(t.work_dir.join("notes.txt"), "mine").unwrap();
    release(&t, &runner).unwrap();

    let disk = lab.disk(&dev);
    let plan = plan_preparation(&disk, &policy);
    assert!(matches!(plan, Preparation::Reuse { .. }), "{plan:?}");
    let before = sha256(&img);
    let e = prepare(&disk, &plan, &policy, &lab.run_dir(), &sys).unwrap_err();
    let m = format!("{e:#}");
    assert!(m.contains("holds data") && m.contains("notes.txt"), "{m}");
    assert_eq!(sha256(&img), before, "the disk is byte-for-byte unchanged");
    assert!(mount_options(&lab.run_dir()).is_none());
}
