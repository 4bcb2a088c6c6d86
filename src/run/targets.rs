//! Benchmark targets, the same for `spindle suite` and the daemon: which disks a run considers
//! (every eligible disk, or the disks named — one naming rule, see [`Naming`]), what would be
//! done to each (pure), preparing them through the [`System`] with guards that release them
//! after the run, and directories named by the user.

use crate::disk::{self, Disk, DiskPolicy, Naming};
use crate::model::{FilesystemRecord, Skipped, TargetKind};
use crate::provision::prepare::{self, Preparation};
use crate::provision::release::ReleaseGuard;
use crate::sys::System;
use std::path::{Path, PathBuf};

/// Where a run's targets come from.
#[derive(Clone, Debug, PartialEq)]
pub enum TargetSource {
    /// Directories the user named (no disk preparation).
    Directories(Vec<PathBuf>),
    /// Only the disks named (they may be non-USB; every other rule still applies, and naming a
    /// disk never allows erasing its data: that is `[disks] erase`).
    Disks { names: Vec<String>, naming: Naming },
    /// Every eligible disk `spindle disks` lists.
    Eligible,
}

/// One place to benchmark: a directory (on a disk spindle prepared, or one the user named).
#[derive(Clone, Debug)]
pub struct TargetSpec {
    /// Short name for tables and file names (`sda`, `dir1`).
    pub name: String,
    /// Directory the work happens in (spindle creates `spindle-work/` inside).
    pub dir: PathBuf,
    pub kind: TargetKind,
    /// One line for tables (model, size, link speed, driver).
    pub description: String,
    /// The disk's discovery record, when a disk.
    pub disk: Option<Disk>,
    /// How the disk was prepared (the commands run).
    pub preparation: Vec<String>,
    /// A spindle scratch disk erased again: how it was recognised.
    pub reused: Option<String>,
}

impl TargetSpec {
    /// A directory target named `name`.
    pub fn directory(name: &str, dir: &Path) -> Self {
        TargetSpec {
            name: name.to_string(),
            dir: dir.to_path_buf(),
            kind: TargetKind::Directory,
            description: format!("directory {}", dir.display()),
            disk: None,
            preparation: vec![],
            reused: None,
        }
    }
}

/// The disks a run would use, with what would be done to each, and the ones left out.
#[derive(Clone, Debug, Default)]
pub struct DiskPlan {
    pub planned: Vec<(Disk, Preparation)>,
    pub skipped: Vec<Skipped>,
    /// Names that matched no disk (named sources only).
    pub missing: Vec<String>,
    /// The policy the plan was made under (named disks may be non-USB).
    pub policy: DiskPolicy,
}

/// Decides, purely, what a run would do with the disks in `scanned` (every block device):
/// which are candidates under `source`, and for each the preparation `policy` allows. The disk
/// named `stick` (the results stick's, kernel name) is never a target.
pub fn plan_disks(
    scanned: &[Disk],
    root: &crate::sys::SysRoot,
    source: &TargetSource,
    policy: &DiskPolicy,
    stick: Option<&str>,
) -> DiskPlan {
    let mut plan = DiskPlan {
        policy: policy.clone(),
        ..DiskPlan::default()
    };
    let candidates: Vec<Disk> = match source {
        TargetSource::Directories(_) => return plan,
        TargetSource::Eligible => scanned
            .iter()
            .filter(|d| disk::discover::is_listed(d, false))
            .cloned()
            .collect(),
        TargetSource::Disks { names, naming } => {
            plan.policy.allow_non_usb = true;
            let mut found: Vec<Disk> = Vec::new();
            for n in names {
                match disk::find_named(scanned, root, n, *naming) {
                    Some(d) if !found.iter().any(|f| f.name == d.name) => found.push(d.clone()),
                    Some(_) => {}
                    None => plan.missing.push(n.clone()),
                }
            }
            found
        }
    };
    for d in candidates {
        if stick == Some(d.name.as_str()) {
            plan.skipped.push(skipped(
                &d,
                "results stick (never a benchmark target)".into(),
            ));
            continue;
        }
        match prepare::plan_preparation(&d, &plan.policy) {
            Preparation::Skip { reason } => plan.skipped.push(skipped(&d, reason)),
            p => plan.planned.push((d, p)),
        }
    }
    plan
}

