//! Read-only views of the suite document for the renderers (report.html, `report show`,
//! `report compare`). Every renderer reads statuses, disk facts and server facts through these
//! few functions, so a change of the suite model (typed statuses, a typed disk, per-target
//! server and environment records) changes only this file.
//!
//! Facts the document does not hold yet come back as `None`; renderers print "not recorded".

use crate::disk::LinkSpeed;
use crate::model::BenchResult;
use crate::model::{PhaseResult, PhaseStatus, RunStatus, SuiteResult, TargetResult};

/// The run's status: `running`, `complete`, `aborted`, `interrupted` or `no_targets`.
pub fn run_status(s: &SuiteResult) -> &'static str {
    s.status.as_str()
}

/// What went wrong in a run's phases, for its status line: `1 phase failed, 9 skipped`, or
/// `None` when every phase that ran finished.
pub fn phase_trouble(s: &SuiteResult) -> Option<String> {
    let count = |st: PhaseStatus| {
        let phases = s.targets.iter().flat_map(|t| &t.phases);
        phases.filter(|p| p.status == st).count() as u64
    };
    let (failed, skipped) = (count(PhaseStatus::Failed), count(PhaseStatus::Skipped));
    match (failed, skipped) {
        (0, 0) => None,
        (f, 0) => Some(format!("{} failed", crate::units::count(f, "phase"))),
        (0, k) => Some(format!("{} skipped", crate::units::count(k, "phase"))),
        (f, k) => Some(format!(
            "{} failed, {k} skipped",
            crate::units::count(f, "phase")
        )),
    }
}

/// The phases that did not run, one line per target and reason: `sda oltp-prewarm,
/// oltp-read_only-t8-cpu_bound: <why>`.
pub fn skipped_phases(s: &SuiteResult) -> Vec<String> {
    let mut groups: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for t in &s.targets {
        for p in t.phases.iter().filter(|p| p.status == PhaseStatus::Skipped) {
            let why = p.error.as_deref().unwrap_or("(no reason recorded)");
            match groups
                .iter_mut()
                .find(|(n, r, _)| *n == t.name && *r == why)
            {
                Some((_, _, phases)) => phases.push(&p.name),
                None => groups.push((&t.name, why, vec![&p.name])),
            }
        }
    }
    groups
        .into_iter()
        .map(|(target, why, phases)| format!("{target} {}: {why}", phases.join(", ")))
        .collect()
}

/// The run's status and what went wrong in it: `complete`, `complete (1 phase failed, 9
/// skipped)`.
pub fn status_line(s: &SuiteResult) -> String {
    match phase_trouble(s) {
        Some(t) => format!("{} ({t})", s.status),
        None => s.status.to_string(),
    }
}

/// A phase's status: `ok`, `failed`, `skipped`, `aborted`, `running` or `interrupted`.
pub fn phase_status(p: &PhaseResult) -> &'static str {
    p.status.as_str()
}

/// True when the phase ran to its end.
pub fn phase_ok(p: &PhaseResult) -> bool {
    p.status == PhaseStatus::Ok
}

/// For a run that did not finish (interrupted by a power cut or crash, or stopped on request):
/// where it stopped, that the numbers are the phases finished before, and the targets it never
/// reached — so a bundle read later on a laptop says why numbers are missing. `None` otherwise.
pub fn cut_short(s: &SuiteResult) -> Option<Vec<String>> {
    let (why, mark) = match s.status {
        RunStatus::Interrupted => (
            "INTERRUPTED: the machine lost power or spindle stopped",
            PhaseStatus::Interrupted,
        ),
        RunStatus::Aborted => (
            "STOPPED on request (the button, Ctrl-C or SIGTERM)",
            PhaseStatus::Aborted,
        ),
        _ => return None,
    };
    let phases = || {
        let t = s.targets.iter();
        t.flat_map(|t| t.phases.iter().map(move |p| (t, p)))
    };
    let label = |(t, p): (&TargetResult, &PhaseResult)| format!("{} {}", t.name, p.name);
    // A stopped run's phase that was running is `interrupted`, the ones after it `aborted`.
    let marked = phases().filter(|(_, p)| p.status == mark || p.status == PhaseStatus::Interrupted);
    let marked: Vec<_> = marked.collect();
    let measurement =
        |(_, p): &&(&TargetResult, &PhaseResult)| p.phase.is_some_and(|ph| ph.is_measurement());
    let place = match marked.as_slice() {
        [first, rest @ ..] if rest.iter().any(|m| measurement(&m)) => format!(
            "during {} ({} later measurement(s) not made)",
            label(*first),
            rest.iter().filter(|m| measurement(m)).count()
        ),
        [first, ..] => format!("during {}", label(*first)),
        [] => match phases().last() {
            Some(last) => format!("between phases, after {}", label(last)),
            None => "before the first phase".to_string(),
        },
    };
    let mut lines = vec![
        format!("{why} {place}."),
        "The numbers below are the phases that finished before.".to_string(),
    ];
    let unreached = s.targets.iter().filter(|t| t.phases.is_empty());
    let unreached: Vec<&str> = unreached.map(|t| t.name.as_str()).collect();
    if !unreached.is_empty() {
        lines.push(format!("Targets not reached: {}.", unreached.join(", ")));
    }
    Some(lines)
}

