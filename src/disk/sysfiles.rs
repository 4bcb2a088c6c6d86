//! Pure parsers for the text files discovery reads: /proc/self/mountinfo, /proc/mounts,
//! /proc/cmdline, /proc/swaps and udev's /run/udev/data/b<major>:<minor> database entries.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// One mounted filesystem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountEntry {
    /// `major:minor` of the mounted device (mountinfo only).
    pub dev: Option<String>,
    /// The mount source (`/dev/sda1`, `/dev/root`, `tmpfs`).
    pub source: String,
    pub mount_point: PathBuf,
    pub fs_type: String,
    pub read_only: bool,
}

/// Decodes the octal escapes (`\040` for a space) used in mount tables.
pub fn unescape_mount_field(s: &str) -> String {
    decode_escapes(s, |e| {
        if !e.iter().all(|c| (b'0'..=b'7').contains(c)) {
            return None;
        }
        u8::from_str_radix(std::str::from_utf8(e).unwrap_or(""), 8).ok()
    })
}

/// Decodes every `\` followed by three bytes that `code` turns into one byte; leaves the rest.
fn decode_escapes(s: &str, code: impl Fn(&[u8]) -> Option<u8>) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            if let Some(v) = code(&b[i + 1..i + 4]) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn options_read_only(opts: &str) -> bool {
    opts.split(',').any(|o| o == "ro")
}

/// Parses /proc/self/mountinfo (malformed lines are skipped).
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let Some(sep) = f.iter().position(|&x| x == "-") else {
            continue;
        };
        if f.len() < 6 || f.len() < sep + 3 {
            continue;
        }
        out.push(MountEntry {
            dev: Some(f[2].to_string()),
            source: unescape_mount_field(f[sep + 2]),
            mount_point: PathBuf::from(unescape_mount_field(f[4])),
            fs_type: f[sep + 1].to_string(),
            read_only: options_read_only(f[5]),
        });
    }
    out
}

/// Parses /proc/mounts (malformed lines are skipped).
pub fn parse_proc_mounts(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            (f.len() >= 4).then(|| MountEntry {
                dev: None,
                source: unescape_mount_field(f[0]),
                mount_point: PathBuf::from(unescape_mount_field(f[1])),
                fs_type: f[2].to_string(),
                read_only: options_read_only(f[3]),
            })
        })
        .collect()
}

/// The value of `root=` on the kernel command line, if any.
pub fn parse_cmdline_root(cmdline: &str) -> Option<String> {
    cmdline
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("root="))
        .next_back()
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// Device paths listed in /proc/swaps (partitions or files).
pub fn parse_swaps(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(unescape_mount_field)
        .collect()
}

/// A udev database entry: `E:KEY=value` properties and `S:` symlinks (relative to /dev).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UdevData {
    pub env: BTreeMap<String, String>,
    pub symlinks: Vec<String>,
}

impl UdevData {
    /// A property value, `None` if missing or empty.
    pub fn get(&self, key: &str) -> Option<String> {
        self.env.get(key).filter(|v| !v.is_empty()).cloned()
    }
}

/// Parses a /run/udev/data/b<maj>:<min> file. Values keep udev's `\x20` escapes decoded.
pub fn parse_udev_data(text: &str) -> UdevData {
    let mut d = UdevData::default();
    for line in text.lines() {
        if let Some(kv) = line.strip_prefix("E:") {
            if let Some((k, v)) = kv.split_once('=') {
                d.env.insert(k.to_string(), decode_udev_escapes(v));
            }
        } else if let Some(s) = line.strip_prefix("S:") {
            d.symlinks.push(s.to_string());
        }
    }
    d
}

/// Decodes `\xNN` escapes (udev writes `\x20` for spaces in labels).
pub fn decode_udev_escapes(s: &str) -> String {
    decode_escapes(s, |e| {
        if e[0] != b'x' {
            return None;
        }
        u8::from_str_radix(std::str::from_utf8(&e[1..]).unwrap_or(""), 16).ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_gives_dev_and_unescaped_paths() {
        let t = "22 1 179:2 / / rw,noatime shared:1 - ext4 /dev/root rw\n\
                 30 22 8:1 / /media/my\\040disk rw,relatime shared:5 - vfat /dev/sda1 rw\n\
                 garbage line\n";
        let m = parse_mountinfo(t);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].dev.as_deref(), Some("179:2"));
        assert_eq!(m[0].source, "/dev/root");
        assert_eq!(m[1].mount_point, PathBuf::from("/media/my disk"));
        assert_eq!(m[1].fs_type, "vfat");
    }

    #[test]
    fn proc_mounts_and_cmdline_and_swaps() {
        let m = parse_proc_mounts("/dev/sda2 / ext4 ro,noatime 0 0\nshort\n");
        assert_eq!(m.len(), 1);
        assert!(m[0].read_only);
        assert_eq!(
            parse_cmdline_root("console=tty1 root=PARTUUID=abcd-02 rootwait").as_deref(),
            Some("PARTUUID=abcd-02")
        );
        assert_eq!(parse_cmdline_root("quiet"), None);
        assert_eq!(
            parse_swaps("Filename Type Size Used Priority\n/dev/sdb2 partition 1 0 -2\n"),
            vec!["/dev/sdb2"]
        );
        assert_eq!(unescape_mount_field("a\\\\b\\04"), "a\\\\b\\04");
    }

    #[test]
    fn udev_data() {
        let d = parse_udev_data(
            "S:disk/by-id/usb-X_Y-0:0\nE:ID_FS_TYPE=vfat\nE:ID_FS_LABEL=MY\\x20STICK\nE:ID_FS_UUID=\nI:1\n",
        );
        assert_eq!(d.get("ID_FS_TYPE").as_deref(), Some("vfat"));
        assert_eq!(d.get("ID_FS_LABEL").as_deref(), Some("MY STICK"));
        assert_eq!(d.get("ID_FS_UUID"), None);
        assert_eq!(d.symlinks, vec!["disk/by-id/usb-X_Y-0:0"]);
    }
}
