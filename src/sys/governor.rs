//! The CPU frequency governor over a run: spindle pins `performance` on every cpufreq policy
//! for the run and puts the governors it found back afterwards, recording both. A governor
//! that lowers the clock while the CPU waits on I/O (ondemand without `io_is_busy`) is a known
//! cause of slow USB writes on Raspberry Pis, and it makes figures depend on load history.

use super::SysRoot;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

const POLICIES: &str = "/sys/devices/system/cpu/cpufreq";

/// What the run recorded about the governor (results.json's `governor`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct GovernorRecord {
    /// The governors found (`ondemand`, or `policy0 ondemand, policy4 schedutil`).
    pub before: String,
    /// The governors while the run measured.
    pub during: String,
    /// Why it could not be pinned, when it could not (not root, no `performance`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_pinned: Option<String>,
    /// Whether the governors found were put back after the run.
    pub restored: bool,
}

impl GovernorRecord {
    /// The run measured under `performance` on every policy.
    pub fn performance(&self) -> bool {
        self.during == "performance"
    }
}

/// The governors pinned for a run; [`Pinned::restore`] (or dropping it) puts them back.
#[derive(Debug)]
pub struct Pinned {
    /// (scaling_governor file, the governor found), for the ones spindle changed.
    changed: Vec<(PathBuf, String)>,
    pub record: GovernorRecord,
}

/// (policy name, its scaling_governor file) of every cpufreq policy, in name order.
fn policies(root: &SysRoot) -> Vec<(String, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(root.path(POLICIES)) else {
        return vec![];
    };
    let mut v: Vec<(String, PathBuf)> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let f = e.path().join("scaling_governor");
            (name.starts_with("policy") && f.is_file()).then_some((name, f))
        })
        .collect();
    v.sort();
    v
}

/// `ondemand` when every policy says the same, else `policy0 ondemand, policy4 schedutil`.
fn describe(each: &[(String, String)]) -> String {
    match each.first() {
        Some((_, g)) if each.iter().all(|(_, x)| x == g) => g.clone(),
        _ => {
            let v: Vec<String> = each.iter().map(|(p, g)| format!("{p} {g}")).collect();
            v.join(", ")
        }
    }
}

/// The governor a scaling_governor file names; `None` when it cannot be read or is empty.
fn governor_of(f: &PathBuf) -> Option<String> {
    let g = std::fs::read_to_string(f).ok()?;
    let g = g.trim();
    (!g.is_empty()).then(|| g.to_string())
}

/// (policy, governor) of each of `pol`, in its order (one per policy, so the two zip).
fn read_all(pol: &[(String, PathBuf)]) -> Vec<(String, String)> {
    pol.iter()
        .map(|(p, f)| (p.clone(), governor_of(f).unwrap_or_default()))
        .collect()
}

/// Pins `performance` on every policy of `root`. `None` on a machine without cpufreq (most
/// VMs): no governor to pin or judge.
pub fn pin(root: &SysRoot) -> Option<Pinned> {
    // Only the policies whose governor can be read: `before` pairs with them one to one.
    let pol: Vec<(String, PathBuf)> = policies(root)
        .into_iter()
        .filter(|(_, f)| governor_of(f).is_some())
        .collect();
    let before = read_all(&pol);
    if before.is_empty() {
        return None;
    }
    let mut changed = Vec::new();
    let mut not_pinned = None;
    for ((name, f), (_, was)) in pol.iter().zip(&before) {
        if was == "performance" {
            continue;
        }
        let avail = std::fs::read_to_string(f.with_file_name("scaling_available_governors"))
            .unwrap_or_default();
        if !avail.split_whitespace().any(|g| g == "performance") {
            not_pinned = Some(format!(
                "{name} offers no performance governor ({})",
                avail.trim()
            ));
            continue;
        }
        match std::fs::write(f, "performance") {
            Ok(()) => changed.push((f.clone(), was.clone())),
            Err(e) => {
                not_pinned = Some(format!(
                    "could not write {}: {e} (pinning needs root)",
                    f.display()
                ))
            }
        }
    }
    let record = GovernorRecord {
        before: describe(&before),
        during: describe(&read_all(&pol)),
        not_pinned,
        restored: false,
    };
    Some(Pinned { changed, record })
}

impl Pinned {
    /// Puts back the governors found; the record says whether every one went back.
    pub fn restore(&mut self) -> &GovernorRecord {
        let mut ok = true;
        for (f, was) in self.changed.drain(..) {
            ok &= std::fs::write(&f, &was).is_ok();
        }
        self.record.restored = ok;
        &self.record
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        self.restore();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sysfs tree with two policies on `gov`, offering `avail`.
    fn tree(gov: &str, avail: &str) -> (tempfile::TempDir, SysRoot) {
        let d = tempfile::tempdir().unwrap();
        for p in ["policy0", "policy4"] {
            let dir = d.path().join("sys/devices/system/cpu/cpufreq").join(p);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("scaling_governor"), format!("{gov}\n")).unwrap();
            std::fs::write(dir.join("scaling_available_governors"), avail).unwrap();
        }
        let root = SysRoot::new(d.path());
        (d, root)
    }

    fn governor(d: &tempfile::TempDir, p: &str) -> String {
        let f = d
            .path()
            .join("sys/devices/system/cpu/cpufreq")
            .join(p)
            .join("scaling_governor");
        std::fs::read_to_string(f).unwrap().trim().to_string()
    }

    #[test]
    fn performance_is_pinned_for_the_run_and_the_governors_put_back() {
        let (d, root) = tree(
            "ondemand",
            "conservative ondemand userspace powersave performance schedutil\n",
        );
        let mut p = pin(&root).expect("two policies");
        assert_eq!(governor(&d, "policy0"), "performance");
        assert_eq!(p.record.before, "ondemand");
        assert_eq!(p.record.during, "performance");
        assert!(p.record.performance() && p.record.not_pinned.is_none());
        assert!(p.restore().restored);
        assert_eq!(governor(&d, "policy4"), "ondemand");
        // Dropped without an explicit restore (an early return): put back all the same.
        drop(pin(&root).unwrap());
        assert_eq!(governor(&d, "policy0"), "ondemand");
    }

    #[test]
    fn a_policy_without_a_governor_does_not_shift_the_others() {
        let (d, root) = tree("ondemand", "ondemand performance\n");
        let f = |p: &str| {
            d.path()
                .join("sys/devices/system/cpu/cpufreq")
                .join(p)
                .join("scaling_governor")
        };
        // policy0 names no governor; policy4 is pinned and put back as its own.
        std::fs::write(f("policy0"), "\n").unwrap();
        let mut p = pin(&root).unwrap();
        assert_eq!(
            (p.record.before.as_str(), p.record.during.as_str()),
            ("ondemand", "performance")
        );
        assert_eq!(governor(&d, "policy4"), "performance");
        p.restore();
        assert_eq!(governor(&d, "policy4"), "ondemand");
        assert_eq!(governor(&d, "policy0"), "");
    }

    #[test]
    fn a_governor_that_cannot_be_pinned_is_recorded_with_why() {
        let (_d, root) = tree("schedutil", "schedutil powersave\n");
        let p = pin(&root).unwrap();
        assert_eq!(p.record.during, "schedutil");
        assert!(!p.record.performance());
        assert!(p
            .record
            .not_pinned
            .as_deref()
            .unwrap()
            .contains("no performance governor"));
        // No cpufreq at all (a VM): nothing to pin.
        let empty = tempfile::tempdir().unwrap();
        assert!(pin(&SysRoot::new(empty.path())).is_none());
    }
}
