//! Which GPIO chip and lines, and what went wrong: the `chip` setting resolved against the
//! chips present (by label, name or path), line checks, and every GPIO error text naming the
//! chip, the line, its holder and the key to change. Pure, so it is tested on fixtures;
//! `gpio.rs` feeds it what the kernel said.

use super::settings::ChipSpec;
use std::fmt;
use std::path::PathBuf;

/// The labels `chip = "auto"` tries, in this order: Pi 4, Pi 5, older Pis.
pub const AUTO_LABELS: [&str; 3] = ["pinctrl-bcm2711", "pinctrl-rp1", "pinctrl-bcm2835"];

/// One GPIO chip as the kernel describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChipEntry {
    /// `/dev/gpiochipN`.
    pub path: PathBuf,
    /// `gpiochipN`.
    pub name: String,
    /// The driver's label: `pinctrl-bcm2711`, `pinctrl-rp1`, `9030000.pl061`.
    pub label: String,
    pub lines: u32,
}

impl fmt::Display for ChipEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}' ({})", self.label, self.path.display())
    }
}

/// The config keys a user (the LEDs' or the button's) changes to fix a GPIO problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keys {
    /// `[status] chip` / `[button] chip`.
    pub chip: &'static str,
    /// How to do without GPIO: `[status] backend` / `[button] enabled`.
    pub off: &'static str,
}

/// The LEDs' keys.
pub const LED_KEYS: Keys = Keys {
    chip: "[status] chip",
    off: "[status] backend = \"onboard\" or \"console\"",
};
/// The button's keys.
pub const BUTTON_KEYS: Keys = Keys {
    chip: "[button] chip",
    off: "[button] enabled = false",
};

/// A line to request and the key that chose it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineUse {
    pub offset: u32,
    /// `[status] green_pin`, `[button] pin`.
    pub key: &'static str,
}

/// Why GPIO could not be used, with the remedy.
#[derive(Debug, thiserror::Error)]
pub enum GpioError {
    #[error("GPIO is not available: no /dev/gpiochip* exists (not a board with GPIO pins, or no GPIO character device in this kernel); set {} to do without", .keys.off)]
    NoChips { keys: Keys },
    #[error("no GPIO chip {}; chips here: {}; set {} to one of those labels or to a /dev/gpiochipN path", wanted(.spec), list(.chips), .keys.chip)]
    NotFound {
        spec: ChipSpec,
        chips: Vec<ChipEntry>,
        keys: Keys,
    },
    #[error("could not open the GPIO chip {}: {err}{}; check {}", .path.display(), root_hint(.err), .keys.chip)]
    Open {
        path: PathBuf,
        err: std::io::Error,
        keys: Keys,
    },
    #[error("{} is not a GPIO chip (its chip info: {err}); check {}", .path.display(), .keys.chip)]
    NotAChip {
        path: PathBuf,
        err: std::io::Error,
        keys: Keys,
    },
    #[error("line {} does not exist on {chip}, which has lines 0-{}; change {}", .line.offset, .chip.lines.saturating_sub(1), .line.key)]
    NoSuchLine { chip: Box<ChipEntry>, line: LineUse },
    #[error("line {} of {} ({}) is {}; free it or change {}", .line.offset, .chip.label, .chip.path.display(), holder(.consumer), .line.key)]
    Busy {
        chip: Box<ChipEntry>,
        line: LineUse,
        consumer: String,
    },
    #[error("could not create the button watcher's eventfd: {0}")]
    Wake(std::io::Error),
    #[error("requesting line{} {} of {chip} failed: {err}{}; change {}", plural(.lines), offsets(.lines), root_hint(.err), keys(.lines))]
    Request {
        chip: Box<ChipEntry>,
        lines: Vec<LineUse>,
        err: std::io::Error,
    },
}

