//! USB storage bridges: the compiled-in table (`config/usb-bridges.toml`) of smartctl device
//! types and of bridges with public reports of UAS trouble on the Raspberry Pi, the active
//! `usb-storage.quirks` of the running kernel, and the check that flags a disk with the remedy.

use super::{Disk, UsbInfo};
use crate::sys::SysRoot;
use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// Where the running kernel shows the `usb-storage.quirks` it uses.
pub const QUIRKS_PARAM: &str = "/sys/module/usb_storage/parameters/quirks";

/// What a bridge talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Behind {
    Sata,
    Nvme,
    Unknown,
}

/// A smartctl device type (`-d`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SmartType {
    /// No `-d`: smartctl's own detection (its drive database knows many bridges).
    Auto,
    /// SCSI/ATA Translation passthrough, what most USB-SATA bridges speak.
    Sat,
    /// NVMe behind a JMicron USB bridge.
    Sntjmicron,
    /// NVMe behind a Realtek USB bridge.
    Sntrealtek,
    /// NVMe behind an ASMedia USB bridge.
    Sntasmedia,
}

impl SmartType {
    /// The `-d` value, or `None` for smartctl's own choice.
    pub fn arg(self) -> Option<&'static str> {
        match self {
            SmartType::Auto => None,
            SmartType::Sat => Some("sat"),
            SmartType::Sntjmicron => Some("sntjmicron"),
            SmartType::Sntrealtek => Some("sntrealtek"),
            SmartType::Sntasmedia => Some("sntasmedia"),
        }
    }
}

/// How sure the public reports are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// Several reports; the quirk helps.
    Known,
    /// One report, or the quirk's effect unconfirmed.
    Reported,
    /// Reports disagree: apply the quirk only if the run logs UAS errors.
    Mixed,
}

impl Confidence {
    pub fn describe(self) -> &'static str {
        match self {
            Confidence::Known => "known UAS trouble",
            Confidence::Reported => "reported UAS trouble",
            Confidence::Mixed => "mixed reports of UAS trouble",
        }
    }
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bridge {
    /// `vvvv:pppp`, lowercase hex.
    pub usb_id: String,
    pub chip: String,
    pub behind: Behind,
    /// smartctl device types to try, in order.
    pub smart: Vec<SmartType>,
    pub smart_source: String,
    #[serde(default)]
    pub smart_note: Option<String>,
    /// What the reports say; a row with it is flagged.
    #[serde(default)]
    pub uas_trouble: Option<String>,
    #[serde(default)]
    pub confidence: Option<Confidence>,
    #[serde(default)]
    pub sources: Vec<String>,
    #[serde(default)]
    pub caveat: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TableFile {
    bridge: Vec<Bridge>,
}

/// The bridge table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BridgeTable {
    bridges: Vec<Bridge>,
}

/// True for `vvvv:pppp` in lowercase hex.
pub fn is_usb_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 9
        && b[4] == b':'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

fn check_row(b: &Bridge) -> anyhow::Result<()> {
    if !is_usb_id(&b.usb_id) {
        bail!("usb_id must be \"vvvv:pppp\" in lowercase hex");
    }
    if b.chip.trim().is_empty() || b.smart_source.trim().is_empty() {
        bail!("chip and smart_source must not be empty");
    }
    if b.smart.is_empty() {
        bail!("smart must list at least one device type (\"auto\" lets smartctl choose)");
    }
    match (&b.uas_trouble, b.confidence, b.sources.is_empty()) {
        (Some(_), Some(_), false) => {}
        (None, None, true) if b.caveat.is_none() => {}
        _ => bail!("uas_trouble, confidence and sources go together (caveat only with them)"),
    }
    if let Some(bad) = b.sources.iter().find(|s| !s.starts_with("https://")) {
        bail!("source '{bad}' is not an https:// URL");
    }
    Ok(())
}

