//! Content signatures: what a device's first and last MiB say it holds (partition table,
//! filesystem, RAID/LVM member), and a minimal GPT/MBR reader. Pure functions over byte slices;
//! reading the bytes from a device is [`read_head_tail`].

use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// How many bytes of the start and of the end of a device are examined.
pub const PROBE_BYTES: usize = 1 << 20;

/// The kind of thing a signature says is on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignatureKind {
    Gpt,
    Mbr,
    Ext2,
    Ext3,
    Ext4,
    Xfs,
    Btrfs,
    Vfat,
    Exfat,
    Ntfs,
    F2fs,
    Swap,
    Lvm2,
    LinuxRaid,
    Iso9660,
}

impl SignatureKind {
    /// The name blkid/udev use (`ID_FS_TYPE` / `ID_PART_TABLE_TYPE`).
    pub fn blkid_name(self) -> &'static str {
        match self {
            SignatureKind::Gpt => "gpt",
            SignatureKind::Mbr => "dos",
            SignatureKind::Ext2 => "ext2",
            SignatureKind::Ext3 => "ext3",
            SignatureKind::Ext4 => "ext4",
            SignatureKind::Xfs => "xfs",
            SignatureKind::Btrfs => "btrfs",
            SignatureKind::Vfat => "vfat",
            SignatureKind::Exfat => "exfat",
            SignatureKind::Ntfs => "ntfs",
            SignatureKind::F2fs => "f2fs",
            SignatureKind::Swap => "swap",
            SignatureKind::Lvm2 => "LVM2_member",
            SignatureKind::LinuxRaid => "linux_raid_member",
            SignatureKind::Iso9660 => "iso9660",
        }
    }

    /// Maps a blkid/udev type name back to a kind (unknown names give `None`).
    pub fn from_blkid_name(name: &str) -> Option<Self> {
        Some(match name {
            "gpt" => SignatureKind::Gpt,
            "dos" | "mbr" => SignatureKind::Mbr,
            "ext2" => SignatureKind::Ext2,
            "ext3" => SignatureKind::Ext3,
            "ext4" => SignatureKind::Ext4,
            "xfs" => SignatureKind::Xfs,
            "btrfs" => SignatureKind::Btrfs,
            "vfat" | "msdos" | "fat" => SignatureKind::Vfat,
            "exfat" => SignatureKind::Exfat,
            "ntfs" | "ntfs3" => SignatureKind::Ntfs,
            "f2fs" => SignatureKind::F2fs,
            "swap" => SignatureKind::Swap,
            "LVM2_member" => SignatureKind::Lvm2,
            "linux_raid_member" => SignatureKind::LinuxRaid,
            "iso9660" => SignatureKind::Iso9660,
            _ => return None,
        })
    }

    /// True for partition tables (as opposed to filesystems or volume-manager members).
    pub fn is_partition_table(self) -> bool {
        matches!(self, SignatureKind::Gpt | SignatureKind::Mbr)
    }
}

/// One signature found on a device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    pub kind: SignatureKind,
    /// Filesystem label, when the format has one that is cheap to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Filesystem UUID (ext*, xfs, btrfs) or MBR disk identifier, when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
}

impl Signature {
    fn new(kind: SignatureKind) -> Self {
        Signature {
            kind,
            label: None,
            uuid: None,
        }
    }
}

fn le16(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(off..off + 2)?.try_into().ok()?))
}
fn le32(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off + 4)?.try_into().ok()?))
}
fn le64(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(off..off + 8)?.try_into().ok()?))
}
fn has(b: &[u8], off: usize, magic: &[u8]) -> bool {
    b.get(off..off + magic.len()) == Some(magic)
}
fn text(b: &[u8], off: usize, len: usize) -> Option<String> {
    let raw = b.get(off..off + len)?;
    let end = raw.iter().position(|&c| c == 0).unwrap_or(raw.len());
    let s = String::from_utf8_lossy(&raw[..end]).trim().to_string();
    (!s.is_empty()).then_some(s)
}
fn uuid_at(b: &[u8], off: usize) -> Option<String> {
    let u = b.get(off..off + 16)?;
    if u.iter().all(|&c| c == 0) {
        return None;
    }
    let h: Vec<String> = u.iter().map(|c| format!("{c:02x}")).collect();
    Some(format!(
        "{}-{}-{}-{}-{}",
        h[0..4].concat(),
        h[4..6].concat(),
        h[6..8].concat(),
        h[8..10].concat(),
        h[10..16].concat()
    ))
}

