//! The board's own LEDs through the sysfs LED class: ACT (or `led0`) as green, PWR (or `led1`)
//! as red. The original trigger is saved when opened and written back on restore, so the LEDs
//! go back to disk activity / power indication after spindle exits. A LED whose trigger was
//! `none` (nothing to give back, or left so by a spindle that crashed) is left dark.

use super::indicator::LedDriver;
use super::pattern::LedRole;
use std::path::{Path, PathBuf};

/// Parses a LED `trigger` file (`none rc-feedback [mmc0] timer`) to the selected trigger.
pub fn parse_trigger(text: &str) -> Option<String> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .map(str::to_string)
}

/// Why a board shows no ACT/PWR LED, from its model and whether its device tree has a `leds`
/// node: the Pi 5's mainline tree (Debian's kernels, bcm2712-rpi-5-b.dtb of 7.3.4) has none, so
/// the kernel offers no on-board LED there.
pub fn why_no_leds(model: &str, dt_has_leds: bool) -> String {
    match (model, dt_has_leds) {
        ("", _) | (_, true) => String::new(),
        (m, false) if m.starts_with("Raspberry Pi 5") || m.starts_with("Raspberry Pi 500") => {
            " (the Pi 5's mainline device tree, the one Debian's kernel ships, has no leds node: \
             use [status] backend = \"gpio\" or \"console\")"
                .into()
        }
        (_, false) => " (the device tree has no leds node)".into(),
    }
}

struct Led {
    role: LedRole,
    dir: PathBuf,
    max: String,
    saved_trigger: Option<String>,
}

/// The on-board LEDs found under a root path.
pub struct OnboardLeds {
    leds: Vec<Led>,
    roles: Vec<LedRole>,
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

impl OnboardLeds {
    /// Finds ACT/led0 and PWR/led1 under `root`/sys/class/leds and takes them over (trigger
    /// `none`). Errors when neither exists or the trigger cannot be written (not root).
    pub fn open(root: &Path) -> anyhow::Result<Self> {
        let class = root.join("sys/class/leds");
        let mut leds = Vec::new();
        for (role, names) in [
            (LedRole::Green, ["ACT", "led0"]),
            (LedRole::Red, ["PWR", "led1"]),
        ] {
            let Some(dir) = names
                .iter()
                .map(|n| class.join(n))
                .find(|d| d.join("brightness").exists())
            else {
                continue;
            };
            let led = Led {
                role,
                max: read(&dir.join("max_brightness"))
                    .filter(|m| m.parse::<u32>().is_ok_and(|v| v > 0))
                    .unwrap_or_else(|| "1".into()),
                saved_trigger: read(&dir.join("trigger")).and_then(|t| parse_trigger(&t)),
                dir,
            };
            std::fs::write(led.dir.join("trigger"), "none").map_err(|e| {
                anyhow::anyhow!(
                    "could not take over the on-board LED '{}': {e} (run as root)",
                    led.dir.join("trigger").display()
                )
            })?;
            leds.push(led);
        }
        anyhow::ensure!(
            !leds.is_empty(),
            "no on-board LEDs: neither {0}/ACT nor {0}/led0 nor {0}/PWR nor {0}/led1 exists{1}",
            class.display(),
            why_no_leds(
                &crate::sys::host::board_model(root).unwrap_or_default(),
                root.join("proc/device-tree/leds").exists()
            )
        );
        let roles = leds.iter().map(|l| l.role).collect();
        let files: Vec<PathBuf> = leds.iter().map(|l| l.dir.join("brightness")).collect();
        super::indicator::on_panic_darken(move || {
            for f in &files {
                let _ = std::fs::write(f, "0");
            }
        });
        Ok(OnboardLeds { leds, roles })
    }
}

impl LedDriver for OnboardLeds {
    fn roles(&self) -> &[LedRole] {
        &self.roles
    }

    fn set(&mut self, role: LedRole, lit: bool) -> std::io::Result<()> {
        match self.leds.iter().find(|l| l.role == role) {
            Some(l) => std::fs::write(
                l.dir.join("brightness"),
                if lit { l.max.as_str() } else { "0" },
            ),
            None => Ok(()),
        }
    }