impl BridgeTable {
    /// Parses and checks a table; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Self> {
        let file: TableFile =
            toml::from_str(text).with_context(|| format!("{origin}: not a valid bridge table"))?;
        let mut seen = BTreeSet::new();
        for (i, b) in file.bridge.iter().enumerate() {
            check_row(b)
                .with_context(|| format!("{origin}: [[bridge]] #{} ({})", i + 1, b.usb_id))?;
            if !seen.insert(b.usb_id.clone()) {
                bail!("{origin}: usb_id {} appears twice", b.usb_id);
            }
        }
        Ok(BridgeTable {
            bridges: file.bridge,
        })
    }

    /// The table compiled into spindle (`config/usb-bridges.toml`).
    pub fn builtin() -> &'static BridgeTable {
        static TABLE: OnceLock<BridgeTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            BridgeTable::parse(
                include_str!("../../config/usb-bridges.toml"),
                "config/usb-bridges.toml",
            )
            .expect("config/usb-bridges.toml is compiled in and checked by the bridges tests")
        })
    }

    /// The row for a `vvvv:pppp` id (any case).
    pub fn get(&self, usb_id: &str) -> Option<&Bridge> {
        let id = usb_id.to_ascii_lowercase();
        self.bridges.iter().find(|b| b.usb_id == id)
    }

    pub fn bridges(&self) -> &[Bridge] {
        &self.bridges
    }
}

/// One `VID:PID:flags` entry of `usb-storage.quirks`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuirkEntry {
    /// `vvvv:pppp`, lowercase.
    pub usb_id: String,
    /// Flag letters (`u` = ignore UAS, bind usb-storage).
    pub flags: String,
}

/// The `usb-storage.quirks` the running kernel uses.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsbStorageQuirks {
    /// The module parameter as read; `None` when it could not be read (see `unreadable`).
    #[serde(default)]
    pub raw: Option<String>,
    #[serde(default)]
    pub entries: Vec<QuirkEntry>,
    /// Entries the kernel would not understand either (kept to show them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub malformed: Vec<String>,
    /// Why the parameter could not be read (usb-storage not loaded, no sysfs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

/// Parses the quirks parameter (`152d:0578:u,174c:55aa:u`; empty means none).
pub fn parse_quirks(text: &str) -> UsbStorageQuirks {
    let raw = text.trim().trim_matches('\0').to_string();
    let mut q = UsbStorageQuirks {
        raw: Some(raw.clone()),
        ..UsbStorageQuirks::default()
    };
    for item in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let mut parts = item.splitn(3, ':');
        let (v, p, f) = (parts.next(), parts.next(), parts.next());
        let id = format!("{}:{}", v.unwrap_or(""), p.unwrap_or("")).to_ascii_lowercase();
        match f {
            Some(flags) if is_usb_id(&id) && flags.chars().all(|c| c.is_ascii_alphabetic()) => {
                q.entries.push(QuirkEntry {
                    usb_id: id,
                    flags: flags.to_string(),
                })
            }
            _ => q.malformed.push(item.to_string()),
        }
    }
    q
}

/// Reads the running kernel's quirks through `root`.
pub fn read_quirks(root: &SysRoot) -> UsbStorageQuirks {
    match root.read_string(QUIRKS_PARAM) {
        Ok(text) => parse_quirks(&text),
        Err(e) => UsbStorageQuirks {
            unreadable: Some(format!(
                "{QUIRKS_PARAM} could not be read ({e}); is the usb-storage module loaded?"
            )),
            ..UsbStorageQuirks::default()
        },
    }
}

impl UsbStorageQuirks {
    /// The flags active for a device, if it has an entry.
    pub fn flags_for(&self, usb_id: &str) -> Option<&str> {
        let id = usb_id.to_ascii_lowercase();
        self.entries
            .iter()
            .find(|e| e.usb_id == id)
            .map(|e| e.flags.as_str())
    }

    /// True when the device is told to ignore UAS (flag `u`).
    pub fn ignores_uas(&self, usb_id: &str) -> bool {
        self.flags_for(usb_id).is_some_and(|f| f.contains('u'))
    }

