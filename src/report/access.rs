//! Read-only views of the suite document for the renderers (report.html, `report show`,
//! `report compare`). Every renderer reads statuses, disk facts and server facts through these
//! few functions, so a change of the suite model (typed statuses, a typed disk, per-target
//! server and environment records) changes only this file.
//!
//! Facts the document does not hold yet come back as `None`; renderers print "not recorded".

use super::suite::{PhaseResult, SuiteResult, TargetResult};
use super::BenchResult;
use crate::disk::LinkSpeed;

/// The run's status: `running`, `complete`, `aborted` or `interrupted`.
pub fn run_status(s: &SuiteResult) -> &str {
    &s.status
}

/// A phase's status: `ok`, `failed`, `skipped`, `aborted` or `interrupted`.
pub fn phase_status(p: &PhaseResult) -> &str {
    &p.status
}

/// True when the phase ran to its end.
pub fn phase_ok(p: &PhaseResult) -> bool {
    phase_status(p) == "ok"
}

/// True when the phase failed, was aborted or interrupted (not a deliberate skip).
pub fn phase_went_wrong(p: &PhaseResult) -> bool {
    matches!(phase_status(p), "failed" | "aborted" | "interrupted")
}

/// `disk` or `directory`.
pub fn target_kind(t: &TargetResult) -> &str {
    &t.kind
}

/// The profile's name.
pub fn profile_name(s: &SuiteResult) -> &str {
    s.profile["name"].as_str().unwrap_or("?")
}

/// The profile's one-line description.
pub fn profile_description(s: &SuiteResult) -> &str {
    s.profile["description"].as_str().unwrap_or("")
}

/// A text field of the target's discovery record (`disk::Disk` as JSON), e.g. `["usb",
/// "driver"]`. Read as JSON rather than deserialised into a `Disk`: the record is untyped in
/// the suite document today, and this keeps a second serde instantiation of the disk model
/// out of the appliance binary.
fn disk_str(t: &TargetResult, path: &[&str]) -> Option<String> {
    let mut v = t.disk.as_ref()?;
    for k in path {
        v = v.get(k)?;
    }
    v.as_str()
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(str::to_string)
}

/// A number field of the discovery record (see [`disk_str`]).
fn disk_num(t: &TargetResult, path: &[&str]) -> Option<f64> {
    let mut v = t.disk.as_ref()?;
    for k in path {
        v = v.get(k)?;
    }
    v.as_f64()
}

/// The identity a disk keeps across runs and machines: its stable id (by-id name, serial),
/// else for a directory `dir:<host>:<path>`.
pub fn stable_key(s: &SuiteResult, t: &TargetResult) -> String {
    if t.disk.is_none() {
        return format!("dir:{}:{}", s.host.hostname, t.path);
    }
    disk_str(t, &["stable_id"])
        .or_else(|| disk_str(t, &["serial"]).map(|x| format!("serial:{x}")))
        .unwrap_or_else(|| {
            let name = disk_str(t, &["name"]).unwrap_or_else(|| t.name.clone());
            format!("disk:{}:{name}", s.host.hostname)
        })
}

/// What the report shows about a disk. `None` fields are printed as "not recorded".
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiskFacts {
    pub model: Option<String>,
    pub serial: Option<String>,
    pub size_bytes: Option<u64>,
    pub rotational: Option<bool>,
    /// USB bridge `VID:PID` and its strings.
    pub bridge: Option<String>,
    pub bridge_name: Option<String>,
    /// `uas` or `usb-storage`.
    pub driver: Option<String>,
    pub link_speed: Option<LinkSpeed>,
    /// usb-storage quirks active for the bridge (`u` = UAS off …).
    pub quirks: Option<String>,
    /// UAS aborts and USB resets the kernel logged during the run.
    pub uas_aborts: Option<u64>,
    pub usb_resets: Option<u64>,
    /// Filesystem spindle made, and the exact mkfs command.
    pub filesystem: Option<String>,
    pub mkfs: Option<String>,
}

/// The facts about target `t` the document holds.
pub fn disk_facts(t: &TargetResult) -> DiskFacts {
    let mkfs = t.preparation.iter().find(|c| c.contains("mkfs")).cloned();
    let filesystem = mkfs.as_ref().and_then(|c| {
        c.split_whitespace()
            .find_map(|w| w.rsplit('/').next()?.strip_prefix("mkfs."))
            .map(str::to_string)
    });
    let mut f = DiskFacts {
        filesystem,
        mkfs,
        ..Default::default()
    };
    let joined = |parts: [Option<String>; 2]| {
        let j = parts.into_iter().flatten().collect::<Vec<_>>().join(" ");
        (!j.is_empty()).then_some(j)
    };
    f.model = joined([disk_str(t, &["vendor"]), disk_str(t, &["model"])]);
    f.serial = disk_str(t, &["serial"]);
    f.size_bytes = disk_num(t, &["size_bytes"]).map(|b| b as u64);
    f.rotational = t.disk.as_ref().and_then(|d| d.get("rotational")?.as_bool());
    f.bridge = match (
        disk_str(t, &["usb", "vendor_id"]),
        disk_str(t, &["usb", "product_id"]),
    ) {
        (Some(v), Some(p)) => Some(format!("{v}:{p}")),
        _ => None,
    };
    f.bridge_name = joined([
        disk_str(t, &["usb", "manufacturer"]),
        disk_str(t, &["usb", "product"]),
    ]);
    f.driver = disk_str(t, &["usb", "driver"]);
    f.link_speed =
        disk_num(t, &["usb", "link_speed"]).and_then(|x| LinkSpeed::parse(&x.to_string()));
    f.model = f.model.filter(|m| !m.is_empty());
    f
}

