//! USB facts of a block device: the negotiated link speed (bounded by every hub on the way to
//! the root hub), the storage driver (`uas` or `usb-storage`), VID:PID and strings, and the host
//! controller behind the root hub (the Pi 4's VL805, one of the Pi 5's two RP1 controllers),
//! found by walking up sysfs from the block device to the `usb_device` directory and beyond.

use crate::sys::SysRoot;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// A negotiated USB link speed in Mb/s, as in sysfs `speed` (1.5, 12, 480, 5000, 10000, 20000).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LinkSpeed(pub f64);

impl LinkSpeed {
    /// Parses a sysfs `speed` value; `None` for anything that is not a positive number.
    pub fn parse(s: &str) -> Option<Self> {
        let v: f64 = s.trim().parse().ok()?;
        (v.is_finite() && v > 0.0).then_some(LinkSpeed(v))
    }

    /// SuperSpeed (USB 3.x, 5000 Mb/s) or faster.
    pub fn is_superspeed(self) -> bool {
        self.0 >= 5000.0
    }

    /// The USB name of the speed ("SuperSpeed 5 Gb/s", "High-Speed 480 Mb/s", …).
    pub fn name(self) -> &'static str {
        match self.0 {
            v if v >= 20000.0 => "SuperSpeed+ 20 Gb/s",
            v if v >= 10000.0 => "SuperSpeed+ 10 Gb/s",
            v if v >= 5000.0 => "SuperSpeed 5 Gb/s",
            v if v >= 480.0 => "High-Speed 480 Mb/s",
            v if v >= 12.0 => "Full-Speed 12 Mb/s",
            _ => "Low-Speed 1.5 Mb/s",
        }
    }
}

impl fmt::Display for LinkSpeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= 1000.0 && self.0 % 1000.0 == 0.0 {
            write!(f, "{} Gb/s", self.0 / 1000.0)
        } else {
            write!(f, "{} Mb/s", self.0)
        }
    }
}

/// One USB device between the disk and the host controller: a hub or the root hub.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UsbHop {
    /// sysfs name (`2-1`, `usb2`).
    pub name: String,
    pub speed: Option<LinkSpeed>,
    pub product: Option<String>,
}

/// USB facts of a disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UsbInfo {
    /// The usb_device's sysfs name: bus-port path (`2-1`, `1-1.3` behind a hub).
    pub port_path: String,
    /// Speed the disk's own USB device negotiated.
    pub device_speed: Option<LinkSpeed>,
    /// Effective link speed: the slowest of the device and every hub above it.
    pub link_speed: Option<LinkSpeed>,
    /// Hubs from the device up to and including the root hub.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hubs: Vec<UsbHop>,
    /// USB version the device supports (bcdUSB, e.g. "3.20"); not the link.
    pub usb_version: Option<String>,
    /// Storage driver bound to the interface: `uas` or `usb-storage`.
    pub driver: Option<String>,
    /// Interface protocol: `62` (UAS) or `50` (Bulk-Only).
    pub interface_protocol: Option<String>,
    pub vendor_id: Option<String>,
    pub product_id: Option<String>,
    pub serial: Option<String>,
    pub manufacturer: Option<String>,
    pub product: Option<String>,
    pub busnum: Option<u32>,
    pub devnum: Option<u32>,
    /// The host controller the root hub belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<UsbController>,
}

/// The Pi 5's RP1 USB controllers: the platform device name the kernel gives each `snps,dwc3`
/// node (its address translated to the CPU's, `%llx.%pOFn`) and the node. The same names under
/// Raspberry Pi OS's kernel (`axi/1000120000.pcie/1f00200000.usb/xhci-hcd.0`) and Debian's
/// mainline 7.x one (`…/0002:01:00.0/…pci-ep-bus@1/1f00200000.usb/xhci-hcd.N.auto`), whose
/// `N` is handed out at run time and is not relied on (tests/fixtures/build.py has the sources).
const RP1_CONTROLLERS: [(&str, &str); 2] = [
    ("1f00200000.usb", "usb@40200000"),
    ("1f00300000.usb", "usb@40300000"),
];

/// PCI xHCI controllers known by vendor:device id.
const PCI_CONTROLLERS: [(&str, &str, &str); 1] = [("0x1106", "0x3483", "VIA VL805")];

/// The RP1 as a PCI function (`pci1de4,1`), under the mainline kernel.
const RP1_PCI_ID: (&str, &str) = ("0x1de4", "0x0001");

