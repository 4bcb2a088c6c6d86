//! Undoing a preparation after the run: the work folder on an existing filesystem, the mount,
//! spindle's offset loop device and the mount point; and a guard that does it on drop.

use super::target::PreparedTarget;
use crate::sys::CommandRunner;
use anyhow::Context;

/// Undoes [`prepare`]: removes the `spindle/` folder (existing-filesystem mode), unmounts,
/// detaches spindle's offset loop device and removes the mount point. Every step is tried; the
/// first failure is returned.
pub fn release(target: &PreparedTarget, runner: &CommandRunner) -> anyhow::Result<()> {
    let mut first_err: Option<anyhow::Error> = None;
    let mut keep = |r: anyhow::Result<()>| {
        if let Err(e) = r {
            first_err.get_or_insert(e);
        }
    };
    if !target.erased && target.work_dir != target.mount_point {
        keep(
            std::fs::remove_dir_all(&target.work_dir)
                .or_else(|e| {
                    if e.kind() == std::io::ErrorKind::NotFound {
                        Ok(())
                    } else {
                        Err(e)
                    }
                })
                .with_context(|| format!("could not remove {}", target.work_dir.display())),
        );
    }
    let mp = target.mount_point.to_string_lossy().into_owned();
    keep(unmount(runner, &mp));
    if let Some(l) = &target.offset_loop {
        let l = l.to_string_lossy().into_owned();
        keep(runner.run("losetup", &["-d", &l]).map(|_| ()));
    }
    let _ = std::fs::remove_dir(&target.mount_point);
    match first_err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `umount MP`, tried again for up to 3 s while the kernel says the filesystem is busy: a
/// process that walks the tree (an indexer, a file manager, `find /`) can hold it for a moment
/// after the run has closed everything. Any other failure, or still busy, is the error.
fn unmount(runner: &CommandRunner, mp: &str) -> anyhow::Result<()> {
    let mut tries = 0;
    loop {
        match runner.run("umount", &[mp]) {
            Ok(_) => return Ok(()),
            Err(e) if tries < 30 && format!("{e:#}").contains("target is busy") => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("could not unmount {mp}; unmount it by hand (umount {mp})")
                })
            }
        }
    }
}

/// Owns a prepared target and releases it when dropped, so an early return or a panic between
/// [`prepare`] and [`release`] never leaves a mount or loop device behind.
pub struct ReleaseGuard {
    target: Option<PreparedTarget>,
    runner: CommandRunner,
}

impl ReleaseGuard {
    pub fn new(target: PreparedTarget, runner: CommandRunner) -> Self {
        ReleaseGuard {
            target: Some(target),
            runner,
        }
    }

    /// The guarded target.
    pub fn target(&self) -> &PreparedTarget {
        self.target
            .as_ref()
            .expect("ReleaseGuard holds its target until dropped or released")
    }

    /// Releases now and reports the outcome (dropping would only log it).
    pub fn release(mut self) -> anyhow::Result<()> {
        match self.target.take() {
            Some(t) => release(&t, &self.runner),
            None => Ok(()),
        }
    }
}

impl Drop for ReleaseGuard {
    fn drop(&mut self) {
        if let Some(t) = self.target.take() {
            if let Err(e) = release(&t, &self.runner) {
                crate::sys::log::say!("releasing {}: {e:#}", t.mount_point.display());
            }
        }
    }
}
