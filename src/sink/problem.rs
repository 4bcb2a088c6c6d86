//! Why the results stick could not take the results, classified from the error the copy met
//! (the LEDs show it as a count of red flashes: `status::pattern`).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::io;

/// Why the results stick cannot take the results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StickProblem {
    /// The stick went away (pulled mid-copy, or could not be mounted).
    NotFound,
    /// Not enough free space for the pending runs.
    Full,
    /// Write-protected or mounted read-only.
    ReadOnly,
}

impl fmt::Display for StickProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StickProblem::NotFound => "stick not found (removed or unreadable)",
            StickProblem::Full => "stick full",
            StickProblem::ReadOnly => "stick read-only",
        })
    }
}

/// Classifies an I/O error on the stick.
pub fn problem_of(e: &io::Error) -> StickProblem {
    match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) | Some(libc::EFBIG) => StickProblem::Full,
        Some(libc::EROFS) | Some(libc::EACCES) | Some(libc::EPERM) => StickProblem::ReadOnly,
        _ => StickProblem::NotFound,
    }
}

pub(super) fn problem_in(e: &anyhow::Error) -> StickProblem {
    e.chain()
        .find_map(|c| c.downcast_ref::<io::Error>())
        .map(problem_of)
        .unwrap_or(StickProblem::NotFound)
}
