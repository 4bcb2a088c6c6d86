//! fileio on a block device: `test_file.N` a symbolic link to a loop device, as sysbench users
//! point fileio at a raw device. Needs root (loop devices): without it every test fails saying
//! so (it never silently passes).
//!
//! Run: `sudo -E cargo test --test fileio_device` (needs util-linux, e2fsprogs).

mod common;

use common::{sh, LoopDevice};
use spindle::engine::{Controller, Counters, Silent};
use spindle::fileio::{self, FileioConfig, Fill, IoMode, TestMode};
use spindle::model::{BenchResult, TestOptions};
use std::path::Path;
use std::process::Command;

fn require_root() {
    common::require_root(
        "tests/fileio_device.rs",
        &[
            ("losetup", "mount"),
            ("mkfs.ext4", "e2fsprogs"),
            ("sha256sum", "coreutils"),
        ],
    );
}

/// A directory whose `test_file.0` links to `dev`.
fn linked(dev: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(dev, d.path().join("test_file.0")).unwrap();
    d
}

fn cfg(dir: &Path, mode: TestMode, io: IoMode) -> FileioConfig {
    FileioConfig {
        dir: dir.to_path_buf(),
        file_num: 1,
        total_size: 32 << 20,
        block_size: 4096,
        test_mode: Some(mode),
        io_mode: io,
        async_backlog: 8,
        events: 3000,
        time_limit: None,
        rand_seed: 11,
        ..Default::default()
    }
}

/// (reads, writes, fsyncs) of a run.
fn counts(cfg: &FileioConfig) -> (u64, u64, u64) {
    let m = fileio::run(cfg, &Controller::new(), &Silent).expect("fileio run");
    assert_eq!(m.error, None);
    match &BenchResult::new(TestOptions::Fileio(cfg.clone()), m).counters {
        Counters::Fileio(c) => (c.reads, c.writes, c.fsyncs),
        other => panic!("not a fileio result: {other:?}"),
    }
}

fn cli(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_spindle"))
        .arg("fileio")
        .arg(format!("--dir={}", dir.display()))
        .arg("--file-num=1")
        .args(args)
        .args(
            ["--file-total-size=32M"]
                .iter()
                .filter(|_| !args.iter().any(|a| a.starts_with("--file-total-size"))),
        )
        .output()
        .expect("run spindle")
}

#[test]
fn a_blank_loop_device_is_read_and_written_and_counts_as_files_do() {
    require_root();
    let images = tempfile::tempdir().unwrap();
    let disk = LoopDevice::new(images.path(), "blank", 64);
    let before = disk.sha256();
    let d = linked(disk.dev());

    // prepare uses the device as it is: nothing written, nothing created.
    let out = common::assert_ok(&cli(d.path(), &["prepare"]));
    assert!(out.contains("Using block device test_file.0"), "{out}");
    assert_eq!(disk.sha256(), before, "prepare wrote to the device");

    // The same runs on prepared files, for the counts to compare with.
    let files = tempfile::tempdir().unwrap();
    let on_files = |mode, io| {
        let c = cfg(files.path(), mode, io);
        fileio::prepare(&c, &Controller::new(), &Silent).unwrap();
        counts(&c)
    };
    for (mode, io) in [
        (TestMode::Rndrd, IoMode::Async),
        (TestMode::Rndrd, IoMode::Sync),
        (TestMode::Seqrd, IoMode::Async),
    ] {
        let got = counts(&cfg(d.path(), mode, io));
        assert_eq!(got, on_files(mode, io), "{mode:?} {io:?}");
        assert_eq!(got.0, 3000);
        assert_eq!(disk.sha256(), before, "a read run wrote to the device");
    }
    // Fresh random bytes in every write, so the device shows it was written.
    let on_files = |mode, io| {
        let c = FileioConfig {
            fill: Fill::Random,
            ..cfg(files.path(), mode, io)
        };
        fileio::prepare(&c, &Controller::new(), &Silent).unwrap();
        counts(&c)
    };
    for (mode, io) in [
        (TestMode::Rndwr, IoMode::Async),
        (TestMode::Rndwr, IoMode::Sync),
        (TestMode::Seqwr, IoMode::Sync),
    ] {
        let c = FileioConfig {
            fill: Fill::Random,
            ..cfg(d.path(), mode, io)
        };
        let got = counts(&c);
        assert_eq!(got, on_files(mode, io), "{mode:?} {io:?}");
        assert!(got.1 > 2900, "{mode:?}: {got:?}");
    }
    assert_ne!(disk.sha256(), before, "the write runs wrote nothing");
    assert_eq!(
        std::fs::metadata(disk.dev()).unwrap().len(),
        0,
        "still a device node"
    );

    // With O_DIRECT through the CLI, as the benchmark script runs it.
    let out = common::assert_ok(&cli(
        d.path(),
        &[
            "--file-test-mode=rndwr",
            "--file-io-mode=async",
            "--file-extra-flags=direct",
            "--file-fsync-freq=0",
            "--time=0",
            "--events=2000",
            "run",
        ],
    ));
    assert!(
        out.contains("total number of events:              2000"),
        "{out}"
    );

    // cleanup leaves the device (and the link to it) in place.
    let out = common::assert_ok(&cli(d.path(), &["cleanup"]));
    assert!(out.contains("Leaving block device test_file.0"), "{out}");
    assert!(d.path().join("test_file.0").exists());
    assert!(Path::new(disk.dev()).exists());
}

#[test]
fn a_loop_device_holding_ext4_is_read_but_never_written() {
    require_root();
    let images = tempfile::tempdir().unwrap();
    let disk = LoopDevice::new(images.path(), "ext4", 64);
    sh("mkfs.ext4", &["-q", "-F", disk.dev()]);
    let before = disk.sha256();
    let d = linked(disk.dev());

    for mode in ["rndwr", "seqwr", "rndrw", "seqrewr"] {
        let err = common::assert_fails(&cli(
            d.path(),
            &[&format!("--file-test-mode={mode}"), "--events=100", "run"],
        ));
        assert!(
            err.contains(&format!("is the block device {}", disk.dev()))
                && err.contains("which holds ext4")
                && err.contains("wipefs -a"),
            "{mode}: {err}"
        );
    }
    // Reads are harmless: they run, and change nothing.
    common::assert_ok(&cli(
        d.path(),
        &["--file-test-mode=rndrd", "--events=500", "run"],
    ));
    assert_eq!(
        disk.sha256(),
        before,
        "spindle changed a device holding ext4"
    );

    // A link to a device that is not there: prepare creates nothing in its place.
    let gone = tempfile::tempdir().unwrap();
    let target = gone.path().join("loop-gone");
    std::os::unix::fs::symlink(&target, gone.path().join("test_file.0")).unwrap();
    let err = common::assert_fails(&cli(gone.path(), &["prepare"]));
    assert!(err.contains("which does not exist"), "{err}");
    let err = common::assert_fails(&cli(gone.path(), &["--file-test-mode=seqwr", "run"]));
    assert!(err.contains("which does not exist"), "{err}");
    assert!(
        !target.exists(),
        "prepare or seqwr created the link's target"
    );

    // A device smaller than the run addresses is named, with the fix.
    let err = common::assert_fails(&cli(
        d.path(),
        &["--file-total-size=1G", "--file-test-mode=rndrd", "run"],
    ));
    assert!(
        err.contains("is the block device") && err.contains("lower the total size"),
        "{err}"
    );
}
