//! The steps a preparation is made of: running a command and recording its line, what has been
//! set up so far (to undo on failure), where a disk is mounted, and the block device of a
//! partition (the kernel's node or an offset loop device).

use crate::disk::Disk;
use crate::sys::runner::display_command;
use crate::sys::{CommandRunner, SysRoot};
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// Runs commands and records their command lines.
pub(super) struct Recorder<'a> {
    pub(super) runner: &'a CommandRunner,
    pub(super) root: &'a SysRoot,
    pub(super) commands: Vec<String>,
}

impl Recorder<'_> {
    pub(super) fn run(&mut self, program: &str, args: &[&str]) -> anyhow::Result<String> {
        self.commands.push(display_command(program, args));
        let out = self.runner.run(program, args)?;
        Ok(out.stdout)
    }
}

/// What has been set up so far, so a failure can undo it.
#[derive(Default)]
pub(super) struct Undo {
    pub(super) mounted: Option<PathBuf>,
    pub(super) offset_loop: Option<PathBuf>,
    pub(super) created_mount_dir: Option<PathBuf>,
}

impl Undo {
    pub(super) fn run(&mut self, rec: &mut Recorder<'_>) {
        if let Some(mp) = self.mounted.take() {
            let _ = rec.run("umount", &[&mp.to_string_lossy()]);
        }
        if let Some(l) = self.offset_loop.take() {
            let _ = rec.run("losetup", &["-d", &l.to_string_lossy()]);
        }
        if let Some(d) = self.created_mount_dir.take() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

pub(super) fn mount_dir(run_dir: &Path, disk: &Disk) -> PathBuf {
    run_dir
        .join("mnt")
        .join(format!("{}-{}", disk.name, disk.short_id()))
}

/// The block device of `device` (the disk itself, or one of its partitions: the kernel's node,
/// else a loop device over the partition's bytes, recorded in `undo`).
pub(super) fn partition_device(
    fresh: &Disk,
    device: &str,
    rec: &mut Recorder<'_>,
    undo: &mut Undo,
) -> anyhow::Result<PathBuf> {
    Ok(if device == fresh.name {
        fresh.path.clone()
    } else {
        let p = fresh
            .partitions
            .iter()
            .find(|p| p.name == device)
            .with_context(|| format!("{} has no partition {device}", fresh.path.display()))?;
        if p.in_kernel && rec.root.exists(&p.path) {
            p.path.clone()
        } else {
            let (Some(start), Some(size)) = (p.start_bytes, p.size_bytes) else {
                bail!(
                    "the position of {device} on {} is unknown",
                    fresh.path.display()
                );
            };
            let out = rec.run(
                "losetup",
                &[
                    "--find",
                    "--show",
                    "--offset",
                    &start.to_string(),
                    "--sizelimit",
                    &size.to_string(),
                    &fresh.path.to_string_lossy(),
                ],
            )?;
            let l = PathBuf::from(out.trim());
            undo.offset_loop = Some(l.clone());
            l
        }
    })
}
