//! The `spindle disks` table: one line per disk (device, id, model, size, link, driver,
//! verdict), then its partitions, where a USB disk is plugged in, then any notes.

use super::discover::DiskReport;
use crate::units::human_size;
use std::fmt::Write;

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// The lines under a disk's row: signatures, partitions, the USB bridge flag, notes.
fn details(r: &DiskReport, out: &mut String) {
    for sig in &r.disk.signatures {
        let mut s = format!("    (whole disk) {}", sig.kind.blkid_name());
        if let Some(l) = &sig.label {
            let _ = write!(s, " '{l}'");
        }
        for m in &r.disk.mounts {
            let _ = write!(s, " on {}", m.mount_point.display());
        }
        let _ = writeln!(out, "{s}");
    }
    for p in &r.disk.partitions {
        let mut s = format!("    {}", p.name);
        if let Some(sz) = p.size_bytes {
            let _ = write!(s, " {}", human_size(sz));
        }
        if let Some(t) = &p.fs_type {
            let _ = write!(s, " {t}");
        }
        if let Some(l) = &p.label {
            let _ = write!(s, " '{l}'");
        }
        for m in &p.mounts {
            let _ = write!(s, " on {}", m.mount_point.display());
        }
        if !p.in_kernel {
            s.push_str(" (from the partition table; no kernel device)");
        }
        let _ = writeln!(out, "{s}");
    }
    if let Some(u) = &r.disk.usb {
        let _ = writeln!(out, "    attached: {}", u.attachment());
    }
    if let Some(b) = &r.bridge {
        let tag = if b.is_flagged() { "warning" } else { "usb" };
        for (i, l) in b.lines.iter().enumerate() {
            let lead = if i == 0 {
                format!("{tag}: ")
            } else {
                "  ".into()
            };
            let _ = writeln!(out, "    {lead}{l}");
        }
        if b.is_flagged() {
            let _ = writeln!(out, "      reports: {}", b.sources.join(" "));
        }
    } else if let Some(f) = &r.usb_quirk {
        let _ = writeln!(
            out,
            "    usb: usb-storage.quirks has flags '{f}' for this device"
        );
    }
    for n in &r.disk.notes {
        let _ = writeln!(out, "    note: {n}");
    }
}

/// Renders the table as text.
pub fn render_table(reports: &[DiskReport]) -> String {
    let mut rows: Vec<[String; 7]> = Vec::new();
    for r in reports {
        let d = &r.disk;
        let model = [d.vendor.as_deref(), d.model.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        let (link, driver) = match &d.usb {
            Some(u) => (
                u.link_speed
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| "?".into()),
                u.driver.clone().unwrap_or_else(|| "?".into()),
            ),
            None => (
                d.transport.map(|t| t.describe()).unwrap_or("?").to_string(),
                "-".into(),
            ),
        };
        rows.push([
            d.path.display().to_string(),
            cut(d.stable_id.as_deref().unwrap_or("-"), 40),
            cut(if model.is_empty() { "-" } else { &model }, 28),
            d.size_bytes.map(human_size).unwrap_or_else(|| "?".into()),
            link,
            driver,
            r.verdict_text.clone(),
        ]);
    }
    let header = ["DEVICE", "ID", "MODEL", "SIZE", "LINK", "DRIVER", "VERDICT"];
    let mut w = [0usize; 6];
    for (i, h) in header.iter().take(6).enumerate() {
        w[i] = rows
            .iter()
            .map(|r| r[i].chars().count())
            .chain([h.len()])
            .max()
            .unwrap_or(0);
    }
    let mut out = String::new();
    let line = |cols: [&str; 7], out: &mut String| {
        for (i, c) in cols.iter().take(6).enumerate() {
            let pad = w[i].saturating_sub(c.chars().count());
            let _ = write!(out, "{c}{}  ", " ".repeat(pad));
        }
        let _ = writeln!(out, "{}", cols[6]);
    };
    line(header, &mut out);
    for (r, row) in reports.iter().zip(&rows) {
        line(
            [
                &row[0], &row[1], &row[2], &row[3], &row[4], &row[5], &row[6],
            ],
            &mut out,
        );
        details(r, &mut out);
    }
    if reports.is_empty() {
        out.push_str("(no disks found)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_table_says_so() {
        assert!(render_table(&[]).contains("no disks found"));
    }
}