    /// The whole kernel parameter with `usb_id` told to ignore UAS, keeping the entries already
    /// active (the kernel takes one `usb-storage.quirks=` value, comma-separated).
    pub fn remedy_for(&self, usb_id: &str) -> String {
        let id = usb_id.to_ascii_lowercase();
        let mut items: Vec<String> = self
            .entries
            .iter()
            .filter(|e| e.usb_id != id)
            .map(|e| format!("{}:{}", e.usb_id, e.flags))
            .collect();
        let flags = match self.flags_for(&id) {
            Some(f) if !f.contains('u') => format!("{f}u"),
            _ => "u".to_string(),
        };
        items.push(format!("{id}:{flags}"));
        format!("usb-storage.quirks={}", items.join(","))
    }
}

/// Whether a flagged bridge is running on UAS now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UasState {
    /// On `uas` (or the driver is unknown) and no quirk: flagged, with the remedy.
    Flagged,
    /// `usb-storage.quirks` has a `u` entry for it: UAS is off.
    QuirkActive,
    /// Already bound to `usb-storage` without a quirk (the kernel's own list, or no UAS).
    NotUsingUas,
}

/// The table's verdict on one disk's bridge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BridgeCheck {
    pub usb_id: String,
    pub chip: String,
    pub state: UasState,
    pub confidence: Confidence,
    /// What the public reports say.
    pub trouble: String,
    pub sources: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caveat: Option<String>,
    /// The kernel parameter that turns UAS off for it (with the quirks already active).
    pub remedy: String,
    /// The storage driver bound now (`uas`, `usb-storage`).
    #[serde(default)]
    pub driver: Option<String>,
    /// The flag for people: what the bridge is, then the remedy or the quirk's state.
    pub lines: Vec<String>,
}

impl BridgeCheck {
    /// True when the disk should be shown with a warning.
    pub fn is_flagged(&self) -> bool {
        self.state == UasState::Flagged
    }

    /// The flag in one sentence (summary.txt, the report).
    pub fn summary(&self) -> String {
        self.lines.join("; ")
    }
}

/// Where the remedy goes, in words.
pub const REMEDY_WHERE: &str =
    "to the single line of cmdline.txt, replacing any usb-storage.quirks= already there (/boot/firmware/cmdline.txt on current Raspberry Pi OS and on the spindle image), then reboot; the disk then uses usb-storage: slower, but reliable";

/// The flag as lines for people: what the bridge is and what the reports say, then what to do.
fn flag_lines(b: &Bridge, state: UasState, confidence: Confidence, remedy: &str) -> Vec<String> {
    let head = format!(
        "{} {}: {} on the Raspberry Pi",
        b.usb_id,
        b.chip,
        confidence.describe()
    );
    let next = match (state, confidence) {
        (UasState::QuirkActive, _) => "the usb-storage quirk is active (UAS is off)".to_string(),
        (UasState::NotUsingUas, _) => "it is already on usb-storage, no quirk needed".to_string(),
        (UasState::Flagged, Confidence::Mixed) => {
            format!("if the kernel logs UAS aborts or resets, add {remedy} {REMEDY_WHERE}")
        }
        (UasState::Flagged, _) => format!("remedy: add {remedy} {REMEDY_WHERE}"),
    };
    vec![head, next]
}

/// Checks a disk's USB bridge against the table; `None` when the disk is not on USB or its
/// bridge has no reported UAS trouble.
pub fn check_disk(
    disk: &Disk,
    quirks: &UsbStorageQuirks,
    table: &BridgeTable,
) -> Option<BridgeCheck> {
    let usb = disk.usb.as_ref()?;
    let id = usb.vid_pid()?;
    let b = table.get(&id)?;
    let (trouble, confidence) = (b.uas_trouble.clone()?, b.confidence?);
    let state = if quirks.ignores_uas(&id) {
        UasState::QuirkActive
    } else if usb.driver.as_deref() == Some("usb-storage") {
        UasState::NotUsingUas
    } else {
        UasState::Flagged
    };
    let remedy = quirks.remedy_for(&id);
    Some(BridgeCheck {
        lines: flag_lines(b, state, confidence, &remedy),
        usb_id: b.usb_id.clone(),
        chip: b.chip.clone(),
        state,
        confidence,
        trouble,
        sources: b.sources.clone(),
        caveat: b.caveat.clone(),
        remedy,
        driver: usb.driver.clone(),
    })
}

