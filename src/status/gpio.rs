//! Three LEDs and the button on GPIO lines through the kernel's GPIO character device (uAPI v2,
//! `cdev.rs`): the chip found by label or path (`chip.rs`), the LED lines as one output
//! request, the button as an input with the kernel's edge detection and debounce, watched by a
//! thread blocked in poll(2).

use super::button::{ButtonDecoder, Press};
use super::cdev::{self, flag, Chip, LineRequestFd, LineSettings, Wake};
use super::chip::{self, ChipEntry, GpioError, Keys, LineUse, BUTTON_KEYS, LED_KEYS};
use super::indicator::LedDriver;
use super::pattern::LedRole;
use super::settings::{ButtonConfig, ChipSpec, StatusConfig};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The consumer name the kernel shows for spindle's lines (`gpioinfo`).
pub const CONSUMER: &str = "spindle";

/// What `/dev/gpiochip*` holds now, in number order; chips that cannot be opened or do not
/// answer are left out.
fn list_chips() -> Vec<ChipEntry> {
    let names = std::fs::read_dir("/dev")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    chip::chip_device_names(names)
        .into_iter()
        .filter_map(|n| {
            let path = Path::new("/dev").join(n);
            let info = Chip::open(&path).ok()?.info().ok()?;
            Some(ChipEntry {
                path,
                name: info.name,
                label: info.label,
                lines: info.lines,
            })
        })
        .collect()
}

/// Opens the chip `spec` names.
fn open_chip(spec: &ChipSpec, keys: Keys) -> Result<(Chip, ChipEntry), GpioError> {
    let path = match spec {
        ChipSpec::Path(p) => p.clone(),
        _ => chip::find_chip(spec, &list_chips(), keys)?.path.clone(),
    };
    let c = Chip::open(&path).map_err(|err| GpioError::Open {
        path: path.clone(),
        err,
        keys,
    })?;
    let info = c.info().map_err(|err| GpioError::NotAChip {
        path: path.clone(),
        err,
        keys,
    })?;
    let entry = ChipEntry {
        path,
        name: info.name,
        label: info.label,
        lines: info.lines,
    };
    Ok((c, entry))
}

/// Requests `lines` in one request; a refusal names the line, its holder and its key.
fn request(
    c: &Chip,
    entry: &ChipEntry,
    lines: &[LineUse],
    s: &LineSettings,
) -> Result<LineRequestFd, GpioError> {
    chip::check_lines(entry, lines)?;
    let offsets: Vec<u32> = lines.iter().map(|l| l.offset).collect();
    c.request(&offsets, CONSUMER, s).map_err(|err| {
        let info: Vec<_> = lines
            .iter()
            .filter_map(|l| {
                let i = c.line_info(l.offset).ok()?;
                Some((*l, i.flags & flag::USED != 0, i.consumer))
            })
            .collect();
        chip::request_error(entry, lines, err, &info)
    })
}

/// Three LED lines in one output request.
pub struct GpioLeds {
    req: Arc<LineRequestFd>,
    /// The chip, for the log.
    pub chip: ChipEntry,
    /// Green, yellow, red line offsets.
    pub lines: [u32; 3],
}

const ALL_LEDS: u64 = 0b111;

fn bit(role: LedRole) -> u64 {
    match role {
        LedRole::Green => 1,
        LedRole::Yellow => 2,
        LedRole::Red => 4,
    }
}