    fn restore(&mut self) {
        for l in &self.leds {
            let _ = std::fs::write(l.dir.join("brightness"), "0");
            match l.saved_trigger.as_deref() {
                // No trigger to give back (or a crashed spindle left "none"): stay dark.
                Some("none") | None => {}
                Some(t) => {
                    let _ = std::fs::write(l.dir.join("trigger"), t);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(names: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (n, trig) in names {
            let dir = d.path().join("sys/class/leds").join(n);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("trigger"), trig).unwrap();
            std::fs::write(dir.join("brightness"), "255\n").unwrap();
            std::fs::write(dir.join("max_brightness"), "255\n").unwrap();
        }
        d
    }

    fn get(d: &Path, n: &str, f: &str) -> String {
        read(&d.join("sys/class/leds").join(n).join(f)).unwrap()
    }

    #[test]
    fn trigger_parsing() {
        assert_eq!(
            parse_trigger("none rc-feedback [mmc0] timer\n").as_deref(),
            Some("mmc0")
        );
        assert_eq!(parse_trigger("[none] timer").as_deref(), Some("none"));
        assert_eq!(parse_trigger("none timer"), None);
    }

    #[test]
    fn takes_over_and_restores_triggers() {
        let d = fixture(&[("ACT", "none [mmc0] timer"), ("PWR", "[default-on] none")]);
        let mut leds = OnboardLeds::open(d.path()).unwrap();
        assert_eq!(leds.roles(), &[LedRole::Green, LedRole::Red]);
        assert_eq!(get(d.path(), "ACT", "trigger"), "none");
        leds.set(LedRole::Green, true).unwrap();
        assert_eq!(get(d.path(), "ACT", "brightness"), "255");
        leds.set(LedRole::Red, false).unwrap();
        assert_eq!(get(d.path(), "PWR", "brightness"), "0");
        leds.set(LedRole::Yellow, true).unwrap();
        leds.restore();
        assert_eq!(get(d.path(), "ACT", "trigger"), "mmc0");
        assert_eq!(get(d.path(), "PWR", "trigger"), "default-on");
        assert_eq!(get(d.path(), "ACT", "brightness"), "0");
    }

    #[test]
    fn a_panic_darkens_the_leds_even_without_drop() {
        let d = fixture(&[("PWR", "[default-on] none")]);
        let mut leds = OnboardLeds::open(d.path()).unwrap();
        leds.set(LedRole::Red, true).unwrap();
        assert_eq!(get(d.path(), "PWR", "brightness"), "255");
        crate::status::indicator::install_panic_hook();
        let r = std::thread::spawn(|| panic!("test panic (expected)")).join();
        assert!(r.is_err());
        assert_eq!(get(d.path(), "PWR", "brightness"), "0");
        std::mem::forget(leds); // as with panic = "abort": no drop
    }

    #[test]
    fn a_led_without_trigger_is_left_dark() {
        let d = fixture(&[("ACT", "[none] timer mmc0")]);
        let mut leds = OnboardLeds::open(d.path()).unwrap();
        leds.set(LedRole::Green, true).unwrap();
        leds.restore();
        assert_eq!(get(d.path(), "ACT", "brightness"), "0");
        assert_eq!(get(d.path(), "ACT", "trigger"), "none");
    }

    #[test]
    fn old_kernel_names_and_missing_leds() {
        let d = fixture(&[("led0", "[heartbeat]")]);
        let leds = OnboardLeds::open(d.path()).unwrap();
        assert_eq!(leds.roles(), &[LedRole::Green]);
        let empty = tempfile::tempdir().unwrap();
        let e = OnboardLeds::open(empty.path()).err().unwrap();
        assert!(e.to_string().contains("ACT"), "{e}");
        assert!(
            e.to_string().ends_with("led1 exists"),
            "no model, no guess: {e}"
        );
    }

    #[test]
    fn the_pi5_on_debians_kernel_has_no_onboard_led_and_says_so() {
        let pi5 = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(pi5.path().join("proc/device-tree")).unwrap();
        std::fs::write(
            pi5.path().join("proc/device-tree/model"),
            "Raspberry Pi 5\0",
        )
        .unwrap();
        let e = OnboardLeds::open(pi5.path()).err().unwrap().to_string();
        assert!(
            e.contains("Pi 5's mainline device tree") && e.contains("no leds node"),
            "{e}"
        );
        assert!(e.contains("backend = \"gpio\""), "{e}");
        assert_eq!(why_no_leds("Raspberry Pi 4 Model B Rev 1.5", true), "");
        assert_eq!(
            why_no_leds("Raspberry Pi 4 Model B Rev 1.5", false),
            " (the device tree has no leds node)"
        );
    }
}
