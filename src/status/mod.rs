//! Status indicators (LEDs) and the button: GPIO, on-board LEDs, console and mock backends.
//!
//! [`pattern`] holds the one pattern table (pure); [`indicator`] the `Indicator` trait and the
//! blink engine; [`open_indicator`] picks the backend from `[status]` at start. GPIO goes
//! through the kernel's GPIO character device: [`cdev`] (the ioctls), [`chip`] (chip lookup and
//! error texts, pure), [`gpio`] (the LEDs and the button).

pub mod button;
pub mod cdev;
pub mod chip;
pub mod gpio;
pub mod indicator;
pub mod onboard;
pub mod pattern;
pub mod settings;

pub use button::{ButtonDecoder, Press};
pub use indicator::{ConsoleIndicator, Indicator, LedIndicator, MockIndicator, MockLog};
pub use pattern::{schedule, LedRole, Pattern, Phase, Schedule, Signal, StickProblem};

pub use settings::{ButtonConfig, ChipSpec, IndicatorBackend, StatusConfig};

/// The GPIO LEDs and the log line saying where they are.
fn open_gpio(cfg: &StatusConfig) -> anyhow::Result<(Box<dyn Indicator>, String)> {
    let leds = gpio::GpioLeds::open(cfg)?;
    let line = leds.describe();
    Ok((Box::new(LedIndicator::start("gpio", leds)), line))
}

fn open_onboard(cfg: &StatusConfig) -> anyhow::Result<Box<dyn Indicator>> {
    let leds = onboard::OnboardLeds::open(&cfg.leds_root)?;
    Ok(Box::new(LedIndicator::start("onboard", leds)))
}

/// Opens the configured backend and logs, once, which one shows the status and why (one of
/// the three `spindle: status:` lines the image's tests look for). `auto` tries gpio, then
/// onboard, then console. `mock` returns a mock whose log is dropped, silently (tests build a
/// [`MockIndicator`] themselves to keep the log).
pub fn open_indicator(cfg: &StatusConfig) -> anyhow::Result<Box<dyn Indicator>> {
    match cfg.backend {
        IndicatorBackend::Gpio => {
            let (i, line) = open_gpio(cfg)?;
            crate::sys::log::say!("status: {line}");
            Ok(i)
        }
        IndicatorBackend::Onboard => {
            let i = open_onboard(cfg)?;
            crate::sys::log::say!(
                "status: using the on-board LEDs ([status] backend = \"onboard\")"
            );
            Ok(i)
        }
        IndicatorBackend::Console => {
            crate::sys::log::say!(
                "status: no LEDs, status goes to the log ([status] backend = \"console\")"
            );
            Ok(Box::new(ConsoleIndicator::default()))
        }
        IndicatorBackend::Mock => Ok(Box::new(MockIndicator::new().0)),
        IndicatorBackend::Auto => {
            let gpio_err = match open_gpio(cfg) {
                Ok((i, line)) => {
                    crate::sys::log::say!("status: {line}");
                    return Ok(i);
                }
                Err(e) => e,
            };
            let onboard_err = match open_onboard(cfg) {
                Ok(i) => {
                    crate::sys::log::say!("status: using the on-board LEDs ({gpio_err:#})");
                    return Ok(i);
                }
                Err(e) => e,
            };
            crate::sys::log::say!(
                "status: no LEDs, status goes to the log ({gpio_err:#}; {onboard_err:#})"
            );
            Ok(Box::new(ConsoleIndicator::default()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_falls_back_to_onboard_then_console() {
        let d = tempfile::tempdir().unwrap();
        let mut cfg = StatusConfig {
            leds_root: d.path().to_path_buf(),
            ..StatusConfig::default()
        };
        // No GPIO in a test machine (or the pins are taken), no LED fixture → console.
        assert_eq!(open_indicator(&cfg).unwrap().backend(), "console");
        let act = d.path().join("sys/class/leds/ACT");
        std::fs::create_dir_all(&act).unwrap();
        std::fs::write(act.join("trigger"), "[mmc0] none").unwrap();
        std::fs::write(act.join("brightness"), "0").unwrap();
        let mut ind = open_indicator(&cfg).unwrap();
        assert_eq!(ind.backend(), "onboard");
        ind.show(Pattern::Error);
        drop(ind);
        assert_eq!(
            std::fs::read_to_string(act.join("trigger")).unwrap(),
            "mmc0"
        );
        cfg.backend = IndicatorBackend::Gpio;
        if let Err(e) = open_indicator(&cfg) {
            assert!(format!("{e:#}").contains("GPIO"), "{e:#}");
        }
    }
}