/// True when the disk's link is slower than USB 3 SuperSpeed.
pub fn slow_usb_link(t: &TargetResult) -> Option<LinkSpeed> {
    disk_facts(t).link_speed.filter(|l| !l.is_superspeed())
}

/// The database server of a target, as far as the document records it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerFacts {
    /// `mariadb 10.11.6` or the like.
    pub flavor_version: Option<String>,
    /// my.cnf settings that matter, as the profile asked for them (name, value).
    pub settings: Vec<(String, String)>,
}

/// The server facts of target `t` in run `s`: flavour and version from the `mysqld-start`
/// phase, settings from the profile.
pub fn server_facts(s: &SuiteResult, t: &TargetResult) -> Option<ServerFacts> {
    let start = t.phases.iter().find(|p| p.name == "mysqld-start")?;
    let flavor_version = start
        .notes
        .iter()
        .find(|n| !n.starts_with("server socket"))
        .cloned();
    let m = &s.profile["mysqld"];
    let show = |v: &serde_json::Value| match v {
        serde_json::Value::String(x) => Some(x.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let mut settings = vec![
        (
            "innodb_buffer_pool_size".to_string(),
            show(&m["buffer_pool_size"]).unwrap_or_else(|| "3/8 of RAM (spindle's default)".into()),
        ),
        (
            "innodb_log_file_size".to_string(),
            show(&m["log_file_size"]).unwrap_or_else(|| "spindle's default".into()),
        ),
        (
            "innodb_flush_log_at_trx_commit".to_string(),
            show(&m["flush_log_at_trx_commit"]).unwrap_or_else(|| "1 (default)".into()),
        ),
    ];
    if let Some(extra) = m["extra"].as_object() {
        for (k, v) in extra {
            settings.push((k.clone(), show(v).unwrap_or_default()));
        }
    }
    Some(ServerFacts {
        flavor_version,
        settings,
    })
}

/// The InnoDB buffer pool size in bytes the profile asked for, when it names one.
pub fn buffer_pool_bytes(s: &SuiteResult) -> Option<u64> {
    s.profile["mysqld"]["buffer_pool_size"]
        .as_str()
        .and_then(|v| crate::units::parse_size(v).ok())
}

/// Seconds at the start of a test's run that were a warm-up or ramp-up (shaded in charts).
/// fileio and OLTP have none; TPC-C's ramp-up will be read here once its options record it.
pub fn warmup_s(_r: &BenchResult) -> Option<f64> {
    None
}

/// Start of each phase of `t` in seconds since the target's first phase (the clock of the
/// temperature samples): the recorded start, else the sum of the earlier phases' durations.
pub fn phase_starts(t: &TargetResult) -> Vec<f64> {
    let mut at = 0.0;
    t.phases
        .iter()
        .map(|p| {
            let start = p.start_s.unwrap_or(at);
            at = start + p.seconds;
            start
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_of_a_directory_target_are_unknown_but_its_mkfs_is_parsed() {
        let mut t: TargetResult = serde_json::from_value(serde_json::json!({
            "name": "sda", "path": "/mnt", "kind": "disk", "description": "",
            "disk": null, "preparation": ["wipefs -a /dev/sda", "/usr/sbin/mkfs.ext4 -q -L spindle /dev/sda1"],
            "state_before": null, "state_after": null, "samples": [], "phases": []
        }))
        .unwrap();
        let f = disk_facts(&t);
        assert_eq!(f.filesystem.as_deref(), Some("ext4"));
        assert!(f.mkfs.unwrap().contains("-L spindle"));
        assert_eq!(f.model, None);
        t.disk = Some(serde_json::json!({"name": "sda", "path": "/dev/sda",
            "serial": "S1", "stable_id": "usb-X_S1-0:0", "vendor": "JMicron", "model": "SSD",
            "removable": false, "read_only": false, "content_read": true, "swap": false,
            "stick_marker": false,
            "usb": {"port_path": "2-1", "link_speed": 480.0, "driver": "uas",
                    "vendor_id": "152d", "product_id": "0578"}}));
        let f = disk_facts(&t);
        assert_eq!(f.model.as_deref(), Some("JMicron SSD"));
        assert_eq!(f.bridge.as_deref(), Some("152d:0578"));
        assert_eq!(slow_usb_link(&t).map(|l| l.0), Some(480.0));
    }
}
