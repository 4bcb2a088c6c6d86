//! Which of the Pi's health sensors this machine can read, and from where or why not: the SoC
//! temperature (a thermal zone), the under-voltage alarm (the `rpi_volt` hwmon device of the
//! `raspberrypi-hwmon` driver) and the firmware's throttling flags (`get_throttled`, a Raspberry
//! Pi OS kernel file). A sensor that is absent is "not measured" with its reason, so a report
//! never turns "nobody looked" into "nothing happened". Read through a root path; pure.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// One sensor: read from `source`, or not measured and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Sensor {
    Measured { source: String },
    NotMeasured { reason: String },
}

impl Sensor {
    pub fn measured(&self) -> bool {
        matches!(self, Sensor::Measured { .. })
    }

    /// Why it was not measured, if it was not.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Sensor::Measured { .. } => None,
            Sensor::NotMeasured { reason } => Some(reason),
        }
    }
}

impl fmt::Display for Sensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sensor::Measured { source } => write!(f, "read from {source}"),
            Sensor::NotMeasured { reason } => write!(f, "not measured ({reason})"),
        }
    }
}

/// The three sensors spindle samples during a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sensors {
    /// SoC temperature.
    pub temperature: Sensor,
    /// Under-voltage (the Pi's supply dropped below ~4.63 V).
    pub undervoltage: Sensor,
    /// The firmware's throttling and frequency-capping flags.
    pub throttling: Sensor,
    /// Whether the board is a Raspberry Pi (the power sensors only matter there).
    pub raspberry_pi: bool,
}

impl Sensors {
    /// One line for the log and summary.txt.
    pub fn describe(&self) -> String {
        format!(
            "temperature {}; under-voltage {}; throttling {}",
            self.temperature, self.undervoltage, self.throttling
        )
    }
}

/// The firmware file of Raspberry Pi OS kernels with the throttling bits.
pub const GET_THROTTLED: &str = "sys/devices/platform/soc/soc:firmware/get_throttled";

fn exists(root: &Path, rel: &str) -> bool {
    root.join(rel).exists()
}

/// The `rpi_volt` hwmon directory, when the driver registered one.
pub fn rpi_volt_dir(root: &Path) -> Option<std::path::PathBuf> {
    std::fs::read_dir(root.join("sys/class/hwmon"))
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| std::fs::read_to_string(p.join("name")).is_ok_and(|n| n.trim() == "rpi_volt"))
}

/// The thermal zone spindle reads: `cpu-thermal` if there is one, else the first.
pub fn thermal_zone(root: &Path) -> Option<(std::path::PathBuf, String)> {
    let mut zones: Vec<_> = std::fs::read_dir(root.join("sys/class/thermal"))
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("thermal_zone"))
        })
        .filter(|p| p.join("temp").exists())
        .collect();
    zones.sort();
    let kind = |z: &Path| {
        std::fs::read_to_string(z.join("type"))
            .map(|t| t.trim().to_string())
            .unwrap_or_default()
    };
    let pick = zones
        .iter()
        .find(|z| kind(z) == "cpu-thermal")
        .or_else(|| zones.first())?;
    Some((pick.clone(), kind(pick)))
}

/// Why there is no thermal zone, from the board's model and whether its device tree has a
/// `thermal-zones` node. The Pi 5's mainline tree (Debian's kernels, bcm2712-rpi-5-b.dtb of
/// 7.3.4) has none, so no driver can register the SoC's sensor; the Pi 4's has one, read by
/// bcm2711_thermal.
pub fn no_thermal_zone(model: &str, dt_has_thermal_zones: bool) -> String {
    if !model.starts_with("Raspberry Pi") {
        return "no thermal zone in /sys/class/thermal".into();
    }
    if dt_has_thermal_zones {
        let driver = if model.starts_with("Raspberry Pi 4") || model.starts_with("Raspberry Pi 400")
        {
            "bcm2711_thermal"
        } else {
            "its driver"
        };
        return format!(
            "no thermal zone: the device tree describes the SoC's sensor but {driver} is not loaded"
        );
    }
    if model.starts_with("Raspberry Pi 5") || model.starts_with("Raspberry Pi 500") {
        "no thermal zone: the Pi 5's mainline device tree (the one Debian's kernel ships) has no \
         thermal node, so no driver reads the SoC's sensor"
            .into()
    } else {
        "no thermal zone: this device tree has no thermal-zones node".into()
    }
}