impl GpioLeds {
    /// Requests the three lines as outputs, all dark. With `active_low` the kernel inverts the
    /// lines, so lit is always the logical 1.
    pub fn open(cfg: &StatusConfig) -> Result<Self, GpioError> {
        let (c, entry) = open_chip(&cfg.chip, LED_KEYS)?;
        let lines = [
            (cfg.green_pin, "[status] green_pin"),
            (cfg.yellow_pin, "[status] yellow_pin"),
            (cfg.red_pin, "[status] red_pin"),
        ]
        .map(|(pin, key)| LineUse {
            offset: pin.into(),
            key,
        });
        let mut flags = flag::OUTPUT;
        if cfg.active_low {
            flags |= flag::ACTIVE_LOW;
        }
        let settings = LineSettings {
            flags,
            output_values: Some(0),
            debounce_us: None,
        };
        let req = Arc::new(request(&c, &entry, &lines, &settings)?);
        let weak = Arc::downgrade(&req);
        super::indicator::on_panic_darken(move || {
            if let Some(r) = weak.upgrade() {
                let _ = cdev::set_values(r.raw(), 0, ALL_LEDS);
            }
        });
        Ok(GpioLeds {
            req,
            chip: entry,
            lines: lines.map(|l| l.offset),
        })
    }

    /// The contract's log line (`status: GPIO LEDs on chip …`).
    pub fn describe(&self) -> String {
        format!(
            "GPIO LEDs on chip {}: green line {}, yellow line {}, red line {}",
            self.chip, self.lines[0], self.lines[1], self.lines[2]
        )
    }
}

impl LedDriver for GpioLeds {
    fn roles(&self) -> &[LedRole] {
        &LedRole::ALL
    }

    fn set(&mut self, role: LedRole, lit: bool) -> std::io::Result<()> {
        let b = bit(role);
        self.req.set_values(if lit { b } else { 0 }, b)
    }

    fn restore(&mut self) {
        // Dark; the lines are released when the request's fd closes (with the driver).
        let _ = self.req.set_values(0, ALL_LEDS);
    }
}

impl Drop for GpioLeds {
    fn drop(&mut self) {
        self.restore();
    }
}

/// Watches the button line from a thread and sends decoded presses to `on_press`.
pub struct GpioButton {
    wake: Arc<Wake>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The contract's log line (`button: GPIO line …`).
    pub description: String,
}

/// Requests the button line: input, both edges, kernel debounce, bias toward "released";
/// asked again without bias when the chip takes none (PL061).
fn request_button(cfg: &ButtonConfig) -> Result<(LineRequestFd, ChipEntry), GpioError> {
    let (c, entry) = open_chip(&cfg.chip, BUTTON_KEYS)?;
    let line = [LineUse {
        offset: cfg.pin.into(),
        key: "[button] pin",
    }];
    let mut flags = flag::INPUT | flag::EDGE_RISING | flag::EDGE_FALLING;
    let bias = if cfg.active_low {
        flags |= flag::ACTIVE_LOW;
        flag::BIAS_PULL_UP
    } else {
        flag::BIAS_PULL_DOWN
    };
    let mut s = LineSettings {
        flags: flags | bias,
        output_values: None,
        debounce_us: Some((cfg.debounce_ms * 1000).min(u32::MAX as u64) as u32),
    };
    match request(&c, &entry, &line, &s) {
        Err(GpioError::Request { err, .. }) if chip::bias_unsupported(&err) => {
            crate::sys::log::say!(
                "button: line {} of {entry} takes no pull-up/pull-down ({err}); \
                 requested without bias (wire an external resistor)",
                cfg.pin
            );
            s.flags = flags;
            Ok((request(&c, &entry, &line, &s)?, entry))
        }
        r => Ok((r?, entry)),
    }
}

