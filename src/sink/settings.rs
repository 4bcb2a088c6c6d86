//! `[stick]` of spindle.toml and the optional `spindle.toml` a results stick carries: the
//! settings of the results stick, and the few keys a person may change with a stick alone.
//! A stick's file is untrusted input: its size is checked before it is read, every error names
//! the key, and values are echoed cut short.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `[stick]`: the results stick.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StickConfig {
    /// Filesystem label that marks the results stick (case-insensitive). Not a key of its own:
    /// it is `[disks] stick_label`, so discovery and the daemon agree. A USB filesystem with a
    /// `spindle/` folder at its root is a results stick too.
    #[serde(skip)]
    pub label: String,
    /// The profiles a stick may choose (the built-in ones). Not a key: filled by `config`.
    #[serde(skip)]
    pub profiles: Vec<String>,
    /// Where the stick is mounted while spindle uses it.
    pub mount_dir: PathBuf,
    /// Also accept sticks that are not on USB (loop devices, SD readers): for tests.
    pub allow_non_usb: bool,
    /// Free space (bytes) left on the stick beyond the runs copied to it.
    pub reserve_bytes: u64,
}

impl Default for StickConfig {
    fn default() -> Self {
        StickConfig {
            label: "SPINDLE".into(),
            profiles: ["check", "quick", "standard", "reference"]
                .iter()
                .map(|p| p.to_string())
                .collect(),
            mount_dir: PathBuf::from("/run/spindle/stick"),
            allow_non_usb: false,
            reserve_bytes: 1 << 20,
        }
    }
}

/// The optional `spindle.toml` at the root of a results stick: the few settings a person may
/// change without a keyboard. It holds data only; nothing in it is ever executed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StickOverrides {
    /// Suite profile for runs started while this stick is present.
    pub profile: Option<String>,
    /// Disks that may be erased even though they hold data, by serial or /dev/disk/by-id name.
    pub erase: Option<Vec<String>>,
    /// Start a run as soon as the stick and eligible disks are present.
    pub autostart: Option<bool>,
    /// The servers the database phases run on, in order (`["mariadb", "mysql"]`): replaces
    /// `[mysqld] flavors` of the appliance's spindle.toml, whose `[mysqld.binaries]` says where
    /// each program is.
    pub flavors: Option<Vec<crate::provision::mysqld::Flavor>>,
}

/// Largest stick config read (a bigger file is certainly not a hand-written config).
pub const STICK_CONFIG_MAX_BYTES: usize = 64 * 1024;

/// The keys a stick's spindle.toml may hold, for the errors.
const KEYS: &str = "profile, erase, autostart and flavors";

/// Longest value echoed back in an error (the rest is cut: a stick file is untrusted).
const ECHO_MAX: usize = 60;

impl StickOverrides {
    /// Parses the stick's spindle.toml strictly: unknown keys, wrong types, values out of range,
    /// unknown profiles (`profiles`: the ones a run may use) and odd erase entries are errors
    /// that name the key and say what is accepted.
    pub fn parse(text: &str, profiles: &[String]) -> anyhow::Result<Self> {
        anyhow::ensure!(
            text.len() <= STICK_CONFIG_MAX_BYTES,
            "spindle.toml is larger than {STICK_CONFIG_MAX_BYTES} bytes: it is not a settings file; keep only {KEYS} in it"
        );
        let o: StickOverrides = toml::from_str(text).map_err(|e| {
            let at = match e.span().and_then(|sp| key_at(text, sp.start)) {
                Some(k) => format!("key '{k}': "),
                None => String::new(),
            };
            anyhow::anyhow!(
                "spindle.toml: {at}{}\nAccepted keys: profile = \"{}\", erase = [\"SERIAL\", ...], autostart = true|false, flavors = [\"mariadb\", \"mysql\", \"percona\"] (one or more)",
                crate::units::shorten(e.message(), 2 * ECHO_MAX),
                profiles.join("|")
            )
        })?;
        if let Some(p) = &o.profile {
            anyhow::ensure!(
                profiles.iter().any(|k| k == p),
                "spindle.toml: key 'profile': '{}' is not a profile: use one of {}",
                crate::units::shorten(p, ECHO_MAX),
                profiles.join(", ")
            );
        }
        if let Some(f) = &o.flavors {
            anyhow::ensure!(
                !f.is_empty(),
                "spindle.toml: key 'flavors': empty: name at least one of mariadb, mysql, percona, or remove the line"
            );
            for (i, x) in f.iter().enumerate() {
                anyhow::ensure!(
                    !f[..i].contains(x),
                    "spindle.toml: key 'flavors': {x} is named twice: one run per flavor"
                );
            }
        }
        for e in o.erase.iter().flatten() {
            crate::disk::check_stable_name(e)
                .map_err(|why| anyhow::anyhow!("spindle.toml: key 'erase': {why}"))?;
        }
        Ok(o)
    }

