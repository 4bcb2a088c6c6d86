//! Pure parsing of `smartctl --json=o -a` output (smartmontools 7.x JSON layout) into
//! [`SmartData`], or the reason there is none; and smartctl's exit status bits in words.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a disk's SMART says; every figure is optional (drives report different subsets).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SmartData {
    /// `ATA`, `NVMe` or `SCSI`, as smartctl names it.
    pub protocol: Option<String>,
    /// The device type smartctl used (`sat`, `sntjmicron`, `nvme`, …).
    pub device_type: Option<String>,
    pub model_family: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    pub capacity_bytes: Option<u64>,
    pub logical_block_size: Option<u32>,
    /// 0 for solid-state drives.
    pub rotation_rpm: Option<u32>,
    /// SMART overall-health self-assessment.
    pub health_passed: Option<bool>,
    pub power_on_hours: Option<u64>,
    pub power_cycles: Option<u64>,
    pub temperature_c: Option<i64>,
    /// Percentage of the rated endurance used (NVMe `percentage_used`, or 100 minus an ATA
    /// life-left attribute); may exceed 100.
    pub percentage_used: Option<u32>,
    /// Where `percentage_used` comes from.
    pub wear_source: Option<String>,
    /// Bytes written over the drive's life, as the drive counts them.
    pub data_written_bytes: Option<u64>,
    /// Where `data_written_bytes` comes from (attribute and unit).
    pub written_source: Option<String>,
    pub data_read_bytes: Option<u64>,
    /// NVMe media and data integrity errors.
    pub media_errors: Option<u64>,
    /// NVMe unsafe shutdowns.
    pub unsafe_shutdowns: Option<u64>,
    /// NVMe critical warning bits (0 = none).
    pub critical_warning: Option<u32>,
    /// ATA attribute 5 (raw).
    pub reallocated_sectors: Option<u64>,
    /// ATA attribute 197 (raw).
    pub pending_sectors: Option<u64>,
    /// smartctl's warnings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<String>,
}

/// smartctl's exit status bits (smartctl(8), EXIT STATUS), in words.
pub const EXIT_BITS: [&str; 8] = [
    "command line did not parse",
    "device open failed, no IDENTIFY data, or the device is in a low-power mode",
    "a SMART or other command to the disk failed, or a SMART data checksum error",
    "SMART status check returned DISK FAILING",
    "prefail attributes at or below threshold",
    "some attributes were at or below threshold in the past",
    "the device error log has records of errors",
    "the self-test log has records of errors",
];

/// The set bits of a smartctl exit status, in words.
pub fn exit_flags(status: i32) -> Vec<String> {
    (0..8)
        .filter(|b| status & (1 << b) != 0)
        .map(|b| format!("bit {b}: {}", EXIT_BITS[b]))
        .collect()
}

/// ATA attributes whose normalized value is the percentage of rated life left (so used =
/// 100 − value), by the names smartctl gives them.
const LIFE_LEFT_ATTRS: [&str; 6] = [
    "Percent_Lifetime_Remain",
    "SSD_Life_Left",
    "Wear_Leveling_Count",
    "Media_Wearout_Indicator",
    "Remaining_Lifetime_Perc",
    "Percent_Life_Remaining",
];

/// ATA attributes counting data written/read, with the unit of their raw value in bytes
/// (`0` = the logical sector size).
const WRITTEN_ATTRS: [(&str, u64); 5] = [
    ("Total_LBAs_Written", 0),
    ("Host_Writes_32MiB", 32 << 20),
    ("Host_Writes_GiB", 1 << 30),
    ("Lifetime_Writes_GiB", 1 << 30),
    ("Host_Writes_MiB", 1 << 20),
];
const READ_ATTRS: [(&str, u64); 5] = [
    ("Total_LBAs_Read", 0),
    ("Host_Reads_32MiB", 32 << 20),
    ("Host_Reads_GiB", 1 << 30),
    ("Lifetime_Reads_GiB", 1 << 30),
    ("Host_Reads_MiB", 1 << 20),
];

/// NVMe data units are thousands of 512-byte blocks.
pub const NVME_DATA_UNIT: u64 = 512_000;

fn s(v: &Value, path: &[&str]) -> Option<String> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_str()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

fn n(v: &Value, path: &[&str]) -> Option<u64> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_u64()
}

fn i(v: &Value, path: &[&str]) -> Option<i64> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_i64()
}

/// One row of `ata_smart_attributes.table`.
struct Attr<'a> {
    id: u64,
    name: &'a str,
    value: Option<u64>,
    raw: Option<u64>,
}

