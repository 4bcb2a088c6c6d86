//! `spindle disks`: every block device with its facts and the verdict (eligible, or excluded
//! and why), as a table or JSON.

use crate::cli::DisksArgs;
use crate::disk::bridges::{read_quirks, BridgeTable};
use crate::disk::{render, scan, DiskPolicy, DiskReport};

pub fn run(args: DisksArgs) -> anyhow::Result<i32> {
    let root = crate::sys::SysRoot::new(&args.sysroot);
    let policy = DiskPolicy::default();
    let quirks = read_quirks(&root);
    let reports: Vec<DiskReport> = scan(&root, args.all)?
        .into_iter()
        .map(|d| DiskReport::new(d, &policy).with_usb_facts(&quirks, BridgeTable::builtin()))
        .collect();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    } else {
        print!("{}", render::render_table(&reports));
    }
    Ok(0)
}
