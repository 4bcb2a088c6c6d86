//! USB storage trouble in the kernel log: UAS aborts and device resets, USB resets and
//! disconnects, counted per disk. Parsing is pure ([`parse_kernel_log`], [`parse_usb_event`],
//! [`count_usb_trouble`]); the running system's log is read from `/dev/kmsg` through a
//! [`SysRoot`], with a [`KernelLogMark`] taken before a run so only what was logged during the
//! run is counted ([`count_since`]).

use super::Disk;
use crate::sys::SysRoot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// The kernel log device (one record per read, sequence-numbered).
pub const KMSG: &str = "/dev/kmsg";

/// How many log lines a [`UsbTrouble`] keeps as examples.
const EXAMPLES: usize = 5;

/// One kernel log line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    /// The kmsg sequence number, when the text came from /dev/kmsg.
    pub seq: Option<u64>,
    /// The message without timestamps or syslog prefixes.
    pub message: String,
}

/// Strips a `[  12.345678] ` or `[Mon Jun 10 06:13:20 2024] ` dmesg timestamp.
fn strip_brackets(s: &str) -> &str {
    let t = s.trim_start();
    match (t.starts_with('['), t.find("] ")) {
        (true, Some(i)) => &t[i + 2..],
        _ => t,
    }
}

/// Parses one line of /dev/kmsg (`prio,seq,usec,flags;message`), dmesg (with or without
/// timestamps), journalctl -k or syslog (`… kernel: message`). `None` for kmsg continuation
/// lines (` KEY=value`) and blank lines.
pub fn parse_log_line(line: &str) -> Option<LogRecord> {
    if line.trim().is_empty() || line.starts_with(' ') && line.contains('=') {
        return None;
    }
    if let Some((head, msg)) = line.split_once(';') {
        let f: Vec<&str> = head.split(',').collect();
        let numeric = |i: usize| f.get(i).is_some_and(|x| x.parse::<u64>().is_ok());
        if f.len() >= 4 && numeric(0) && numeric(1) && numeric(2) {
            return Some(LogRecord {
                seq: f[1].parse().ok(),
                message: msg.trim_end().to_string(),
            });
        }
    }
    let body = match line.find(" kernel: ") {
        Some(i) => &line[i + " kernel: ".len()..],
        None => line,
    };
    Some(LogRecord {
        seq: None,
        message: strip_brackets(body).trim_end().to_string(),
    })
}

/// Parses kernel log text in any of the forms [`parse_log_line`] knows.
pub fn parse_kernel_log(text: &str) -> Vec<LogRecord> {
    text.lines().filter_map(parse_log_line).collect()
}

/// A kind of USB storage trouble.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UsbEventKind {
    /// `uas_eh_abort_handler`: a UAS command timed out and was aborted.
    UasAbort,
    /// `uas_eh_device_reset_handler start`: the UAS device was reset.
    UasReset,
    /// `reset … USB device number N`: the USB device was reset (UAS and usb-storage).
    UsbReset,
    /// `USB disconnect, device number N`.
    UsbDisconnect,
    /// The block layer gave up on a request: `I/O error, dev sda, sector …`, `critical medium
    /// error, dev sda, …`, `Buffer I/O error on dev sda1, …` (any disk, USB or not).
    IoError,
}

/// What a trouble line names: the disk (`sda`), its SCSI address, its SCSI host or USB port.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventTarget {
    pub disk: Option<String>,
    /// `H:C:T:L`.
    pub scsi_id: Option<String>,
    pub scsi_host: Option<u32>,
    /// `2-1`, `1-1.3`.
    pub usb_port: Option<String>,
}

/// One trouble line, understood.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsbEvent {
    pub kind: UsbEventKind,
    pub target: EventTarget,
}

fn is_scsi_id(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    parts.len() == 4 && parts.iter().all(|p| p.parse::<u32>().is_ok())
}

/// `sd 0:0:0:0: [sda] tag#3 …` → (Some("sda"), Some("0:0:0:0")).
fn scsi_target(msg: &str) -> EventTarget {
    let mut t = EventTarget::default();
    let mut words = msg.split_whitespace();
    while let Some(w) = words.next() {
        if let Some(id) = w.strip_suffix(':').filter(|id| is_scsi_id(id)) {
            t.scsi_id = Some(id.to_string());
        } else if let Some(name) = w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            t.disk = Some(name.to_string());
            break;
        } else if w == "scsi" {
            t.scsi_host = words
                .next()
                .and_then(|h| h.strip_prefix("host")?.strip_suffix(':')?.parse().ok());
        }
    }
    t
}