fn attributes(v: &Value) -> Vec<Attr<'_>> {
    v.pointer("/ata_smart_attributes/table")
        .and_then(Value::as_array)
        .map(|rows| {
            rows.iter()
                .map(|r| Attr {
                    id: n(r, &["id"]).unwrap_or(0),
                    name: r.get("name").and_then(Value::as_str).unwrap_or(""),
                    value: n(r, &["value"]),
                    raw: n(r, &["raw", "value"]),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A byte counter from the first attribute of `names` present: (bytes, where it came from).
fn ata_bytes(attrs: &[Attr<'_>], names: &[(&str, u64)], sector: u64) -> Option<(u64, String)> {
    names.iter().find_map(|(name, unit)| {
        let a = attrs.iter().find(|a| a.name == *name)?;
        let raw = a.raw?;
        let unit = if *unit == 0 { sector } else { *unit };
        Some((
            raw.saturating_mul(unit),
            format!("ATA attribute {} {name}: raw {raw} × {unit} bytes", a.id),
        ))
    })
}

fn ata_wear(attrs: &[Attr<'_>]) -> Option<(u32, String)> {
    LIFE_LEFT_ATTRS.iter().find_map(|name| {
        let a = attrs.iter().find(|a| a.name == *name)?;
        let left = a.value.filter(|v| *v <= 100)?;
        Some((
            100 - left as u32,
            format!(
                "ATA attribute {} {name}: normalized value {left} = {left} % of rated life left",
                a.id
            ),
        ))
    })
}

fn fill_ata(v: &Value, d: &mut SmartData) {
    let attrs = attributes(v);
    let raw_of = |id: u64| attrs.iter().find(|a| a.id == id).and_then(|a| a.raw);
    let sector = d.logical_block_size.unwrap_or(512) as u64;
    if let Some((b, src)) = ata_bytes(&attrs, &WRITTEN_ATTRS, sector) {
        d.data_written_bytes = Some(b);
        d.written_source = Some(src);
    }
    d.data_read_bytes = ata_bytes(&attrs, &READ_ATTRS, sector).map(|(b, _)| b);
    if let Some((used, src)) = ata_wear(&attrs) {
        d.percentage_used = Some(used);
        d.wear_source = Some(src);
    }
    d.reallocated_sectors = raw_of(5);
    d.pending_sectors = raw_of(197);
}

fn fill_nvme(log: &Value, d: &mut SmartData) {
    d.percentage_used = n(log, &["percentage_used"]).map(|p| p as u32);
    if d.percentage_used.is_some() {
        d.wear_source = Some("NVMe health log: percentage_used".into());
    }
    if let Some(units) = n(log, &["data_units_written"]) {
        d.data_written_bytes = Some(units.saturating_mul(NVME_DATA_UNIT));
        d.written_source = Some(format!(
            "NVMe health log: data_units_written {units} × 512000 bytes"
        ));
    }
    d.data_read_bytes = n(log, &["data_units_read"]).map(|u| u.saturating_mul(NVME_DATA_UNIT));
    d.media_errors = n(log, &["media_errors"]);
    d.unsafe_shutdowns = n(log, &["unsafe_shutdowns"]);
    d.critical_warning = n(log, &["critical_warning"]).map(|c| c as u32);
    d.temperature_c = d.temperature_c.or_else(|| i(log, &["temperature"]));
    d.power_on_hours = d.power_on_hours.or_else(|| n(log, &["power_on_hours"]));
    d.power_cycles = d.power_cycles.or_else(|| n(log, &["power_cycles"]));
}

/// smartctl's messages of a given severity ("error", "warning", "information").
fn messages(v: &Value, severity: &str) -> Vec<String> {
    v.pointer("/smartctl/messages")
        .and_then(Value::as_array)
        .map(|m| {
            m.iter()
                .filter(|m| m.get("severity").and_then(Value::as_str) == Some(severity))
                .filter_map(|m| s(m, &["string"]))
                .collect()
        })
        .unwrap_or_default()
}

/// Lines of smartctl's text output that are banner or generic advice, not the problem.
const NOT_THE_PROBLEM: [&str; 7] = [
    "smartctl ",
    "Copyright (C)",
    "Use smartctl -h",
    "=== START",
    "Please specify device type",
    "If this is a USB connected device",
    "A mandatory SMART command failed",
];

/// The first line of smartctl's text output (`--json=o`) that says what went wrong.
fn output_problem(v: &Value) -> Option<String> {
    v.pointer("/smartctl/output")
        .and_then(Value::as_array)?
        .iter()
        .filter_map(Value::as_str)
        .map(str::trim)
        .find(|l| !l.is_empty() && !NOT_THE_PROBLEM.iter().any(|p| l.starts_with(p)))
        .map(str::to_string)
}

/// Why a smartctl run gave no SMART data, in smartctl's own words where it has them.
fn problem(v: &Value, status: Option<i32>) -> String {
    let errors = messages(v, "error");
    if !errors.is_empty() {
        return errors.join("; ");
    }
    if let Some(text) = output_problem(v) {
        return text;
    }
    match status {
        Some(st) if st != 0 => exit_flags(st).join("; "),
        _ => "smartctl returned no SMART data".to_string(),
    }
}

/// Parses the JSON smartctl printed. `Ok` holds the data when the disk answered with SMART
/// (health log or attributes); `Err` holds the reason when it did not.
pub fn parse_smartctl_json(text: &str, status: Option<i32>) -> Result<SmartData, String> {
    let v: Value = serde_json::from_str(text.trim()).map_err(|e| {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        format!("smartctl printed no JSON ({e}): {first}")
    })?;
    if status.is_some_and(|st| st & 0b11 != 0) {
        return Err(problem(&v, status));
    }
    let nvme = v.get("nvme_smart_health_information_log");
    let has_attrs = v.pointer("/ata_smart_attributes/table").is_some();
    match (
        v.pointer("/smart_support/available"),
        v.pointer("/smart_support/enabled"),
    ) {
        (Some(Value::Bool(false)), _) if nvme.is_none() => {
            return Err("the disk (or its bridge) reports no SMART support".into())
        }
        (_, Some(Value::Bool(false))) if nvme.is_none() && !has_attrs => {
            return Err("SMART is disabled on the disk (`smartctl -s on` enables it)".into())
        }
        _ => {}
    }
    if nvme.is_none() && !has_attrs {
        return Err(problem(&v, status));
    }
    let mut d = SmartData {
        protocol: s(&v, &["device", "protocol"]),
        device_type: s(&v, &["device", "type"]),
        model_family: s(&v, &["model_family"]),
        model: s(&v, &["model_name"]),
        serial: s(&v, &["serial_number"]),
        firmware: s(&v, &["firmware_version"]),
        capacity_bytes: n(&v, &["user_capacity", "bytes"]),
        logical_block_size: n(&v, &["logical_block_size"]).map(|b| b as u32),
        rotation_rpm: n(&v, &["rotation_rate"]).map(|r| r as u32),
        health_passed: v.pointer("/smart_status/passed").and_then(Value::as_bool),
        power_on_hours: n(&v, &["power_on_time", "hours"]),
        power_cycles: n(&v, &["power_cycle_count"]),
        temperature_c: i(&v, &["temperature", "current"]),
        messages: messages(&v, "warning"),
        ..SmartData::default()
    };
    match nvme {
        Some(log) => fill_nvme(log, &mut d),
        None => fill_ata(&v, &mut d),
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_bits_in_words() {
        assert!(exit_flags(0).is_empty());
        let f = exit_flags(0b0100_0100);
        assert_eq!(f.len(), 2);
        assert!(f[0].starts_with("bit 2:") && f[1].contains("error log"));
    }

    #[test]
    fn not_json_and_open_failures_give_reasons() {
        let e = parse_smartctl_json("smartctl: unrecognized option '--json=o'\n", Some(1));
        assert!(e.unwrap_err().contains("unrecognized option"));
        let open = r#"{"smartctl":{"messages":[{"string":"Smartctl open device: /dev/sda failed: Permission denied","severity":"error"}],"exit_status":2}}"#;
        assert_eq!(
            parse_smartctl_json(open, Some(2)).unwrap_err(),
            "Smartctl open device: /dev/sda failed: Permission denied"
        );
        let bare = r#"{"smartctl":{"exit_status":2}}"#;
        assert!(parse_smartctl_json(bare, Some(2))
            .unwrap_err()
            .contains("device open failed"));
    }

    #[test]
    fn no_smart_support_is_a_reason() {
        let t = r#"{"smartctl":{"exit_status":4},"device":{"protocol":"SCSI"},"smart_support":{"available":false,"enabled":false}}"#;
        assert!(parse_smartctl_json(t, Some(4))
            .unwrap_err()
            .contains("no SMART support"));
    }

    #[test]
    fn wear_ignores_normalized_values_above_100() {
        let t = r#"{"ata_smart_attributes":{"table":[
            {"id":177,"name":"Wear_Leveling_Count","value":200,"raw":{"value":5}},
            {"id":233,"name":"Media_Wearout_Indicator","value":92,"raw":{"value":8}},
            {"id":241,"name":"Host_Writes_32MiB","value":100,"raw":{"value":10}}]}}"#;
        let d = parse_smartctl_json(t, Some(0)).unwrap();
        assert_eq!(d.percentage_used, Some(8));
        assert!(d
            .wear_source
            .unwrap()
            .contains("233 Media_Wearout_Indicator"));
        assert_eq!(d.data_written_bytes, Some(10 * (32 << 20)));
    }
}
