//! SMART of a disk through smartctl (smartmontools): which device type to use for its USB
//! bridge, one reading before and one after a target ([`read`]), what the run cost the disk
//! ([`SmartChange::between`]). Where SMART is unavailable the record says why, never nothing.
//!
//! smartctl runs through the [`Exec`] seam, so tests check the command lines against fixture
//! outputs without a disk; parsing is pure ([`parse::parse_smartctl_json`]).

pub mod parse;

use super::bridges::{BridgeTable, SmartType};
use super::{Disk, Transport};
use crate::sys::runner::{display_command, Exec, ExecError};
use crate::units::human_size;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use parse::{exit_flags, parse_smartctl_json, SmartData, NVME_DATA_UNIT};

/// The program.
pub const SMARTCTL: &str = "smartctl";

/// How long one smartctl run may take (a hung bridge must not hang the run).
pub const SMARTCTL_TIMEOUT: Duration = Duration::from_secs(60);

/// SMART data, or why there is none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SmartStatus {
    Available(Box<SmartData>),
    Unavailable { reason: String },
}

/// One smartctl run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmartAttempt {
    /// The exact command line.
    pub command: String,
    /// The `-d` value; `None` = smartctl's own choice.
    #[serde(default)]
    pub device_type: Option<String>,
    #[serde(default)]
    pub exit_status: Option<i32>,
    /// The set exit status bits in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exit_flags: Vec<String>,
    /// Why this run gave no SMART data (`None` when it did).
    #[serde(default)]
    pub problem: Option<String>,
}

/// One SMART reading of a disk: before or after a target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SmartReading {
    /// RFC 3339 UTC.
    pub at: String,
    pub device: PathBuf,
    /// Every smartctl run, in order; the last one decided (empty when none was run).
    #[serde(default)]
    pub attempts: Vec<SmartAttempt>,
    pub smart: SmartStatus,
}

impl SmartReading {
    pub fn data(&self) -> Option<&SmartData> {
        match &self.smart {
            SmartStatus::Available(d) => Some(d),
            SmartStatus::Unavailable { .. } => None,
        }
    }

    /// Why there is no data (`None` when there is).
    pub fn unavailable_reason(&self) -> Option<&str> {
        match &self.smart {
            SmartStatus::Available(_) => None,
            SmartStatus::Unavailable { reason } => Some(reason),
        }
    }

    /// One line for people (summary.txt, the report).
    pub fn describe(&self) -> String {
        let d = match &self.smart {
            SmartStatus::Unavailable { reason } => return format!("SMART unavailable: {reason}"),
            SmartStatus::Available(d) => d,
        };
        let mut head = d.model.clone().unwrap_or_else(|| "unknown model".into());
        if let Some(f) = &d.firmware {
            head.push_str(&format!(" (firmware {f})"));
        }
        let mut facts = Vec::new();
        if let Some(h) = d.health_passed {
            facts.push(if h { "health PASSED" } else { "health FAILED" }.to_string());
        }
        if let Some(h) = d.power_on_hours {
            facts.push(format!("{h} h powered on"));
        }
        if let Some(t) = d.temperature_c {
            facts.push(format!("{t} °C"));
        }
        if let Some(p) = d.percentage_used {
            facts.push(format!("{p} % of rated endurance used"));
        }
        if let Some(w) = d.data_written_bytes {
            facts.push(format!("{} written in its life", human_size(w)));
        }
        format!("{head}: {}", facts.join(", "))
    }
}

/// What to do for a disk: the smartctl device types to try in order, or why not to try.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SmartPlan {
    Try(Vec<SmartType>),
    Skip(String),
}

/// Chooses the smartctl device types for a disk: its USB bridge's row of the table, smartctl's
/// own choice then SAT for other USB bridges, smartctl's own choice for SATA/NVMe/virtual disks;
/// nothing for devices that are not physical disks or that smartctl cannot read.
pub fn plan(disk: &Disk, table: &BridgeTable) -> SmartPlan {
    let t = disk.transport.unwrap_or(Transport::Other);
    match t {
        Transport::Loop | Transport::Ram | Transport::DeviceMapper | Transport::Md => {
            SmartPlan::Skip(format!("{} is not a physical disk: no SMART", t.describe()))
        }
        Transport::Optical => SmartPlan::Skip("optical drive: no SMART read".into()),
        Transport::Mmc => {
            SmartPlan::Skip("SD cards and eMMC have no SMART that smartctl can read".into())
        }
        Transport::Usb => {
            let row = disk
                .usb
                .as_ref()
                .and_then(|u| u.vid_pid())
                .and_then(|id| table.get(&id));
            SmartPlan::Try(match row {
                Some(b) => b.smart.clone(),
                None => vec![SmartType::Auto, SmartType::Sat],
            })
        }
        _ => SmartPlan::Try(vec![SmartType::Auto]),
    }
}

