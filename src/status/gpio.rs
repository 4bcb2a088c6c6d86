//! Three LEDs and the button on GPIO pins through rppal (the only place rppal is used).

use super::button::{ButtonDecoder, Press};
use super::indicator::LedDriver;
use super::pattern::LedRole;
use rppal::gpio::{Gpio, InputPin, Level, OutputPin, Trigger};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why GPIO could not be used, with the remedy.
#[derive(Debug, thiserror::Error)]
pub enum GpioError {
    /// Not a Raspberry Pi, or /dev/gpiomem and /dev/gpiochipN are missing.
    #[error("GPIO is not available: {0} (not a Raspberry Pi, or /dev/gpiomem* and /dev/gpiochip* are missing)")]
    Unavailable(rppal::gpio::Error),
    /// A pin does not exist or is used by another program/driver.
    #[error("GPIO pin BCM{pin} ({what}) cannot be used: {err} (choose another pin in [status]/[button] of spindle.toml, or free it)")]
    Pin {
        pin: u8,
        what: &'static str,
        err: rppal::gpio::Error,
    },
}

type Pins = Arc<std::sync::Mutex<Vec<(LedRole, OutputPin)>>>;

/// Three LED pins.
pub struct GpioLeds {
    pins: Pins,
    active_low: bool,
}

fn darken(pins: &mut [(LedRole, OutputPin)], active_low: bool) {
    for (_, p) in pins.iter_mut() {
        if active_low {
            p.set_high();
        } else {
            p.set_low();
        }
    }
}

impl GpioLeds {
    /// Claims the pins as outputs, all dark.
    pub fn open(green: u8, yellow: u8, red: u8, active_low: bool) -> Result<Self, GpioError> {
        let gpio = Gpio::new().map_err(GpioError::Unavailable)?;
        let mut pins = Vec::new();
        for (role, pin, what) in [
            (LedRole::Green, green, "green LED"),
            (LedRole::Yellow, yellow, "yellow LED"),
            (LedRole::Red, red, "red LED"),
        ] {
            let p = gpio
                .get(pin)
                .map_err(|err| GpioError::Pin { pin, what, err })?;
            let mut out = if active_low {
                p.into_output_high()
            } else {
                p.into_output_low()
            };
            out.set_reset_on_drop(true);
            pins.push((role, out));
        }
        let pins: Pins = Arc::new(std::sync::Mutex::new(pins));
        let weak = Arc::downgrade(&pins);
        super::indicator::on_panic_darken(move || {
            if let Some(p) = weak.upgrade() {
                if let Ok(mut g) = p.try_lock() {
                    darken(&mut g, active_low);
                }
            }
        });
        Ok(GpioLeds { pins, active_low })
    }
}

impl LedDriver for GpioLeds {
    fn roles(&self) -> &[LedRole] {
        &LedRole::ALL
    }

    fn set(&mut self, role: LedRole, lit: bool) -> std::io::Result<()> {
        let mut pins = self.pins.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, p)) = pins.iter_mut().find(|(r, _)| *r == role) {
            if lit != self.active_low {
                p.set_high();
            } else {
                p.set_low();
            }
        }
        Ok(())
    }

    fn restore(&mut self) {
        let mut pins = self.pins.lock().unwrap_or_else(|e| e.into_inner());
        darken(&mut pins, self.active_low);
        // Dropping the pins (with the driver) resets their mode to what it was before.
    }
}

impl Drop for GpioLeds {
    fn drop(&mut self) {
        self.restore();
    }
}

/// Watches the button pin from a thread and sends decoded presses to `on_press`.
pub struct GpioButton {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl GpioButton {
    /// Claims `pin` as an input with pull-up (button to GND) and kernel debounce.
    pub fn start(
        pin: u8,
        debounce: Duration,
        long_press: Duration,
        on_press: impl Fn(Press) + Send + 'static,
    ) -> Result<Self, GpioError> {
        let gpio = Gpio::new().map_err(GpioError::Unavailable)?;
        let map = |err| GpioError::Pin {
            pin,
            what: "button",
            err,
        };
        let mut input: InputPin = gpio.get(pin).map_err(map)?.into_input_pullup();
        input
            .set_interrupt(Trigger::Both, Some(debounce))
            .map_err(map)?;
        let stop = Arc::new(AtomicBool::new(false));
        let st = stop.clone();
        let thread = std::thread::Builder::new()
            .name("button".into())
            .spawn(move || {
                let mut dec = ButtonDecoder::new(debounce, long_press);
                let t0 = Instant::now();
                if input.read() == Level::Low {
                    // held at start: ignore until released
                    dec.edge(Duration::ZERO, true);
                    dec.poll(long_press * 2);
                }
                while !st.load(Ordering::SeqCst) {
                    match input.poll_interrupt(false, Some(Duration::from_millis(50))) {
                        Ok(Some(ev)) => {
                            let pressed = ev.trigger == Trigger::FallingEdge;
                            if let Some(p) = dec.edge(t0.elapsed(), pressed) {
                                on_press(p);
                            }
                        }
                        Ok(None) => {}
                        Err(e) => {
                            eprintln!("spindle: button: reading BCM{pin} failed: {e}; the button is off, `spindle start` still works");
                            return;
                        }
                    }
                    if let Some(p) = dec.poll(t0.elapsed()) {
                        on_press(p);
                    }
                }
            })
            .expect("spawning a thread only fails when the system is out of resources");
        Ok(GpioButton {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for GpioButton {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
