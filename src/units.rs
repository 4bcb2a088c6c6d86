//! Sizes and rates: the one parser and the formatters every module uses. Binary units
//! everywhere (KiB, MiB, GiB: powers of 1024), as sysbench and the kernel's block layer count.

/// Bytes in a KiB, MiB, GiB, TiB.
pub const KIB: u64 = 1 << 10;
pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;
pub const TIB: u64 = 1 << 40;

/// Parses a size: a number (decimals allowed: `1.5G`) with an optional binary suffix `b`, `k`,
/// `m`, `g`, `t` (case-insensitive; `K`, `KB`, `KiB` all mean 1024). `16K` → 16384, `2G` →
/// 2147483648. The error says what was wrong; callers add the option or key it came from.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() || num.starts_with('.') || num.ends_with('.') {
        return Err(format!(
            "'{text}' is not a size: use a number with an optional suffix K, M, G or T (e.g. 16K, 2G)"
        ));
    }
    let suffix = unit.trim().to_ascii_lowercase();
    let mult: u64 = match suffix.as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => KIB,
        "m" | "mb" | "mib" => MIB,
        "g" | "gb" | "gib" => GIB,
        "t" | "tb" | "tib" => TIB,
        _ => {
            return Err(format!(
            "'{text}' has an unknown size suffix '{suffix}': use K, M, G or T (binary multiples)"
        ))
        }
    };
    if let Ok(n) = num.parse::<u64>() {
        return n
            .checked_mul(mult)
            .ok_or_else(|| format!("'{text}' is too large"));
    }
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a size: use a number like 512M or 1.5G"))?;
    let bytes = n * mult as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(format!("'{text}' is too large"));
    }
    Ok(bytes as u64)
}

/// A size as the user typed it (`81900M`) and the bytes it means: messages about it can then
/// speak in the user's unit ([`in_unit_of`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypedSize {
    pub bytes: u64,
    pub text: String,
}

impl TypedSize {
    /// Parses like [`parse_size`], keeping the text.
    pub fn parse(text: &str) -> Result<TypedSize, String> {
        Ok(TypedSize {
            bytes: parse_size(text)?,
            text: text.trim().to_string(),
        })
    }
}

/// `bytes` in the unit of `typed` (a size as the user wrote it: `80G`, `81900M`, `16384`), with
/// the user's own suffix: whole when exact (`81920M`), else with up to two decimals (`819.2M`;
/// three significant digits below one unit).
pub fn in_unit_of(bytes: u64, typed: &str) -> String {
    let t = typed.trim();
    let suffix = &t[t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len())..];
    let unit = match suffix.trim().to_ascii_lowercase().as_str() {
        "k" | "kb" | "kib" => KIB,
        "m" | "mb" | "mib" => MIB,
        "g" | "gb" | "gib" => GIB,
        "t" | "tb" | "tib" => TIB,
        _ => 1,
    };
    let suffix = if unit == 1 { "" } else { suffix.trim() };
    if bytes.is_multiple_of(unit) {
        return format!("{}{suffix}", bytes / unit);
    }
    let v = bytes as f64 / unit as f64;
    // Two decimals, or three significant digits below 1 (`0.000977G`, never `0G`).
    let decimals = if v >= 1.0 {
        2
    } else {
        (2 - v.log10().floor() as i32).clamp(2, 9) as usize
    };
    let v = format!("{v:.decimals$}");
    let v = v.trim_end_matches('0').trim_end_matches('.');
    format!("{v}{suffix}")
}

/// A byte count the way sysbench 1.0 prints it in headers: the largest binary unit that divides
/// it exactly (`16MiB`, `16KiB`, `858993459B`).
pub fn format_size_exact(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [("TiB", TIB), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)];
    for (name, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{}{}", bytes / size, name);
        }
    }
    format!("{bytes}B")
}

