//! The appliance's configuration: the `[appliance]`, `[status]`, `[button]` and `[stick]` tables
//! of spindle.toml (the other tables are [`SpindleConfig`]'s), and the strict `spindle.toml` a
//! results stick may carry to override a few keys.
//!
//! Every table denies unknown keys, and so does the file as a whole, so a typo is an error that
//! names the key, never a silently ignored setting.

use crate::config::spindle::SpindleConfig;
pub use crate::sink::settings::{StickConfig, StickOverrides};
pub use crate::status::settings::{ButtonConfig, ChipSpec, IndicatorBackend, StatusConfig};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Profiles a run may use (config/profiles).
pub const KNOWN_PROFILES: &[&str] = &["check", "quick", "standard", "reference"];
const _: () = assert!(KNOWN_PROFILES.len() == crate::config::profile::BUILTIN.len());

/// `[appliance]`: the daemon.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApplianceConfig {
    /// Where each run's bundle directory lives on the SD card until it is on a stick.
    pub runs_dir: PathBuf,
    /// Start a run at boot (once eligible disks are found), without the button.
    pub autostart: bool,
    /// Unix socket `spindle start` / `spindle abort` talk to (its directory is made 0700).
    pub control_socket: PathBuf,
    /// Root under which /sys, /proc, /dev are read for disk and stick hot-plug ("/" on the Pi).
    pub sysroot: PathBuf,
    /// How often disks and sticks are polled, in milliseconds.
    pub poll_interval_ms: u64,
    /// How long after boot USB disks may still be appearing, in milliseconds. With
    /// `autostart`, a boot that finds no usable disk runs (and leaves a note on the stick
    /// saying why) only after this.
    pub settle_ms: u64,
    /// Runs already copied to a stick that stay on the SD card (older ones are deleted).
    /// Runs not yet copied are never deleted.
    pub keep_copied_runs: usize,
    /// Benchmark these directories instead of discovered disks (laptops and tests); empty = disks.
    pub targets: Vec<PathBuf>,
    /// Benchmark only these disks: serials, /dev/disk/by-id names, or stable ids as `spindle
    /// disks` shows them (`file:/path/to/img` for loop devices). Named disks may be non-USB;
    /// every other rule still applies (blank or named in `[disks] erase`, never the boot device,
    /// the stick or a mounted disk). Empty = every eligible USB disk plugged in.
    pub disks: Vec<String>,
}

impl Default for ApplianceConfig {
    fn default() -> Self {
        ApplianceConfig {
            runs_dir: PathBuf::from("/var/lib/spindle/runs"),
            autostart: false,
            control_socket: PathBuf::from("/run/spindle/control.sock"),
            sysroot: PathBuf::from("/"),
            poll_interval_ms: 1000,
            settle_ms: 20_000,
            keep_copied_runs: 20,
            targets: Vec::new(),
            disks: Vec::new(),
        }
    }
}

/// The whole spindle.toml as the daemon sees it: its own tables plus the shared ones
/// (`[suite]` profile, `[disks]` policy, `[mysqld]` server).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ApplianceSettings {
    pub appliance: ApplianceConfig,
    pub status: StatusConfig,
    pub button: ButtonConfig,
    pub stick: StickConfig,
    /// `[suite]`, `[disks]`, `[mysqld]`.
    pub config: SpindleConfig,
}

/// The tables this module owns.
const APPLIANCE_TABLES: [&str; 4] = ["appliance", "status", "button", "stick"];

fn table<T: serde::de::DeserializeOwned + Default>(
    doc: &toml::Table,
    name: &str,
    file: &str,
) -> anyhow::Result<T> {
    match doc.get(name) {
        None => Ok(T::default()),
        Some(v) => v
            .clone()
            .try_into()
            .with_context(|| format!("{file}: invalid [{name}] table")),
    }
}