impl GpioButton {
    /// Requests the line and starts the watcher thread.
    pub fn start(
        cfg: &ButtonConfig,
        on_press: impl Fn(Press) + Send + 'static,
    ) -> Result<Self, GpioError> {
        let (req, entry) = request_button(cfg)?;
        let wake = Arc::new(Wake::new().map_err(GpioError::Wake)?);
        let description = format!(
            "GPIO line {} on chip {}, pressed = {}",
            cfg.pin,
            entry,
            if cfg.active_low { "low" } else { "high" }
        );
        let mut dec = ButtonDecoder::new(
            Duration::from_millis(cfg.debounce_ms),
            Duration::from_millis(cfg.long_press_ms),
        );
        if req.values(1).is_ok_and(|v| v & 1 != 0) {
            dec.held_at_start(cdev::monotonic_now());
        }
        let w = wake.clone();
        let pin = cfg.pin;
        let thread = std::thread::Builder::new()
            .name("button".into())
            .spawn(move || {
                if let Err(e) = watch(&req, &w, dec, on_press) {
                    crate::sys::log::say!(
                        "button: reading line {pin} of {entry} failed: {e}; the \
                         button is off, use spindle start / spindle abort"
                    );
                }
            })
            .expect("spawning a thread only fails when the system is out of resources");
        Ok(GpioButton {
            wake,
            thread: Some(thread),
            description,
        })
    }
}

/// Milliseconds from `now` to `deadline`, rounded up (poll(2) must not wake early and spin).
fn timeout_ms(deadline: Option<Duration>, now: Duration) -> i32 {
    match deadline {
        None => -1,
        Some(d) => {
            let us = d.saturating_sub(now).as_micros();
            us.div_ceil(1000).clamp(1, i32::MAX as u128) as i32
        }
    }
}

/// Blocks in poll(2) on the line and the wake fd: edges go to the decoder with their kernel
/// timestamps; a timeout only while a decision is pending (debounce, long press while held).
fn watch(
    req: &LineRequestFd,
    wake: &Wake,
    mut dec: ButtonDecoder,
    on_press: impl Fn(Press),
) -> std::io::Result<()> {
    loop {
        let now = cdev::monotonic_now();
        if let Some(p) = dec.poll(now) {
            on_press(p);
        }
        let ready = cdev::poll_in(
            &[req.raw(), wake.raw()],
            timeout_ms(dec.next_deadline(), now),
        )?;
        if ready[1] {
            return Ok(());
        }
        if ready[0] {
            for ev in req.read_events()? {
                let t = Duration::from_nanos(ev.timestamp_ns);
                if let Some(p) = dec.edge(t, ev.id == cdev::EVENT_RISING_EDGE) {
                    on_press(p);
                }
            }
        }
    }
}

impl Drop for GpioButton {
    fn drop(&mut self) {
        self.wake.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_timeouts_round_up_and_block_when_idle() {
        let now = Duration::from_secs(100);
        assert_eq!(timeout_ms(None, now), -1);
        assert_eq!(timeout_ms(Some(now + Duration::from_micros(300)), now), 1);
        assert_eq!(
            timeout_ms(Some(now + Duration::from_millis(2999)), now),
            2999
        );
        assert_eq!(timeout_ms(Some(now - Duration::from_millis(5)), now), 1);
    }

    #[test]
    fn led_roles_are_distinct_bits_of_one_request() {
        let bits: Vec<u64> = LedRole::ALL.iter().map(|r| bit(*r)).collect();
        assert_eq!(bits.iter().fold(0, |a, b| a | b), ALL_LEDS);
        assert_eq!(bits.len(), 3);
    }

    #[test]
    fn a_chip_path_that_is_not_a_chip_is_named() {
        let cfg = StatusConfig {
            chip: ChipSpec::Path("/dev/null".into()),
            ..StatusConfig::default()
        };
        let e = GpioLeds::open(&cfg)
            .err()
            .expect("/dev/null is no GPIO chip");
        let m = e.to_string();
        assert!(m.starts_with("/dev/null is not a GPIO chip"), "{m}");
        assert!(m.ends_with("check [status] chip"), "{m}");
        let cfg = ButtonConfig {
            chip: ChipSpec::Path("/dev/gpiochip-none".into()),
            ..ButtonConfig::default()
        };
        let e = GpioButton::start(&cfg, |_| {}).err().expect("no such chip");
        let m = e.to_string();
        assert!(
            m.contains("/dev/gpiochip-none") && m.contains("[button] chip"),
            "{m}"
        );
    }
}