/// The name and id a skipped disk is listed under.
pub fn skipped(d: &Disk, reason: String) -> Skipped {
    Skipped {
        device: d.path.display().to_string(),
        id: d.stable_id.clone().unwrap_or_else(|| d.name.clone()),
        reason,
    }
}

/// Disks made ready for a run.
#[derive(Default)]
pub struct PreparedDisks {
    /// One per prepared disk, named by the disk's kernel name.
    pub targets: Vec<TargetSpec>,
    /// Disks that could not be prepared, with the error.
    pub skipped: Vec<Skipped>,
    /// Unmount and release the prepared disks: [`release_disks`] after the run (dropping them
    /// releases too, logging errors).
    pub guards: Vec<ReleaseGuard>,
}

/// Prepares each planned disk (GPT + filesystem + mount under `work_dir`, or the existing
/// filesystem) through `sys`, recording the exact commands in its [`TargetSpec`]. A disk that
/// fails is skipped with the error (what was set up is undone); the others still run.
pub fn prepare_disks(
    plan: DiskPlan,
    work_dir: &Path,
    run_id: &str,
    sys: &System,
    message: &dyn Fn(&str),
) -> PreparedDisks {
    let mut out = PreparedDisks::default();
    let opts = prepare::PrepareOptions {
        run_id: Some(run_id.to_string()),
        ..prepare::PrepareOptions::default()
    };
    for (d, p) in plan.planned {
        match prepare::prepare_with(&d, &p, &plan.policy, work_dir, sys, &opts) {
            Ok(t) => {
                if let Some(how) = &t.reused {
                    message(&format!("{}: {how}", d.path.display()));
                }
                out.targets.push(TargetSpec {
                    reused: t.reused.clone(),
                    name: d.name.clone(),
                    dir: t.work_dir.clone(),
                    kind: TargetKind::Disk,
                    description: disk_description(&d),
                    preparation: t.commands.clone(),
                    disk: Some(d),
                });
                out.guards.push(ReleaseGuard::new(t, sys.runner.clone()));
            }
            Err(e) => {
                message(&format!("could not prepare {}: {e:#}", d.path.display()));
                out.skipped
                    .push(skipped(&d, format!("preparation failed: {e:#}")));
            }
        }
    }
    out
}

/// Releases every guard, reporting failures (a failed release leaves the mount point and its
/// contents in place).
pub fn release_disks(guards: Vec<ReleaseGuard>, message: &dyn Fn(&str)) {
    for g in guards {
        if let Err(e) = g.release() {
            message(&format!("releasing a disk failed: {e:#}"));
        }
    }
}

/// Directory targets, named after the directory (`dirN` when it has no name), checked to exist.
pub fn directory_targets(dirs: &[PathBuf]) -> anyhow::Result<Vec<TargetSpec>> {
    let mut out = Vec::new();
    for (i, dir) in dirs.iter().enumerate() {
        if !dir.is_dir() {
            anyhow::bail!(
                "target directory '{}' does not exist or is not a directory: create it first",
                dir.display()
            );
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty() && !out.iter().any(|t: &TargetSpec| &t.name == n))
            .unwrap_or_else(|| format!("dir{}", i + 1));
        let abs = std::fs::canonicalize(dir)
            .map_err(|e| anyhow::anyhow!("target directory '{}': {e}", dir.display()))?;
        out.push(TargetSpec::directory(&name, &abs));
    }
    Ok(out)
}

/// The filesystem `dir` is on: statfs(2) says which kind and whether it is in RAM; the mount
/// table (through `root`) gives the exact name (`ext4` rather than statfs's `ext2/3/4`) and
/// the device. `None` when statfs fails (the directory is gone).
pub fn filesystem_of(root: &crate::sys::SysRoot, dir: &Path) -> Option<FilesystemRecord> {
    let magic = crate::sys::fs::statfs_magic(dir).ok()?;
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mounts = root
        .read_string("/proc/self/mountinfo")
        .map(|t| disk::sysfiles::parse_mountinfo(&t))
        .unwrap_or_default();
    Some(filesystem_record(magic, &dir, &mounts))
}