/// `usb 2-1: …` → the port.
fn usb_port(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("usb ")?;
    let (port, _) = rest.split_once(": ")?;
    let ok = !port.is_empty()
        && port
            .chars()
            .all(|c| c.is_ascii_digit() || c == '-' || c == '.');
    ok.then(|| port.to_string())
}

/// The device an I/O error line names: `I/O error, dev sda, sector 8 op 0x0:(READ) …`
/// (blk_update_request / blk_print_req_error), `critical medium error, dev sda, …`,
/// `Buffer I/O error on dev sda1, logical block 0, …`.
fn io_error_device(message: &str) -> Option<&str> {
    let rest = ["I/O error, dev ", "medium error, dev ", "I/O error on dev "]
        .iter()
        .find_map(|k| message.split_once(k).map(|(_, r)| r))?;
    let dev = rest.split([',', ' ']).next()?;
    (!dev.is_empty()).then_some(dev)
}

/// `sda1` → `sda`, `nvme0n1p2` → `nvme0n1`, `mmcblk0p1` → `mmcblk0`; a whole disk (`sda`,
/// `nvme0n1`, `mmcblk0`, `loop3`) as it is.
fn whole_disk(dev: &str) -> &str {
    let base = dev.trim_end_matches(|c: char| c.is_ascii_digit());
    if base.len() == dev.len() {
        return dev;
    }
    let numbered = |b: &str| b.ends_with(|c: char| c.is_ascii_digit());
    if let Some(b) = base.strip_suffix('p').filter(|b| numbered(b)) {
        return b;
    }
    let lettered = ["sd", "vd", "hd", "xvd"].iter().any(|p| dev.starts_with(p));
    if lettered && !numbered(base) {
        return base;
    }
    dev
}

/// Recognizes a USB storage trouble message.
pub fn parse_usb_event(message: &str) -> Option<UsbEvent> {
    let kind = if message.contains("uas_eh_abort_handler") {
        UsbEventKind::UasAbort
    } else if message.contains("uas_eh_") && message.contains("reset_handler start") {
        UsbEventKind::UasReset
    } else if message.contains(": reset ") && message.contains(" USB device number ") {
        UsbEventKind::UsbReset
    } else if message.contains(": USB disconnect, device number ") {
        UsbEventKind::UsbDisconnect
    } else if let Some(dev) = io_error_device(message) {
        return Some(UsbEvent {
            kind: UsbEventKind::IoError,
            target: EventTarget {
                disk: Some(whole_disk(dev).to_string()),
                ..EventTarget::default()
            },
        });
    } else {
        return None;
    };
    let target = match kind {
        UsbEventKind::UasAbort | UsbEventKind::UasReset => scsi_target(message),
        UsbEventKind::UsbReset | UsbEventKind::UsbDisconnect => EventTarget {
            usb_port: Some(usb_port(message)?),
            ..EventTarget::default()
        },
        UsbEventKind::IoError => unreachable!("returned above"),
    };
    Some(UsbEvent { kind, target })
}

/// USB storage trouble of one disk (or of devices matched to none).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct UsbTrouble {
    pub uas_aborts: u64,
    pub uas_resets: u64,
    pub usb_resets: u64,
    pub usb_disconnects: u64,
    /// Requests the block layer failed (`UsbEventKind::IoError`).
    pub io_errors: u64,
    /// The first few lines counted, as logged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

impl UsbTrouble {
    /// UAS aborts plus UAS device resets.
    pub fn uas_errors(&self) -> u64 {
        self.uas_aborts + self.uas_resets
    }

    pub fn is_empty(&self) -> bool {
        self.uas_errors() + self.usb_resets + self.usb_disconnects + self.io_errors == 0
    }

    /// `2 UAS aborts, 1 USB reset` (only what happened).
    pub fn describe(&self) -> String {
        let parts: Vec<String> = [
            (self.uas_aborts, "UAS abort"),
            (self.uas_resets, "UAS device reset"),
            (self.usb_resets, "USB reset"),
            (self.usb_disconnects, "USB disconnect"),
            (self.io_errors, "I/O error"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}{}", if *n == 1 { "" } else { "s" }))
        .collect();
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    }

    fn add(&mut self, kind: UsbEventKind, line: &str) {
        match kind {
            UsbEventKind::UasAbort => self.uas_aborts += 1,
            UsbEventKind::UasReset => self.uas_resets += 1,
            UsbEventKind::UsbReset => self.usb_resets += 1,
            UsbEventKind::UsbDisconnect => self.usb_disconnects += 1,
            UsbEventKind::IoError => self.io_errors += 1,
        }
        if self.examples.len() < EXAMPLES {
            self.examples.push(line.to_string());
        }
    }
}

/// How a disk is named in the kernel log: its name, SCSI address and host, USB port.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskKeys {
    pub name: String,
    pub scsi_id: Option<String>,
    pub scsi_host: Option<u32>,
    pub usb_port: Option<String>,
}