/// What to tell a person about a disk's UAS health after a run, from the table's check and the
/// UAS aborts/resets and USB resets the kernel logged for the disk during the run. `None` when
/// there is nothing to say.
pub fn uas_advice(
    usb: &UsbInfo,
    check: Option<&BridgeCheck>,
    quirks: &UsbStorageQuirks,
    uas_errors: u64,
    usb_resets: u64,
) -> Option<String> {
    let seen = match (uas_errors, usb_resets) {
        (0, 0) => None,
        (u, r) => Some(format!(
            "the kernel logged {u} UAS abort/reset(s) and {r} USB reset(s) for this disk during the run"
        )),
    };
    match (check, seen) {
        (Some(c), Some(s)) if c.is_flagged() => Some(format!(
            "{s}: this confirms the reported UAS trouble of the {}; add {} {REMEDY_WHERE}",
            c.chip, c.remedy
        )),
        (Some(c), None) if c.is_flagged() => Some(c.summary()),
        (_, Some(s)) if usb.driver.as_deref() == Some("uas") && uas_errors > 0 => {
            let id = usb.vid_pid()?;
            Some(format!(
                "{s}: the bridge {id} misbehaves with UAS; the usual remedy is {} {REMEDY_WHERE}",
                quirks.remedy_for(&id)
            ))
        }
        (_, Some(s)) => Some(format!(
            "{s}: look at the cable, the power supply and the port; figures of this disk may be doubtful"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usb_disk(id: &str, driver: &str) -> Disk {
        let (v, p) = id.split_once(':').unwrap();
        Disk {
            name: "sda".into(),
            usb: Some(UsbInfo {
                vendor_id: Some(v.into()),
                product_id: Some(p.into()),
                driver: Some(driver.into()),
                ..UsbInfo::default()
            }),
            ..Disk::default()
        }
    }

    #[test]
    fn builtin_table_parses_and_has_the_bridges_named_in_the_spec() {
        let t = BridgeTable::builtin();
        for id in ["152d:0567", "152d:0578", "152d:0579", "152d:0583"] {
            let b = t.get(id).unwrap_or_else(|| panic!("{id} missing"));
            assert!(b.uas_trouble.is_some() && !b.sources.is_empty(), "{id}");
        }
        assert_eq!(
            t.get("152D:0583").unwrap().smart,
            vec![SmartType::Sntjmicron]
        );
        assert_eq!(
            t.get("0bda:9210").unwrap().smart,
            vec![SmartType::Sntrealtek]
        );
        assert_eq!(
            t.get("174c:2362").unwrap().smart,
            vec![SmartType::Sntasmedia]
        );
        assert!(t.get("174c:2362").unwrap().uas_trouble.is_none());
        assert!(t
            .bridges()
            .iter()
            .any(|b| b.usb_id.starts_with("174c:") && b.uas_trouble.is_some()));
        assert!(t
            .bridges()
            .iter()
            .any(|b| b.usb_id.starts_with("0bda:") && b.uas_trouble.is_some()));
    }

    #[test]
    fn table_errors_name_the_row_and_the_rule() {
        let row = |extra: &str| {
            format!("[[bridge]]\nusb_id = \"152d:0578\"\nchip = \"x\"\nbehind = \"sata\"\nsmart = [\"sat\"]\nsmart_source = \"s\"\n{extra}")
        };
        let err = |text: &str| format!("{:#}", BridgeTable::parse(text, "t.toml").unwrap_err());
        assert!(err(&row("colour = \"red\"")).contains("colour"));
        assert!(err(&row("uas_trouble = \"bad\"")).contains("go together"));
        let e = err(&row(
            "uas_trouble = \"bad\"\nconfidence = \"known\"\nsources = [\"http://x\"]",
        ));
        assert!(
            e.contains("#1 (152d:0578)") && e.contains("https://"),
            "{e}"
        );
        assert!(err(&row("").replace("152d:0578", "152D:578")).contains("lowercase hex"));
        assert!(err(&format!("{}{}", row(""), row(""))).contains("twice"));
        assert!(err(&row("").replace("[\"sat\"]", "[\"scsi\"]")).contains("smart"));
        assert!(BridgeTable::parse(&row(""), "t.toml").is_ok());
    }

    #[test]
    fn quirks_parse_and_remedy_keeps_existing_entries() {
        let q = parse_quirks("152d:0578:u,174C:55AA:uf, junk ,1:2:u\n");
        assert_eq!(q.entries.len(), 2);
        assert_eq!(q.flags_for("174c:55aa"), Some("uf"));
        assert!(q.ignores_uas("152d:0578"));
        assert_eq!(q.malformed, vec!["junk", "1:2:u"]);
        assert_eq!(
            q.remedy_for("152d:0583"),
            "usb-storage.quirks=152d:0578:u,174c:55aa:uf,152d:0583:u"
        );
        let none = parse_quirks("\n");
        assert!(none.entries.is_empty() && none.malformed.is_empty());
        assert_eq!(
            none.remedy_for("152d:0583"),
            "usb-storage.quirks=152d:0583:u"
        );
        assert_eq!(
            parse_quirks("152d:0583:f").remedy_for("152d:0583"),
            "usb-storage.quirks=152d:0583:fu"
        );
    }

    #[test]
    fn a_listed_bridge_on_uas_is_flagged_until_the_quirk_is_active() {
        let t = BridgeTable::builtin();
        let d = usb_disk("152d:0583", "uas");
        let c = check_disk(&d, &parse_quirks(""), t).unwrap();
        assert_eq!(c.state, UasState::Flagged);
        assert_eq!(c.remedy, "usb-storage.quirks=152d:0583:u");
        assert!(c
            .summary()
            .contains("remedy: add usb-storage.quirks=152d:0583:u"));
        assert!(c.summary().contains("cmdline.txt"));
        let on = check_disk(
            &usb_disk("152d:0583", "usb-storage"),
            &parse_quirks("152d:0583:u"),
            t,
        )
        .unwrap();
        assert_eq!(on.state, UasState::QuirkActive);
        assert!(!on.is_flagged() && on.summary().contains("quirk is active"));
        let kernel = check_disk(&usb_disk("152d:0583", "usb-storage"), &parse_quirks(""), t);
        assert_eq!(kernel.unwrap().state, UasState::NotUsingUas);
        assert!(check_disk(&usb_disk("174c:2362", "uas"), &parse_quirks(""), t).is_none());
        assert!(check_disk(&usb_disk("abcd:0001", "uas"), &parse_quirks(""), t).is_none());
        let mixed = check_disk(&usb_disk("174c:55aa", "uas"), &parse_quirks(""), t).unwrap();
        assert!(mixed.summary().contains("if the kernel logs UAS aborts"));
        assert!(mixed.caveat.is_some());
    }

    #[test]
    fn advice_grows_with_the_errors_logged_during_the_run() {
        let t = BridgeTable::builtin();
        let q = parse_quirks("");
        let d = usb_disk("152d:0578", "uas");
        let c = check_disk(&d, &q, t);
        let usb = |d: &Disk| d.usb.clone().unwrap();
        let quiet = uas_advice(&usb(&d), c.as_ref(), &q, 0, 0).unwrap();
        assert!(quiet.contains("remedy"));
        let loud = uas_advice(&usb(&d), c.as_ref(), &q, 2, 1).unwrap();
        assert!(
            loud.contains("2 UAS abort/reset(s) and 1 USB reset(s)") && loud.contains("confirms")
        );
        let unknown = usb_disk("abcd:0001", "uas");
        assert_eq!(uas_advice(&usb(&unknown), None, &q, 0, 0), None);
        let u = uas_advice(&usb(&unknown), None, &q, 3, 0).unwrap();
        assert!(u.contains("usb-storage.quirks=abcd:0001:u"), "{u}");
        let bot = usb_disk("abcd:0001", "usb-storage");
        assert!(uas_advice(&usb(&bot), None, &q, 0, 2)
            .unwrap()
            .contains("cable"));
    }
}
