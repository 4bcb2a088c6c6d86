//! `[status]` and `[button]` of spindle.toml: which LED backend, the GPIO pins, the button's
//! timing. Parsed by `config` (strict, with the rest of the file); used here.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Which indicator backend shows the status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IndicatorBackend {
    /// GPIO when the configured pins can be claimed, else on-board LEDs, else console.
    Auto,
    /// Three LEDs on GPIO lines (the kernel's GPIO character device).
    Gpio,
    /// The board's own ACT (green) and PWR (red) LEDs through /sys/class/leds.
    Onboard,
    /// Log lines on stderr.
    Console,
    /// Records every change in memory (tests).
    Mock,
}

impl IndicatorBackend {
    /// Every value as it is written (settings, profiles, command lines).
    pub const NAMES: &'static [&'static str] = &["auto", "gpio", "onboard", "console", "mock"];
}

/// Which GPIO chip: `auto` (the Pi's header chip by its label), a label or name, or a path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum ChipSpec {
    /// The first of `pinctrl-bcm2711` (Pi 4), `pinctrl-rp1` (Pi 5), `pinctrl-bcm2835` present.
    Auto,
    /// A chip's label (`9030000.pl061`) or name (`gpiochip0`).
    Label(String),
    /// A device path (`/dev/gpiochip0`).
    Path(PathBuf),
}

impl TryFrom<String> for ChipSpec {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        if s == "auto" {
            Ok(ChipSpec::Auto)
        } else if s.starts_with('/') {
            Ok(ChipSpec::Path(PathBuf::from(s)))
        } else if s.is_empty()
            || s.len() > 31
            || s.trim() != s
            || s.contains('/')
            || s.chars().any(char::is_control)
        {
            Err(format!(
                "chip = {s:?} is not a GPIO chip: use \"auto\", a chip label such as \
                 \"pinctrl-bcm2711\" (1 to 31 characters, as `gpiodetect` lists them) or a \
                 device path such as \"/dev/gpiochip0\""
            ))
        } else {
            Ok(ChipSpec::Label(s))
        }
    }
}

impl From<ChipSpec> for String {
    fn from(c: ChipSpec) -> String {
        match c {
            ChipSpec::Auto => "auto".into(),
            ChipSpec::Label(l) => l,
            ChipSpec::Path(p) => p.display().to_string(),
        }
    }
}

/// `[status]`: the LEDs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StatusConfig {
    /// auto, gpio, onboard, console or mock.
    pub backend: IndicatorBackend,
    /// The GPIO chip holding the LED lines.
    pub chip: ChipSpec,
    /// Line offset on `chip` of the green LED (on a Pi the BCM number: pin 11 = BCM17).
    pub green_pin: u8,
    /// Line offset of the yellow LED (pin 13 = BCM27).
    pub yellow_pin: u8,
    /// Line offset of the red LED (pin 15 = BCM22).
    pub red_pin: u8,
    /// LEDs wired from 3V3 to the GPIO (lit when the pin is low).
    pub active_low: bool,
    /// Root under which /sys/class/leds is found ("/" on the Pi; a fixture tree in tests).
    pub leds_root: PathBuf,
}

impl Default for StatusConfig {
    fn default() -> Self {
        StatusConfig {
            backend: IndicatorBackend::Auto,
            chip: ChipSpec::Auto,
            green_pin: 17,
            yellow_pin: 27,
            red_pin: 22,
            active_low: false,
            leds_root: PathBuf::from("/"),
        }
    }
}

/// `[button]`: the start/abort push button.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ButtonConfig {
    /// Read a GPIO button at all (the control socket works either way).
    pub enabled: bool,
    /// The GPIO chip holding the button's line.
    pub chip: ChipSpec,
    /// Line offset on `chip` of the button (on a Pi the BCM number: pin 37 = BCM26).
    pub pin: u8,
    /// Pressed = low: the button connects the line to GND and the line is biased pull-up.
    /// `false`: pressed = high (biased pull-down where the chip can).
    pub active_low: bool,
    /// Edges closer than this (ms) are contact bounce.
    pub debounce_ms: u64,
    /// Holding at least this long (ms) is a long press (abort).
    pub long_press_ms: u64,
}

impl Default for ButtonConfig {
    fn default() -> Self {
        ButtonConfig {
            enabled: true,
            chip: ChipSpec::Auto,
            pin: 26,
            active_low: true,
            debounce_ms: 30,
            long_press_ms: 3000,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chip_values_parse_strictly() {
        let p = |s: &str| ChipSpec::try_from(s.to_string());
        assert_eq!(p("auto"), Ok(ChipSpec::Auto));
        assert_eq!(
            p("/dev/gpiochip0"),
            Ok(ChipSpec::Path("/dev/gpiochip0".into()))
        );
        assert_eq!(
            p("9030000.pl061"),
            Ok(ChipSpec::Label("9030000.pl061".into()))
        );
        for bad in ["", " pinctrl-rp1", "dev/gpiochip0", &"x".repeat(32), "a\tb"] {
            let e = p(bad).unwrap_err();
            assert!(
                e.contains("is not a GPIO chip") && e.contains("\"auto\""),
                "{e}"
            );
        }
        for c in [ChipSpec::Auto, ChipSpec::Label("pinctrl-rp1".into())] {
            assert_eq!(p(&String::from(c.clone())), Ok(c));
        }
    }
}
