//! How a run, a phase and a target stand in the results document: typed words, written as
//! `snake_case` in JSON and shown as the same words in every rendering.

use serde::{Deserialize, Serialize};

/// How a run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// In progress (or cut off by a power loss / crash before it could say otherwise).
    Running,
    /// Every phase ran (some may have failed: see the phases).
    Complete,
    /// Stopped on request (signal, abort button); partial results kept.
    Aborted,
    /// Found still `running` after a restart: power loss or crash.
    Interrupted,
    /// Nothing was benchmarked: every disk seen was left out (the bundle says why, per disk).
    NoTargets,
}

/// How a phase ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseStatus {
    Ok,
    Failed,
    /// Not run because something it depends on failed; `error` says what.
    Skipped,
    /// Cut short or not started because the run was stopped.
    Aborted,
    /// Started and not finished yet (what a bundle says while the phase runs).
    Running,
    /// In progress when the machine lost power or crashed.
    Interrupted,
}

/// What a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A disk spindle prepared (erased, or an existing filesystem).
    Disk,
    /// A directory the user named (no disk preparation).
    Directory,
}

macro_rules! words {
    ($t:ty { $($v:ident => $w:literal),* $(,)? }) => {
        impl $t {
            /// The word used in files and tables.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$v => $w),* }
            }
        }
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
words!(RunStatus { Running => "running", Complete => "complete", Aborted => "aborted", Interrupted => "interrupted", NoTargets => "no_targets" });
words!(PhaseStatus { Ok => "ok", Failed => "failed", Skipped => "skipped", Aborted => "aborted", Running => "running", Interrupted => "interrupted" });
words!(TargetKind { Disk => "disk", Directory => "directory" });