/// The argument vector of one smartctl run.
pub fn smartctl_args(device: &Path, t: SmartType) -> Vec<String> {
    let mut args = vec!["--json=o".to_string(), "-a".to_string()];
    if let Some(d) = t.arg() {
        args.push("-d".into());
        args.push(d.into());
    }
    args.push(device.to_string_lossy().into_owned());
    args
}

fn attempt(exec: &dyn Exec, device: &Path, t: SmartType) -> (SmartAttempt, Option<SmartData>) {
    let args = smartctl_args(device, t);
    let mut a = SmartAttempt {
        command: display_command(SMARTCTL, &args),
        device_type: t.arg().map(str::to_string),
        exit_status: None,
        exit_flags: Vec::new(),
        problem: None,
    };
    match exec.capture(SMARTCTL, &args, SMARTCTL_TIMEOUT) {
        Ok(c) => {
            a.exit_status = c.status;
            a.exit_flags = c.status.map(exit_flags).unwrap_or_default();
            let text = if c.stdout.trim().is_empty() {
                &c.stderr
            } else {
                &c.stdout
            };
            match parse_smartctl_json(text, c.status) {
                Ok(d) => return (a, Some(d)),
                Err(p) => a.problem = Some(p),
            }
        }
        Err(ExecError::NotInstalled { .. }) => {
            a.problem = Some(
                "smartctl is not installed (package smartmontools; scripts/deps.sh installs it)"
                    .into(),
            )
        }
        Err(e) => a.problem = Some(e.to_string()),
    }
    (a, None)
}

/// Reads SMART of `device` trying `types` in order until one gives data. Stops early when
/// smartctl is missing or hangs.
pub fn read_device(exec: &dyn Exec, device: &Path, types: &[SmartType]) -> SmartReading {
    let mut attempts = Vec::new();
    for t in types {
        let (a, data) = attempt(exec, device, *t);
        let fatal = a.problem.as_deref().is_some_and(|p| {
            p.starts_with("smartctl is not installed") || p.contains("did not finish within")
        });
        attempts.push(a);
        if let Some(d) = data {
            return reading(device, attempts, SmartStatus::Available(Box::new(d)));
        }
        if fatal {
            break;
        }
    }
    let reason = attempts
        .iter()
        .map(|a| {
            let how = a
                .device_type
                .as_deref()
                .map_or("smartctl's own detection".into(), |d| format!("-d {d}"));
            format!("{how}: {}", a.problem.as_deref().unwrap_or("no data"))
        })
        .collect::<Vec<_>>()
        .join("; ");
    let reason = if reason.is_empty() {
        "no smartctl device type to try".to_string()
    } else {
        reason
    };
    reading(device, attempts, SmartStatus::Unavailable { reason })
}

fn reading(device: &Path, attempts: Vec<SmartAttempt>, smart: SmartStatus) -> SmartReading {
    SmartReading {
        at: crate::sys::clock::now_rfc3339(),
        device: device.to_path_buf(),
        attempts,
        smart,
    }
}

/// What kind of virtual disk this is, when it is one (its SMART cannot exist).
fn virtual_kind(disk: &Disk) -> Option<&'static str> {
    let qemu_usb = disk
        .usb
        .as_ref()
        .is_some_and(|u| u.vendor_id.as_deref() == Some("46f4"));
    let qemu_model = [&disk.vendor, &disk.model]
        .iter()
        .any(|s| s.as_deref().is_some_and(|m| m.contains("QEMU")));
    if qemu_usb || qemu_model {
        Some("QEMU's emulated disk")
    } else if disk.transport == Some(Transport::Virtio) {
        Some("a virtio disk of a virtual machine")
    } else {
        None
    }
}

