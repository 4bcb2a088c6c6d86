//! A profile's `[cliff]`: the sustained sequential write that finds the disk's SLC-cache cliff
//! (`fileio::sustained`, `stats::cliff`), bounded by a size, a time and the free space less a
//! margin. Resolved once into the engine's [`SustainedConfig`] (the directory is the target's,
//! set when the phase runs); every error names its key.

use crate::fileio::sustained::SustainedConfig;
use serde::Deserialize;
use std::time::Duration;

/// `[cliff]` as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CliffProfile {
    /// The most to write (`64G`): a disk whose cache is larger shows "no cliff up to" this.
    pub size: String,
    /// The longest time to write, seconds (at least 1).
    pub time: u64,
    /// What the filesystem keeps free: the write stops this far from full [1G].
    #[serde(default)]
    pub keep_free: Option<String>,
    /// Bytes per request, a multiple of 4 KiB (O_DIRECT) [4M].
    #[serde(default)]
    pub block_size: Option<String>,
}

/// Resolves `[cliff]`; an error is `(key, why and the fix)`.
pub fn resolve(c: &CliffProfile) -> Result<SustainedConfig, (&'static str, String)> {
    let d = SustainedConfig::default();
    let size = |k: &'static str, v: &str| crate::units::parse_size(v).map_err(|e| (k, e));
    let max_bytes = size("size", &c.size)?;
    if max_bytes == 0 {
        return Err(("size", "is 0: write at least one request, e.g. 64G".into()));
    }
    if c.time == 0 {
        return Err((
            "time",
            "is 0: give the longest time to write in seconds, e.g. 600".into(),
        ));
    }
    let keep_free = match &c.keep_free {
        Some(v) => size("keep_free", v)?,
        None => d.keep_free,
    };
    let block_size = match &c.block_size {
        Some(v) => size("block_size", v)?,
        None => d.block_size,
    };
    if block_size == 0 || !block_size.is_multiple_of(4096) {
        return Err((
            "block_size",
            format!("{block_size} bytes is not a multiple of 4 KiB (O_DIRECT): use e.g. 4M"),
        ));
    }
    Ok(SustainedConfig {
        max_bytes,
        time_limit: Duration::from_secs(c.time),
        keep_free,
        block_size,
        ..d
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(size: &str, time: u64) -> CliffProfile {
        CliffProfile {
            size: size.into(),
            time,
            keep_free: None,
            block_size: None,
        }
    }

    #[test]
    fn sizes_and_time_resolve_with_the_defaults() {
        let c = resolve(&profile("64G", 600)).unwrap();
        assert_eq!(c.max_bytes, 64 << 30);
        assert_eq!(c.time_limit, Duration::from_secs(600));
        assert_eq!((c.keep_free, c.block_size), (1 << 30, 4 << 20));
    }

    #[test]
    fn bad_values_name_their_key() {
        assert_eq!(resolve(&profile("lots", 600)).unwrap_err().0, "size");
        assert_eq!(resolve(&profile("0", 600)).unwrap_err().0, "size");
        let e = resolve(&profile("64G", 0)).unwrap_err();
        assert_eq!(e.0, "time");
        assert!(e.1.contains("seconds"), "{}", e.1);
        let mut p = profile("64G", 600);
        p.block_size = Some("1000".into());
        assert_eq!(resolve(&p).unwrap_err().0, "block_size");
        p.block_size = None;
        p.keep_free = Some("x".into());
        assert_eq!(resolve(&p).unwrap_err().0, "keep_free");
    }

    #[test]
    fn a_profile_names_the_cliff_key_at_fault() {
        use crate::config::profile::SuiteProfile;
        let parse = |t: &str| SuiteProfile::parse(t, "t", "t.toml");
        let e = parse("[cliff]\nsize = \"64G\"\ntime = 0\n").unwrap_err();
        assert!(
            format!("{e}").contains("profile file 't.toml': cliff.time: is 0"),
            "{e}"
        );
        let e = parse("[cliff]\nsize = \"big\"\ntime = 60\n").unwrap_err();
        assert!(format!("{e}").contains("cliff.size: "), "{e}");
        let standard = SuiteProfile::load("standard").unwrap().cliff.unwrap();
        assert_eq!(standard.max_bytes, 64 << 30);
        assert_eq!(standard.time_limit, Duration::from_secs(600));
        let reference = SuiteProfile::load("reference").unwrap().cliff.unwrap();
        assert!(reference.max_bytes > standard.max_bytes);
    }
}