impl DiskKeys {
    /// From discovery: the SCSI address and host are in the disk's sysfs path
    /// (`…/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda`), the port in its USB facts.
    pub fn of(disk: &Disk) -> Self {
        let mut k = DiskKeys {
            name: disk.name.clone(),
            usb_port: disk.usb.as_ref().map(|u| u.port_path.clone()),
            ..DiskKeys::default()
        };
        if let Some(p) = &disk.sysfs_path {
            for c in p.iter().filter_map(|c| c.to_str()) {
                if let Some(h) = c.strip_prefix("host").and_then(|h| h.parse().ok()) {
                    k.scsi_host = Some(h);
                } else if is_scsi_id(c) {
                    k.scsi_id = Some(c.to_string());
                }
            }
        }
        k
    }

    fn matches(&self, t: &EventTarget) -> bool {
        let eq = |a: &Option<String>, b: &Option<String>| a.is_some() && a == b;
        t.disk.as_deref() == Some(self.name.as_str())
            || eq(&t.scsi_id, &self.scsi_id)
            || (t.scsi_host.is_some() && t.scsi_host == self.scsi_host)
            || eq(&t.usb_port, &self.usb_port)
    }
}

/// Trouble counted per disk (by kernel name) and for USB devices matched to none.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TroubleCount {
    pub disks: BTreeMap<String, UsbTrouble>,
    /// Trouble of USB devices that are none of the disks (another disk, a hub, a stick).
    pub other: UsbTrouble,
    /// Kernel log records looked at.
    pub records: u64,
    /// The Pi's under-voltage reports ("Undervoltage detected!" of the raspberrypi-hwmon
    /// driver, "Under-voltage detected!" of older Raspberry Pi kernels): machine-wide, and
    /// caught even when it passed between two samples of the sensor.
    pub undervoltage: u64,
    /// Limits of the count (a lost part of the log).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl TroubleCount {
    /// The trouble of one disk (empty when none was logged).
    pub fn of(&self, disk_name: &str) -> UsbTrouble {
        self.disks.get(disk_name).cloned().unwrap_or_default()
    }
}

/// The kernel's report that the Pi's supply dropped too low.
pub fn is_undervoltage(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("undervoltage detected") || m.contains("under-voltage detected")
}

/// Counts trouble per disk. Every disk gets an entry, zero when nothing was logged for it.
pub fn count_usb_trouble(records: &[LogRecord], disks: &[DiskKeys]) -> TroubleCount {
    let mut c = TroubleCount {
        records: records.len() as u64,
        ..TroubleCount::default()
    };
    for d in disks {
        c.disks.insert(d.name.clone(), UsbTrouble::default());
    }
    for r in records {
        if is_undervoltage(&r.message) {
            c.undervoltage += 1;
        }
        let Some(ev) = parse_usb_event(&r.message) else {
            continue;
        };
        match disks.iter().find(|d| d.matches(&ev.target)) {
            Some(d) => c
                .disks
                .entry(d.name.clone())
                .or_default()
                .add(ev.kind, &r.message),
            None => c.other.add(ev.kind, &r.message),
        }
    }
    c
}

/// A point in the kernel log; what is logged after it belongs to the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelLogMark {
    /// The last kmsg sequence number seen (`None`: the log was empty).
    pub seq: Option<u64>,
    /// RFC 3339 UTC.
    pub at: String,
}

/// Reads every record the kernel log holds now from `/dev/kmsg` under `root` (a character
/// device on a live system, read record by record without blocking; a text file of kmsg lines
/// in fixture trees).
pub fn read_kmsg(root: &SysRoot) -> Result<Vec<LogRecord>, String> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let path = root.path(KMSG);
    let err = |e: std::io::Error| format!("{KMSG} could not be read ({e})");
    let meta = std::fs::metadata(&path).map_err(err)?;
    if !meta.file_type().is_char_device() {
        let text = std::fs::read_to_string(&path).map_err(err)?;
        return Ok(parse_kernel_log(&text));
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&path)
        .map_err(err)?;
    read_records(&mut f, &path)
}