/// Reads SMART of a disk: the device types of [`plan`], tried in order. An unavailable reading
/// names every attempt's problem, the table's note on the bridge, and a virtual disk as such.
pub fn read(disk: &Disk, exec: &dyn Exec, table: &BridgeTable) -> SmartReading {
    let mut r = match plan(disk, table) {
        SmartPlan::Skip(reason) => {
            return reading(&disk.path, Vec::new(), SmartStatus::Unavailable { reason })
        }
        SmartPlan::Try(types) => read_device(exec, &disk.path, &types),
    };
    if let SmartStatus::Unavailable { reason } = &mut r.smart {
        if let Some(kind) = virtual_kind(disk) {
            *reason = format!("{kind} has no SMART ({reason})");
        }
        let note = disk
            .usb
            .as_ref()
            .and_then(|u| u.vid_pid())
            .and_then(|id| table.get(&id))
            .and_then(|b| b.smart_note.clone());
        if let Some(n) = note {
            reason.push_str(&format!("; note on this bridge: {n}"));
        }
    }
    r
}

/// What a run cost the disk, from the readings before and after it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SmartChange {
    Known(SmartDelta),
    Unknown { reason: String },
}

/// Differences between two readings of the same disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SmartDelta {
    /// Bytes the drive counted as written between the readings.
    pub written_bytes: Option<u64>,
    pub read_bytes: Option<u64>,
    /// Change of the endurance used, in percentage points.
    pub percentage_used_points: Option<i64>,
    pub power_on_hours: Option<u64>,
    pub temperature_before_c: Option<i64>,
    pub temperature_after_c: Option<i64>,
    /// Why a figure is missing, and the counters' resolution.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn counter(
    name: &str,
    before: Option<u64>,
    after: Option<u64>,
    notes: &mut Vec<String>,
) -> Option<u64> {
    match (before, after) {
        (Some(b), Some(a)) if a >= b => Some(a - b),
        (Some(b), Some(a)) => {
            notes.push(format!("{name} went backwards ({b} then {a})"));
            None
        }
        _ => {
            notes.push(format!("the drive reports no {name} counter"));
            None
        }
    }
}

impl SmartChange {
    /// One line for people: what the run wrote as the drive counts it, wear and temperature.
    pub fn describe(&self) -> String {
        let d = match self {
            SmartChange::Unknown { reason } => return format!("not known: {reason}"),
            SmartChange::Known(d) => d,
        };
        let mut parts = Vec::new();
        match d.written_bytes {
            Some(w) => parts.push(format!("the drive counted {} written", human_size(w))),
            None => parts.push("the drive counts no data written".into()),
        }
        if let Some(r) = d.read_bytes {
            parts.push(format!("{} read", human_size(r)));
        }
        if let Some(p) = d.percentage_used_points.filter(|p| *p != 0) {
            parts.push(format!("endurance used {p:+} points"));
        }
        if let (Some(a), Some(b)) = (d.temperature_before_c, d.temperature_after_c) {
            parts.push(format!("{a} → {b} °C"));
        }
        parts.join(", ")
    }

