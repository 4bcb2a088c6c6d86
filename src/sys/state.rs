//! System state recorded before and after each target and sampled during runs: kernel, CPU,
//! RAM, board model, SoC temperature and Raspberry Pi throttling flags. Everything is read
//! through a root path (`/` on a real machine, a fixture tree in tests); parsers are pure.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// A snapshot of the machine.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemState {
    /// RFC 3339 UTC.
    pub at: String,
    pub kernel: Option<String>,
    pub cpu_model: Option<String>,
    pub ram_bytes: Option<u64>,
    /// Device-tree model, e.g. "Raspberry Pi 4 Model B Rev 1.4".
    pub board_model: Option<String>,
    /// Load average over one minute.
    pub load_1m: Option<f64>,
    #[serde(flatten)]
    pub sample: StateSample,
    /// Which sensors could be read, and why not (absent in bundles before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensors: Option<super::sensors::Sensors>,
}

/// What is sampled every few seconds during a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StateSample {
    /// Seconds since the target's first phase started (0 for snapshots).
    #[serde(default)]
    pub t_s: f64,
    /// SoC temperature in °C (thermal zone 0, or the `cpu-thermal` zone).
    pub temp_c: Option<f64>,
    /// Raspberry Pi `get_throttled` bits (firmware sysfs file), when available.
    pub throttled: Option<u32>,
    /// Under-voltage alarm of the `rpi_volt` hwmon device, when present.
    pub undervoltage: Option<bool>,
}

/// Human-readable names of the set `get_throttled` bits.
pub fn throttled_flags(bits: u32) -> Vec<&'static str> {
    const NAMES: [(u32, &str); 8] = [
        (0, "under-voltage now"),
        (1, "ARM frequency capped now"),
        (2, "throttled now"),
        (3, "soft temperature limit now"),
        (16, "under-voltage has occurred"),
        (17, "frequency capping has occurred"),
        (18, "throttling has occurred"),
        (19, "soft temperature limit has occurred"),
    ];
    NAMES
        .iter()
        .filter(|(b, _)| bits & (1 << b) != 0)
        .map(|(_, n)| *n)
        .collect()
}

/// Parses `throttled=0x50005` (vcgencmd) or a bare `50005`/`0x50005` (sysfs).
pub fn parse_throttled(text: &str) -> Option<u32> {
    let t = text.trim();
    let t = t.strip_prefix("throttled=").unwrap_or(t);
    let t = t.strip_prefix("0x").unwrap_or(t);
    u32::from_str_radix(t, 16).ok()
}

/// Parses `/proc/meminfo`'s MemTotal into bytes.
pub fn parse_meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn read(root: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.join(rel.trim_start_matches('/'))).ok()
}

/// The SoC temperature: the `cpu-thermal` zone if there is one, else the first zone.
fn temperature(root: &Path) -> Option<f64> {
    let (zone, _) = super::sensors::thermal_zone(root)?;
    let milli: f64 = std::fs::read_to_string(zone.join("temp"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(milli / 1000.0)
}

fn undervoltage(root: &Path) -> Option<bool> {
    let dir = super::sensors::rpi_volt_dir(root)?;
    std::fs::read_to_string(dir.join("in0_lcrit_alarm"))
        .ok()
        .map(|v| v.trim() == "1")
}

/// Samples temperature and throttling.
pub fn sample(root: &Path, t_s: f64) -> StateSample {
    StateSample {
        t_s,
        temp_c: temperature(root),
        throttled: read(root, super::sensors::GET_THROTTLED).and_then(|t| parse_throttled(&t)),
        undervoltage: undervoltage(root),
    }
}

/// The kernel release (`uname -r`).
pub fn kernel_release(root: &Path) -> Option<String> {
    read(root, "proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// A full snapshot.
pub fn snapshot(root: &Path) -> SystemState {
    let model = super::host::board_model(root);
    SystemState {
        at: crate::sys::clock::now_rfc3339(),
        kernel: kernel_release(root),
        cpu_model: read(root, "proc/cpuinfo").and_then(|t| super::host::parse_cpu_model(&t)),
        ram_bytes: read(root, "proc/meminfo").and_then(|t| parse_meminfo_total(&t)),
        board_model: model,
        load_1m: read(root, "proc/loadavg").and_then(|t| t.split_whitespace().next()?.parse().ok()),
        sample: sample(root, 0.0),
        sensors: Some(super::sensors::probe(root)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttled_parsing_and_flags() {
        assert_eq!(parse_throttled("throttled=0x50005\n"), Some(0x50005));
        assert_eq!(parse_throttled("50000"), Some(0x50000));
        assert_eq!(parse_throttled("garbage"), None);
        assert_eq!(
            throttled_flags(0x50005),
            vec![
                "under-voltage now",
                "throttled now",
                "under-voltage has occurred",
                "throttling has occurred"
            ]
        );
    }

    #[test]
    fn snapshot_reads_a_pi_fixture() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let w = |rel: &str, text: &str| {
            let p = r.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        w("proc/sys/kernel/osrelease", "6.1.0-rpi7-rpi-v8\n");
        w(
            "proc/meminfo",
            "MemTotal:        3884108 kB\nMemFree: 1 kB\n",
        );
        w(
            "proc/cpuinfo",
            "processor\t: 0\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n",
        );
        w("proc/device-tree/model", "Raspberry Pi 4 Model B Rev 1.4\0");
        w("sys/class/thermal/thermal_zone0/type", "cpu-thermal\n");
        w("sys/class/thermal/thermal_zone0/temp", "61342\n");
        w(
            "sys/devices/platform/soc/soc:firmware/get_throttled",
            "50000\n",
        );
        w("sys/class/hwmon/hwmon1/name", "rpi_volt\n");
        w("sys/class/hwmon/hwmon1/in0_lcrit_alarm", "0\n");
        let s = snapshot(r);
        assert_eq!(s.kernel.as_deref(), Some("6.1.0-rpi7-rpi-v8"));
        assert_eq!(s.ram_bytes, Some(3_884_108 * 1024));
        assert_eq!(
            s.board_model.as_deref(),
            Some("Raspberry Pi 4 Model B Rev 1.4")
        );
        assert_eq!(s.sample.temp_c, Some(61.342));
        assert_eq!(s.sample.throttled, Some(0x50000));
        assert_eq!(s.sample.undervoltage, Some(false));
        assert!(s.sensors.unwrap().undervoltage.measured());
    }

    #[test]
    fn empty_root_gives_unknowns_not_errors() {
        let d = tempfile::tempdir().unwrap();
        let s = snapshot(d.path());
        assert_eq!(s.kernel, None);
        assert_eq!(s.sample.temp_c, None);
    }
}
