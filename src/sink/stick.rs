//! The results stick: finding it in sysfs, mounting it, reading its spindle.toml, and copying
//! run bundles to it so that no partial bundle ever looks complete.
//!
//! A bundle is copied into `spindle/.<run-id>.partial/`, every file fsynced, the directory
//! renamed to `spindle/<run-id>/`, the `spindle/` directory fsynced, the filesystem synced, and
//! only then is the run marked copied on the SD card. The stick is unmounted at the end.

use super::problem::{problem_in, problem_of, StickProblem};
use super::runs::{RunEntry, RunStore};
use super::settings::{StickConfig, StickOverrides};
use crate::disk::Transport;
use crate::sys::{CommandRunner, SysRoot};
use anyhow::Context;
use std::io;
use std::path::{Path, PathBuf};

/// Filesystems a results stick may have.
pub const STICK_FILESYSTEMS: &[&str] = &["vfat", "exfat", "ext4", "ext3", "ext2"];

/// The folder on the stick that receives the runs.
pub const STICK_FOLDER: &str = "spindle";

/// A results stick found on the system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultsStick {
    /// Kernel name of the disk (`sdb`, `loop3`).
    pub disk: String,
    /// The filesystem's device node (`/dev/sdb1`, or the whole disk).
    pub device: PathBuf,
    pub fs_type: String,
    pub label: Option<String>,
    /// Where it is mounted already, if anywhere.
    pub mounted_at: Option<PathBuf>,
}

impl ResultsStick {
    /// A name for logs and markers: the label, else the device.
    pub fn name(&self) -> String {
        self.label
            .clone()
            .unwrap_or_else(|| self.device.display().to_string())
    }
}

/// Filesystems that are mounted (read-only) to look for a `spindle/` folder when unlabelled.
/// ext filesystems are not probed: they need the label (a read-only ext mount may still
/// replay a journal, and such a disk is more likely a benchmark target with data).
pub const PROBED_FILESYSTEMS: &[&str] = &["vfat", "exfat"];

/// Finds results sticks: USB block devices (any block device with `allow_non_usb`) that are
/// not the boot device and carry a vfat/exfat/ext filesystem labelled `cfg.label`, or a mounted
/// filesystem with a `spindle/` folder at its root. Unmounted, unlabelled filesystems are not
/// probed here (see [`sticks_among`]).
pub fn find_sticks(root: &SysRoot, cfg: &StickConfig) -> anyhow::Result<Vec<ResultsStick>> {
    Ok(sticks_among(
        &crate::disk::scan_all(root)?,
        root,
        cfg,
        &mut |_| false,
    ))
}