/// MD RAID superblock magic (0xa92b4efc, little endian on disk).
const MD_MAGIC: [u8; 4] = [0xfc, 0x4e, 0x2b, 0xa9];

/// Identifies what the first bytes of a device (ideally its first MiB) hold.
///
/// Filesystems written directly on the device are checked before partition tables, because a FAT
/// boot sector also ends in 0x55AA. Returns `None` when nothing known is found (a blank device).
pub fn probe_signature(head: &[u8]) -> Option<Signature> {
    // ext2/3/4: superblock at 1024, magic 0xEF53 at +56.
    if le16(head, 1024 + 56) == Some(0xEF53) {
        let compat = le32(head, 1024 + 0x5C).unwrap_or(0);
        let incompat = le32(head, 1024 + 0x60).unwrap_or(0);
        let kind = if incompat & (0x40 | 0x80 | 0x200) != 0 {
            SignatureKind::Ext4
        } else if compat & 0x4 != 0 {
            SignatureKind::Ext3
        } else {
            SignatureKind::Ext2
        };
        return Some(Signature {
            kind,
            label: text(head, 1024 + 0x78, 16),
            uuid: uuid_at(head, 1024 + 0x68),
        });
    }
    if has(head, 0, b"XFSB") {
        return Some(Signature {
            kind: SignatureKind::Xfs,
            label: text(head, 108, 12),
            uuid: uuid_at(head, 32),
        });
    }
    if has(head, 65536 + 64, b"_BHRfS_M") {
        return Some(Signature {
            kind: SignatureKind::Btrfs,
            label: text(head, 65536 + 0x12b, 256),
            uuid: uuid_at(head, 65536 + 0x20),
        });
    }
    if le32(head, 1024) == Some(0xF2F5_2010) {
        return Some(Signature::new(SignatureKind::F2fs));
    }
    if has(head, 3, b"NTFS    ") {
        return Some(Signature::new(SignatureKind::Ntfs));
    }
    if has(head, 3, b"EXFAT   ") {
        return Some(Signature::new(SignatureKind::Exfat));
    }
    let boot_sig = has(head, 510, &[0x55, 0xAA]);
    if boot_sig && has(head, 82, b"FAT32   ") {
        return Some(Signature {
            kind: SignatureKind::Vfat,
            label: text(head, 71, 11).filter(|l| l != "NO NAME"),
            uuid: le32(head, 67).map(fat_serial),
        });
    }
    if boot_sig
        && (has(head, 54, b"FAT12   ") || has(head, 54, b"FAT16   ") || has(head, 54, b"FAT     "))
    {
        return Some(Signature {
            kind: SignatureKind::Vfat,
            label: text(head, 43, 11).filter(|l| l != "NO NAME"),
            uuid: le32(head, 39).map(fat_serial),
        });
    }
    // swap: signature at the end of the first page (4 KiB, or 64 KiB pages on some arm64 kernels).
    for page in [4096usize, 8192, 16384, 65536] {
        if has(head, page - 10, b"SWAPSPACE2") || has(head, page - 10, b"SWAP-SPACE") {
            return Some(Signature {
                kind: SignatureKind::Swap,
                label: text(head, 1024 + 28, 16),
                uuid: uuid_at(head, 1024 + 12),
            });
        }
    }
    // LVM2 physical volume: "LABELONE" in one of the first four sectors, "LVM2 001" at +24.
    for sector in 0..4usize {
        let off = sector * 512;
        if has(head, off, b"LABELONE") && has(head, off + 24, b"LVM2 001") {
            return Some(Signature::new(SignatureKind::Lvm2));
        }
    }
    // MD RAID superblock 1.1 (offset 0) or 1.2 (offset 4 KiB).
    if has(head, 0, &MD_MAGIC) || has(head, 4096, &MD_MAGIC) {
        return Some(Signature::new(SignatureKind::LinuxRaid));
    }
    // GPT: header "EFI PART" at LBA 1 (512- or 4096-byte sectors).
    if has(head, 512, b"EFI PART") || has(head, 4096, b"EFI PART") {
        return Some(Signature::new(SignatureKind::Gpt));
    }
    if boot_sig {
        let any_entry = (0..4).any(|i| head.get(446 + i * 16 + 4).is_some_and(|&t| t != 0));
        if any_entry {
            return Some(Signature {
                kind: SignatureKind::Mbr,
                label: None,
                uuid: le32(head, 440).map(|id| format!("{id:08x}")),
            });
        }
    }
    if has(head, 32769, b"CD001") {
        return Some(Signature::new(SignatureKind::Iso9660));
    }
    None
}