    /// Compares two readings (before and after a target).
    pub fn between(before: &SmartReading, after: &SmartReading) -> SmartChange {
        let (b, a) = match (&before.smart, &after.smart) {
            (SmartStatus::Available(b), SmartStatus::Available(a)) => (b, a),
            (SmartStatus::Unavailable { reason }, _) => {
                return SmartChange::Unknown {
                    reason: format!("SMART unavailable before the run: {reason}"),
                }
            }
            (_, SmartStatus::Unavailable { reason }) => {
                return SmartChange::Unknown {
                    reason: format!("SMART unavailable after the run: {reason}"),
                }
            }
        };
        if b.serial != a.serial {
            return SmartChange::Unknown {
                reason: format!(
                    "the readings are of different disks (serial {:?}, then {:?})",
                    b.serial, a.serial
                ),
            };
        }
        let mut notes = Vec::new();
        let written = counter(
            "data-written",
            b.data_written_bytes,
            a.data_written_bytes,
            &mut notes,
        );
        let read = counter(
            "data-read",
            b.data_read_bytes,
            a.data_read_bytes,
            &mut notes,
        );
        if a.protocol.as_deref() == Some("NVMe") {
            notes.push("NVMe counts data in units of 512,000 bytes".into());
        }
        SmartChange::Known(SmartDelta {
            written_bytes: written,
            read_bytes: read,
            percentage_used_points: b
                .percentage_used
                .zip(a.percentage_used)
                .map(|(x, y)| y as i64 - x as i64),
            power_on_hours: b
                .power_on_hours
                .zip(a.power_on_hours)
                .map(|(x, y)| y.saturating_sub(x)),
            temperature_before_c: b.temperature_c,
            temperature_after_c: a.temperature_c,
            notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::UsbInfo;
    use crate::sys::runner::Recording;

    fn usb(id: &str) -> Disk {
        let (v, p) = id.split_once(':').unwrap();
        Disk {
            name: "sda".into(),
            path: "/dev/sda".into(),
            transport: Some(Transport::Usb),
            usb: Some(UsbInfo {
                vendor_id: Some(v.into()),
                product_id: Some(p.into()),
                ..UsbInfo::default()
            }),
            ..Disk::default()
        }
    }

    #[test]
    fn plan_follows_the_bridge_table() {
        let t = BridgeTable::builtin();
        let tried = |d: &Disk| match plan(d, t) {
            SmartPlan::Try(v) => v,
            SmartPlan::Skip(r) => panic!("skipped: {r}"),
        };
        assert_eq!(tried(&usb("152d:0578")), vec![SmartType::Sat]);
        assert_eq!(tried(&usb("152d:0583")), vec![SmartType::Sntjmicron]);
        assert_eq!(tried(&usb("0bda:9210")), vec![SmartType::Sntrealtek]);
        assert_eq!(tried(&usb("174c:2362")), vec![SmartType::Sntasmedia]);
        assert_eq!(
            tried(&usb("abcd:0001")),
            vec![SmartType::Auto, SmartType::Sat]
        );
        let nvme = Disk {
            transport: Some(Transport::Nvme),
            ..Disk::default()
        };
        assert_eq!(tried(&nvme), vec![SmartType::Auto]);
        for t in [Transport::Loop, Transport::Mmc, Transport::DeviceMapper] {
            let d = Disk {
                transport: Some(t),
                ..Disk::default()
            };
            assert!(matches!(
                plan(&d, BridgeTable::builtin()),
                SmartPlan::Skip(_)
            ));
        }
    }

    #[test]
    fn missing_smartctl_is_the_reason_and_stops_the_attempts() {
        let x = Recording::new().fail(
            "smartctl --json=o -a /dev/sda",
            ExecError::NotInstalled {
                program: "smartctl".into(),
            },
        );
        let r = read(&usb("abcd:0001"), &x, BridgeTable::builtin());
        assert_eq!(x.calls().len(), 1, "no second attempt without smartctl");
        let reason = r.unavailable_reason().unwrap();
        assert!(reason.contains("not installed") && reason.contains("smartmontools"));
    }

    #[test]
    fn sparse_documents_read_with_defaults() {
        let r: SmartReading = serde_json::from_str(
            r#"{"at":"t","device":"/dev/sda","smart":{"status":"available","power_on_hours":7}}"#,
        )
        .unwrap();
        assert!(r.attempts.is_empty());
        assert_eq!(r.data().unwrap().power_on_hours, Some(7));
        let u: SmartReading = serde_json::from_str(
            r#"{"at":"t","device":"/dev/sda","smart":{"status":"unavailable","reason":"r"}}"#,
        )
        .unwrap();
        assert_eq!(u.unavailable_reason(), Some("r"));
        let c: SmartChange = serde_json::from_str(r#"{"status":"known"}"#).unwrap();
        assert_eq!(c, SmartChange::Known(SmartDelta::default()));
    }

    #[test]
    fn skipped_devices_say_why_without_running_anything() {
        let x = Recording::new();
        let d = Disk {
            path: "/dev/mmcblk0".into(),
            transport: Some(Transport::Mmc),
            ..Disk::default()
        };
        let r = read(&d, &x, BridgeTable::builtin());
        assert!(x.calls().is_empty());
        assert!(r.unavailable_reason().unwrap().contains("SD cards"));
        assert!(r.attempts.is_empty());
    }
}