impl ApplianceSettings {
    /// Parses the appliance tables of a spindle.toml text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> anyhow::Result<Self> {
        let mut doc: toml::Table =
            toml::from_str(text).with_context(|| format!("{file} is not valid TOML"))?;
        let mut s = ApplianceSettings {
            appliance: table(&doc, "appliance", file)?,
            status: table(&doc, "status", file)?,
            button: table(&doc, "button", file)?,
            stick: table(&doc, "stick", file)?,
            config: SpindleConfig::default(),
        };
        for t in APPLIANCE_TABLES {
            doc.remove(t);
        }
        s.config = toml::Value::Table(doc)
            .try_into()
            .map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
        s.stick.label = s.config.disks.stick_label.clone();
        s.stick.profiles = KNOWN_PROFILES.iter().map(|p| p.to_string()).collect();
        s.validate()
            .with_context(|| format!("{file}: invalid value"))?;
        Ok(s)
    }

    /// Reads `path`; a missing file at the default location gives the defaults.
    pub fn load(path: Option<&Path>) -> anyhow::Result<Self> {
        const DEFAULT: &str = "/etc/spindle/spindle.toml";
        let (path, required) = match path {
            Some(p) => (p.to_path_buf(), true),
            None => (PathBuf::from(DEFAULT), false),
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse(&text, &path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => Ok(Self::default()),
            Err(e) => Err(e)
                .with_context(|| format!("could not read the configuration '{}'", path.display())),
        }
    }

    /// Checks values serde cannot.
    pub fn validate(&self) -> anyhow::Result<()> {
        let p = &self.config.suite.profile;
        if !(p.contains('/') || p.ends_with(".toml")) {
            check_profile(p, "[suite] profile")?;
        }
        crate::config::ensure(
            self.appliance.targets.is_empty() || self.appliance.disks.is_empty(),
            "[appliance] disks",
            "cannot be combined with targets (directories replace disks): set one of them",
        )?;
        for d in &self.appliance.disks {
            check_disk_name(d, "[appliance] disks")?;
        }
        crate::config::ensure(
            self.appliance.poll_interval_ms >= 50,
            "[appliance] poll_interval_ms",
            "must be at least 50",
        )?;
        crate::config::ensure(
            !self.stick.label.trim().is_empty() && self.stick.label.len() <= 16,
            "[disks] stick_label",
            "must be 1 to 16 characters (FAT labels hold 11)",
        )?;
        crate::config::ensure(
            self.button.long_press_ms > self.button.debounce_ms,
            "[button] long_press_ms",
            "must be longer than debounce_ms",
        )?;
        let pins = [
            self.status.green_pin,
            self.status.yellow_pin,
            self.status.red_pin,
        ];
        crate::config::ensure(
            pins[0] != pins[1] && pins[1] != pins[2] && pins[0] != pins[2],
            "[status] green_pin/yellow_pin/red_pin",
            "must be three different line offsets (BCM numbers on a Pi)",
        )?;
        // The same chip by the same words; "auto" on both sides is one chip.
        let same_chip = self.status.chip == self.button.chip;
        crate::config::ensure(
            !(self.button.enabled && same_chip && pins.contains(&self.button.pin)),
            "[button] pin",
            format!(
                "line {} is also an LED's ([status] green_pin/yellow_pin/red_pin) on the same \
                 chip: choose another line for one of them",
                self.button.pin
            ),
        )?;
        Ok(())
    }
}

fn check_profile(profile: &str, key: &str) -> anyhow::Result<()> {
    crate::config::ensure(
        KNOWN_PROFILES.contains(&profile),
        key,
        format!(
            "'{}' is not a profile: use one of {}",
            crate::units::shorten(profile, 60),
            KNOWN_PROFILES.join(", ")
        ),
    )
}

