//! Safe disk preparation: decide how a disk may be used (erase it, use an existing filesystem,
//! or skip it), then partition/format/mount it, and release it afterwards.
//!
//! The rules (docs/ARCHITECTURE.md, "Disk safety rules"): a disk is erased only if it is blank (no partition
//! table, no filesystem/RAID/LVM signature in its first and last MiB, read from the device right
//! before erasing) or if the policy names it; otherwise an existing filesystem is used
//! non-destructively in a `spindle/` directory when the policy allows, else the disk is skipped.
//! Never the boot device, never a mounted filesystem spindle did not mount, never the stick.
//! Every external command goes through the [`System`]'s runner and is also returned in
//! [`PreparedTarget::commands`]; every read of /sys and /dev goes through its root, so the
//! whole sequence is unit-tested with a fixture tree and a recording runner.

use super::scratch;
use super::steps::{mount_dir, partition_device, Recorder, Undo};
pub use super::target::{Preparation, PreparedTarget};
use crate::disk::signature::{parse_partition_table, read_head_tail};
use crate::disk::{
    classify, find_named, scan_all, Disk, DiskPolicy, FsKind, Naming, TargetUse, Verdict,
};
use crate::sys::{SysRoot, System};
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The filesystem label for an erased disk: `spindle-<short id>`, cut to what `fs` accepts.
pub fn make_label(disk: &Disk, fs: FsKind) -> String {
    let mut l = format!("spindle-{}", disk.short_id());
    l.truncate(fs.max_label_len());
    l
}

/// Decides what to do with a disk under a policy. Pure: uses only what discovery found.
pub fn plan_preparation(disk: &Disk, policy: &DiskPolicy) -> Preparation {
    match classify(disk, policy) {
        Verdict::Excluded { reason } => Preparation::Skip {
            reason: reason.to_string(),
        },
        Verdict::Eligible {
            how: TargetUse::Erase { named },
        } => Preparation::Erase {
            filesystem: policy.filesystem,
            label: make_label(disk, policy.filesystem),
            named,
        },
        Verdict::Eligible {
            how: TargetUse::Reuse { partition, fs_type },
        } => Preparation::Reuse {
            filesystem: policy.filesystem,
            label: make_label(disk, policy.filesystem),
            partition,
            fs_type,
        },
        Verdict::Eligible {
            how: TargetUse::UseExisting { device, fs_type },
        } => Preparation::UseExisting { device, fs_type },
    }
}

fn require_tool(rec: &Recorder<'_>, program: &str, package: &str) -> anyhow::Result<()> {
    if rec.runner.which(program).is_none() {
        bail!("'{program}' is not installed: install the {package} package");
    }
    Ok(())
}

fn mkfs_tool(fs: FsKind) -> (&'static str, &'static str) {
    match fs {
        FsKind::Ext4 => ("mkfs.ext4", "e2fsprogs"),
        FsKind::Xfs => ("mkfs.xfs", "xfsprogs"),
        FsKind::Btrfs => ("mkfs.btrfs", "btrfs-progs"),
        FsKind::F2fs => ("mkfs.f2fs", "f2fs-tools"),
    }
}

/// Re-reads the disk from the system and checks it is still the same disk and still eligible
/// for exactly `expected` under `policy` (the time-of-check/time-of-use guard).
fn recheck(
    root: &SysRoot,
    disk: &Disk,
    policy: &DiskPolicy,
    expected: &TargetUse,
) -> anyhow::Result<Disk> {
    let dev = disk.path.display().to_string();
    let disks =
        scan_all(root).with_context(|| format!("could not scan the disks again for {dev}"))?;
    let fresh = find_named(&disks, root, &disk.name, Naming::AlsoKernelNames)
        .cloned()
        .with_context(|| format!("{dev} is gone since the disk scan"))?;
    if fresh.stable_id != disk.stable_id || fresh.size_bytes != disk.size_bytes {
        bail!(
            "{dev} changed since the disk scan (was {:?}, {:?} bytes; now {:?}, {:?} bytes): not touching it; rescan the disks",
            disk.stable_id, disk.size_bytes, fresh.stable_id, fresh.size_bytes
        );
    }
    match classify(&fresh, policy) {
        Verdict::Eligible { how } if &how == expected => Ok(fresh),
        // A named disk that has become blank may still be erased.
        Verdict::Eligible {
            how: TargetUse::Erase { .. },
        } if matches!(
            expected,
            TargetUse::Erase { named: true } | TargetUse::Reuse { .. }
        ) =>
        {
            Ok(fresh)
        }
        Verdict::Eligible { how } => bail!(
            "{dev} changed since the disk scan: it would now be used as {how:?}, not {expected:?}; not touching it"
        ),
        Verdict::Excluded { reason } => bail!("refusing to prepare {dev}: {reason}"),
    }
}