fn wanted(spec: &ChipSpec) -> String {
    match spec {
        ChipSpec::Auto => format!(
            "labelled {} (chip = \"auto\")",
            AUTO_LABELS
                .iter()
                .map(|l| format!("'{l}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ChipSpec::Label(l) => format!("labelled or named '{l}'"),
        ChipSpec::Path(p) => format!("at {}", p.display()),
    }
}

fn list(chips: &[ChipEntry]) -> String {
    if chips.is_empty() {
        return "none".into();
    }
    chips
        .iter()
        .map(|c| format!("{c}, {} lines", c.lines))
        .collect::<Vec<_>>()
        .join("; ")
}

fn holder(consumer: &str) -> String {
    if consumer.is_empty() {
        "in use by another program or driver (it gave no name)".into()
    } else {
        format!("held by '{consumer}'")
    }
}

fn root_hint(err: &std::io::Error) -> &'static str {
    if err.kind() == std::io::ErrorKind::PermissionDenied {
        " (run as root)"
    } else {
        ""
    }
}

fn plural(lines: &[LineUse]) -> &'static str {
    if lines.len() == 1 {
        ""
    } else {
        "s"
    }
}

fn offsets(lines: &[LineUse]) -> String {
    lines
        .iter()
        .map(|l| l.offset.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn keys(lines: &[LineUse]) -> String {
    lines.iter().map(|l| l.key).collect::<Vec<_>>().join(", ")
}

/// The chip `spec` names among `chips`: `auto` takes the first of [`AUTO_LABELS`] present; a
/// label matches a chip's label or its name (`gpiochip0`); a path matches the chip's path.
pub fn find_chip<'a>(
    spec: &ChipSpec,
    chips: &'a [ChipEntry],
    keys: Keys,
) -> Result<&'a ChipEntry, GpioError> {
    if chips.is_empty() {
        return Err(GpioError::NoChips { keys });
    }
    let found = match spec {
        ChipSpec::Auto => AUTO_LABELS
            .iter()
            .find_map(|l| chips.iter().find(|c| c.label == *l)),
        ChipSpec::Label(l) => chips
            .iter()
            .find(|c| c.label == *l)
            .or_else(|| chips.iter().find(|c| c.name == *l)),
        ChipSpec::Path(p) => chips.iter().find(|c| c.path == *p),
    };
    found.ok_or_else(|| GpioError::NotFound {
        spec: spec.clone(),
        chips: chips.to_vec(),
        keys,
    })
}

/// Every line exists on `chip`.
pub fn check_lines(chip: &ChipEntry, lines: &[LineUse]) -> Result<(), GpioError> {
    match lines.iter().find(|l| l.offset >= chip.lines) {
        Some(l) => Err(GpioError::NoSuchLine {
            chip: Box::new(chip.clone()),
            line: *l,
        }),
        None => Ok(()),
    }
}

/// The error for a refused request: the first line that is already used (as line info says:
/// `(line, used, consumer)`) gives [`GpioError::Busy`], else the errno as it came.
pub fn request_error(
    chip: &ChipEntry,
    lines: &[LineUse],
    err: std::io::Error,
    info: &[(LineUse, bool, String)],
) -> GpioError {
    if err.raw_os_error() == Some(libc::EBUSY) {
        if let Some((line, _, consumer)) = info.iter().find(|(_, used, _)| *used) {
            return GpioError::Busy {
                chip: Box::new(chip.clone()),
                line: *line,
                consumer: consumer.clone(),
            };
        }
    }
    GpioError::Request {
        chip: Box::new(chip.clone()),
        lines: lines.to_vec(),
        err,
    }
}

/// The request failed because the chip takes no pull-up/pull-down bias (PL061, some
/// expanders): worth asking again without.
pub fn bias_unsupported(err: &std::io::Error) -> bool {
    const ENOTSUPP: i32 = 524; // the kernel's internal code, which can leak to user space
    matches!(
        err.raw_os_error(),
        Some(libc::EOPNOTSUPP) | Some(libc::EINVAL) | Some(ENOTSUPP)
    )
}

/// Orders `/dev` entries named `gpiochipN` by N (others are left out).
pub fn chip_device_names<I: IntoIterator<Item = String>>(names: I) -> Vec<String> {
    let mut v: Vec<(u32, String)> = names
        .into_iter()
        .filter_map(|n| {
            let num = n.strip_prefix("gpiochip")?.parse().ok()?;
            Some((num, n))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, n)| n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Error;

    fn chips() -> Vec<ChipEntry> {
        [
            ("/dev/gpiochip0", "gpiochip0", "pinctrl-bcm2711", 58),
            ("/dev/gpiochip1", "gpiochip1", "raspberrypi-exp-gpio", 8),
        ]
        .into_iter()
        .map(|(p, n, l, lines)| ChipEntry {
            path: p.into(),
            name: n.into(),
            label: l.into(),
            lines,
        })
        .collect()
    }

    fn virt() -> Vec<ChipEntry> {
        vec![ChipEntry {
            path: "/dev/gpiochip0".into(),
            name: "gpiochip0".into(),
            label: "9030000.pl061".into(),
            lines: 8,
        }]
    }

    fn green(offset: u32) -> LineUse {
        LineUse {
            offset,
            key: "[status] green_pin",
        }
    }

    #[test]
    fn auto_finds_the_pi_header_chip_whatever_its_number() {
        let mut c = chips();
        assert_eq!(
            find_chip(&ChipSpec::Auto, &c, LED_KEYS).unwrap().label,
            "pinctrl-bcm2711"
        );
        // Pi 5 on a kernel before 6.6.45: the header is gpiochip4, after the RP1's others.
        c[0].label = "pinctrl-rp1".into();
        c.rotate_left(1);
        let f = find_chip(&ChipSpec::Auto, &c, LED_KEYS).unwrap();
        assert_eq!(f.path, PathBuf::from("/dev/gpiochip0"));
        // bcm2711 wins over bcm2835 when both are there.
        c.push(ChipEntry {
            label: "pinctrl-bcm2835".into(),
            ..c[1].clone()
        });
        c[1].label = "pinctrl-bcm2711".into();
        assert_eq!(
            find_chip(&ChipSpec::Auto, &c, LED_KEYS).unwrap().label,
            "pinctrl-bcm2711"
        );
    }

    /// The Pi 5 under Debian's 7.x kernel. The SoC's two `brcm,brcmstb-gpio` nodes of
    /// bcm2712-rpi-5-b.dtb (7.3.4), `gpio@7d508500` (bank widths 32, 22) and `gpio@7d517c00`
    /// (17, 6), give one chip per bank, labelled with the node's full path (gpio-brcmstb's
    /// label is `%pOF`, the only such format in 7.3.4's gpio-brcmstb.ko); their line counts
    /// (32 per bank, the driver's MAX_GPIO_PER_BANK) and the order of the chips are inferred.
    /// The RP1's `pinctrl-rp1` has 54 lines (gpio0..gpio53 in pinctrl-rp1.ko).
    fn pi5_debian() -> Vec<ChipEntry> {
        let mut c: Vec<ChipEntry> = [
            "/soc@107c000000/gpio@7d508500",
            "/soc@107c000000/gpio@7d508500",
            "/soc@107c000000/gpio@7d517c00",
            "/soc@107c000000/gpio@7d517c00",
            "pinctrl-rp1",
        ]
        .iter()
        .enumerate()
        .map(|(i, l)| ChipEntry {
            path: format!("/dev/gpiochip{i}").into(),
            name: format!("gpiochip{i}"),
            label: l.to_string(),
            lines: 32,
        })
        .collect();
        c[4].lines = 54;
        c
    }

    #[test]
    fn auto_finds_the_rp1_beside_the_pi5_soc_chips_on_debians_kernel() {
        let c = pi5_debian();
        let f = find_chip(&ChipSpec::Auto, &c, LED_KEYS).unwrap();
        assert_eq!(
            (f.label.as_str(), f.name.as_str(), f.lines),
            ("pinctrl-rp1", "gpiochip4", 54)
        );
        // Header pins 17, 27, 22 (the default LEDs) and 53, the RP1's last line, exist there.
        let lines: Vec<LineUse> = [17, 27, 22, 53].into_iter().map(green).collect();
        assert!(check_lines(f, &lines).is_ok());
        let e = check_lines(f, &[green(54)]).unwrap_err().to_string();
        assert!(e.contains("which has lines 0-53"), "{e}");
        // Loaded after the SoC's chips or before them, the RP1 is the one chosen.
        let mut first = c.clone();
        first.rotate_right(1);
        let f = find_chip(&ChipSpec::Auto, &first, LED_KEYS).unwrap();
        assert_eq!(
            (f.label.as_str(), f.name.as_str()),
            ("pinctrl-rp1", "gpiochip4")
        );
        // Without the RP1 (rp1_pci or pinctrl-rp1 not loaded) the SoC's chips are not taken.
        let e = find_chip(&ChipSpec::Auto, &c[..4], LED_KEYS)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'/soc@107c000000/gpio@7d508500' (/dev/gpiochip0), 32 lines"),
            "{e}"
        );
    }

    #[test]
    fn label_name_and_path_select_a_chip() {
        let c = virt();
        let by_label = ChipSpec::Label("9030000.pl061".into());
        assert_eq!(find_chip(&by_label, &c, BUTTON_KEYS).unwrap().lines, 8);
        let by_name = ChipSpec::Label("gpiochip0".into());
        assert!(find_chip(&by_name, &c, BUTTON_KEYS).is_ok());
        let by_path = ChipSpec::Path("/dev/gpiochip0".into());
        assert!(find_chip(&by_path, &c, BUTTON_KEYS).is_ok());
    }

    #[test]
    fn a_missing_label_lists_the_chips_that_exist_and_the_key() {
        let e = find_chip(&ChipSpec::Auto, &virt(), LED_KEYS).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no GPIO chip labelled 'pinctrl-bcm2711', 'pinctrl-rp1', 'pinctrl-bcm2835' \
             (chip = \"auto\"); chips here: '9030000.pl061' (/dev/gpiochip0), 8 lines; set \
             [status] chip to one of those labels or to a /dev/gpiochipN path"
        );
        let e = find_chip(
            &ChipSpec::Label("pinctrl-rp1".into()),
            &chips(),
            BUTTON_KEYS,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("no GPIO chip labelled or named 'pinctrl-rp1'"),
            "{e}"
        );
        assert!(
            e.contains("'raspberrypi-exp-gpio' (/dev/gpiochip1), 8 lines"),
            "{e}"
        );
        assert!(e.contains("set [button] chip"), "{e}");
    }

    #[test]
    fn no_chip_at_all_says_how_to_do_without() {
        let e = find_chip(&ChipSpec::Auto, &[], BUTTON_KEYS).unwrap_err();
        let m = e.to_string();
        assert!(
            m.starts_with("GPIO is not available: no /dev/gpiochip*"),
            "{m}"
        );
        assert!(
            m.ends_with("set [button] enabled = false to do without"),
            "{m}"
        );
    }

    #[test]
    fn a_line_past_the_chip_names_its_key() {
        let c = &virt()[0];
        assert!(check_lines(c, &[green(0), green(7)]).is_ok());
        let e = check_lines(c, &[green(1), green(17)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 17 does not exist on '9030000.pl061' (/dev/gpiochip0), which has lines 0-7; \
             change [status] green_pin"
        );
    }

    #[test]
    fn a_busy_line_names_its_holder() {
        let c = &chips()[0];
        let lines = [
            green(17),
            LineUse {
                offset: 27,
                key: "[status] yellow_pin",
            },
        ];
        let info = [
            (lines[0], false, String::new()),
            (lines[1], true, "leds-gpio".to_string()),
        ];
        let e = request_error(c, &lines, Error::from_raw_os_error(libc::EBUSY), &info);
        assert_eq!(
            e.to_string(),
            "line 27 of pinctrl-bcm2711 (/dev/gpiochip0) is held by 'leds-gpio'; free it or \
             change [status] yellow_pin"
        );
        let info = [(lines[0], true, String::new())];
        let e = request_error(c, &lines, Error::from_raw_os_error(libc::EBUSY), &info);
        assert!(e
            .to_string()
            .contains("is in use by another program or driver"));
    }

    #[test]
    fn other_request_errors_keep_the_errno_and_name_every_key() {
        let c = &chips()[0];
        let lines = [green(17), green(27)];
        let e = request_error(c, &lines, Error::from_raw_os_error(libc::EACCES), &[]);
        let m = e.to_string();
        assert!(
            m.starts_with("requesting lines 17, 27 of 'pinctrl-bcm2711' (/dev/gpiochip0) failed:"),
            "{m}"
        );
        assert!(m.contains("(run as root)"), "{m}");
        // EBUSY with no line reported as used (it was freed in between) is not a "held by".
        let e = request_error(c, &lines, Error::from_raw_os_error(libc::EBUSY), &[]);
        assert!(matches!(e, GpioError::Request { .. }));
    }

    #[test]
    fn bias_errors_are_told_apart() {
        assert!(bias_unsupported(&Error::from_raw_os_error(
            libc::EOPNOTSUPP
        )));
        assert!(bias_unsupported(&Error::from_raw_os_error(libc::EINVAL)));
        assert!(bias_unsupported(&Error::from_raw_os_error(524)));
        assert!(!bias_unsupported(&Error::from_raw_os_error(libc::EBUSY)));
    }

    #[test]
    fn chip_devices_sort_by_number() {
        let names = [
            "gpiochip10",
            "gpiochip2",
            "gpiomem",
            "gpiochip0",
            "gpiochipx",
        ];
        assert_eq!(
            chip_device_names(names.iter().map(|s| s.to_string())),
            vec!["gpiochip0", "gpiochip2", "gpiochip10"]
        );
    }
}