fn fat_serial(v: u32) -> String {
    format!("{:04X}-{:04X}", v >> 16, v & 0xFFFF)
}

/// Identifies signatures kept at the end of a device (pass its last MiB, aligned so that the
/// slice ends at the device's end): the backup GPT header, and MD RAID 0.90/1.0 superblocks.
pub fn probe_tail_signature(tail: &[u8]) -> Option<Signature> {
    let n = tail.len();
    for sector in [512usize, 4096] {
        if n >= sector && has(tail, n - sector, b"EFI PART") {
            return Some(Signature::new(SignatureKind::Gpt));
        }
    }
    // MD 1.0: 8 KiB from the end (4 KiB aligned); 0.90: in the last 64 KiB block, 64 KiB aligned.
    // Device sizes are multiples of 4 KiB in practice, so check every 4 KiB boundary in range.
    let mut off = n.saturating_sub(128 * 1024) / 4096 * 4096;
    while off + 4 <= n {
        if has(tail, off, &MD_MAGIC) {
            return Some(Signature::new(SignatureKind::LinuxRaid));
        }
        off += 4096;
    }
    None
}

/// One entry of a partition table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableEntry {
    /// 1-based partition number (the `N` of `/dev/sdaN`).
    pub number: u32,
    pub start_bytes: u64,
    pub size_bytes: u64,
    /// GPT partition name, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// GPT unique partition GUID, or MBR `<disk id>-<nn>` (the kernel's PARTUUID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partuuid: Option<String>,
}

/// A parsed partition table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionTable {
    /// `Gpt` or `Mbr`.
    pub kind: SignatureKind,
    pub entries: Vec<TableEntry>,
}

fn gpt_guid(b: &[u8]) -> String {
    // Mixed-endian GUID text form.
    format!(
        "{:08x}-{:04x}-{:04x}-{:02x}{:02x}-{}",
        u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        u16::from_le_bytes([b[4], b[5]]),
        u16::from_le_bytes([b[6], b[7]]),
        b[8],
        b[9],
        b[10..16]
            .iter()
            .map(|c| format!("{c:02x}"))
            .collect::<String>()
    )
}

/// Reads a GPT or MBR partition table from a device's first bytes (`sector_size` 512 or 4096).
/// GPT entries outside `head` are not read. Returns `None` if there is no table.
pub fn parse_partition_table(head: &[u8], sector_size: u64) -> Option<PartitionTable> {
    let ss = sector_size.max(512) as usize;
    if has(head, ss, b"EFI PART") {
        let entries_lba = le64(head, ss + 72)? as usize;
        let count = le32(head, ss + 80)? as usize;
        let esize = le32(head, ss + 84)? as usize;
        if esize < 128 {
            return None;
        }
        let mut entries = Vec::new();
        for i in 0..count.min(256) {
            let off = entries_lba.checked_mul(ss)?.checked_add(i * esize)?;
            let Some(e) = head.get(off..off + 128) else {
                break;
            };
            if e[0..16].iter().all(|&c| c == 0) {
                continue;
            }
            let first = le64(e, 32)?;
            let last = le64(e, 40)?;
            let name_u16: Vec<u16> = (0..36)
                .map(|k| u16::from_le_bytes([e[56 + 2 * k], e[57 + 2 * k]]))
                .take_while(|&c| c != 0)
                .collect();
            let name = String::from_utf16_lossy(&name_u16);
            entries.push(TableEntry {
                number: i as u32 + 1,
                start_bytes: first * ss as u64,
                size_bytes: last.saturating_sub(first).saturating_add(1) * ss as u64,
                name: (!name.is_empty()).then_some(name),
                partuuid: Some(gpt_guid(&e[16..32])),
            });
        }
        return Some(PartitionTable {
            kind: SignatureKind::Gpt,
            entries,
        });
    }
    if probe_signature(head).map(|s| s.kind) == Some(SignatureKind::Mbr) {
        let id = le32(head, 440)?;
        let mut entries = Vec::new();
        for i in 0..4usize {
            let off = 446 + i * 16;
            let ptype = head[off + 4];
            let start = le32(head, off + 8)? as u64;
            let len = le32(head, off + 12)? as u64;
            if ptype == 0 || len == 0 {
                continue;
            }
            entries.push(TableEntry {
                number: i as u32 + 1,
                start_bytes: start * 512,
                size_bytes: len * 512,
                name: None,
                partuuid: Some(format!("{id:08x}-{:02x}", i + 1)),
            });
        }
        return Some(PartitionTable {
            kind: SignatureKind::Mbr,
            entries,
        });
    }
    None
}