/// `disk` or `directory`.
pub fn target_kind(t: &TargetResult) -> &'static str {
    t.kind.as_str()
}

/// The profile's name.
pub fn profile_name(s: &SuiteResult) -> &str {
    &s.profile.name
}

/// The profile's one-line description.
pub fn profile_description(s: &SuiteResult) -> &str {
    &s.profile.description
}

/// A non-empty trimmed text.
fn text(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(str::to_string)
}

/// The identity a disk keeps across runs and machines: its stable id (by-id name, serial),
/// else for a directory `dir:<host>:<path>`.
pub fn stable_key(s: &SuiteResult, t: &TargetResult) -> String {
    let Some(d) = &t.disk else {
        return format!("dir:{}:{}", s.host.hostname, t.path);
    };
    text(&d.stable_id)
        .or_else(|| text(&d.serial).map(|x| format!("serial:{x}")))
        .unwrap_or_else(|| format!("disk:{}:{}", s.host.hostname, d.name))
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

/// The facts about target `t` of run `s` the document holds.
pub fn disk_facts(s: &SuiteResult, t: &TargetResult) -> DiskFacts {
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
    let Some(d) = &t.disk else { return f };
    let joined = |parts: [Option<String>; 2]| {
        let j = parts.into_iter().flatten().collect::<Vec<_>>().join(" ");
        (!j.is_empty()).then_some(j)
    };
    f.model = joined([text(&d.vendor), text(&d.model)]);
    f.serial = text(&d.serial);
    f.size_bytes = d.size_bytes;
    f.rotational = d.rotational;
    if let Some(u) = &d.usb {
        f.bridge = u.vid_pid();
        f.bridge_name = joined([text(&u.manufacturer), text(&u.product)]);
        f.driver = text(&u.driver);
        f.link_speed = u.link_speed;
    }
    if let Some(env) = &s.environment {
        f.quirks = f.bridge.as_ref().and_then(|b| {
            env.usb_storage_quirks
                .entries
                .iter()
                .find(|q| q.usb_id == *b)
                .map(|q| q.flags.clone())
        });
    }
    if let Some(crate::disk::kernel_log::UsbTroubleCount::Counted(c)) = &t.usb_trouble {
        let u = c.of(&d.name);
        f.uas_aborts = Some(u.uas_errors());
        f.usb_resets = Some(u.usb_resets + u.usb_disconnects);
    }
    f
}

/// True when the disk's link is slower than USB 3 SuperSpeed.
pub fn slow_usb_link(t: &TargetResult) -> Option<LinkSpeed> {
    t.disk
        .as_ref()?
        .usb
        .as_ref()?
        .link_speed
        .filter(|l| !l.is_superspeed())
}

/// The database server of a target, as far as the document records it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerFacts {
    /// `mariadb 10.11.6` or the like.
    pub flavor_version: Option<String>,
    /// my.cnf settings that matter, as the profile asked for them (name, value).
    pub settings: Vec<(String, String)>,
}

/// The server facts of target `t`: flavour, version and the my.cnf settings that matter, as
/// the run recorded them.
pub fn server_facts(_s: &SuiteResult, t: &TargetResult) -> Option<ServerFacts> {
    let srv = t.server.as_ref()?;
    Some(ServerFacts {
        flavor_version: Some(format!("{} {}", srv.flavor, srv.version)),
        settings: srv
            .settings
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    })
}

/// The InnoDB buffer pool size in bytes the target's server ran with.
pub fn buffer_pool_bytes(t: &TargetResult) -> Option<u64> {
    t.buffer_pool_bytes()
}

/// Seconds at the start of a test's run that were a warm-up or ramp-up (shaded in charts).
/// fileio and OLTP have none; TPC-C's interval series starts after its ramp-up, so it has none
/// either.
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
    use crate::model::suite::tests_support::two_disk_suite;

    #[test]
    fn facts_of_a_directory_target_are_unknown_but_its_mkfs_is_parsed() {
        let mut s = two_disk_suite();
        s.targets[0].preparation = vec![
            "wipefs -a /dev/sda".into(),
            "/usr/sbin/mkfs.ext4 -q -L spindle /dev/sda1".into(),
        ];
        let f = disk_facts(&s, &s.targets[0]);
        assert_eq!(f.filesystem.as_deref(), Some("ext4"));
        assert!(f.mkfs.unwrap().contains("-L spindle"));
        assert_eq!(f.model, None);
        s.targets[0].disk = Some(crate::disk::Disk {
            name: "sda".into(),
            serial: Some("S1".into()),
            stable_id: Some("usb-X_S1-0:0".into()),
            vendor: Some("JMicron".into()),
            model: Some("SSD".into()),
            usb: Some(crate::disk::UsbInfo {
                link_speed: Some(LinkSpeed(480.0)),
                driver: Some("uas".into()),
                vendor_id: Some("152d".into()),
                product_id: Some("0578".into()),
                ..Default::default()
            }),
            ..Default::default()
        });
        let f = disk_facts(&s, &s.targets[0]);
        assert_eq!(f.model.as_deref(), Some("JMicron SSD"));
        assert_eq!(f.bridge.as_deref(), Some("152d:0578"));
        assert_eq!(slow_usb_link(&s.targets[0]).map(|l| l.0), Some(480.0));
        assert_eq!(stable_key(&s, &s.targets[0]), "usb-X_S1-0:0");
    }
}