fn read_records(f: &mut std::fs::File, path: &Path) -> Result<Vec<LogRecord>, String> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let text = String::from_utf8_lossy(&buf[..n]);
                out.extend(text.lines().filter_map(parse_log_line));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            // EPIPE: records were overwritten before we read them; reading goes on after them.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("{} could not be read ({e})", path.display())),
        }
    }
    Ok(out)
}

/// Takes a mark at the end of the kernel log now (before a run).
pub fn mark(root: &SysRoot) -> Result<KernelLogMark, String> {
    let records = read_kmsg(root)?;
    Ok(KernelLogMark {
        seq: records.iter().filter_map(|r| r.seq).max(),
        at: crate::sys::clock::now_rfc3339(),
    })
}

/// The records logged after `mark`, and a note when part of them was lost (the kernel's ring
/// buffer overwrote them before they were read).
pub fn records_since(
    root: &SysRoot,
    mark: &KernelLogMark,
) -> Result<(Vec<LogRecord>, Vec<String>), String> {
    let all = read_kmsg(root)?;
    let after = |r: &LogRecord| match (r.seq, mark.seq) {
        (Some(s), Some(m)) => s > m,
        (Some(_), None) => true,
        (None, _) => false,
    };
    let records: Vec<LogRecord> = all.into_iter().filter(after).collect();
    let mut notes = Vec::new();
    let first = records.iter().filter_map(|r| r.seq).min();
    if let (Some(f), Some(m)) = (first, mark.seq) {
        if f > m + 1 {
            notes.push(format!(
                "{} kernel log records of the run were overwritten before they were read: the counts are a lower bound",
                f - m - 1
            ));
        }
    }
    Ok((records, notes))
}

/// USB trouble per disk logged since `mark`, or why it could not be counted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum UsbTroubleCount {
    Counted(TroubleCount),
    Unavailable { reason: String },
}

