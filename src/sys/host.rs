//! Facts about the machine a result was measured on.

use serde::{Deserialize, Serialize};

/// The machine the test ran on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    pub arch: String,
    pub cpu_model: String,
    pub cpus: u32,
    pub ram_bytes: u64,
    /// Board model from the device tree (e.g. "Raspberry Pi 4 Model B Rev 1.4"), when present.
    #[serde(default)]
    pub board_model: Option<String>,
}

impl HostInfo {
    /// Reads the facts from the running system (never fails: unknown facts stay empty).
    pub fn collect() -> Self {
        use sysinfo::System;
        let mut sys = System::new();
        sys.refresh_memory();
        sys.refresh_cpu_list(sysinfo::CpuRefreshKind::nothing());
        let cpu_model = sys
            .cpus()
            .first()
            .map(|c| c.brand().trim().to_string())
            .filter(|s| !s.is_empty())
            .or_else(cpu_model_from_proc)
            .unwrap_or_default();
        HostInfo {
            hostname: System::host_name().unwrap_or_default(),
            kernel: System::kernel_version().unwrap_or_default(),
            arch: std::env::consts::ARCH.to_string(),
            cpu_model,
            cpus: sys.cpus().len().max(1) as u32,
            ram_bytes: sys.total_memory(),
            board_model: board_model(std::path::Path::new("/")),
        }
    }
}

/// The board model from the device tree under `root` ("Raspberry Pi 4 Model B Rev 1.4"), when
/// there is one.
pub fn board_model(root: &std::path::Path) -> Option<String> {
    [
        "proc/device-tree/model",
        "sys/firmware/devicetree/base/model",
    ]
    .iter()
    .find_map(|rel| std::fs::read_to_string(root.join(rel)).ok())
    .map(|s| s.trim_end_matches('\0').trim().to_string())
    .filter(|s| !s.is_empty())
}

/// On ARM, /proc/cpuinfo has no "model name"; fall back to "Model" / "Hardware" lines.
fn cpu_model_from_proc() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    parse_cpu_model(&text)
}

/// Picks the most descriptive CPU line of a /proc/cpuinfo text.
pub fn parse_cpu_model(cpuinfo: &str) -> Option<String> {
    for key in ["model name", "Model", "Hardware"] {
        for line in cpuinfo.lines() {
            if let Some((k, v)) = line.split_once(':') {
                if k.trim() == key && !v.trim().is_empty() {
                    return Some(v.trim().to_string());
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_model_prefers_model_name_then_pi_model() {
        assert_eq!(
            super::parse_cpu_model("processor: 0\nmodel name\t: Intel Xeon\n").as_deref(),
            Some("Intel Xeon")
        );
        assert_eq!(
            super::parse_cpu_model(
                "processor\t: 0\nBogoMIPS\t: 108.00\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n"
            )
            .as_deref(),
            Some("Raspberry Pi 4 Model B Rev 1.4")
        );
        assert_eq!(super::parse_cpu_model("nothing here"), None);
    }

    #[test]
    fn collect_reads_this_machine() {
        let h = super::HostInfo::collect();
        assert!(h.cpus >= 1);
        assert!(h.ram_bytes > 0);
        assert!(!h.arch.is_empty());
    }
}
