//! The validity verdict (issue 38) on real figures: a real fileio run on real files, judged as
//! if it had crossed the links of the discovery fixtures (sysfs trees of real Pis); the verdict
//! a bundle carries is the one `report show` prints.

mod common;

use common::fixture_root;
use spindle::disk::{scan, Disk};
use spindle::model::load::{parse, single_test_run};
use spindle::model::{BenchResult, Colour, TargetKind};
use spindle::report::validity::of_result;
use std::path::Path;
use std::process::Command;

fn fileio(dir: &Path, args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_spindle"))
        .arg("fileio")
        .arg(format!("--dir={}", dir.display()))
        .args(["--file-num=2", "--file-total-size=32M"])
        .args(args)
        .output()
        .expect("run spindle");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// Sequential reads of a 32 MiB set just written: the page cache serves them, far faster
/// than a USB 2.0 link can carry (60 MB/s at all).
fn cached_seqrd() -> BenchResult {
    let d = tempfile::tempdir().unwrap();
    fileio(d.path(), &["prepare"]);
    let out = fileio(
        d.path(),
        &["--file-test-mode=seqrd", "--time=2", "--format=json", "run"],
    );
    BenchResult::from_json(&out, "stdout").unwrap()
}

fn fixture_disk(fixture: &str, name: &str) -> Disk {
    scan(&fixture_root(fixture), false)
        .unwrap()
        .into_iter()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("{fixture} has no {name}"))
}

#[test]
fn a_figure_above_what_the_fixture_disks_link_can_carry_is_red_with_the_numbers() {
    let r = cached_seqrd();
    let spindle::engine::Counters::Fileio(c) = &r.counters else {
        panic!("fileio counters expected")
    };
    let read = c.read_mib_per_s;
    assert!(
        read > 57.3,
        "a cached read of {read} MiB/s: too slow to judge"
    );
    // The Pi 4's USB 3 disk in a black (USB 2.0) port: its link negotiated 480 Mb/s.
    let disk = fixture_disk("pi4-usb2-port", "sda");
    assert_eq!(
        disk.usb.as_ref().unwrap().link_speed.map(|s| s.0),
        Some(480.0)
    );
    let mut s = single_test_run(r, "cached");
    s.targets[0].kind = TargetKind::Disk;
    s.targets[0].disk = Some(disk);
    let t = &s.targets[0];
    let v = of_result(&s, t, &t.phases[0]).expect("a verdict for a result");
    assert_eq!(v.verdict, Colour::Red, "{}", v.line());
    let link = v
        .reasons
        .iter()
        .find(|r| r.rule == "link_ceiling")
        .unwrap_or_else(|| panic!("no link_ceiling reason: {}", v.line()));
    assert_eq!(link.colour, Colour::Red);
    assert!(
        link.text.contains("faster than the link") && link.text.contains("57.2"),
        "{}",
        link.text
    );
    // The same figure read back from a document: the same verdict.
    let doc = serde_json::to_string(&s).unwrap();
    let back = parse(&doc, "cached.json").unwrap();
    let t = &back.targets[0];
    assert_eq!(of_result(&back, t, &t.phases[0]), Some(v));
}