/// [`filesystem_of`] from its facts: the magic number and the mount table.
fn filesystem_record(
    magic: u32,
    dir: &Path,
    mounts: &[disk::sysfiles::MountEntry],
) -> FilesystemRecord {
    use crate::sys::fs::{fs_magic_in_ram, fs_magic_name};
    // The mount holding `dir`: the longest mount point it is under (the last such line wins,
    // as a later mount on the same point hides the earlier one).
    let mount = mounts
        .iter()
        .filter(|m| dir.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.components().count());
    let named = fs_magic_name(magic);
    let fs_type = match (mount, named) {
        // The mount table is trusted only when it agrees with statfs on the kind.
        (Some(m), Some(n))
            if n == m.fs_type || (n == "ext2/3/4" && m.fs_type.starts_with("ext")) =>
        {
            m.fs_type.clone()
        }
        (_, Some(n)) => n.to_string(),
        (Some(m), None) => m.fs_type.clone(),
        (None, None) => format!("{magic:#x}"),
    };
    let source = mount.map(|m| m.source.clone());
    // A block device that is memory: zram, brd's /dev/ramN.
    let ram_device = source.as_deref().is_some_and(|s| {
        let name = s.strip_prefix("/dev/").unwrap_or("");
        name.starts_with("zram") || (name.starts_with("ram") && name[3..].parse::<u32>().is_ok())
    });
    FilesystemRecord {
        fs_type,
        source,
        in_ram: fs_magic_in_ram(magic) || ram_device,
    }
}

