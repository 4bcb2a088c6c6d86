//! The small manifest `prepare` leaves beside the test files, so a later run (or prepare) with
//! different options gets a clear error instead of measuring the wrong files.

use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Name of the manifest prepare leaves beside the files.
pub const MANIFEST: &str = ".spindle-fileio.json";

/// What `prepare` recorded about the file set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub file_num: u32,
    pub file_size: u64,
    pub block_size: u64,
    /// The files hold checksummed blocks (prepared, and only written since, with --validate).
    pub validate: bool,
    pub spindle_version: String,
}

impl Manifest {
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(MANIFEST)
    }
    /// Reads the manifest; `None` when there is none (e.g. files made by sysbench).
    pub fn load(dir: &Path) -> anyhow::Result<Option<Manifest>> {
        let p = Self::path(dir);
        match std::fs::read_to_string(&p) {
            Ok(t) => Ok(Some(serde_json::from_str(&t).with_context(|| {
                format!(
                    "'{}' is damaged: run `spindle fileio cleanup` and prepare again",
                    p.display()
                )
            })?)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("could not read '{}'", p.display())),
        }
    }
    pub fn save(&self, dir: &Path) -> anyhow::Result<()> {
        crate::sys::fs::write_atomic(
            &Self::path(dir),
            serde_json::to_string_pretty(self)
                .expect("manifest serialises")
                .as_bytes(),
        )
    }
}
