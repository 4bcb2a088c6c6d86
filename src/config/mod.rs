//! Configuration: command-line values and TOML files turned into plain engine configs.
//!
//! Parsers here are pure (`parse_*(&str)`) so every accepted spelling is unit-tested; errors
//! name the option and say what would be accepted.

pub mod appliance;
pub mod fileio;
pub mod oltp;
pub mod profile;
pub mod spindle;

use anyhow::bail;

/// Parses a sysbench boolean: on/off, true/false, yes/no, 1/0.
pub fn parse_onoff(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{text}' is not a boolean: use on or off")),
    }
}

/// Rejects `value` for `flag` unless `ok`; a helper to keep validation code flat.
pub fn ensure(ok: bool, flag: &str, why: impl std::fmt::Display) -> anyhow::Result<()> {
    if !ok {
        bail!("{flag}: {why}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_accept_sysbench_spellings() {
        for t in ["on", "ON", "true", "yes", "1"] {
            assert!(parse_onoff(t).unwrap());
        }
        for t in ["off", "false", "no", "0"] {
            assert!(!parse_onoff(t).unwrap());
        }
        assert!(parse_onoff("maybe").is_err());
    }
}