    /// Reads and parses the file at `path`, checking its size before reading it; `Ok(None)`
    /// when there is no file.
    pub fn read(path: &std::path::Path, profiles: &[String]) -> anyhow::Result<Option<Self>> {
        use std::io::Read;
        let f = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => anyhow::bail!("spindle.toml could not be read: {e}"),
        };
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        anyhow::ensure!(
            len <= STICK_CONFIG_MAX_BYTES as u64,
            "spindle.toml is {len} bytes, larger than {STICK_CONFIG_MAX_BYTES}: it is not a settings file; keep only {KEYS} in it"
        );
        let mut bytes = Vec::new();
        f.take(STICK_CONFIG_MAX_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| anyhow::anyhow!("spindle.toml could not be read: {e}"))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("spindle.toml is not UTF-8 text"))?;
        Self::parse(&text, profiles).map(Some)
    }
}

/// The key on the line holding byte `pos` of `text` (`autostart = …` → `autostart`).
fn key_at(text: &str, pos: usize) -> Option<String> {
    let start = text[..pos.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?;
    let key = line.split('=').next()?.trim();
    (!key.is_empty()
        && key.len() <= 40
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then(|| key.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stick_overrides_are_strict() {
        let p = StickConfig::default().profiles;
        let o = StickOverrides::parse(
            "profile = \"quick\"\nautostart = true\nerase = [\"WD-123\"]\nflavors = [\"mariadb\", \"mysql\"]\n",
            &p,
        )
        .unwrap();
        assert_eq!(o.profile.as_deref(), Some("quick"));
        assert_eq!(o.autostart, Some(true));
        use crate::provision::mysqld::Flavor;
        assert_eq!(o.flavors, Some(vec![Flavor::MariaDb, Flavor::MySql]));
        for bad in [
            "command = \"rm -rf /\"\n",
            "profile = \"turbo\"\n",
            "autostart = \"yes\"\n",
            "erase = [\"/dev/sda\"]\n",
            "profile = \n",
            "flavors = [\"oracle\"]\n",
            "flavors = []\n",
            "flavors = [\"mysql\", \"mysql\"]\n",
            "flavors = \"mysql\"\n",
        ] {
            let e = StickOverrides::parse(bad, &p).unwrap_err();
            assert!(format!("{e:#}").contains("spindle.toml"), "{bad}: {e:#}");
        }
        assert_eq!(
            StickOverrides::parse("", &p).unwrap(),
            StickOverrides::default()
        );
    }

    #[test]
    fn hostile_stick_files_get_short_errors_that_name_the_key() {
        let p = StickConfig::default().profiles;
        // a 60 KB value is not echoed whole
        let big = format!("profile = \"{}\"\n", "x".repeat(60_000));
        let e = format!("{:#}", StickOverrides::parse(&big, &p).unwrap_err());
        assert!(
            e.contains("key 'profile'") && e.len() < 400,
            "{} bytes",
            e.len()
        );
        // a 38-digit number names its key
        let e = format!(
            "{:#}",
            StickOverrides::parse("autostart = 12345678901234567890123456789012345678\n", &p)
                .unwrap_err()
        );
        assert!(e.contains("key 'autostart'"), "{e}");
        let e = format!(
            "{:#}",
            StickOverrides::parse("erase = [\"/dev/sda\"]\n", &p).unwrap_err()
        );
        assert!(e.contains("key 'erase'"), "{e}");
        // the size is checked before reading: a 2 GB sparse file is refused unread
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("spindle.toml");
        std::fs::File::create(&f).unwrap().set_len(2 << 30).unwrap();
        let e = format!("{:#}", StickOverrides::read(&f, &p).unwrap_err());
        assert!(e.contains("2147483648 bytes"), "{e}");
        assert!(StickOverrides::read(&d.path().join("none"), &p)
            .unwrap()
            .is_none());
    }
}
