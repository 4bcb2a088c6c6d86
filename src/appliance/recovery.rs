//! What the daemon clears at start after a power cut or a crash: runs left `running` are marked
//! interrupted (kept, copied to the next stick), a stale stick mount is undone, and the dead run's
//! disk mounts and mount-point folders under the work directory are removed.

use crate::config::appliance::ApplianceSettings;
use crate::sink::RunStore;
use crate::sys::{CommandRunner, SysRoot, System};
use std::path::Path;

/// Everything a run cut short left behind, cleared before the daemon's loop starts.
pub(super) fn recover(store: &RunStore, settings: &ApplianceSettings, sys: &System) {
    for id in store.recover_interrupted() {
        crate::sys::log::say!("run {id} was interrupted (power loss or crash); it is kept and will be copied to the stick");
    }
    crate::sink::stick::clear_stale_mount(&settings.stick.mount_dir, &sys.runner);
    clear_dead_runs(&store.dir().join(".work"), &sys.root, &sys.runner);
}

/// What a run cut short by a power loss or crash left in the work directory (`.work` of the
/// runs directory): mounts of its disks (unmounted lazily) and mount-point folders (removed
/// when empty; a folder that still holds files is left alone and reported).
fn clear_dead_runs(work: &Path, root: &SysRoot, runner: &CommandRunner) {
    if !work.exists() {
        return;
    }
    let mounts = root.read_string("/proc/self/mounts").unwrap_or_default();
    let mut under: Vec<&str> = mounts
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter(|mp| Path::new(mp).starts_with(work))
        .collect();
    under.sort_by_key(|mp| std::cmp::Reverse(mp.len()));
    for mp in under {
        crate::sys::log::say!("unmounting {mp}, left by an interrupted run");
        if let Err(e) = runner.run("umount", &["-l", mp]) {
            crate::sys::log::say!("{e:#}");
        }
    }
    remove_empty_dirs(work);
    if work.exists() {
        crate::sys::log::say!(
            "'{}' still holds files of an earlier run; they are kept",
            work.display()
        );
    }
}

/// Removes `dir` and its subdirectories if they are all empty. Never removes a file, so a
/// mount point left mounted (a failed release) keeps its contents.
pub(super) fn remove_empty_dirs(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_dirs(&e.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_empty_work_directories_are_removed() {
        let d = tempfile::tempdir().unwrap();
        let w = d.path().join("work");
        std::fs::create_dir_all(w.join("mnt/sda")).unwrap();
        remove_empty_dirs(&w);
        assert!(!w.exists());
        std::fs::create_dir_all(w.join("mnt/sda")).unwrap();
        std::fs::write(w.join("mnt/sda/data"), "x").unwrap();
        std::fs::create_dir_all(w.join("mnt/sdb")).unwrap();
        remove_empty_dirs(&w);
        assert!(w.join("mnt/sda/data").exists());
        assert!(!w.join("mnt/sdb").exists());
    }
}
