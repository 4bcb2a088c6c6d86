//! Configuration: command-line values and TOML files turned into plain engine configs.
//!
//! Parsers here are pure (`parse_*(&str)`) so every accepted spelling is unit-tested; errors
//! name the option and say what would be accepted.

pub mod appliance;
pub mod cliff;
pub mod fileio;
mod fileio_set;
pub mod oltp;
pub mod profile;
pub mod regimes;
pub mod repeat;
pub mod spindle;
pub mod steady;
pub mod tpcc;

use anyhow::bail;

/// Rejects `value` for `flag` unless `ok`; a helper to keep validation code flat.
pub fn ensure(ok: bool, flag: &str, why: impl std::fmt::Display) -> anyhow::Result<()> {
    if !ok {
        bail!("{flag}: {why}");
    }
    Ok(())
}