/// The first and last bytes of a device (or image file), up to [`PROBE_BYTES`] each.
#[derive(Clone, Debug, Default)]
pub struct HeadTail {
    pub head: Vec<u8>,
    pub tail: Vec<u8>,
    /// Size of the device in bytes (as seen by seeking to its end).
    pub size_bytes: u64,
}

impl HeadTail {
    /// All signatures found at the start and at the end (deduplicated by kind).
    pub fn signatures(&self) -> Vec<Signature> {
        let mut out: Vec<Signature> = Vec::new();
        for s in [
            probe_signature(&self.head),
            probe_tail_signature(&self.tail),
        ]
        .into_iter()
        .flatten()
        {
            if !out.iter().any(|o| o.kind == s.kind) {
                out.push(s);
            }
        }
        out
    }
}

/// Reads the first and last MiB of the byte range `[offset, offset + len)` of `path` (`len`
/// `None` = to the end). Used for whole disks (offset 0) and for partitions read through their
/// parent disk, so no partition device node is needed.
pub fn read_head_tail(path: &Path, offset: u64, len: Option<u64>) -> std::io::Result<HeadTail> {
    let mut f = std::fs::File::open(path)?;
    let end = f.seek(SeekFrom::End(0))?;
    let len = len
        .unwrap_or(end.saturating_sub(offset))
        .min(end.saturating_sub(offset));
    let read_at = |f: &mut std::fs::File, at: u64, n: u64| -> std::io::Result<Vec<u8>> {
        f.seek(SeekFrom::Start(at))?;
        let mut buf = Vec::with_capacity(n as usize);
        f.take(n).read_to_end(&mut buf)?;
        Ok(buf)
    };
    let n = len.min(PROBE_BYTES as u64);
    let head = read_at(&mut f, offset, n)?;
    let tail = read_at(&mut f, offset + len - n, n)?;
    Ok(HeadTail {
        head,
        tail,
        size_bytes: len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blank() -> Vec<u8> {
        vec![0u8; PROBE_BYTES]
    }

    #[test]
    fn blank_device_has_no_signature() {
        assert_eq!(probe_signature(&blank()), None);
        assert_eq!(probe_tail_signature(&blank()), None);
        assert_eq!(probe_signature(&[]), None);
        assert_eq!(probe_signature(&[1, 2, 3]), None);
    }

    #[test]
    fn ext4_with_label() {
        let mut b = blank();
        b[1024 + 56] = 0x53;
        b[1024 + 57] = 0xEF;
        b[1024 + 0x60] = 0x40; // extents
        b[1024 + 0x78..1024 + 0x78 + 6].copy_from_slice(b"photos");
        b[1024 + 0x68] = 0xab;
        let s = probe_signature(&b).unwrap();
        assert_eq!(s.kind, SignatureKind::Ext4);
        assert_eq!(s.label.as_deref(), Some("photos"));
        assert!(s.uuid.unwrap().starts_with("ab000000-"));
    }

    #[test]
    fn fat32_label_and_mbr_table() {
        let mut b = blank();
        b[510] = 0x55;
        b[511] = 0xAA;
        b[82..90].copy_from_slice(b"FAT32   ");
        b[71..82].copy_from_slice(b"SPINDLE    ");
        let s = probe_signature(&b).unwrap();
        assert_eq!(
            (s.kind, s.label.as_deref()),
            (SignatureKind::Vfat, Some("SPINDLE"))
        );

        let mut m = blank();
        m[510] = 0x55;
        m[511] = 0xAA;
        m[440..444].copy_from_slice(&0xabcd1234u32.to_le_bytes());
        m[446 + 4] = 0x0c;
        m[446 + 8..446 + 12].copy_from_slice(&8192u32.to_le_bytes());
        m[446 + 12..446 + 16].copy_from_slice(&1000u32.to_le_bytes());
        assert_eq!(probe_signature(&m).unwrap().kind, SignatureKind::Mbr);
        let t = parse_partition_table(&m, 512).unwrap();
        assert_eq!(t.entries.len(), 1);
        assert_eq!(t.entries[0].start_bytes, 8192 * 512);
        assert_eq!(t.entries[0].partuuid.as_deref(), Some("abcd1234-01"));
    }

    #[test]
    fn gpt_header_entries_and_backup() {
        let mut b = blank();
        b[512..520].copy_from_slice(b"EFI PART");
        b[512 + 72..512 + 80].copy_from_slice(&2u64.to_le_bytes());
        b[512 + 80..512 + 84].copy_from_slice(&128u32.to_le_bytes());
        b[512 + 84..512 + 88].copy_from_slice(&128u32.to_le_bytes());
        let e = 1024;
        b[e] = 0xaf; // type GUID non-zero
        b[e + 16] = 0x11;
        b[e + 32..e + 40].copy_from_slice(&2048u64.to_le_bytes());
        b[e + 40..e + 48].copy_from_slice(&4095u64.to_le_bytes());
        for (k, c) in "spindle".encode_utf16().enumerate() {
            b[e + 56 + 2 * k..e + 58 + 2 * k].copy_from_slice(&c.to_le_bytes());
        }
        assert_eq!(probe_signature(&b).unwrap().kind, SignatureKind::Gpt);
        let t = parse_partition_table(&b, 512).unwrap();
        assert_eq!(t.kind, SignatureKind::Gpt);
        assert_eq!(t.entries.len(), 1);
        assert_eq!(t.entries[0].start_bytes, 1 << 20);
        assert_eq!(t.entries[0].size_bytes, 1 << 20);
        assert_eq!(t.entries[0].name.as_deref(), Some("spindle"));

        let mut tail = blank();
        let n = tail.len();
        tail[n - 512..n - 504].copy_from_slice(b"EFI PART");
        assert_eq!(
            probe_tail_signature(&tail).unwrap().kind,
            SignatureKind::Gpt
        );
    }

    #[test]
    fn raid_lvm_swap_xfs_btrfs() {
        let mut r = blank();
        r[4096..4100].copy_from_slice(&MD_MAGIC);
        assert_eq!(probe_signature(&r).unwrap().kind, SignatureKind::LinuxRaid);
        let mut t = blank();
        let n = t.len();
        t[n - 8192..n - 8188].copy_from_slice(&MD_MAGIC);
        assert_eq!(
            probe_tail_signature(&t).unwrap().kind,
            SignatureKind::LinuxRaid
        );

        let mut l = blank();
        l[512..520].copy_from_slice(b"LABELONE");
        l[536..544].copy_from_slice(b"LVM2 001");
        assert_eq!(probe_signature(&l).unwrap().kind, SignatureKind::Lvm2);

        let mut s = blank();
        s[4086..4096].copy_from_slice(b"SWAPSPACE2");
        assert_eq!(probe_signature(&s).unwrap().kind, SignatureKind::Swap);

        let mut x = blank();
        x[0..4].copy_from_slice(b"XFSB");
        x[108..112].copy_from_slice(b"data");
        let xs = probe_signature(&x).unwrap();
        assert_eq!(
            (xs.kind, xs.label.as_deref()),
            (SignatureKind::Xfs, Some("data"))
        );

        let mut bt = blank();
        bt[65536 + 64..65536 + 72].copy_from_slice(b"_BHRfS_M");
        assert_eq!(probe_signature(&bt).unwrap().kind, SignatureKind::Btrfs);
    }

    #[test]
    fn blkid_names_round_trip() {
        for k in [
            SignatureKind::Ext4,
            SignatureKind::Lvm2,
            SignatureKind::Mbr,
            SignatureKind::Vfat,
        ] {
            assert_eq!(SignatureKind::from_blkid_name(k.blkid_name()), Some(k));
        }
        assert_eq!(SignatureKind::from_blkid_name("zfs_member"), None);
    }

    #[test]
    fn head_tail_of_a_small_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("img");
        let mut data = vec![0u8; 3 << 20];
        data[(3 << 20) - 512..(3 << 20) - 504].copy_from_slice(b"EFI PART");
        std::fs::write(&p, &data).unwrap();
        let ht = read_head_tail(&p, 0, None).unwrap();
        assert_eq!(
            (ht.head.len(), ht.tail.len(), ht.size_bytes),
            (1 << 20, 1 << 20, 3 << 20)
        );
        assert_eq!(ht.signatures()[0].kind, SignatureKind::Gpt);
        let small = read_head_tail(&p, 1 << 20, Some(4096)).unwrap();
        assert_eq!((small.head.len(), small.size_bytes), (4096, 4096));
    }
}
