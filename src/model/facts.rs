//! What the document holds about a target's disk, as the renderers show it: its identity across
//! runs and machines, its facts (model, bridge, link, quirks, USB trouble, the filesystem made)
//! and whether its link is slower than USB 3. Facts the document does not hold come back as
//! `None`; renderers print "not recorded".

use super::target::TargetResult;
use crate::disk::facts::Environment;
use crate::disk::LinkSpeed;

/// A non-empty trimmed text.
fn text(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(str::to_string)
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

impl TargetResult {
    /// The identity a disk keeps across runs and machines: its stable id (by-id name, serial),
    /// else for a directory `dir:<host>:<path>` (`hostname`: the run's host).
    pub fn stable_key(&self, hostname: &str) -> String {
        let Some(d) = &self.disk else {
            return format!("dir:{hostname}:{}", self.path);
        };
        text(&d.stable_id)
            .or_else(|| text(&d.serial).map(|x| format!("serial:{x}")))
            .unwrap_or_else(|| format!("disk:{hostname}:{}", d.name))
    }

    /// The facts about this target the document holds; `env` is the run's environment (for
    /// the USB bridge's quirks).
    pub fn disk_facts(&self, env: Option<&Environment>) -> DiskFacts {
        let mkfs = self
            .preparation
            .iter()
            .find(|c| c.contains("mkfs"))
            .cloned();
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
        let Some(d) = &self.disk else { return f };
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
        if let Some(env) = env {
            f.quirks = f.bridge.as_ref().and_then(|b| {
                env.usb_storage_quirks
                    .entries
                    .iter()
                    .find(|q| q.usb_id == *b)
                    .map(|q| q.flags.clone())
            });
        }
        if let Some(crate::disk::kernel_log::UsbTroubleCount::Counted(c)) = &self.usb_trouble {
            let u = c.of(&d.name);
            f.uas_aborts = Some(u.uas_errors());
            f.usb_resets = Some(u.usb_resets + u.usb_disconnects);
        }
        f
    }

    /// True when the disk's link is slower than USB 3 SuperSpeed.
    pub fn slow_usb_link(&self) -> Option<LinkSpeed> {
        self.disk
            .as_ref()?
            .usb
            .as_ref()?
            .link_speed
            .filter(|l| !l.is_superspeed())
    }
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
        let f = s.targets[0].disk_facts(s.environment.as_ref());
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
        let f = s.targets[0].disk_facts(s.environment.as_ref());
        assert_eq!(f.model.as_deref(), Some("JMicron SSD"));
        assert_eq!(f.bridge.as_deref(), Some("152d:0578"));
        assert_eq!(s.targets[0].slow_usb_link().map(|l| l.0), Some(480.0));
        assert_eq!(s.targets[0].stable_key(&s.host.hostname), "usb-X_S1-0:0");
    }
}
