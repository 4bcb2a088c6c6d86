//! What the help texts, README and the profiles say agrees with what the program does: the
//! bundle directory's name, the suite's description, each profile's time per disk (README, the
//! profile's own description and comment, and `suite --dry-run`'s estimate), and `--dry-run`
//! showing the targets and their verdicts.

mod common;

use spindle::config::profile::SuiteProfile;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

/// `~N min per disk` in `text`, if it says so.
fn minutes_per_disk(text: &str) -> Option<u64> {
    let i = text.find(" min per disk")?;
    let head = &text[..i];
    let digits: String = head
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.chars().rev().collect::<String>().parse().ok()
}

#[test]
fn help_names_the_bundle_directory_and_the_whole_suite() {
    let help = common::assert_ok(&common::spindle(&["suite", "--help"]));
    assert!(
        help.contains("./spindle-results/<YYYYmmdd-HHMMSS>-<host>/"),
        "{help}"
    );
    // … which is what a run is called.
    let id = spindle::model::run_id("pi", 1_767_225_600);
    assert_eq!(id, "20260101-000000-pi");
    let top = common::assert_ok(&common::spindle(&["--help"]));
    let about = top.split("Usage:").next().unwrap();
    assert!(about.contains("TPC-C"), "{about}");
    let suite_line = top
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("suite"))
        .take(2)
        .collect::<String>();
    assert!(suite_line.contains("TPC-C"), "{suite_line}");
    assert!(
        help.contains("verdict"),
        "--dry-run says what it shows: {help}"
    );
}

#[test]
fn readme_profiles_and_dry_run_agree_on_the_time_per_disk() {
    let readme = readme();
    for name in ["check", "quick", "standard", "reference"] {
        let p = SuiteProfile::load(name).unwrap();
        let row = readme
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}` |")))
            .unwrap_or_else(|| panic!("README has no row for {name}"));
        let Some(said) = minutes_per_disk(&p.record.description) else {
            assert_eq!(
                minutes_per_disk(row),
                None,
                "{name}: README says a time the profile does not"
            );
            continue;
        };
        assert_eq!(
            minutes_per_disk(row),
            Some(said),
            "{name}: README row {row}"
        );
        let comment = std::fs::read_to_string(format!(
            "{}/config/profiles/{name}.toml",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert!(
            comment.contains(&format!("About {said} minutes per disk")),
            "{name}.toml's comment"
        );
        let phases = spindle::run::plan::phases(&p);
        let estimate: u64 = phases
            .iter()
            .map(|ph| spindle::run::plan::estimate_s(ph, &p))
            .sum::<u64>()
            .div_ceil(60);
        assert!(
            estimate.abs_diff(said) * 5 <= said,
            "{name}: the profile says ~{said} min, its phases add up to ~{estimate} min"
        );
    }
}

#[test]
fn dry_run_shows_the_targets_with_their_verdicts_and_the_disks_left_out() {
    let root = common::fixture("pi4-hub");
    let out = common::assert_ok(&common::spindle(&[
        "suite",
        "--profile",
        "standard",
        "--dry-run",
        "--sysroot",
        root.to_str().unwrap(),
    ]));
    let targets = out
        .split("\nTargets:\n")
        .nth(1)
        .and_then(|t| t.split("\n\n").next())
        .unwrap_or_else(|| panic!("no Targets section: {out}"));
    assert!(
        targets.contains("/dev/sda (usb-KINGSTON_SA400S37240G_DD56419883B1-0:0")
            && targets.contains("blank: would be erased (GPT, one ext4 partition"),
        "{targets}"
    );
    assert!(
        out.contains("\nLeft out:\n")
            && out.contains("/dev/sdb (usb-WD_Elements")
            && out.contains("holds data"),
        "{out}"
    );
    assert!(out.contains("Phases per target (98; about 57 min"), "{out}");
    assert!(
        out.contains("  sets with a repeat of their own, in rounds: fileio2 5 times, fileio3 5 times, fileio6 5 times, fileio7 5 times\n"),
        "CrystalDiskMark's 5 loops: {out}"
    );
    assert!(
        out.contains("Then on every disk at once, with two targets or more ([together]; about 2 min in all):\n  together-fileio6-prepare ")
            && out.contains("  together-fileio3-rndwr-4KiB-qd32-t1 ~20 s\n"),
        "{out}"
    );
    assert!(!out.contains("Erase {"), "no debug output: {out}");

    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let out = common::assert_ok(&common::spindle(&[
        "suite",
        "--target",
        dir,
        "--profile",
        "check",
        "--dry-run",
    ]));
    assert!(
        out.contains(&format!(
            "{dir}: a directory, used as it is (no disk preparation)"
        )),
        "{out}"
    );
    assert!(out.contains("tpcc-prepare"), "{out}");
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "nothing touched"
    );
}
