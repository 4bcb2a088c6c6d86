//! Whether a disk found at the start of a run is still the same, usable disk.

use super::discover::scan_all;
use super::Disk;

/// Why `disk` (as found at the start of a run) is no longer usable, if it is not: gone from the
/// block layer (unplugged), another device under its name, or no medium.
pub fn vanished(root: &crate::sys::SysRoot, disk: &Disk) -> Option<String> {
    let name = &disk.name;
    if !root.exists(format!("/sys/block/{name}")) {
        return Some(format!("{name} is gone from the block layer (unplugged?)"));
    }
    let Ok(disks) = scan_all(root) else {
        return None;
    };
    let now = disks.iter().find(|d| &d.name == name)?;
    if disk.stable_id.is_some() && now.stable_id != disk.stable_id {
        return Some(format!(
            "{name} is now another device ({}): the disk was unplugged",
            now.stable_id.as_deref().unwrap_or("?")
        ));
    }
    if now.size_bytes == Some(0) {
        return Some(format!("{name} reports no medium"));
    }
    None
}
