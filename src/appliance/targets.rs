//! Disks as benchmark targets, shared by `spindle suite --disk` and the daemon: which disks are
//! candidates (every disk discovered, or only the ones named), what would be done to each
//! (pure), and preparing them (erase or use an existing filesystem, mount) with guards that
//! release them after the run.

use super::suite::{SuiteObserver, TargetSpec};
use crate::disk::{self, Disk, DiskPolicy};
use crate::provision::prepare::{self, Preparation, ReleaseGuard};
use crate::report::suite::Skipped;
use crate::sys::CommandRunner;
use std::path::Path;

/// The disks a run considers among `scanned` (every block device). With `names` empty: every
/// disk `spindle disks` lists. Otherwise only the disks a name matches ([`Disk::is_named_by`]:
/// serial, by-id name, stable id), loop devices included; named disks may be non-USB, so the
/// returned policy allows that. Every other rule of `policy` still applies, and naming a disk
/// here never allows erasing its data (that is `erase = [...]`).
pub fn candidates(
    scanned: &[Disk],
    names: &[String],
    policy: &DiskPolicy,
) -> (Vec<Disk>, DiskPolicy) {
    let mut policy = policy.clone();
    if names.is_empty() {
        let all = scanned
            .iter()
            .filter(|d| disk::discover::is_listed(d, false))
            .cloned()
            .collect();
        return (all, policy);
    }
    policy.allow_non_usb = true;
    let named = scanned
        .iter()
        .filter(|d| names.iter().any(|n| d.is_named_by(n)))
        .cloned()
        .collect();
    (named, policy)
}

/// The name and id a skipped disk is listed under.
fn skipped(d: &Disk, reason: String) -> Skipped {
    Skipped {
        device: d.path.display().to_string(),
        id: d.stable_id.clone().unwrap_or_else(|| d.name.clone()),
        reason,
    }
}

/// Decides, purely, what to do with each candidate: the disks to prepare with their plan, and
/// the ones left alone with the reason. The disk named `stick` (the results stick's) is never
/// a target, whatever the policy says.
pub fn plan_disks(
    candidates: Vec<Disk>,
    policy: &DiskPolicy,
    stick: Option<&str>,
) -> (Vec<(Disk, Preparation)>, Vec<Skipped>) {
    let mut planned = Vec::new();
    let mut left_out = Vec::new();
    for d in candidates {
        if stick == Some(d.name.as_str()) {
            left_out.push(skipped(
                &d,
                "results stick (never a benchmark target)".into(),
            ));
            continue;
        }
        match prepare::plan_preparation(&d, policy) {
            Preparation::Skip { reason } => left_out.push(skipped(&d, reason)),
            plan => planned.push((d, plan)),
        }
    }
    (planned, left_out)
}

/// Disks made ready for a run.
pub struct PreparedDisks {
    /// One per prepared disk, named by the disk's kernel name.
    pub targets: Vec<TargetSpec>,
    /// Disks that could not be prepared, with the error.
    pub skipped: Vec<Skipped>,
    /// Unmount and release the prepared disks: call `release` after the run (dropping them
    /// releases too, logging errors).
    pub guards: Vec<ReleaseGuard>,
}

/// Prepares each planned disk (GPT + filesystem + mount under `work_dir`, or the existing
/// filesystem) through `runner`, recording the exact commands in its [`TargetSpec`]. A disk that
/// fails is skipped with the error (what was set up is undone); the others still run.
pub fn prepare_disks(
    planned: Vec<(Disk, Preparation)>,
    policy: &DiskPolicy,
    work_dir: &Path,
    runner: &CommandRunner,
    observer: &dyn SuiteObserver,
) -> PreparedDisks {
    let mut out = PreparedDisks {
        targets: Vec::new(),
        skipped: Vec::new(),
        guards: Vec::new(),
    };
    for (d, plan) in planned {
        match prepare::prepare(&d, &plan, policy, work_dir, runner) {
            Ok(t) => {
                out.targets.push(TargetSpec {
                    name: d.name.clone(),
                    dir: t.work_dir.clone(),
                    kind: "disk".into(),
                    description: disk_description(&d),
                    disk: serde_json::to_value(&d).ok(),
                    preparation: t.commands.clone(),
                });
                out.guards.push(ReleaseGuard::new(t, runner.clone()));
            }
            Err(e) => {
                observer.message(&format!("could not prepare {}: {e:#}", d.path.display()));
                out.skipped
                    .push(skipped(&d, format!("preparation failed: {e:#}")));
            }
        }
    }
    out
}

/// Releases every guard, reporting failures to `observer` (a failed release leaves the mount
/// point and its contents in place).
pub fn release_disks(guards: Vec<ReleaseGuard>, observer: &dyn SuiteObserver) {
    for g in guards {
        if let Err(e) = g.release() {
            observer.message(&format!("releasing a disk failed: {e:#}"));
        }
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
        s.push_str(&format!("{:.1} GB", b as f64 / 1e9));
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

    #[test]
    fn named_disks_are_the_only_candidates_and_may_be_non_usb() {
        let scanned = vec![
            loop_disk("loop0", "/t/a.img"),
            loop_disk("loop1", "/t/b.img"),
            loop_disk("loop2", "/t/other.img"),
        ];
        let policy = DiskPolicy::default();
        // unnamed: loop devices are not listed disks at all
        let (c, p) = candidates(&scanned, &[], &policy);
        assert!(c.is_empty());
        assert!(!p.allow_non_usb);
        let names = vec!["file:/t/a.img".to_string(), "/t/b.img".to_string()];
        let (c, p) = candidates(&scanned, &names, &policy);
        let got: Vec<&str> = c.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(got, ["loop0", "loop1"]);
        assert!(p.allow_non_usb);
        // kernel names are not stable and never match
        let (c, _) = candidates(
            &scanned,
            &["loop2".to_string(), "/dev/loop2".into()],
            &policy,
        );
        assert!(c.is_empty());
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
        let names: Vec<String> = disks.iter().map(|d| d.stable_id.clone().unwrap()).collect();
        let (c, policy) = candidates(&disks, &names, &DiskPolicy::default());
        let (planned, skipped) = plan_disks(c, &policy, Some("loop2"));
        assert_eq!(planned.len(), 1);
        assert_eq!(planned[0].0.name, "loop0");
        assert!(matches!(
            planned[0].1,
            Preparation::Erase { named: false, .. }
        ));
        assert_eq!(skipped.len(), 2);
        assert!(skipped[0].reason.contains("holds data"), "{:?}", skipped[0]);
        assert_eq!(skipped[0].id, "file:/t/data.img");
        assert!(skipped[1].reason.contains("results stick"));
    }
}
