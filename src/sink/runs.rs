//! The runs directory on the SD card: one bundle directory per run, kept until a stick has it.
//!
//! A run is "copied" once `.copied-to-stick` exists in its directory (written atomically after
//! the stick copy was renamed into place and synced). Runs not copied are never deleted; copied
//! ones beyond `keep_copied` are pruned oldest first. Run ids start with a UTC timestamp, so
//! name order is age order.

use crate::model::SuiteResult;
use crate::report::bundle::write_bundle;
use crate::sys::fs::write_atomic;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// Marker file: the run is on a stick.
pub const COPIED_MARKER: &str = ".copied-to-stick";

/// One run directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunEntry {
    pub id: String,
    pub dir: PathBuf,
    pub copied: bool,
}

/// The runs directory.
#[derive(Clone, Debug)]
pub struct RunStore {
    dir: PathBuf,
}

impl RunStore {
    /// The store at `dir` (created if missing).
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| {
            format!(
                "[appliance] runs_dir: could not create '{}' (is the SD card's data partition mounted and writable?)",
                dir.display()
            )
        })?;
        Ok(RunStore {
            dir: dir.to_path_buf(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Creates the directory of a new run, named by the run id (`<UTC timestamp>-<host>`),
    /// made unique with `-N` if needed.
    pub fn create_run(&self, host: &str) -> anyhow::Result<RunEntry> {
        let base = crate::model::run_id(host, crate::sys::clock::unix_now());
        for n in 0..100 {
            let id = if n == 0 {
                base.clone()
            } else {
                format!("{base}-{n}")
            };
            let dir = self.dir.join(&id);
            match std::fs::create_dir(&dir) {
                Ok(()) => {
                    return Ok(RunEntry {
                        id,
                        dir,
                        copied: false,
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("could not create run directory '{}'", dir.display())
                    })
                }
            }
        }
        anyhow::bail!(
            "could not find a free run directory name in '{}'",
            self.dir.display()
        )
    }

    /// Every run, oldest first (hidden and non-directory entries are skipped).
    pub fn list(&self) -> Vec<RunEntry> {
        let mut v: Vec<RunEntry> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| {
                let id = e.file_name().to_str()?.to_string();
                (!id.starts_with('.')).then(|| RunEntry {
                    copied: e.path().join(COPIED_MARKER).exists(),
                    dir: e.path(),
                    id,
                })
            })
            .collect();
        v.sort_by(|a, b| a.id.cmp(&b.id));
        v
    }

    /// Runs not yet on a stick, oldest first.
    pub fn pending(&self) -> Vec<RunEntry> {
        self.list().into_iter().filter(|r| !r.copied).collect()
    }

    /// Records that run `id` is on the stick `label`.
    pub fn mark_copied(&self, id: &str, label: &str) -> anyhow::Result<()> {
        let text = format!(
            "copied to the results stick '{label}' at {}\n",
            crate::sys::clock::now_rfc3339()
        );
        write_atomic(&self.dir.join(id).join(COPIED_MARKER), text.as_bytes())
    }

    /// Deletes copied runs beyond the newest `keep`. Returns the ids removed.
    pub fn prune(&self, keep: usize) -> Vec<String> {
        let copied: Vec<RunEntry> = self.list().into_iter().filter(|r| r.copied).collect();
        let excess = copied.len().saturating_sub(keep);
        let mut removed = Vec::new();
        for r in copied.into_iter().take(excess) {
            match std::fs::remove_dir_all(&r.dir) {
                Ok(()) => removed.push(r.id),
                Err(e) => {
                    crate::sys::log::say!("could not delete the old run '{}': {e}", r.dir.display())
                }
            }
        }
        removed
    }

    /// After a restart: every uncopied run whose results say `running` (power cut, crash) is
    /// marked `interrupted`; a run directory without results gets an INTERRUPTED.txt. Returns
    /// the ids marked. Call before starting a new run.
    pub fn recover_interrupted(&self) -> Vec<String> {
        let mut marked = Vec::new();
        for r in self.pending() {
            let json = r.dir.join("results.json");
            match std::fs::read_to_string(&json) {
                Ok(text) => match SuiteResult::from_json(&text, &json.display().to_string()) {
                    Ok(mut s) => {
                        if s.mark_interrupted() {
                            match write_bundle(&r.dir, &s) {
                                Ok(()) => marked.push(r.id),
                                Err(e) => {
                                    crate::sys::log::say!(
                                        "could not mark run '{}' interrupted: {e:#}",
                                        r.id
                                    )
                                }
                            }
                        }
                    }
                    Err(e) => {
                        let note = format!("results.json could not be read after a restart: {e}\n");
                        let _ = write_atomic(&r.dir.join("INTERRUPTED.txt"), note.as_bytes());
                        marked.push(r.id);
                    }
                },
                Err(_) => {
                    if !r.dir.join("ERROR.txt").exists() && !r.dir.join("INTERRUPTED.txt").exists()
                    {
                        let note = "This run was interrupted (power loss or crash) before its first results were written.\n";
                        let _ = write_atomic(&r.dir.join("INTERRUPTED.txt"), note.as_bytes());
                        marked.push(r.id);
                    }
                }
            }
        }
        marked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_time_ordered_and_unique() {
        let d = tempfile::tempdir().unwrap();
        let s = RunStore::open(&d.path().join("runs")).unwrap();
        let a = s.create_run("pi").unwrap();
        let b = s.create_run("pi").unwrap();
        assert_ne!(a.id, b.id);
        assert!(a.id.ends_with("-pi"));
        std::fs::create_dir(s.dir().join(".hidden")).unwrap();
        std::fs::write(s.dir().join("file"), "").unwrap();
        assert_eq!(s.list().len(), 2);
        assert_eq!(s.pending().len(), 2);
    }

    #[test]
    fn copied_runs_are_pruned_but_pending_ones_never() {
        let d = tempfile::tempdir().unwrap();
        let s = RunStore::open(d.path()).unwrap();
        for id in [
            "20260101-000001-pi",
            "20260101-000002-pi",
            "20260101-000003-pi",
            "20260101-000004-pi",
        ] {
            std::fs::create_dir(d.path().join(id)).unwrap();
        }
        s.mark_copied("20260101-000001-pi", "SPINDLE").unwrap();
        s.mark_copied("20260101-000003-pi", "SPINDLE").unwrap();
        s.mark_copied("20260101-000004-pi", "SPINDLE").unwrap();
        assert_eq!(s.pending().len(), 1);
        assert_eq!(s.prune(1), vec!["20260101-000001-pi", "20260101-000003-pi"]);
        let left: Vec<String> = s.list().into_iter().map(|r| r.id).collect();
        assert_eq!(left, vec!["20260101-000002-pi", "20260101-000004-pi"]);
        assert!(s.prune(0).contains(&"20260101-000004-pi".to_string()));
        assert_eq!(s.list().len(), 1);
    }

    #[test]
    fn unfinished_runs_are_marked_interrupted() {
        let d = tempfile::tempdir().unwrap();
        let s = RunStore::open(d.path()).unwrap();
        let empty = s.create_run("pi").unwrap();
        let marked = s.recover_interrupted();
        assert_eq!(marked, vec![empty.id.clone()]);
        assert!(empty.dir.join("INTERRUPTED.txt").exists());
        // a second start does not mark it again
        assert!(s.recover_interrupted().is_empty());
    }
}