/// A byte count for people, one decimal in the largest binary unit (`465.8 GiB`, `512 B`).
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A byte count as my.cnf takes it: whole G, M or K when exact (`1536M`), else bytes.
pub fn my_cnf_size(bytes: u64) -> String {
    for (suffix, unit) in [("G", GIB), ("M", MIB), ("K", KIB)] {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

/// `text` cut to at most `max` characters, with `…` where it was cut (for echoing untrusted
/// input in messages).
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// `1 thread`, `4 threads`: a count and its noun, the plural with an `s`.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Bytes as MiB (a float, for rates and ratios).
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / MIB as f64
}

/// The value of a word-valued setting (a unit-only serde enum such as a test mode) named by
/// `word` as it is written in a document: one spelling for spindle.toml, profiles and command
/// lines. `None` when no value has that name.
pub fn from_word<T: serde::de::DeserializeOwned>(word: &str) -> Option<T> {
    use serde::de::IntoDeserializer;
    T::deserialize(IntoDeserializer::<serde::de::value::Error>::into_deserializer(word)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_say_one_thread_and_two_threads() {
        assert_eq!(count(1, "thread"), "1 thread");
        assert_eq!(count(0, "warehouse"), "0 warehouses");
        assert_eq!(count(50, "connection"), "50 connections");
    }

    #[test]
    fn sizes_accept_sysbench_and_my_cnf_spellings() {
        assert_eq!(parse_size("16384").unwrap(), 16384);
        assert_eq!(parse_size("16K").unwrap(), 16384);
        assert_eq!(parse_size("16k").unwrap(), 16384);
        assert_eq!(parse_size("2G").unwrap(), 2 << 30);
        assert_eq!(parse_size("256M").unwrap(), 256 << 20);
        assert_eq!(parse_size("80G").unwrap(), 80 << 30);
        assert_eq!(parse_size("1MiB").unwrap(), 1 << 20);
        assert_eq!(parse_size("512 MiB").unwrap(), 512 << 20);
        assert_eq!(parse_size("1.5G").unwrap(), 1536 << 20);
        assert!(parse_size("G").unwrap_err().contains("not a size"));
        assert!(parse_size("").unwrap_err().contains("not a size"));
        assert!(parse_size("12Q").unwrap_err().contains("suffix"));
        assert!(parse_size("99999999999999999999").is_err());
        assert!(parse_size("99999999999T")
            .unwrap_err()
            .contains("too large"));
        assert!(parse_size("-1").is_err());
        assert!(parse_size("1.2.3G").is_err());
    }

    #[test]
    fn sizes_speak_in_the_unit_the_user_typed() {
        assert_eq!(in_unit_of(80 << 30, "81900M"), "81920M");
        assert_eq!(in_unit_of(858_993_459, "81900M"), "819.2M");
        assert_eq!(in_unit_of(858_783_744, "81900M"), "819M");
        assert_eq!(in_unit_of(80 << 30, "80G"), "80G");
        assert_eq!(in_unit_of(3 << 29, "2g"), "1.5g");
        assert_eq!(in_unit_of(1 << 20, "2GiB"), "0.000977GiB");
        assert_eq!(in_unit_of(5000, "16384"), "5000");
        let t = TypedSize::parse(" 81900M ").unwrap();
        assert_eq!((t.bytes, t.text.as_str()), (81900 << 20, "81900M"));
        assert!(TypedSize::parse("12Q").is_err());
    }

    #[test]
    fn exact_sizes_format_like_sysbench() {
        assert_eq!(format_size_exact(16 << 20), "16MiB");
        assert_eq!(format_size_exact(16384), "16KiB");
        assert_eq!(format_size_exact(2 << 30), "2GiB");
        assert_eq!(format_size_exact(858_993_459), "858993459B");
    }

    #[test]
    fn human_and_my_cnf_sizes() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(1 << 30), "1.0 GiB");
        assert_eq!(human_size(500_107_862_016), "465.8 GiB");
        assert_eq!(my_cnf_size(1536 << 20), "1536M");
        assert_eq!(my_cnf_size(2 << 30), "2G");
        assert_eq!(my_cnf_size(1000), "1000");
        assert_eq!(shorten("abc", 5), "abc");
        assert_eq!(shorten("abcdef", 4), "abc…");
    }
}