fn partition_node(disk: &str, n: u32) -> String {
    if disk.ends_with(|c: char| c.is_ascii_digit()) {
        format!("{disk}p{n}")
    } else {
        format!("{disk}{n}")
    }
}

/// Waits up to `timeout` for the kernel's partition `part` of `disk` to appear, starting at
/// `start_bytes`, with its device node. A stale node from an earlier table does not count.
fn wait_for_partition(
    root: &SysRoot,
    disk: &str,
    part: &str,
    start_bytes: u64,
    timeout: Duration,
) -> bool {
    let t0 = Instant::now();
    loop {
        let start = root.read_parsed::<u64>(format!("/sys/block/{disk}/{part}/start"));
        if start == Some(start_bytes / 512) && root.exists(format!("/dev/{part}")) {
            return true;
        }
        if t0.elapsed() >= timeout {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Knobs of [`prepare_with`]; [`prepare`] uses the defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrepareOptions {
    /// How long to wait for the kernel's partition node after partitioning (default 5 s).
    pub partition_wait: Duration,
    /// Use the kernel's partition node when it appears (default true). False always uses a loop
    /// device over the partition's byte range, the fallback for devices without partition nodes.
    pub use_partition_node: bool,
    /// The run the disk is prepared for (recorded in the disk's marker).
    pub run_id: Option<String>,
}

impl Default for PrepareOptions {
    fn default() -> Self {
        PrepareOptions {
            partition_wait: Duration::from_secs(5),
            use_partition_node: true,
            run_id: None,
        }
    }
}

/// Prepares `disk` according to `plan` (from [`plan_preparation`] with the same `policy`) and
/// mounts it under `<run_dir>/mnt/`. Re-checks the disk on the system first and refuses if
/// anything changed. On failure, whatever was mounted or attached is undone.
pub fn prepare(
    disk: &Disk,
    plan: &Preparation,
    policy: &DiskPolicy,
    run_dir: &Path,
    sys: &System,
) -> anyhow::Result<PreparedTarget> {
    prepare_with(disk, plan, policy, run_dir, sys, &PrepareOptions::default())
}

/// [`prepare`] with explicit [`PrepareOptions`].
pub fn prepare_with(
    disk: &Disk,
    plan: &Preparation,
    policy: &DiskPolicy,
    run_dir: &Path,
    sys: &System,
    opts: &PrepareOptions,
) -> anyhow::Result<PreparedTarget> {
    let mut rec = Recorder {
        runner: &sys.runner,
        root: &sys.root,
        commands: Vec::new(),
    };
    let mut undo = Undo::default();
    let result = match plan {
        Preparation::Skip { reason } => {
            bail!("{} is not prepared: {reason}", disk.path.display())
        }
        Preparation::Erase {
            filesystem,
            label,
            named,
        } => erase(
            disk,
            &Erase {
                fs: *filesystem,
                label,
                named: *named,
                expect: TargetUse::Erase { named: *named },
            },
            policy,
            run_dir,
            opts,
            &mut rec,
            &mut undo,
        ),
        Preparation::Reuse {
            filesystem,
            label,
            partition,
            fs_type,
        } => {
            let expect = TargetUse::Reuse {
                partition: partition.clone(),
                fs_type: fs_type.clone(),
            };
            let fresh = recheck(rec.root, disk, policy, &expect)?;
            scratch::check_own(&fresh, partition, fs_type, run_dir, &mut rec, &mut undo).and_then(
                |how| {
                    let erased = erase(
                        disk,
                        &Erase {
                            fs: *filesystem,
                            label,
                            named: true,
                            expect,
                        },
                        policy,
                        run_dir,
                        opts,
                        &mut rec,
                        &mut undo,
                    );
                    erased.map(|t| PreparedTarget {
                        reused: Some(how),
                        ..t
                    })
                },
            )
        }
        Preparation::UseExisting { device, fs_type } => {
            use_existing(disk, device, fs_type, policy, run_dir, &mut rec, &mut undo)
        }
    };
    match result {
        Ok(mut t) => {
            t.commands = rec.commands;
            Ok(t)
        }
        Err(e) => {
            undo.run(&mut rec);
            Err(e)
        }
    }
}

/// Writes a GPT with one partition over the whole disk and returns the block device of that
/// partition: the kernel's node, or a loop device over its bytes when no node appears.
fn partition(
    fresh: &Disk,
    node: &Path,
    opts: &PrepareOptions,
    rec: &mut Recorder<'_>,
    undo: &mut Undo,
) -> anyhow::Result<PathBuf> {
    let dev = fresh.path.display().to_string();
    rec.run(
        "parted",
        &[
            "-s", "-a", "optimal", &dev, "mklabel", "gpt", "mkpart", "spindle", "1MiB", "100%",
        ],
    )?;
    // Ask the kernel to re-read the table; partprobe may be missing or fail on some devices.
    if rec.runner.which("partprobe").is_some() {
        if let Err(e) = rec.run("partprobe", &[&dev]) {
            crate::sys::log::say!("partprobe {dev} failed (continuing): {e:#}");
        }
    } else if let Err(e) = rec.run("blockdev", &["--rereadpt", &dev]) {
        crate::sys::log::say!("blockdev --rereadpt {dev} failed (continuing): {e:#}");
    }
    let head = read_head_tail(node, 0, None)
        .with_context(|| format!("could not read back the partition table of {dev}"))?;
    let ss = fresh.logical_block_size.unwrap_or(512) as u64;
    let entry = parse_partition_table(&head.head, ss)
        .and_then(|t| t.entries.into_iter().find(|e| e.number == 1))
        .with_context(|| format!("parted reported success but {dev} has no partition 1"))?;
    let part = partition_node(&fresh.name, 1);
    let device = if opts.use_partition_node
        && wait_for_partition(
            rec.root,
            &fresh.name,
            &part,
            entry.start_bytes,
            opts.partition_wait,
        ) {
        PathBuf::from(format!("/dev/{part}"))
    } else {
        // No partition node (e.g. a loop device without partition scanning): a loop device
        // over the partition's bytes works the same for mkfs and mount.
        let out = rec.run(
            "losetup",
            &[
                "--find",
                "--show",
                "--offset",
                &entry.start_bytes.to_string(),
                "--sizelimit",
                &entry.size_bytes.to_string(),
                &dev,
            ],
        )?;
        let l = PathBuf::from(out.trim());
        undo.offset_loop = Some(l.clone());
        l
    };
    Ok(device)
}

/// What an erase makes.
struct Erase<'a> {
    fs: FsKind,
    label: &'a str,
    /// The disk may hold something (named in erase, or spindle's checked scratch disk): wipe
    /// its signatures instead of requiring it blank.
    named: bool,
    /// What the re-check must still find.
    expect: TargetUse,
}

fn erase(
    disk: &Disk,
    how: &Erase<'_>,
    policy: &DiskPolicy,
    run_dir: &Path,
    opts: &PrepareOptions,
    rec: &mut Recorder<'_>,
    undo: &mut Undo,
) -> anyhow::Result<PreparedTarget> {
    let dev = disk.path.display().to_string();
    let (fs, named) = (how.fs, how.named);
    let (mkfs, package) = mkfs_tool(fs);
    require_tool(rec, mkfs, package).with_context(|| {
        format!(
            "cannot make {} on {dev}; or set filesystem = \"ext4\"",
            fs.name()
        )
    })?;
    require_tool(rec, "parted", "parted")?;
    require_tool(rec, "losetup", "mount (util-linux)")?;
    let fresh = recheck(rec.root, disk, policy, &how.expect)?;
    let node = rec.root.path(&fresh.path);

    // Last look at the bytes, immediately before writing.
    if !named {
        let ht = read_head_tail(&node, 0, None).with_context(|| {
            format!("could not read the first and last MiB of {dev} to check that it is blank")
        })?;
        let sigs = ht.signatures();
        if !sigs.is_empty() || !fresh.partitions.is_empty() {
            let kinds: Vec<&str> = sigs.iter().map(|s| s.kind.blkid_name()).collect();
            bail!(
                "{dev} is not blank (found {}{}): not erasing it; name it in erase = [...] to allow erasing",
                kinds.join(", "),
                if fresh.partitions.is_empty() { "" } else { ", partitions" }
            );
        }
    } else {
        rec.run("wipefs", &["-a", &dev])?;
    }

    let device = partition(&fresh, &node, opts, rec, undo)?;
    let d = device.to_string_lossy().into_owned();
    match fs {
        FsKind::Ext4 => rec.run(
            mkfs,
            &[
                "-F",
                "-q",
                "-L",
                how.label,
                // Initialise inode tables and journal now, so no background writer
                // (ext4lazyinit) disturbs the benchmark.
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0",
                &d,
            ],
        )?,
        FsKind::Xfs | FsKind::Btrfs => rec.run(mkfs, &["-f", "-L", how.label, &d])?,
        FsKind::F2fs => rec.run(mkfs, &["-f", "-l", how.label, &d])?,
    };
    let mp = mount_dir(run_dir, &fresh);
    std::fs::create_dir_all(&mp)
        .with_context(|| format!("could not create mount point {}", mp.display()))?;
    undo.created_mount_dir = Some(mp.clone());
    let mps = mp.to_string_lossy().into_owned();
    rec.run("mount", &["-t", fs.name(), "-o", "noatime", &d, &mps])?;
    undo.mounted = Some(mp.clone());
    scratch::write_marker(&mp, &fresh, how.label, opts.run_id.as_deref())?;
    let t = PreparedTarget {
        disk: fresh.name.clone(),
        device,
        mount_point: mp.clone(),
        work_dir: mp,
        filesystem: fs.name().to_string(),
        label: Some(how.label.to_string()),
        erased: true,
        offset_loop: undo.offset_loop.clone(),
        commands: Vec::new(),
        reused: None,
    };
    *undo = Undo::default();
    Ok(t)
}

fn use_existing(
    disk: &Disk,
    device: &str,
    fs_type: &str,
    policy: &DiskPolicy,
    run_dir: &Path,
    rec: &mut Recorder<'_>,
    undo: &mut Undo,
) -> anyhow::Result<PreparedTarget> {
    require_tool(rec, "mount", "mount (util-linux)")?;
    let fresh = recheck(
        rec.root,
        disk,
        policy,
        &TargetUse::UseExisting {
            device: device.to_string(),
            fs_type: fs_type.to_string(),
        },
    )?;
    let node = partition_device(&fresh, device, rec, undo)?;
    let mp = mount_dir(run_dir, &fresh);
    std::fs::create_dir_all(&mp)
        .with_context(|| format!("could not create mount point {}", mp.display()))?;
    undo.created_mount_dir = Some(mp.clone());
    let d = node.to_string_lossy().into_owned();
    let mps = mp.to_string_lossy().into_owned();
    rec.run("mount", &["-t", fs_type, "-o", "noatime", &d, &mps])?;
    undo.mounted = Some(mp.clone());
    let work = mp.join("spindle");
    let marker = scratch::WORK_MARKER;
    if work.join(marker).is_file() {
        // spindle's own folder, left by a run that was cut short
        std::fs::remove_dir_all(&work).with_context(|| {
            format!("could not clear {}, left by an earlier run", work.display())
        })?;
    } else if work.exists() {
        bail!(
            "{} already exists on {d} and was not made by spindle: spindle only removes a spindle/ folder it created; rename it or choose another disk",
            work.display()
        );
    }
    std::fs::create_dir(&work)
        .and_then(|()| {
            std::fs::write(
                work.join(marker),
                "spindle work folder; removed after the run\n",
            )
        })
        .with_context(|| format!("could not create {} ({d} is not writable?)", work.display()))?;
    let t = PreparedTarget {
        disk: fresh.name.clone(),
        device: node,
        mount_point: mp,
        work_dir: work,
        filesystem: fs_type.to_string(),
        label: None,
        erased: false,
        offset_loop: undo.offset_loop.clone(),
        commands: Vec::new(),
        reused: None,
    };
    *undo = Undo::default();
    Ok(t)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::disk::{Disk, LinkSpeed, Transport, UsbInfo};
    use crate::provision::release::release;
    use crate::sys::CommandRunner;

    fn blank_usb() -> Disk {
        Disk {
            name: "sda".into(),
            path: "/dev/sda".into(),
            transport: Some(Transport::Usb),
            size_bytes: Some(100 << 30),
            serial: Some("WX11A1234567".into()),
            usb: Some(UsbInfo {
                link_speed: Some(LinkSpeed(5000.0)),
                ..UsbInfo::default()
            }),
            ..Disk::default()
        }
    }

    #[test]
    fn plan_erase_blank_with_short_label() {
        let p = plan_preparation(&blank_usb(), &DiskPolicy::default());
        assert_eq!(
            p,
            Preparation::Erase {
                filesystem: FsKind::Ext4,
                label: "spindle-a1234567".into(),
                named: false
            }
        );
        let xfs = DiskPolicy {
            filesystem: FsKind::Xfs,
            ..DiskPolicy::default()
        };
        match plan_preparation(&blank_usb(), &xfs) {
            Preparation::Erase { label, .. } => assert_eq!(label, "spindle-a123"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn plan_skips_boot_device_with_reason() {
        let mut d = blank_usb();
        d.boot = Some("sda2 is mounted at /".into());
        match plan_preparation(&d, &DiskPolicy::default()) {
            Preparation::Skip { reason } => assert!(reason.contains("boot/root device")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn partition_node_names() {
        assert_eq!(partition_node("sda", 1), "sda1");
        assert_eq!(partition_node("loop3", 1), "loop3p1");
        assert_eq!(partition_node("nvme0n1", 1), "nvme0n1p1");
        assert_eq!(partition_node("mmcblk0", 2), "mmcblk0p2");
    }

    #[test]
    fn skip_plan_is_refused() {
        let err = prepare(
            &blank_usb(),
            &Preparation::Skip {
                reason: "busy".into(),
            },
            &DiskPolicy::default(),
            Path::new("/nonexistent"),
            &System::new(SysRoot::host(), CommandRunner::quiet()),
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("not prepared: busy"));
    }

    /// A fixture tree with one blank loop disk `loop7` of `mib` MiB whose /dev node is a
    /// regular file, as discovery reads it through a root.
    pub(crate) fn loop_tree(mib: u64) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let dev = r.join("sys/devices/virtual/block/loop7");
        std::fs::create_dir_all(dev.join("queue")).unwrap();
        std::fs::create_dir_all(dev.join("loop")).unwrap();
        for (f, v) in [
            ("dev", "7:7"),
            ("size", &(mib * 2048).to_string()),
            ("ro", "0"),
            ("removable", "0"),
            ("queue/rotational", "0"),
            ("queue/logical_block_size", "512"),
            ("queue/physical_block_size", "512"),
            ("loop/backing_file", "/t/disk.img"),
            ("loop/offset", "0"),
        ] {
            std::fs::write(dev.join(f), format!("{v}\n")).unwrap();
        }
        std::fs::create_dir_all(r.join("sys/block")).unwrap();
        std::os::unix::fs::symlink("../devices/virtual/block/loop7", r.join("sys/block/loop7"))
            .unwrap();
        std::fs::create_dir_all(r.join("dev")).unwrap();
        std::fs::File::create(r.join("dev/loop7"))
            .unwrap()
            .set_len(mib << 20)
            .unwrap();
        std::fs::create_dir_all(r.join("proc/self")).unwrap();
        for (f, v) in [
            ("proc/mounts", ""),
            ("proc/self/mountinfo", ""),
            ("proc/swaps", "Filename Type Size Used Priority\n"),
            ("proc/cmdline", "root=/dev/vda1 ro\n"),
        ] {
            std::fs::write(r.join(f), v).unwrap();
        }
        t
    }

    /// A runner that records every command; `parted` really writes the table into the fixture
    /// file (so the read-back sees it), `losetup` hands out /dev/loop8, the rest succeed.
    pub(crate) fn recording_system(
        tree: &Path,
    ) -> (System, std::sync::Arc<crate::sys::runner::Recording>) {
        let node = tree.join("dev/loop7");
        let fake =
            std::sync::Arc::new(
                crate::sys::runner::Recording::new().script(move |p, a| match p {
                    "parted" => {
                        let args: Vec<String> = a
                            .iter()
                            .map(|x| {
                                if x == "/dev/loop7" {
                                    node.display().to_string()
                                } else {
                                    x.clone()
                                }
                            })
                            .collect();
                        let o = std::process::Command::new("parted")
                            .args(&args)
                            .output()
                            .map_err(|e| {
                                format!("this test needs parted (apt-get install parted): {e}")
                            })?;
                        if o.status.success() {
                            Ok(String::new())
                        } else {
                            Err(String::from_utf8_lossy(&o.stderr).into_owned())
                        }
                    }
                    "losetup" => Ok("/dev/loop8\n".into()),
                    // what was "mounted" there goes away with the unmount
                    "umount" => {
                        let dir = std::fs::read_dir(&a[a.len() - 1]);
                        for e in dir.into_iter().flatten().flatten() {
                            let _ = std::fs::remove_dir_all(e.path());
                            let _ = std::fs::remove_file(e.path());
                        }
                        Ok(String::new())
                    }
                    _ => Ok(String::new()),
                }),
            );
        let sys = System::new(SysRoot::new(tree), CommandRunner::with_exec(fake.clone()));
        (sys, fake)
    }

    pub(crate) fn loop_policy() -> DiskPolicy {
        DiskPolicy {
            allow_non_usb: true,
            min_size_bytes: 16 << 20,
            ..DiskPolicy::default()
        }
    }

    #[test]
    fn a_blank_disk_is_prepared_with_these_commands_in_this_order() {
        let tree = loop_tree(64);
        let (sys, fake) = recording_system(tree.path());
        let disk = crate::disk::find_disk(&sys.root, "loop7").unwrap();
        let policy = loop_policy();
        let plan = plan_preparation(&disk, &policy);
        assert!(
            matches!(plan, Preparation::Erase { named: false, .. }),
            "{plan:?}"
        );
        let run = tempfile::tempdir().unwrap();
        let opts = PrepareOptions {
            partition_wait: Duration::ZERO,
            use_partition_node: true,
            run_id: Some("r1".into()),
        };
        let t = prepare_with(&disk, &plan, &policy, run.path(), &sys, &opts).unwrap();
        let label = make_label(&disk, FsKind::Ext4);
        let mp = run.path().join(format!("mnt/loop7-{}", disk.short_id()));
        let expected = vec![
            "parted -s -a optimal /dev/loop7 mklabel gpt mkpart spindle 1MiB 100%".to_string(),
            "partprobe /dev/loop7".into(),
            format!(
                "losetup --find --show --offset 1048576 --sizelimit {} /dev/loop7",
                (64 << 20) - (1 << 20) - 33 * 512
            ),
            format!(
                "mkfs.ext4 -F -q -L {label} -E lazy_itable_init=0,lazy_journal_init=0 /dev/loop8"
            ),
            format!("mount -t ext4 -o noatime /dev/loop8 {}", mp.display()),
        ];
        assert_eq!(fake.calls(), expected);
        assert_eq!(
            t.commands, expected,
            "the commands are recorded with the target"
        );
        assert_eq!(t.offset_loop.as_deref(), Some(Path::new("/dev/loop8")));
        let marker: crate::provision::scratch::DiskMarker = serde_json::from_str(
            &std::fs::read_to_string(mp.join(crate::provision::scratch::DISK_MARKER)).unwrap(),
        )
        .unwrap();
        assert!(marker.names(&disk) && marker.run_id.as_deref() == Some("r1"));
        release(&t, &sys.runner).unwrap();
        assert_eq!(
            fake.calls()[expected.len()..],
            [
                format!("umount {}", mp.display()),
                "losetup -d /dev/loop8".to_string()
            ]
        );
    }

    #[test]
    fn a_disk_that_changed_since_the_scan_is_not_touched() {
        let tree = loop_tree(64);
        let (sys, fake) = recording_system(tree.path());
        let disk = crate::disk::find_disk(&sys.root, "loop7").unwrap();
        let policy = loop_policy();
        let plan = plan_preparation(&disk, &policy);
        // between the scan and the preparation, someone writes a filesystem onto it
        let mut ext4 = vec![0u8; 4096];
        ext4[1024 + 0x38..1024 + 0x3a].copy_from_slice(&[0x53, 0xef]);
        std::fs::write(tree.path().join("dev/loop7"), &ext4).unwrap();
        std::fs::File::options()
            .write(true)
            .open(tree.path().join("dev/loop7"))
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        let run = tempfile::tempdir().unwrap();
        let e = prepare(&disk, &plan, &policy, run.path(), &sys).unwrap_err();
        assert!(format!("{e:#}").contains("loop7"), "{e:#}");
        assert!(fake.calls().is_empty(), "nothing ran: {:?}", fake.calls());
    }
}