/// `vendor model, size, USB link, driver, vid:pid, rotational` as far as known.
pub fn disk_description(d: &Disk) -> String {
    let mut s = format!(
        "{} {}",
        d.vendor.as_deref().unwrap_or(""),
        d.model.as_deref().unwrap_or("")
    )
    .trim()
    .to_string();
    if let Some(b) = d.size_bytes {
        if !s.is_empty() {
            s.push_str(", ");
        }
        s.push_str(&crate::units::human_size(b));
    }
    if let Some(u) = &d.usb {
        s.push_str(&format!(
            ", USB {}",
            u.link_speed
                .map(|l| l.to_string())
                .unwrap_or_else(|| "link ?".into())
        ));
        if let Some(drv) = &u.driver {
            s.push_str(&format!(", {drv}"));
        }
        if let Some(v) = u.vid_pid() {
            s.push_str(&format!(", {v}"));
        }
    }
    if d.rotational == Some(true) {
        s.push_str(", rotational");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::{Partition, Transport};
    use crate::sys::SysRoot;

    fn loop_disk(name: &str, file: &str) -> Disk {
        Disk {
            name: name.into(),
            path: format!("/dev/{name}").into(),
            transport: Some(Transport::Loop),
            size_bytes: Some(2 << 30),
            stable_id: Some(format!("file:{file}")),
            backing_file: Some(file.into()),
            content_read: true,
            ..Disk::default()
        }
    }

    fn names(plan: &DiskPlan) -> Vec<&str> {
        plan.planned.iter().map(|(d, _)| d.name.as_str()).collect()
    }

    #[test]
    fn named_disks_are_the_only_candidates_and_may_be_non_usb() {
        let scanned = vec![
            loop_disk("loop0", "/t/a.img"),
            loop_disk("loop1", "/t/b.img"),
            loop_disk("loop2", "/t/other.img"),
        ];
        let root = SysRoot::new("/nonexistent");
        let policy = DiskPolicy::default();
        // every eligible disk: loop devices are not listed disks at all
        let p = plan_disks(&scanned, &root, &TargetSource::Eligible, &policy, None);
        assert!(p.planned.is_empty() && !p.policy.allow_non_usb);
        let stable = TargetSource::Disks {
            names: vec!["file:/t/a.img".into(), "/t/b.img".into()],
            naming: Naming::Stable,
        };
        let p = plan_disks(&scanned, &root, &stable, &policy, None);
        assert_eq!(names(&p), ["loop0", "loop1"]);
        assert!(p.policy.allow_non_usb && p.missing.is_empty());
        // kernel names are not stable: only the interactive CLI accepts them
        let kernel = |naming| TargetSource::Disks {
            names: vec!["loop2".into(), "/dev/loop1".into()],
            naming,
        };
        let p = plan_disks(&scanned, &root, &kernel(Naming::Stable), &policy, None);
        assert!(p.planned.is_empty());
        assert_eq!(p.missing, ["loop2", "/dev/loop1"]);
        let p = plan_disks(
            &scanned,
            &root,
            &kernel(Naming::AlsoKernelNames),
            &policy,
            None,
        );
        assert_eq!(names(&p), ["loop2", "loop1"]);
    }

    #[test]
    fn plan_keeps_data_disks_and_the_stick_out() {
        let mut data = loop_disk("loop1", "/t/data.img");
        data.partitions.push(Partition {
            name: "loop1p1".into(),
            fs_type: Some("ext4".into()),
            ..Partition::default()
        });
        data.partition_table = Some("gpt".into());
        let disks = vec![
            loop_disk("loop0", "/t/a.img"),
            data,
            loop_disk("loop2", "/t/stick.img"),
        ];
        let names_: Vec<String> = disks.iter().map(|d| d.stable_id.clone().unwrap()).collect();
        let source = TargetSource::Disks {
            names: names_,
            naming: Naming::Stable,
        };
        let root = SysRoot::new("/nonexistent");
        let p = plan_disks(
            &disks,
            &root,
            &source,
            &DiskPolicy::default(),
            Some("loop2"),
        );
        assert_eq!(names(&p), ["loop0"]);
        assert!(matches!(
            p.planned[0].1,
            Preparation::Erase { named: false, .. }
        ));
        assert_eq!(p.skipped.len(), 2);
        assert!(
            p.skipped[0].reason.contains("holds data"),
            "{:?}",
            p.skipped[0]
        );
        assert_eq!(p.skipped[0].id, "file:/t/data.img");
        assert!(p.skipped[1].reason.contains("results stick"));
    }

    #[test]
    fn a_target_records_its_filesystem_and_whether_it_is_ram() {
        use crate::disk::sysfiles::parse_mountinfo;
        let table = parse_mountinfo(
            "22 1 254:1 / / rw,relatime - ext4 /dev/vda1 rw\n\
             30 22 0:25 / /dev/shm rw,nosuid - tmpfs tmpfs rw\n\
             40 22 252:0 / /mnt/z rw - ext4 /dev/zram0 rw\n",
        );
        let shm = filesystem_record(0x0102_1994, Path::new("/dev/shm/x"), &table);
        assert_eq!(shm.fs_type, "tmpfs");
        assert!(shm.in_ram);
        assert_eq!(shm.describe(), "tmpfs (in RAM, not a disk)");
        let root = filesystem_record(0xef53, Path::new("/var/tmp/x"), &table);
        assert_eq!((root.fs_type.as_str(), root.in_ram), ("ext4", false));
        assert_eq!(root.describe(), "ext4 on /dev/vda1");
        let zram = filesystem_record(0xef53, Path::new("/mnt/z/work"), &table);
        assert!(zram.in_ram, "ext4 on a zram device is RAM too");
        // no mount table: statfs alone names it; an unknown magic is shown as a number
        let bare = filesystem_record(0x0102_1994, Path::new("/x"), &[]);
        assert_eq!((bare.fs_type.as_str(), bare.in_ram), ("tmpfs", true));
        assert_eq!(
            filesystem_record(0x1234, Path::new("/x"), &[]).fs_type,
            "0x1234"
        );
        // the real thing: /dev/shm here
        let real = filesystem_of(&crate::sys::SysRoot::host(), Path::new("/dev/shm")).unwrap();
        assert_eq!((real.fs_type.as_str(), real.in_ram), ("tmpfs", true));
    }

    #[test]
    fn directory_targets_need_existing_directories() {
        let d = tempfile::tempdir().unwrap();
        let t = directory_targets(&[d.path().to_path_buf()]).unwrap();
        assert_eq!(t[0].kind, TargetKind::Directory);
        let e = directory_targets(&[d.path().join("nope")]).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
    }
}