fn check_disk_name(name: &str, key: &str) -> anyhow::Result<()> {
    crate::disk::check_stable_name(name).map_err(|e| anyhow::anyhow!("{key}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_tables_are_optional() {
        let s = ApplianceSettings::parse("", "t.toml").unwrap();
        assert_eq!(s, ApplianceSettings::default());
        s.validate().unwrap();
        let s = ApplianceSettings::parse(
            "[appliance]\nautostart = true\n[status]\nbackend = \"console\"\n[fileio]\nx = 1\n",
            "t.toml",
        )
        .unwrap_err();
        assert!(format!("{s:#}").contains("fileio"), "{s:#}");
        let s = ApplianceSettings::parse(
            "[appliance]\nautostart = true\n[status]\nbackend = \"console\"\n[suite]\nprofile = \"quick\"\n",
            "t.toml",
        )
        .unwrap();
        assert_eq!(s.config.suite.profile, "quick");
        assert!(s.appliance.autostart);
        assert_eq!(s.status.backend, IndicatorBackend::Console);
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key() {
        let e = ApplianceSettings::parse("[button]\npinn = 3\n", "t.toml").unwrap_err();
        let m = format!("{e:#}");
        assert!(m.contains("[button]") && m.contains("pinn"), "{m}");
        let e = ApplianceSettings::parse("[suite]\nprofile = \"fast\"\n", "t.toml").unwrap_err();
        assert!(
            format!("{e:#}").contains("check, quick, standard, reference"),
            "{e:#}"
        );
        let e =
            ApplianceSettings::parse("[appliance]\nprofile = \"quick\"\n", "t.toml").unwrap_err();
        assert!(format!("{e:#}").contains("profile"), "{e:#}");
        let e = ApplianceSettings::parse("[stick]\nlabel = \"X\"\n", "t.toml").unwrap_err();
        assert!(format!("{e:#}").contains("label"), "{e:#}");
        let s = ApplianceSettings::parse("[disks]\nstick_label = \"RESULTS\"\n", "t.toml").unwrap();
        assert_eq!(s.stick.label, "RESULTS");
        let e = ApplianceSettings::parse("[status]\ngreen_pin = 26\n", "t.toml").unwrap_err();
        assert!(format!("{e:#}").contains("button"));
    }

    #[test]
    fn gpio_chip_keys_parse_strictly_and_pins_may_share_a_number_across_chips() {
        let s = ApplianceSettings::parse(
            "[status]\nchip = \"9030000.pl061\"\ngreen_pin = 0\nyellow_pin = 1\nred_pin = 2\n\
             [button]\nchip = \"/dev/gpiochip0\"\npin = 3\nactive_low = false\n",
            "t.toml",
        )
        .unwrap();
        assert_eq!(s.status.chip, ChipSpec::Label("9030000.pl061".into()));
        assert_eq!(s.button.chip, ChipSpec::Path("/dev/gpiochip0".into()));
        assert!(!s.button.active_low);
        let e = ApplianceSettings::parse("[status]\nchip = \"\"\n", "t.toml").unwrap_err();
        let m = format!("{e:#}");
        assert!(
            m.contains("[status]") && m.contains("is not a GPIO chip"),
            "{m}"
        );
        let e = ApplianceSettings::parse("[button]\nchip = 0\n", "t.toml").unwrap_err();
        assert!(format!("{e:#}").contains("[button]"), "{e:#}");
        // The button on an LED's line: an error on one chip, fine on two.
        let one = "[status]\ngreen_pin = 26\n";
        let e = ApplianceSettings::parse(one, "t.toml").unwrap_err();
        assert!(
            format!("{e:#}").contains("[button] pin: line 26 is also an LED's"),
            "{e:#}"
        );
        let two = "[status]\ngreen_pin = 26\n[button]\nchip = \"pinctrl-rp1\"\n";
        ApplianceSettings::parse(two, "t.toml").unwrap();
        let e = ApplianceSettings::parse("[status]\nred_pin = 17\n", "t.toml").unwrap_err();
        assert!(
            format!("{e:#}").contains("three different line offsets"),
            "{e:#}"
        );
    }

    #[test]
    fn appliance_disks_are_named_stably_and_exclude_targets() {
        let s = ApplianceSettings::parse(
            "[appliance]\ndisks = [\"WD-123\", \"/dev/disk/by-id/usb-X_Y-0:0\", \"file:/var/a.img\"]\n",
            "t.toml",
        )
        .unwrap();
        assert_eq!(s.appliance.disks.len(), 3);
        for bad in ["\"/dev/sda\"", "\"/dev/loop3\"", "\" \""] {
            let e = ApplianceSettings::parse(&format!("[appliance]\ndisks = [{bad}]\n"), "t.toml")
                .unwrap_err();
            let m = format!("{e:#}");
            assert!(m.contains("[appliance] disks"), "{bad}: {m}");
        }
        let e = ApplianceSettings::parse(
            "[appliance]\ndisks = [\"WD-123\"]\ntargets = [\"/tmp\"]\n",
            "t.toml",
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("targets"), "{e:#}");
    }

    #[test]
    fn the_shipped_default_file_parses() {
        let s = ApplianceSettings::parse(
            include_str!("../../config/spindle.toml"),
            "config/spindle.toml",
        )
        .unwrap();
        assert_eq!(s.config.disks, crate::disk::DiskPolicy::default());
        assert_eq!(s.status, StatusConfig::default());
        assert_eq!(s.button, ButtonConfig::default());
    }
}