/// Counts the USB trouble of `disks` logged since `mark` (after a run, or after each target).
pub fn count_since(root: &SysRoot, mark: &KernelLogMark, disks: &[Disk]) -> UsbTroubleCount {
    match records_since(root, mark) {
        Ok((records, notes)) => {
            let keys: Vec<DiskKeys> = disks.iter().map(DiskKeys::of).collect();
            let mut c = count_usb_trouble(&records, &keys);
            c.notes = notes;
            UsbTroubleCount::Counted(c)
        }
        Err(e) => UsbTroubleCount::Unavailable {
            reason: format!("{e}: USB trouble during the run was not counted"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undervoltage_reports_are_counted_for_the_machine() {
        let log = parse_kernel_log(
            "[  12.1] raspberrypi-hwmon raspberrypi-hwmon: Undervoltage detected!\n\
             [  14.2] raspberrypi-hwmon raspberrypi-hwmon: Voltage normalised\n\
             [  20.0] Under-voltage detected! (0x00050005)\n\
             [  21.0] usb 2-1: reset SuperSpeed USB device number 2 using xhci_hcd\n",
        );
        let c = count_usb_trouble(&log, &[]);
        assert_eq!(c.undervoltage, 2);
        assert_eq!(c.other.usb_resets, 1);
        assert!(!is_undervoltage("Voltage normalised"));
    }

    #[test]
    fn lines_of_every_log_format() {
        let k = parse_log_line("6,1234,5678901,-;usb 2-1: reset SuperSpeed USB device").unwrap();
        assert_eq!(k.seq, Some(1234));
        assert_eq!(k.message, "usb 2-1: reset SuperSpeed USB device");
        assert_eq!(parse_log_line(" SUBSYSTEM=usb"), None);
        let d = parse_log_line("[  338.512345] sd 0:0:0:0: [sda] tag#1 x").unwrap();
        assert_eq!(
            (d.seq, d.message.as_str()),
            (None, "sd 0:0:0:0: [sda] tag#1 x")
        );
        let j = parse_log_line(
            "Jun 10 06:13:20 pi kernel: [ 12.1] usb 1-1.3: USB disconnect, device number 3",
        );
        assert_eq!(
            j.unwrap().message,
            "usb 1-1.3: USB disconnect, device number 3"
        );
        let t = parse_log_line("[Mon Jun 10 06:13:20 2024] usb 2-1: x").unwrap();
        assert_eq!(t.message, "usb 2-1: x");
    }

    #[test]
    fn io_errors_name_the_whole_disk() {
        for (line, disk) in [
            ("I/O error, dev sda, sector 2048 op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 2", "sda"),
            ("critical medium error, dev sdb, sector 77 op 0x1:(WRITE) flags 0x0 phys_seg 1 prio class 2", "sdb"),
            ("Buffer I/O error on dev sdc1, logical block 0, async page read", "sdc"),
            ("I/O error, dev nvme0n1, sector 8 op 0x0:(READ)", "nvme0n1"),
            ("Buffer I/O error on dev mmcblk0p2, logical block 9, lost async page write", "mmcblk0"),
            ("I/O error, dev loop3, sector 0 op 0x1:(WRITE)", "loop3"),
        ] {
            let ev = parse_usb_event(line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(ev.kind, UsbEventKind::IoError, "{line}");
            assert_eq!(ev.target.disk.as_deref(), Some(disk), "{line}");
        }
        let keys = [DiskKeys {
            name: "sdb".into(),
            ..DiskKeys::default()
        }];
        let recs = parse_kernel_log(
            "[  40.0] critical medium error, dev sdb, sector 77 op 0x1:(WRITE) flags 0x0\n\
             [  41.0] I/O error, dev sda, sector 1 op 0x0:(READ)\n",
        );
        let c = count_usb_trouble(&recs, &keys);
        assert_eq!(c.of("sdb").io_errors, 1);
        assert_eq!(c.of("sdb").describe(), "1 I/O error");
        assert_eq!(c.other.io_errors, 1);
    }

    #[test]
    fn events_and_their_targets() {
        let a = parse_usb_event(
            "sd 0:0:0:0: [sda] tag#24 uas_eh_abort_handler 0 uas-tag 11 inflight: CMD OUT ",
        )
        .unwrap();
        assert_eq!(a.kind, UsbEventKind::UasAbort);
        assert_eq!(a.target.disk.as_deref(), Some("sda"));
        assert_eq!(a.target.scsi_id.as_deref(), Some("0:0:0:0"));
        let r = parse_usb_event("scsi host2: uas_eh_device_reset_handler start").unwrap();
        assert_eq!(
            (r.kind, r.target.scsi_host),
            (UsbEventKind::UasReset, Some(2))
        );
        assert_eq!(
            parse_usb_event("scsi host2: uas_eh_device_reset_handler success"),
            None
        );
        for l in [
            "usb 2-1: reset SuperSpeed USB device number 2 using xhci_hcd",
            "usb 2-1: reset SuperSpeed Gen 1 USB device number 2 using xhci_hcd",
            "usb 1-1.3: reset high-speed USB device number 3 using xhci_hcd",
        ] {
            let e = parse_usb_event(l).unwrap();
            assert_eq!(e.kind, UsbEventKind::UsbReset, "{l}");
            assert!(e.target.usb_port.unwrap().contains('-'));
        }
        assert_eq!(
            parse_usb_event("usb 2-1: new SuperSpeed USB device number 2 using xhci_hcd"),
            None
        );
        assert_eq!(
            parse_usb_event("usb 2-1: USB disconnect, device number 2")
                .unwrap()
                .kind,
            UsbEventKind::UsbDisconnect
        );
    }

    #[test]
    fn counts_go_to_the_disk_they_name_and_the_rest_to_other() {
        let log = "\
6,10,100,-;sd 0:0:0:0: [sda] tag#3 uas_eh_abort_handler 0 uas-tag 4 inflight: CMD IN
6,11,101,-;sd 0:0:0:0: [sda] tag#2 uas_eh_abort_handler 0 uas-tag 3 inflight: CMD IN
6,12,102,-;scsi host0: uas_eh_device_reset_handler start
6,13,103,-;usb 2-1: reset SuperSpeed USB device number 2 using xhci_hcd
6,14,104,-;scsi host0: uas_eh_device_reset_handler success
6,15,105,-;usb 1-1.4: USB disconnect, device number 5
";
        let keys = [DiskKeys {
            name: "sda".into(),
            scsi_id: Some("0:0:0:0".into()),
            scsi_host: Some(0),
            usb_port: Some("2-1".into()),
        }];
        let c = count_usb_trouble(&parse_kernel_log(log), &keys);
        let sda = c.of("sda");
        assert_eq!(
            (
                sda.uas_aborts,
                sda.uas_resets,
                sda.usb_resets,
                sda.usb_disconnects
            ),
            (2, 1, 1, 0)
        );
        assert_eq!(sda.uas_errors(), 3);
        assert_eq!(sda.examples.len(), 4);
        assert_eq!(c.other.usb_disconnects, 1);
        assert_eq!(c.records, 6);
    }
}