/// The USB host controller behind a disk's root hub. Two disks on the same controller share its
/// bandwidth, whichever of its buses (USB 2 or USB 3 root hub) each is on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsbController {
    /// The host controller's sysfs directory (the root hub's parent): the controller's identity.
    pub sysfs_path: PathBuf,
    /// What it is: `RP1 USB controller usb@40200000`, `VIA VL805`, else the device's name.
    pub name: String,
    /// The PCI function of the controller, or of the RP1 that holds it (`0002:01:00.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_address: Option<String>,
}

/// `DDDD:BB:DD.F`, a PCI function's sysfs name.
fn is_pci_function(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && name
            .chars()
            .enumerate()
            .all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

/// Names the host controller whose sysfs directory is `hcd` (the root hub's parent): the RP1
/// controller whose dwc3 device is on the path, else the PCI function nearest to it by its
/// vendor:device id, else the directory's own name.
pub fn controller_of(root: &SysRoot, hcd: &Path) -> UsbController {
    let dirs: Vec<&Path> = hcd
        .ancestors()
        .take_while(|d| d.parent().is_some())
        .collect();
    let file_name = |d: &Path| d.file_name().map(|n| n.to_string_lossy().into_owned());
    let pci = dirs
        .iter()
        .find(|d| file_name(d).is_some_and(|n| is_pci_function(&n)));
    let pci_id = |d: &Path| {
        (
            root.read_attr(d.join("vendor")).unwrap_or_default(),
            root.read_attr(d.join("device")).unwrap_or_default(),
        )
    };
    let rp1 = dirs.iter().find_map(|d| {
        let n = file_name(d)?;
        RP1_CONTROLLERS.iter().find(|(dev, _)| *dev == n)
    });
    let name = if let Some((_, node)) = rp1 {
        format!("RP1 USB controller {node}")
    } else if let Some(p) = pci {
        let (v, d) = pci_id(p);
        match PCI_CONTROLLERS
            .iter()
            .find(|(pv, pd, _)| *pv == v && *pd == d)
        {
            Some((_, _, model)) => model.to_string(),
            None if v.is_empty() => format!("PCI controller {}", file_name(p).unwrap_or_default()),
            None => format!(
                "PCI controller {}:{}",
                v.trim_start_matches("0x"),
                d.trim_start_matches("0x")
            ),
        }
    } else {
        file_name(hcd).unwrap_or_default()
    };
    // An RP1 controller is never a PCI function of its own: the one above it is the RP1.
    let pci_address = pci
        .filter(|p| rp1.is_none() || pci_id(p) == (RP1_PCI_ID.0.into(), RP1_PCI_ID.1.into()))
        .and_then(|p| file_name(p));
    UsbController {
        sysfs_path: hcd.to_path_buf(),
        name,
        pci_address,
    }
}

impl UsbInfo {
    /// `VID:PID` in lowercase hex, when both are known.
    pub fn vid_pid(&self) -> Option<String> {
        Some(format!(
            "{}:{}",
            self.vendor_id.as_deref()?,
            self.product_id.as_deref()?
        ))
    }

    /// True when both disks hang off the same host controller (not merely the same bus number:
    /// each xHCI has a USB 2 and a USB 3 root hub, each with its own bus number).
    pub fn same_controller(&self, other: &UsbInfo) -> bool {
        match (&self.controller, &other.controller) {
            (Some(a), Some(b)) => a.sysfs_path == b.sysfs_path,
            _ => false,
        }
    }

    /// Where the disk is plugged in, for a person: the port, the controller, and on a
    /// controller with one USB 3 port (the Pi 5's RP1) which port that is.
    pub fn attachment(&self) -> String {
        let mut s = format!("port {}", self.port_path);
        if let Some(c) = &self.controller {
            s.push_str(&format!(" on {}", c.name));
            let root_ss = self
                .hubs
                .last()
                .and_then(|h| h.speed)
                .is_some_and(LinkSpeed::is_superspeed);
            if c.name.starts_with("RP1 ") {
                s.push_str(if root_ss {
                    " (its USB3 port)"
                } else {
                    " (its USB 2 bus)"
                });
            }
            if let Some(p) = &c.pci_address {
                s.push_str(&format!(", PCIe {p}"));
            }
        }
        s
    }

    /// True when the device says it supports USB 3 (bcdUSB ≥ 3.00) or speaks UAS (a USB 3 feature
    /// in practice), even if the link it got is slower.
    pub fn usb3_capable(&self) -> bool {
        let v3 = self
            .usb_version
            .as_deref()
            .and_then(|v| v.split('.').next())
            .and_then(|m| m.trim().parse::<u32>().ok())
            .is_some_and(|m| m >= 3);
        v3 || self.driver.as_deref() == Some("uas")
            || self.interface_protocol.as_deref() == Some("62")
    }
}

fn is_usb_device(root: &SysRoot, dir: &Path) -> bool {
    root.exists(dir.join("idVendor")) && root.exists(dir.join("speed"))
}

/// Walks up from a block device's sysfs directory (`/sys/devices/…/block/sda`, a target-system
/// path) to its USB device. Returns `None` if the device is not on USB.
pub fn usb_info(root: &SysRoot, block_dir: &Path) -> Option<UsbInfo> {
    let mut child: Option<PathBuf> = None;
    let mut dir = block_dir.to_path_buf();
    let (dev_dir, iface) = loop {
        if is_usb_device(root, &dir) {
            break (dir, child);
        }
        let parent = dir.parent()?.to_path_buf();
        if parent == Path::new("/sys/devices") || parent == Path::new("/") {
            return None;
        }
        child = Some(dir);
        dir = parent;
    };
    let attr = |name: &str| root.read_attr(dev_dir.join(name));
    let mut info = UsbInfo {
        port_path: dev_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        device_speed: attr("speed").and_then(|s| LinkSpeed::parse(&s)),
        usb_version: attr("version"),
        vendor_id: attr("idVendor").map(|s| s.to_lowercase()),
        product_id: attr("idProduct").map(|s| s.to_lowercase()),
        serial: attr("serial"),
        manufacturer: attr("manufacturer"),
        product: attr("product"),
        busnum: attr("busnum").and_then(|s| s.parse().ok()),
        devnum: attr("devnum").and_then(|s| s.parse().ok()),
        ..UsbInfo::default()
    };
    if let Some(iface) = iface {
        info.driver = root.link_name(iface.join("driver"));
        info.interface_protocol = root.read_attr(iface.join("bInterfaceProtocol"));
    }
    // Every hub above bounds the link; the root hub's parent is the host controller.
    let mut up = dev_dir.parent().map(Path::to_path_buf);
    while let Some(d) = up {
        if d == Path::new("/sys/devices") || d == Path::new("/") {
            break;
        }
        if is_usb_device(root, &d) {
            if let Some(hcd) = d.parent() {
                info.controller = Some(controller_of(root, hcd));
            }
            info.hubs.push(UsbHop {
                name: d
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                speed: root
                    .read_attr(d.join("speed"))
                    .and_then(|s| LinkSpeed::parse(&s)),
                product: root.read_attr(d.join("product")),
            });
        }
        up = d.parent().map(Path::to_path_buf);
    }
    info.link_speed = std::iter::once(info.device_speed)
        .chain(info.hubs.iter().map(|h| h.speed))
        .flatten()
        .fold(None, |m: Option<LinkSpeed>, s| match m {
            Some(m) if m.0 <= s.0 => Some(m),
            _ => Some(s),
        });
    // A device speed that could not be read makes the effective speed unknown, not the hub's.
    if info.device_speed.is_none() {
        info.link_speed = None;
    }
    Some(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_parse_and_display() {
        assert_eq!(LinkSpeed::parse("5000"), Some(LinkSpeed(5000.0)));
        assert_eq!(LinkSpeed::parse("1.5"), Some(LinkSpeed(1.5)));
        assert_eq!(LinkSpeed::parse("fast"), None);
        assert_eq!(LinkSpeed::parse("-1"), None);
        assert_eq!(LinkSpeed(5000.0).to_string(), "5 Gb/s");
        assert_eq!(LinkSpeed(480.0).to_string(), "480 Mb/s");
        assert!(!LinkSpeed(480.0).is_superspeed());
        assert_eq!(LinkSpeed(10000.0).name(), "SuperSpeed+ 10 Gb/s");
    }

    #[test]
    fn usb3_capability_from_version_or_uas() {
        let mut u = UsbInfo {
            usb_version: Some("3.20".into()),
            ..UsbInfo::default()
        };
        assert!(u.usb3_capable());
        u.usb_version = Some(" 2.10".into());
        assert!(!u.usb3_capable());
        u.driver = Some("uas".into());
        assert!(u.usb3_capable());
    }
}
