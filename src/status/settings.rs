//! `[status]` and `[button]` of spindle.toml: which LED backend, the GPIO pins, the button's
//! timing. Parsed by `config` (strict, with the rest of the file); used here.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Which indicator backend shows the status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum IndicatorBackend {
    /// GPIO when the configured pins can be claimed, else on-board LEDs, else console.
    Auto,
    /// Three LEDs on GPIO pins (rppal).
    Gpio,
    /// The board's own ACT (green) and PWR (red) LEDs through /sys/class/leds.
    Onboard,
    /// Log lines on stderr.
    Console,
    /// Records every change in memory (tests).
    Mock,
}

/// `[status]`: the LEDs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StatusConfig {
    /// auto, gpio, onboard, console or mock.
    pub backend: IndicatorBackend,
    /// BCM number of the green LED's GPIO (physical pin 11 = BCM17).
    pub green_pin: u8,
    /// BCM number of the yellow LED's GPIO (pin 13 = BCM27).
    pub yellow_pin: u8,
    /// BCM number of the red LED's GPIO (pin 15 = BCM22).
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
    /// BCM number of the button's GPIO; the button connects it to GND (pin 37 = BCM26).
    pub pin: u8,
    /// Edges closer than this (ms) are contact bounce.
    pub debounce_ms: u64,
    /// Holding at least this long (ms) is a long press (abort).
    pub long_press_ms: u64,
}

impl Default for ButtonConfig {
    fn default() -> Self {
        ButtonConfig {
            enabled: true,
            pin: 26,
            debounce_ms: 30,
            long_press_ms: 3000,
        }
    }
}
