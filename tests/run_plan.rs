//! The run pipeline's target selection is one for the CLI and the daemon: `spindle suite
//! --disk NAME` and `[appliance] disks = [NAME]` plan the same targets on the same machine (a
//! fixture tree; nothing is touched), and only the CLI accepts kernel names.

mod common;

use clap::Parser;
use spindle::appliance::launch::target_source;
use spindle::cli::{Cli, Command};
use spindle::config::appliance::ApplianceSettings;
use spindle::config::profile::SuiteProfile;
use spindle::run::assemble::plan;
use spindle::run::targets::{DiskPlan, TargetSource};
use spindle::run::RunRequest;
use spindle::sys::runner::Recording;
use spindle::sys::{CommandRunner, System};
use std::sync::Arc;
use std::time::Duration;

fn request(source: TargetSource, settings: &ApplianceSettings) -> RunRequest {
    RunRequest {
        run_id: "r".into(),
        out_dir: "/nonexistent/out".into(),
        work_dir: "/nonexistent/work".into(),
        profile: SuiteProfile::load("quick").unwrap(),
        source,
        policy: settings.config.disks.clone(),
        stick_disk: None,
        servers: vec![Default::default()],
        sample_interval: Duration::from_secs(5),
    }
}

fn cli_source(names: &[&str]) -> TargetSource {
    let mut argv = vec!["spindle", "suite"];
    for n in names {
        argv.extend(["--disk", n]);
    }
    match Cli::try_parse_from(argv).unwrap().command {
        Command::Suite(a) => spindle::cmd::suite::source(&a).unwrap(),
        other => panic!("{other:?}"),
    }
}

fn daemon_source(settings: &mut ApplianceSettings, names: &[&str]) -> TargetSource {
    settings.appliance.disks = names.iter().map(|n| n.to_string()).collect();
    target_source(settings)
}

fn summary(p: &DiskPlan) -> (Vec<String>, Vec<String>, Vec<String>) {
    (
        p.planned
            .iter()
            .map(|(d, prep)| format!("{} {prep:?}", d.name))
            .collect(),
        p.skipped
            .iter()
            .map(|s| format!("{} {}", s.device, s.reason))
            .collect(),
        p.missing.clone(),
    )
}

#[test]
fn suite_disk_and_appliance_disks_plan_the_same_targets() {
    let fake = Arc::new(Recording::new());
    let sys = System::new(
        common::fixture_root("pi4-hub"),
        CommandRunner::with_exec(fake.clone()),
    );
    let mut settings = ApplianceSettings::default();
    let names = [
        "usb-KINGSTON_SA400S37240G_DD56419883B1-0:0", // blank: erased
        "WX11A1234567",                               // holds data: skipped
    ];
    let cli = plan(&request(cli_source(&names), &settings), &sys).unwrap();
    let daemon = plan(
        &request(daemon_source(&mut settings, &names), &settings),
        &sys,
    )
    .unwrap();
    assert_eq!(summary(&cli), summary(&daemon));
    let (planned, skipped, missing) = summary(&cli);
    assert_eq!(planned.len(), 1, "{planned:?}");
    assert!(planned[0].starts_with("sda Erase"), "{planned:?}");
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(skipped[0].contains("holds data"), "{skipped:?}");
    assert!(missing.is_empty());
    assert!(fake.calls().is_empty(), "planning runs no command");

    // Kernel names: the interactive CLI's explicit choice; the daemon refuses them.
    let cli = plan(&request(cli_source(&["sda", "/dev/sdb"]), &settings), &sys).unwrap();
    assert_eq!(cli.planned.len(), 1);
    assert_eq!(cli.skipped.len(), 1);
    let daemon = plan(
        &request(daemon_source(&mut settings, &["sda"]), &settings),
        &sys,
    )
    .unwrap();
    assert!(daemon.planned.is_empty());
    assert_eq!(daemon.missing, ["sda"]);
}

#[test]
fn every_eligible_disk_when_none_is_named() {
    let sys = System::new(
        common::fixture_root("pi4-hub"),
        CommandRunner::with_exec(Arc::new(Recording::new())),
    );
    let mut settings = ApplianceSettings::default();
    let cli = plan(&request(cli_source(&[]), &settings), &sys).unwrap();
    let daemon = plan(&request(daemon_source(&mut settings, &[]), &settings), &sys).unwrap();
    assert_eq!(summary(&cli), summary(&daemon));
    // the boot SD card is never a candidate worth listing as eligible
    assert!(cli
        .planned
        .iter()
        .all(|(d, _)| !d.name.starts_with("mmcblk")));
}