/// [`find_sticks`] over disks already scanned from `root`. `probe` is asked about unmounted,
/// unlabelled vfat/exfat filesystems: true if the filesystem has a `spindle/` folder at its root
/// (the daemon mounts it read-only to look, once per insert: [`probe_marker`]).
pub fn sticks_among(
    disks: &[crate::disk::Disk],
    root: &SysRoot,
    cfg: &StickConfig,
    probe: &mut dyn FnMut(&ResultsStick) -> bool,
) -> Vec<ResultsStick> {
    let mut out = Vec::new();
    for disk in disks {
        let usb = disk.transport == Some(Transport::Usb);
        if disk.boot.is_some() || !(usb || cfg.allow_non_usb) {
            continue;
        }
        if disk.transport == Some(Transport::Loop) && disk.backing_file.is_none() {
            continue;
        }
        // (device node, fs type, label, mounts) of the whole disk and each partition
        let mut fss: Vec<(
            PathBuf,
            String,
            Option<String>,
            Vec<crate::disk::MountPoint>,
        )> = Vec::new();
        for s in &disk.signatures {
            if !s.kind.is_partition_table() {
                fss.push((
                    disk.path.clone(),
                    s.kind.blkid_name().to_string(),
                    s.label.clone(),
                    disk.mounts.clone(),
                ));
            }
        }
        for p in &disk.partitions {
            if let Some(t) = &p.fs_type {
                fss.push((p.path.clone(), t.clone(), p.label.clone(), p.mounts.clone()));
            }
        }
        for (device, fs_type, label, mounts) in fss {
            if !STICK_FILESYSTEMS.contains(&fs_type.as_str()) {
                continue;
            }
            let labelled = label
                .as_deref()
                .is_some_and(|l| l.trim().eq_ignore_ascii_case(cfg.label.trim()));
            let mounted_at = mounts.first().map(|m| m.mount_point.clone());
            let marked = disk.stick_marker
                && mounts
                    .iter()
                    .any(|m| root.is_dir(m.mount_point.join(STICK_FOLDER)));
            let candidate = ResultsStick {
                disk: disk.name.clone(),
                device,
                fs_type,
                label,
                mounted_at,
            };
            // Only real USB devices are probed (never loop devices someone else is using).
            let probed = || {
                usb && candidate.mounted_at.is_none()
                    && PROBED_FILESYSTEMS.contains(&candidate.fs_type.as_str())
            };
            if labelled || marked || (probed() && probe(&candidate)) {
                out.push(candidate);
            }
        }
    }
    out
}

/// Mounts `stick` read-only (noexec) at `dir`, says whether a `spindle/` folder is at its root,
/// unmounts. Any failure means no.
pub fn probe_marker(stick: &ResultsStick, dir: &Path, runner: &CommandRunner) -> bool {
    if std::fs::create_dir_all(dir).is_err() {
        return false;
    }
    let (dev, d) = (
        stick.device.display().to_string(),
        dir.display().to_string(),
    );
    let args = [
        "-t",
        stick.fs_type.as_str(),
        "-o",
        "ro,nosuid,nodev,noexec",
        dev.as_str(),
        d.as_str(),
    ];
    if runner.run("mount", &args).is_err() {
        return false;
    }
    let found = dir.join(STICK_FOLDER).is_dir();
    if runner.run("umount", &[d.as_str()]).is_err() {
        let _ = runner.run("umount", &["-l", d.as_str()]);
    }
    found
}

/// The mount point of `device` in /proc/self/mounts right now, if it is mounted.
pub fn live_mount_point(device: &Path) -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let want = device.display().to_string();
    mounts.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let (dev, dir) = (f.next()?, f.next()?);
        (dev == want).then(|| PathBuf::from(dir.replace("\\040", " ")))
    })
}

/// A mounted stick; unmounts on drop (lazily if the stick is gone).
pub struct MountedStick {
    pub root: PathBuf,
    ours: bool,
    runner: CommandRunner,
}

impl MountedStick {
    /// Mounts `stick` at `cfg.mount_dir` (or uses its existing mount). Options: noexec, nosuid,
    /// nodev — nothing on a stick is ever run.
    pub fn mount(
        stick: &ResultsStick,
        cfg: &StickConfig,
        runner: &CommandRunner,
    ) -> anyhow::Result<Self> {
        // Where it is mounted *now* (the scan's view may be stale: someone may have mounted or
        // unmounted it since).
        if let Some(m) = live_mount_point(&stick.device) {
            return Ok(MountedStick {
                root: m,
                ours: false,
                runner: runner.clone(),
            });
        }
        std::fs::create_dir_all(&cfg.mount_dir).with_context(|| {
            format!(
                "[stick] mount_dir: could not create '{}'",
                cfg.mount_dir.display()
            )
        })?;
        let dev = stick.device.display().to_string();
        let dir = cfg.mount_dir.display().to_string();
        runner
            .run(
                "mount",
                &[
                    "-t",
                    stick.fs_type.as_str(),
                    "-o",
                    "rw,nosuid,nodev,noexec,noatime",
                    dev.as_str(),
                    dir.as_str(),
                ],
            )
            .with_context(|| format!("could not mount the results stick {dev}"))?;
        let m = MountedStick {
            root: cfg.mount_dir.clone(),
            ours: true,
            runner: runner.clone(),
        };
        // Never write anywhere but the stick: the mount must show up for this device.
        let here = std::fs::canonicalize(&cfg.mount_dir).ok();
        let live = live_mount_point(&stick.device).and_then(|p| std::fs::canonicalize(p).ok());
        anyhow::ensure!(
            here.is_some() && here == live,
            "mounting {dev} at {dir} did not take effect (the stick went away?)"
        );
        Ok(m)
    }

