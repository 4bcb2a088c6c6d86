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

/// Parses a sysbench size: a number with an optional binary suffix `b`, `k`, `m`, `g`, `t`
/// (case-insensitive; `K`, `KB`, `KiB` all mean 1024). `16K` → 16384, `2G` → 2147483648.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits_end == 0 {
        return Err(format!(
            "'{text}' is not a size: use a whole number with an optional suffix K, M, G or T (e.g. 16K, 2G)"
        ));
    }
    let n: u64 = t[..digits_end]
        .parse()
        .map_err(|_| format!("'{text}' is too large"))?;
    let suffix = t[digits_end..].trim().to_ascii_lowercase();
    let mult: u64 = match suffix.as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => {
            return Err(format!(
            "'{text}' has an unknown size suffix '{suffix}': use K, M, G or T (binary multiples)"
        ))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{text}' is too large"))
}

/// Parses a sysbench boolean: on/off, true/false, yes/no, 1/0.
pub fn parse_onoff(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{text}' is not a boolean: use on or off")),
    }
}

/// Formats a byte count the way sysbench 1.0 does in headers: the largest binary unit that
/// divides it exactly (`16MiB`, `16KiB`, `858993459B`).
pub fn format_size_exact(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{}{}", bytes / size, name);
        }
    }
    format!("{bytes}B")
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
    fn sizes_accept_sysbench_spellings() {
        assert_eq!(parse_size("16384").unwrap(), 16384);
        assert_eq!(parse_size("16K").unwrap(), 16384);
        assert_eq!(parse_size("16k").unwrap(), 16384);
        assert_eq!(parse_size("2G").unwrap(), 2 << 30);
        assert_eq!(parse_size("256M").unwrap(), 256 << 20);
        assert_eq!(parse_size("80G").unwrap(), 80 << 30);
        assert_eq!(parse_size("1MiB").unwrap(), 1 << 20);
        assert!(parse_size("G").unwrap_err().contains("not a size"));
        assert!(parse_size("12Q").unwrap_err().contains("suffix"));
        assert!(parse_size("99999999999999999999").is_err());
        assert!(parse_size("-1").is_err());
    }

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

    #[test]
    fn exact_sizes_format_like_sysbench() {
        assert_eq!(format_size_exact(16 << 20), "16MiB");
        assert_eq!(format_size_exact(16384), "16KiB");
        assert_eq!(format_size_exact(2 << 30), "2GiB");
        assert_eq!(format_size_exact(858_993_459), "858993459B");
    }
}