/// What can be read under `root`, and why not where not.
pub fn probe(root: &Path) -> Sensors {
    let model = super::host::board_model(root).unwrap_or_default();
    let pi = model.starts_with("Raspberry Pi");
    let temperature = match thermal_zone(root) {
        Some((z, kind)) => Sensor::Measured {
            source: format!(
                "thermal zone {} ({})",
                z.file_name().unwrap_or_default().to_string_lossy(),
                if kind.is_empty() { "no type" } else { &kind }
            ),
        },
        None => Sensor::NotMeasured {
            reason: no_thermal_zone(&model, exists(root, "proc/device-tree/thermal-zones")),
        },
    };
    let undervoltage = match rpi_volt_dir(root) {
        Some(d) => Sensor::Measured {
            source: format!(
                "hwmon rpi_volt ({}/in0_lcrit_alarm)",
                d.file_name().unwrap_or_default().to_string_lossy()
            ),
        },
        None if !pi => Sensor::NotMeasured {
            reason: "not a Raspberry Pi: no firmware under-voltage flag".into(),
        },
        None if exists(root, "sys/module/raspberrypi_hwmon") => Sensor::NotMeasured {
            reason: "the raspberrypi-hwmon driver is loaded but the firmware registered no \
                     voltage sensor (it did not answer the get-throttled query)"
                .into(),
        },
        None => Sensor::NotMeasured {
            reason: "no rpi_volt sensor: the raspberrypi-hwmon driver is not loaded (the \
                     spindle image ships it; other kernels need CONFIG_SENSORS_RASPBERRYPI_HWMON)"
                .into(),
        },
    };
    let throttling = if exists(root, GET_THROTTLED) {
        Sensor::Measured {
            source: format!("/{GET_THROTTLED}"),
        }
    } else if pi {
        Sensor::NotMeasured {
            reason: "this kernel has no get_throttled file (a Raspberry Pi OS kernel \
                     interface); frequency capping and throttling cannot be seen"
                .into(),
        }
    } else {
        Sensor::NotMeasured {
            reason: "not a Raspberry Pi: no firmware throttling flags".into(),
        }
    };
    Sensors {
        temperature,
        undervoltage,
        throttling,
        raspberry_pi: pi,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, impl Fn(&str, &str)) {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().to_path_buf();
        let w = move |rel: &str, text: &str| {
            let p = r.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        (d, w)
    }

    #[test]
    fn a_raspberry_pi_os_kernel_measures_everything() {
        let (d, w) = tree();
        w("proc/device-tree/model", "Raspberry Pi 4 Model B Rev 1.4\0");
        w("sys/class/thermal/thermal_zone0/type", "cpu-thermal\n");
        w("sys/class/thermal/thermal_zone0/temp", "50000\n");
        w(GET_THROTTLED, "0\n");
        w("sys/class/hwmon/hwmon2/name", "rpi_volt\n");
        w("sys/class/hwmon/hwmon2/in0_lcrit_alarm", "0\n");
        let s = probe(d.path());
        assert!(s.raspberry_pi);
        assert!(s.temperature.measured() && s.undervoltage.measured() && s.throttling.measured());
        assert_eq!(
            s.undervoltage.to_string(),
            "read from hwmon rpi_volt (hwmon2/in0_lcrit_alarm)"
        );
        assert_eq!(
            s.temperature.to_string(),
            "read from thermal zone thermal_zone0 (cpu-thermal)"
        );
    }

    #[test]
    fn the_image_kernel_on_a_pi_says_why_throttling_is_not_measured() {
        // Debian's kernel with spindle's raspberrypi-hwmon module: rpi_volt, no get_throttled.
        let (d, w) = tree();
        w("proc/device-tree/model", "Raspberry Pi 4 Model B Rev 1.5\0");
        w("sys/class/hwmon/hwmon0/name", "rpi_volt\n");
        w("sys/class/hwmon/hwmon0/in0_lcrit_alarm", "1\n");
        let s = probe(d.path());
        assert!(s.undervoltage.measured());
        assert!(!s.temperature.measured());
        // The tree has no thermal-zones node here: say that, not a missing driver.
        assert!(s
            .temperature
            .reason()
            .unwrap()
            .contains("no thermal-zones node"));
        w(
            "proc/device-tree/thermal-zones/cpu-thermal/polling-delay",
            "",
        );
        let why = probe(d.path()).temperature.reason().unwrap().to_string();
        assert_eq!(
            why,
            "no thermal zone: the device tree describes the SoC's sensor but bcm2711_thermal is not loaded"
        );
        assert!(s.throttling.reason().unwrap().contains("get_throttled"));
    }

    #[test]
    fn the_pi5_on_debians_kernel_says_why_temperature_is_not_measured() {
        // bcm2712-rpi-5-b.dtb of 7.3.4: model "Raspberry Pi 5", no thermal node; the firmware
        // node is there, so spindle's raspberrypi-hwmon module can register rpi_volt.
        let (d, w) = tree();
        w("proc/device-tree/model", "Raspberry Pi 5\0");
        w(
            "proc/device-tree/firmware/rpi-firmware/compatible",
            "raspberrypi,bcm2835-firmware\0simple-mfd\0",
        );
        w("sys/class/hwmon/hwmon1/name", "rpi_volt\n");
        w("sys/class/hwmon/hwmon1/in0_lcrit_alarm", "0\n");
        let s = probe(d.path());
        assert!(s.raspberry_pi && s.undervoltage.measured());
        let why = s.temperature.reason().unwrap();
        assert!(why.contains("Pi 5's mainline device tree"), "{why}");
        assert!(!why.contains("bcm2711"), "no Pi 4 driver on a Pi 5: {why}");
        assert!(s.throttling.reason().unwrap().contains("get_throttled"));
        // Without the module, under-voltage is not measured either, and says why.
        let (d, w) = tree();
        w("proc/device-tree/model", "Raspberry Pi 5\0");
        let why = probe(d.path()).undervoltage.reason().unwrap().to_string();
        assert!(
            why.contains("raspberrypi-hwmon driver is not loaded"),
            "{why}"
        );
    }

    #[test]
    fn a_loaded_driver_without_a_sensor_blames_the_firmware() {
        // The emulated Pi 4: the module loads, QEMU's firmware does not answer get-throttled.
        let (d, w) = tree();
        w("proc/device-tree/model", "Raspberry Pi 4 Model B Rev 1.5\0");
        w("sys/module/raspberrypi_hwmon/refcnt", "0\n");
        let s = probe(d.path());
        let why = s.undervoltage.reason().unwrap();
        assert!(
            why.contains("loaded") && why.contains("get-throttled"),
            "{why}"
        );
        let (d, w) = tree();
        w("proc/device-tree/model", "Raspberry Pi 4 Model B Rev 1.5\0");
        let s = probe(d.path());
        let why = s.undervoltage.reason().unwrap();
        assert!(why.contains("not loaded"), "{why}");
        assert!(
            s.describe().contains("under-voltage not measured ("),
            "{}",
            s.describe()
        );
    }

    #[test]
    fn another_machine_is_not_a_pi() {
        let (d, w) = tree();
        w("sys/class/thermal/thermal_zone3/type", "x86_pkg_temp\n");
        w("sys/class/thermal/thermal_zone3/temp", "41000\n");
        let s = probe(d.path());
        assert!(!s.raspberry_pi);
        assert!(s.temperature.measured());
        assert_eq!(
            s.undervoltage.reason(),
            Some("not a Raspberry Pi: no firmware under-voltage flag")
        );
        let j = serde_json::to_string(&s.undervoltage).unwrap();
        assert_eq!(
            j,
            r#"{"status":"not_measured","reason":"not a Raspberry Pi: no firmware under-voltage flag"}"#
        );
    }
}