    /// True if the filesystem is mounted read-only (write-protect switch, errors).
    pub fn read_only(&self) -> bool {
        let Ok(c) = std::ffi::CString::new(self.root.as_os_str().as_encoded_bytes()) else {
            return false;
        };
        // SAFETY: statvfs writes into the zeroed struct we own; the path is NUL-terminated.
        unsafe {
            let mut st: libc::statvfs = std::mem::zeroed();
            libc::statvfs(c.as_ptr(), &mut st) == 0 && st.f_flag & libc::ST_RDONLY != 0
        }
    }

    /// Bytes available to us.
    pub fn free_bytes(&self) -> io::Result<u64> {
        let c = std::ffi::CString::new(self.root.as_os_str().as_encoded_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: as above.
        unsafe {
            let mut st: libc::statvfs = std::mem::zeroed();
            if libc::statvfs(c.as_ptr(), &mut st) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(st.f_bavail as u64 * st.f_frsize as u64)
        }
    }

    /// Flushes the whole filesystem (syncfs).
    pub fn sync(&self) -> io::Result<()> {
        let f = std::fs::File::open(&self.root)?;
        use std::os::fd::AsRawFd;
        // SAFETY: syncfs on a valid open fd.
        if unsafe { libc::syncfs(f.as_raw_fd()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Syncs and unmounts (only if spindle mounted it).
    pub fn unmount(mut self) -> anyhow::Result<()> {
        let r = self.do_unmount();
        self.ours = false;
        r
    }

    fn do_unmount(&mut self) -> anyhow::Result<()> {
        let _ = self.sync();
        if !self.ours {
            return Ok(());
        }
        let dir = self.root.display().to_string();
        if let Err(e) = self.runner.run("umount", &[dir.as_str()]) {
            // The stick may be gone: detach the mount so the next insert can mount again.
            let _ = self.runner.run("umount", &["-l", dir.as_str()]);
            return Err(e);
        }
        Ok(())
    }
}

impl Drop for MountedStick {
    fn drop(&mut self) {
        if self.ours {
            let _ = self.do_unmount();
        }
    }
}

/// Unmounts whatever is still mounted at `dir` (left by a daemon that was killed mid-copy), so
/// the next mount does not stack on top of it.
pub fn clear_stale_mount(dir: &Path, runner: &CommandRunner) {
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") else {
        return;
    };
    let Ok(real) = std::fs::canonicalize(dir) else {
        return;
    };
    let target = real.display().to_string();
    let mounted = mounts.lines().any(|l| {
        l.split_whitespace()
            .nth(1)
            .is_some_and(|m| m.replace("\\040", " ") == target)
    });
    if mounted {
        crate::sys::log::say!("{target} is still mounted from an earlier run; unmounting it");
        let _ = runner.run("umount", &["-l", target.as_str()]);
    }
}

/// Bytes of all files under `dir`.
pub fn tree_size(dir: &Path) -> io::Result<u64> {
    let mut total = 0;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let t = e.file_type()?;
        if t.is_dir() {
            total += tree_size(&e.path())?;
        } else if t.is_file() {
            // round up to 32 KiB clusters: FAT allocates whole clusters
            total += e.metadata()?.len().div_ceil(32 * 1024).max(1) * 32 * 1024;
        }
    }
    Ok(total)
}

fn fsync_dir(dir: &Path) -> io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// Copies regular files and directories (symlinks and special files are skipped), fsyncing
/// every file and directory.
fn copy_tree(src: &Path, dst: &Path) -> io::Result<()> {
    std::fs::create_dir(dst)?;
    for e in std::fs::read_dir(src)? {
        let e = e?;
        let t = e.file_type()?;
        let name = e.file_name();
        if name == super::runs::COPIED_MARKER {
            continue;
        }
        let to = dst.join(&name);
        if t.is_dir() {
            copy_tree(&e.path(), &to)?;
        } else if t.is_file() {
            let mut from = std::fs::File::open(e.path())?;
            let mut out = std::fs::File::create(&to)?;
            io::copy(&mut from, &mut out)?;
            out.sync_all()?;
        }
    }
    fsync_dir(dst)
}

/// The outcome of copying to a stick.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// Runs now on the stick (newest first).
    pub copied: Vec<String>,
    /// Runs still only on the SD card.
    pub remaining: usize,
    /// Why copying stopped early.
    pub problem: Option<StickProblem>,
    /// The error in words (for the log), when there was one.
    pub error: Option<String>,
}

/// Copies one run into `spindle/` of a mounted stick. Errors leave no `spindle/<id>`.
fn copy_run(m: &MountedStick, run: &RunEntry, reserve: u64) -> anyhow::Result<()> {
    let folder = m.root.join(STICK_FOLDER);
    let final_dir = folder.join(&run.id);
    if final_dir.is_dir() {
        // Copied before, but the SD marker was lost (power cut after the rename): done.
        return Ok(());
    }
    let need = tree_size(&run.dir)
        .with_context(|| format!("could not read the run '{}'", run.dir.display()))?
        + reserve;
    let free = m
        .free_bytes()
        .context("could not read the stick's free space")?;
    if need > free {
        return Err(anyhow::Error::new(io::Error::from_raw_os_error(
            libc::ENOSPC,
        )))
        .context(format!(
            "run {} needs {} KiB, the stick has {} KiB free",
            run.id,
            need / 1024,
            free / 1024
        ));
    }
    let partial = folder.join(format!(".{}.partial", run.id));
    if partial.exists() {
        std::fs::remove_dir_all(&partial)
            .with_context(|| format!("could not remove the stale '{}'", partial.display()))?;
    }
    let res = copy_tree(&run.dir, &partial)
        .and_then(|()| std::fs::rename(&partial, &final_dir))
        .and_then(|()| fsync_dir(&folder))
        .and_then(|()| m.sync());
    if let Err(e) = res {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(
            anyhow::Error::new(e).context(format!("copying run {} to the stick failed", run.id))
        );
    }
    Ok(())
}

fn fail(mut r: CopyReport, p: StickProblem, e: &anyhow::Error) -> CopyReport {
    r.problem = Some(p);
    r.error = Some(format!("{e:#}"));
    r
}

/// Copies every pending run, newest first, onto the mounted stick `m`.
fn copy_into(
    m: &MountedStick,
    stick: &ResultsStick,
    store: &RunStore,
    cfg: &StickConfig,
) -> CopyReport {
    let mut report = CopyReport {
        remaining: store.pending().len(),
        ..CopyReport::default()
    };
    if m.read_only() {
        let e = anyhow::anyhow!(
            "the results stick {} is read-only (write-protect switch, or filesystem errors: check it on a computer)",
            stick.device.display()
        );
        return fail(report, StickProblem::ReadOnly, &e);
    }
    let folder = m.root.join(STICK_FOLDER);
    if let Err(e) = std::fs::create_dir_all(&folder) {
        let p = problem_of(&e);
        return fail(
            report,
            p,
            &anyhow::Error::new(e).context("could not create spindle/ on the stick"),
        );
    }
    // Leftovers of a copy cut short (power loss, pulled stick) never look like a run: remove them.
    if let Ok(rd) = std::fs::read_dir(&folder) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with('.') && n.ends_with(".partial") {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let mut pending = store.pending();
    pending.reverse();
    for run in pending {
        match copy_run(m, &run, cfg.reserve_bytes) {
            Ok(()) => {
                if let Err(e) = store.mark_copied(&run.id, &stick.name()) {
                    // The bundle is on the stick; it is copied again next time (harmless).
                    crate::sys::log::say!("{e:#}");
                }
                crate::sys::log::say!("run {} copied to the stick", run.id);
                report.copied.push(run.id);
                report.remaining -= 1;
            }
            Err(e) => {
                let p = problem_in(&e);
                report = fail(report, p, &e);
                break;
            }
        }
    }
    report
}

/// Mounts the stick, copies every pending run newest first (stopping at the first that does
/// not fit: the newest runs win), syncs and unmounts. Never fails: problems are reported.
pub fn copy_pending(
    stick: &ResultsStick,
    store: &RunStore,
    cfg: &StickConfig,
    runner: &CommandRunner,
) -> CopyReport {
    let report = CopyReport {
        remaining: store.pending().len(),
        ..CopyReport::default()
    };
    let m = match MountedStick::mount(stick, cfg, runner) {
        Ok(m) => m,
        Err(e) => {
            let p = if format!("{e:#}").contains("write-protected") {
                StickProblem::ReadOnly
            } else {
                StickProblem::NotFound
            };
            return fail(report, p, &e);
        }
    };
    let mut report = copy_into(&m, stick, store, cfg);
    if let Err(e) = m.unmount() {
        if report.problem.is_none() {
            report = fail(report, StickProblem::NotFound, &e);
        }
    }
    report
}

/// What a newly inserted stick says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StickInspection {
    /// Its spindle.toml, if it has a valid one.
    pub overrides: Option<StickOverrides>,
    /// Why its spindle.toml was rejected (also written to spindle/config-error.txt).
    pub config_error: Option<String>,
}

/// Mounts the stick, reads its `spindle.toml` (if any) strictly, writes
/// `spindle/config-error.txt` when it is invalid (removes a stale one when it is valid), and
/// unmounts. A stick that cannot be mounted is reported as having no config.
pub fn inspect(stick: &ResultsStick, cfg: &StickConfig, runner: &CommandRunner) -> StickInspection {
    let m = match MountedStick::mount(stick, cfg, runner) {
        Ok(m) => m,
        Err(e) => {
            crate::sys::log::say!("{e:#}");
            return StickInspection::default();
        }
    };
    let path = m.root.join("spindle.toml");
    let folder = m.root.join(STICK_FOLDER);
    let err_file = folder.join("config-error.txt");
    let mut out = StickInspection::default();
    match StickOverrides::read(&path, &cfg.profiles) {
        Ok(o) => out.overrides = o,
        Err(e) => out.config_error = Some(format!("{e:#}")),
    }
    match &out.config_error {
        Some(msg) => {
            let text = format!(
                "spindle did not use this stick: its spindle.toml is invalid.\n\n{msg}\n\nFix spindle.toml (or delete it) and plug the stick in again. No results were written.\n"
            );
            let written = std::fs::create_dir_all(&folder)
                .and_then(|()| std::fs::write(&err_file, text))
                .and_then(|()| std::fs::File::open(&err_file)?.sync_all());
            if let Err(e) = written {
                crate::sys::log::say!("could not write {}: {e}", err_file.display());
            }
            crate::sys::log::say!("the stick's spindle.toml is invalid: {msg}");
        }
        None => {
            if err_file.exists() {
                let _ = std::fs::remove_file(&err_file);
            }
        }
    }
    if let Err(e) = m.unmount() {
        crate::sys::log::say!("{e:#}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_map_to_stick_problems() {
        assert_eq!(
            problem_of(&io::Error::from_raw_os_error(libc::ENOSPC)),
            StickProblem::Full
        );
        assert_eq!(
            problem_of(&io::Error::from_raw_os_error(libc::EROFS)),
            StickProblem::ReadOnly
        );
        assert_eq!(
            problem_of(&io::Error::from_raw_os_error(libc::EIO)),
            StickProblem::NotFound
        );
        let e = anyhow::Error::new(io::Error::from_raw_os_error(libc::ENOSPC)).context("x");
        assert_eq!(problem_in(&e), StickProblem::Full);
    }

    #[test]
    fn copy_to_an_already_mounted_folder_is_atomic_and_complete() {
        let d = tempfile::tempdir().unwrap();
        let store = RunStore::open(&d.path().join("runs")).unwrap();
        let run = store.create_run("pi").unwrap();
        std::fs::create_dir(run.dir.join("tests")).unwrap();
        std::fs::write(run.dir.join("summary.txt"), "ok").unwrap();
        std::fs::write(run.dir.join("tests/a.json"), "{}").unwrap();
        let stick_root = d.path().join("stick");
        std::fs::create_dir_all(stick_root.join("spindle/.old.partial")).unwrap();
        std::fs::write(stick_root.join("spindle/.old.partial/x"), "half").unwrap();
        let stick = ResultsStick {
            disk: "sdz".into(),
            device: "/dev/sdz1".into(),
            fs_type: "vfat".into(),
            label: Some("SPINDLE".into()),
            mounted_at: Some(stick_root.clone()),
        };
        let m = MountedStick {
            root: stick_root.clone(),
            ours: false,
            runner: CommandRunner::new(),
        };
        let r = copy_into(&m, &stick, &store, &StickConfig::default());
        assert_eq!(r.problem, None, "{:?}", r.error);
        assert_eq!(r.copied, vec![run.id.clone()]);
        assert!(!stick_root.join("spindle/.old.partial").exists());
        assert_eq!(r.remaining, 0);
        let on_stick = stick_root.join("spindle").join(&run.id);
        assert_eq!(
            std::fs::read_to_string(on_stick.join("tests/a.json")).unwrap(),
            "{}"
        );
        assert!(!on_stick.join(super::super::runs::COPIED_MARKER).exists());
        assert_eq!(
            std::fs::read_dir(stick_root.join("spindle"))
                .unwrap()
                .count(),
            1
        );
        assert!(store.pending().is_empty());
        // nothing pending: nothing copied
        let r = copy_into(&m, &stick, &store, &StickConfig::default());
        assert!(r.copied.is_empty() && r.problem.is_none());
    }

    #[test]
    fn not_enough_space_is_full_and_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let store = RunStore::open(&d.path().join("runs")).unwrap();
        let run = store.create_run("pi").unwrap();
        std::fs::write(run.dir.join("summary.txt"), "ok").unwrap();
        let stick_root = d.path().join("stick");
        std::fs::create_dir(&stick_root).unwrap();
        let stick = ResultsStick {
            disk: "sdz".into(),
            device: "/dev/sdz1".into(),
            fs_type: "vfat".into(),
            label: None,
            mounted_at: Some(stick_root.clone()),
        };
        let cfg = StickConfig {
            reserve_bytes: u64::MAX / 2,
            ..StickConfig::default()
        };
        let m = MountedStick {
            root: stick_root.clone(),
            ours: false,
            runner: CommandRunner::new(),
        };
        let r = copy_into(&m, &stick, &store, &cfg);
        assert_eq!(r.problem, Some(StickProblem::Full));
        assert_eq!(r.remaining, 1);
        assert!(r.error.unwrap().contains("KiB free"));
        assert_eq!(
            std::fs::read_dir(stick_root.join("spindle"))
                .unwrap()
                .count(),
            0
        );
        assert_eq!(store.pending().len(), 1);
    }
}
