//! fileio integration tests: real files in temporary directories, the real binary for the CLI
//! and report text, the engine in-process for semantics (counts from the result document).

mod common;

use common::{assert_fails as err, assert_ok as ok};
use spindle::engine::{Controller, Silent};
use spindle::engine::{Counters, FileioCounters};
use spindle::fileio::{self, Compat, FileioConfig, Fill, IoMode, TestMode};
use spindle::model::{BenchResult, TestOptions};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn spindle(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_spindle"))
        .arg("fileio")
        .arg(format!("--dir={}", dir.display()))
        .args(args)
        .output()
        .expect("run spindle")
}

fn small(dir: &Path, mode: TestMode) -> FileioConfig {
    FileioConfig {
        dir: dir.to_path_buf(),
        file_num: 16,
        total_size: 16 << 20,
        test_mode: Some(mode),
        rand_seed: 7,
        ..Default::default()
    }
}

fn counters(r: &BenchResult) -> &FileioCounters {
    match &r.counters {
        Counters::Fileio(c) => c,
        other => panic!("not a fileio result: {other:?}"),
    }
}

fn run(cfg: &FileioConfig) -> BenchResult {
    let m = fileio::run(cfg, &Controller::new(), &Silent).expect("fileio run");
    assert_eq!(m.error, None);
    BenchResult::new(TestOptions::Fileio(cfg.clone()), m)
}

fn prepare(cfg: &FileioConfig) {
    fileio::prepare(cfg, &Controller::new(), &Silent).expect("prepare");
}

/// The labels of a sysbench-style report: the text before ':' on each "label: value" line.
fn labels(report: &str) -> Vec<String> {
    let start = report
        .find("File operations:")
        .expect("report has File operations");
    report[start..]
        .lines()
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.trim_end().to_string()))
        .collect()
}

#[test]
fn acceptance_every_mode_at_1_and_8_threads_with_sysbench_labels() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let base = ["--file-num=16", "--file-total-size=256M"];
    let out = ok(&spindle(dir, &[base[0], base[1], "prepare"]));
    assert!(out.contains("16 files, 16384Kb each, 256Mb total"), "{out}");
    assert_eq!(
        std::fs::metadata(dir.join("test_file.15")).unwrap().len(),
        16 << 20
    );

    // sysbench, when installed, gives the reference labels for the same file set.
    let reference = Command::new("sysbench")
        .current_dir(dir)
        .args([
            "fileio",
            base[0],
            base[1],
            "--file-test-mode=rndrw",
            "--time=1",
            "run",
        ])
        .output()
        .expect("sysbench must be installed for this test: apt-get install sysbench");
    assert!(
        reference.status.success(),
        "{}",
        String::from_utf8_lossy(&reference.stderr)
    );
    let want = labels(&String::from_utf8_lossy(&reference.stdout));
    assert!(
        want.iter().any(|l| l.trim() == "95th percentile"),
        "{want:?}"
    );

    for mode in ["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"] {
        for threads in ["1", "8"] {
            let out = ok(&spindle(
                dir,
                &[
                    base[0],
                    base[1],
                    &format!("--file-test-mode={mode}"),
                    &format!("--threads={threads}"),
                    "--time=1",
                    "run",
                ],
            ));
            assert_eq!(
                labels(&out),
                want,
                "labels differ for {mode} at {threads} threads:\n{out}"
            );
            assert!(out.contains(&format!("Number of threads: {threads}")));
        }
        if mode == "seqwr" {
            // seqwr creates (truncates) the files in the run; give the next modes full files.
            ok(&spindle(dir, &[base[0], base[1], "prepare"]));
        }
    }
    let out = ok(&spindle(dir, &[base[0], base[1], "cleanup"]));
    assert!(out.contains("Removing test files..."));
    assert_eq!(
        std::fs::read_dir(dir).unwrap().count(),
        0,
        "cleanup leaves nothing behind"
    );
}

#[test]
fn periodic_fsync_touches_every_file_every_100_requests() {
    let d = tempfile::tempdir().unwrap();
    let mut cfg = small(d.path(), TestMode::Rndwr);
    prepare(&cfg);
    cfg.fsync_end = false;
    cfg.time_limit = None;
    cfg.events = 1000 + 9 * 16; // 1000 writes and the 9 rounds that fall inside them
    let r = run(&cfg);
    let c = counters(&r);
    assert_eq!(c.writes, 1000);
    assert_eq!(c.fsyncs, 9 * 16);
    assert_eq!(r.events, 1000 + 9 * 16, "periodic fsyncs are events");

    // Time-limited, 8 threads: fsyncs per 100 requests equal --file-num (±1 round).
    cfg.threads = 8;
    cfg.events = 0;
    cfg.time_limit = Some(Duration::from_secs(1));
    let r = run(&cfg);
    let c = counters(&r);
    let expected = (c.reads + c.writes) / 100 * 16;
    assert!(
        c.fsyncs.abs_diff(expected) <= 16,
        "fsyncs {} vs expected {expected}",
        c.fsyncs
    );

    // End-of-test: every thread fsyncs every file (counted, not events).
    cfg.fsync_end = true;
    cfg.fsync_freq = 0;
    cfg.time_limit = None;
    cfg.events = 50;
    let r = run(&cfg);
    assert_eq!(counters(&r).fsyncs, 8 * 16);
    assert_eq!(r.events, 50);
}

#[test]
fn rndrw_ratio_seqrd_no_fsync_and_fsync_all() {
    let d = tempfile::tempdir().unwrap();
    let mut cfg = small(d.path(), TestMode::Rndrw);
    prepare(&cfg);
    cfg.time_limit = None;
    cfg.events = 5000;
    let r = run(&cfg);
    let c = counters(&r);
    let ratio = c.reads as f64 / c.writes as f64;
    assert!((ratio - 1.5).abs() < 0.01, "read:write {ratio}");
    cfg.threads = 4;
    cfg.events = 0;
    cfg.time_limit = Some(Duration::from_secs(1));
    let c = counters(&run(&cfg)).clone();
    let ratio = c.reads as f64 / c.writes as f64;
    assert!(
        (ratio - 1.5).abs() < 0.05,
        "read:write at 4 threads {ratio}"
    );

    let mut seq = small(d.path(), TestMode::Seqrd);
    seq.time_limit = Some(Duration::from_millis(500));
    seq.threads = 2;
    let c = counters(&run(&seq)).clone();
    assert!(c.reads > 0);
    assert_eq!((c.writes, c.fsyncs), (0, 0), "seqrd never writes or fsyncs");

    let mut rd = small(d.path(), TestMode::Rndrd);
    rd.time_limit = Some(Duration::from_millis(500));
    assert_eq!(counters(&run(&rd)).fsyncs, 0, "rndrd never fsyncs");

    let mut all = small(d.path(), TestMode::Rndwr);
    all.fsync_all = true;
    all.fsync_freq = 0;
    all.fsync_end = false;
    all.time_limit = None;
    all.events = 300;
    let r = run(&all);
    assert_eq!(counters(&r).fsyncs, 300, "one fsync per write");
    assert_eq!(r.events, 300, "the fsync is part of the write event");
}

#[test]
fn sequential_modes_wrap_in_1_0_and_seqwr_creates_files_in_run() {
    let d = tempfile::tempdir().unwrap();
    let mut cfg = small(d.path(), TestMode::Seqwr);
    cfg.time_limit = None;
    cfg.events = 16 * 64 + 100; // one full pass (16 files × 64 blocks) and then some
    cfg.fsync_freq = 0;
    let r = run(&cfg);
    assert_eq!(counters(&r).writes, 16 * 64 + 100);
    for i in 0..16 {
        assert_eq!(
            std::fs::metadata(cfg.file_path(i)).unwrap().len(),
            1 << 20,
            "seqwr created test_file.{i}"
        );
    }
    let mut rd = small(d.path(), TestMode::Seqrd);
    rd.time_limit = None;
    rd.events = 3 * 16 * 64;
    rd.merged_requests = 2;
    let c = counters(&run(&rd)).clone();
    assert_eq!(c.reads, 3 * 16 * 64, "wraps around three times");
    assert_eq!(
        c.bytes_read,
        3 * 16 * 64 * 32768,
        "merged requests are 2 blocks"
    );
}

#[test]
fn validate_detects_a_corrupted_block() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let opts = ["--file-num=4", "--file-total-size=4M", "--validate"];
    ok(&spindle(dir, &[opts[0], opts[1], opts[2], "prepare"]));
    let out = spindle(
        dir,
        &[
            opts[0],
            opts[1],
            opts[2],
            "--file-test-mode=rndrw",
            "--time=1",
            "--format=json",
            "run",
        ],
    );
    let r = BenchResult::from_json(&ok(&out), "stdout").unwrap();
    assert!(counters(&r).validated_blocks > 0);

    // Flip one byte in the middle of block 10 of test_file.2.
    let p = dir.join("test_file.2");
    let mut bytes = std::fs::read(&p).unwrap();
    bytes[10 * 16384 + 100] ^= 0x5A;
    std::fs::write(&p, &bytes).unwrap();
    let out = spindle(
        dir,
        &[
            opts[0],
            opts[1],
            opts[2],
            "--file-test-mode=seqrd",
            "--time=5",
            "run",
        ],
    );
    let e = err(&out);
    assert!(
        e.contains("Checksum mismatch") && e.contains("test_file.2"),
        "{e}"
    );
    assert!(e.contains(&format!("offset {}", 10 * 16384)), "{e}");

    // Writing without --validate zeroes blocks: a later --validate run is refused up front.
    ok(&spindle(
        dir,
        &[
            opts[0],
            opts[1],
            "--file-test-mode=rndwr",
            "--events=10",
            "run",
        ],
    ));
    let e = err(&spindle(
        dir,
        &[opts[0], opts[1], opts[2], "--file-test-mode=rndrd", "run"],
    ));
    assert!(e.contains("--validate needs checksummed files"), "{e}");
}

#[test]
fn prepare_reuses_full_files_and_extends_short_ones() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let a = ["--file-num=4", "--file-total-size=8M"];
    ok(&spindle(dir, &[a[0], a[1], "prepare"]));
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(dir.join("test_file.0")).unwrap().ino();
    let mtime = std::fs::metadata(dir.join("test_file.0"))
        .unwrap()
        .mtime_nsec();
    std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("test_file.3"))
        .unwrap()
        .set_len(100_000)
        .unwrap();
    let out = ok(&spindle(dir, &[a[0], a[1], "prepare"]));
    assert!(out.contains("Reusing existing file test_file.0"), "{out}");
    assert!(out.contains("Extending existing file test_file.3"), "{out}");
    let meta = std::fs::metadata(dir.join("test_file.0")).unwrap();
    assert_eq!(
        (meta.ino(), meta.mtime_nsec()),
        (ino, mtime),
        "a full file is not rewritten"
    );
    assert_eq!(
        std::fs::metadata(dir.join("test_file.3")).unwrap().len(),
        2 << 20
    );
    let out = ok(&spindle(dir, &[a[0], a[1], "prepare"]));
    assert!(out.contains("No bytes written."), "{out}");
}

#[test]
fn compat_0_4_stops_at_10000_requests_with_0_4_report() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let a = ["--file-num=16", "--file-total-size=16M", "--compat=0.4"];
    ok(&spindle(dir, &[a[0], a[1], "prepare"]));
    let out = ok(&spindle(
        dir,
        &[a[0], a[1], a[2], "--file-test-mode=rndrw", "run"],
    ));
    // 99 periodic rounds + the final round, 16 files each: 1600 Other.
    assert!(
        out.contains("Operations performed:  6000 Read, 4000 Write, 1600 Other = 11600 Total"),
        "{out}"
    );
    assert!(
        out.contains("total number of events:              10000"),
        "{out}"
    );
    assert!(out.contains("Requests/sec executed"));
    assert!(out.contains("approx.  95 percentile:"), "{out}");
    assert!(out.contains("Number of random requests for random IO: 10000"));

    // Sequential modes make one pass and stop.
    let out = ok(&spindle(
        dir,
        &[a[0], a[1], a[2], "--file-test-mode=seqrd", "run"],
    ));
    assert!(
        out.contains("Operations performed:  1024 Read, 0 Write, 0 Other = 1024 Total"),
        "{out}"
    );

    let mut cfg = small(dir, TestMode::Seqrewr);
    cfg.compat = Compat::V0_4;
    cfg.time_limit = None;
    cfg.events = 10_000;
    let r = run(&cfg);
    assert_eq!((counters(&r).writes, counters(&r).fsyncs), (1024, 16));
}

#[test]
fn json_and_save_write_the_same_versioned_document() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let a = ["--file-num=2", "--file-total-size=2M"];
    ok(&spindle(dir, &[a[0], a[1], "prepare"]));
    let save = dir.join("result.json");
    let out = ok(&spindle(
        dir,
        &[
            a[0],
            a[1],
            "--file-test-mode=rndrd",
            "--time=2",
            "--report-interval=1",
            "--format=json",
            &format!("--save={}", save.display()),
            "run",
        ],
    ));
    let r = BenchResult::from_json(&out, "stdout").unwrap();
    let saved = BenchResult::from_json(&std::fs::read_to_string(&save).unwrap(), "saved").unwrap();
    assert_eq!(r, saved);
    assert_eq!(r.schema_version, spindle::model::SCHEMA_VERSION);
    assert_eq!(r.tool.name, "spindle");
    let TestOptions::Fileio(o) = &r.options else {
        panic!("fileio options expected: {:?}", r.options)
    };
    assert_eq!(o.file_num, 2);
    assert_eq!(o.test_mode, Some(TestMode::Rndrd));
    assert!(
        r.latency.p50_us > 0.0
            && r.latency.p99_us >= r.latency.p50_us
            && r.latency.p99_99_us >= r.latency.p99_us
    );
    assert!(!r.intervals.is_empty());
    assert_eq!(r.histogram.hdr().unwrap().len(), r.events);
    assert!(r.host.cpus >= 1);
}

#[test]
fn mmap_mode_and_histogram_output() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let a = ["--file-num=2", "--file-total-size=2M"];
    ok(&spindle(dir, &[a[0], a[1], "prepare"]));
    let out = ok(&spindle(
        dir,
        &[
            a[0],
            a[1],
            "--file-io-mode=mmap",
            "--file-test-mode=rndrw",
            "--time=1",
            "--histogram",
            "run",
        ],
    ));
    assert!(out.contains("Using fast mmaped I/O mode"));
    assert!(
        out.contains("Latency histogram (values are in milliseconds)"),
        "{out}"
    );
    assert!(out.contains("|*"), "histogram has bars: {out}");
}

#[test]
fn bad_setups_give_clear_errors_and_leave_nothing_behind() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();

    // Directory that does not exist.
    let e = err(&spindle(&dir.join("nope"), &["prepare"]));
    assert!(e.contains("--dir") && e.contains("does not exist"), "{e}");

    // Too little free space: nothing is written.
    let e = err(&spindle(
        dir,
        &["--file-num=4", "--file-total-size=900T", "prepare"],
    ));
    assert!(e.contains("--file-total-size") && e.contains("free"), "{e}");
    assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0);

    // Run without prepare.
    let e = err(&spindle(
        dir,
        &[
            "--file-num=2",
            "--file-total-size=2M",
            "--file-test-mode=rndrd",
            "run",
        ],
    ));
    assert!(e.contains("prepare"), "{e}");

    // Files from a different prepare.
    ok(&spindle(
        dir,
        &["--file-num=2", "--file-total-size=2M", "prepare"],
    ));
    let e = err(&spindle(
        dir,
        &[
            "--file-num=4",
            "--file-total-size=4M",
            "--file-test-mode=rndrd",
            "run",
        ],
    ));
    assert!(e.contains("--file-num=2") && e.contains("cleanup"), "{e}");

    // O_DIRECT with a block size that is not a multiple of the logical block size.
    let e = err(&spindle(
        dir,
        &[
            "--file-num=2",
            "--file-total-size=2M",
            "--file-block-size=1000",
            "--file-extra-flags=direct",
            "--file-test-mode=rndrd",
            "run",
        ],
    ));
    assert!(e.contains("logical block size"), "{e}");

    // Missing command word / test mode.
    let e = err(&spindle(dir, &["--file-num=2"]));
    assert!(e.contains("prepare, run or cleanup"), "{e}");
    let e = err(&spindle(
        dir,
        &["--file-num=2", "--file-total-size=2M", "run"],
    ));
    assert!(e.contains("--file-test-mode"), "{e}");
}

#[test]
fn a_larger_prepared_set_serves_the_run_and_a_smaller_one_is_refused_before_the_header() {
    // Seed 003 prepares 80G and runs with --file-total-size=81900M; here 80M and 81900K.
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    ok(&spindle(
        dir,
        &["--file-num=4", "--file-total-size=80M", "prepare"],
    ));
    let run = |extra: &[&str]| {
        let mut a = vec!["--file-test-mode=rndrw", "--events=200", "--time=5"];
        a.extend_from_slice(extra);
        a.push("run");
        spindle(dir, &a)
    };
    let out = ok(&run(&["--file-num=4", "--file-total-size=81900K"]));
    assert!(
        out.contains("20475KiB each") && out.contains("total number of events:              200"),
        "{out}"
    );
    // Fewer files than prepared, as sysbench allows.
    ok(&run(&["--file-num=2", "--file-total-size=40M"]));

    // Larger than prepared: refused before sysbench's header, in the unit typed.
    let o = run(&["--file-num=4", "--file-total-size=82000K"]);
    let e = err(&o);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        !stdout.contains("Threads started!") && !stdout.contains("Extra file open flags"),
        "refused before the header: {stdout}"
    );
    assert!(
        e.contains("--file-total-size=82000K")
            && e.contains("4 files of 20480K (81920K in all)")
            && e.contains("at least 20500K each")
            && e.contains("at most --file-num=4 --file-total-size=81920K"),
        "{e}"
    );
    assert!(!e.contains("83886080"), "no byte counts: {e}");
    // More files than prepared.
    let e = err(&run(&["--file-num=5", "--file-total-size=80M"]));
    assert!(
        e.contains("--file-num=5") && e.contains("4 files of 20M"),
        "{e}"
    );

    // Files without spindle's manifest (as sysbench leaves them) are checked file by file.
    std::fs::remove_file(dir.join(".spindle-fileio.json")).unwrap();
    let o = run(&["--file-num=4", "--file-total-size=1G"]);
    let e = err(&o);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("Threads started!"));
    assert!(
        e.contains("test_file.0' is 0.0195G") && e.contains("at least 0.25G per file"),
        "{e}"
    );
    let e = err(&run(&["--file-num=6", "--file-total-size=60M"]));
    assert!(
        e.contains("test_file.4") && e.contains("does not exist"),
        "{e}"
    );
}

#[test]
fn read_only_directory_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let ro = d.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let root = is_root();
    if root {
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs"])
            .arg(&ro)
            .status()
            .unwrap();
        assert!(st.success(), "mounting a read-only tmpfs needs root");
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    let out = spindle(&ro, &["--file-num=1", "--file-total-size=1M", "prepare"]);
    if root {
        let _ = Command::new("umount").arg(&ro).status();
    }
    let e = err(&out);
    assert!(e.contains("read-only") || e.contains("not writable"), "{e}");
}

#[test]
fn a_pasted_sysbench_0_4_line_with_test_fileio_runs_with_the_deprecation_warning() {
    let d = tempfile::tempdir().unwrap();
    let dir = format!("--dir={}", d.path().display());
    // seed 003's prepare line, smaller
    let o = common::spindle(&[
        "--test=fileio",
        "--file-num=4",
        "--file-total-size=4M",
        &dir,
        "prepare",
    ]);
    let out = ok(&o);
    assert!(out.contains("4 files, 1024Kb each"), "{out}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("the --test option is deprecated"),
        "sysbench 1.0's warning"
    );
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 5); // 4 files + manifest
    let e = err(&common::spindle(&["--test=cpu", "run"]));
    assert!(e.contains("--test=cpu"), "{e}");
}

/// The counts that must not depend on the I/O mode: events, reads, writes, fsyncs, bytes.
fn split(r: &BenchResult) -> (u64, u64, u64, u64, u64) {
    let c = counters(r);
    (r.events, c.reads, c.writes, c.fsyncs, c.bytes_written)
}

/// A scratch directory on tmpfs (/dev/shm), where the kernel cannot start a request without
/// blocking: async requests run at submission there. None where /dev/shm is not tmpfs.
fn tmpfs_dir() -> Option<tempfile::TempDir> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let tmpfs = mounts.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() > 2 && f[1] == "/dev/shm" && f[2] == "tmpfs"
    });
    if !tmpfs {
        eprintln!("/dev/shm is not tmpfs here: the run-at-submission path is not exercised");
        return None;
    }
    Some(tempfile::tempdir_in("/dev/shm").unwrap())
}

/// The note of a run whose requests (some or all) ran at submission instead of on the ring.
fn blocking_note(r: &BenchResult) -> Option<&String> {
    r.notes.iter().find(|n| n.contains("without blocking"))
}

#[test]
fn async_mode_gives_the_same_counts_and_split_as_sync_mode() {
    // Three paths: buffered on the test disk (reads on the ring; writes where the kernel has no
    // non-blocking buffered write, at submission), O_DIRECT (everything on the ring) and tmpfs
    // (everything at submission).
    let d = tempfile::tempdir().unwrap();
    let shm = tmpfs_dir();
    let mut places = vec![
        (d.path().join("buffered"), false),
        (d.path().join("direct"), true),
    ];
    if let Some(shm) = &shm {
        places.push((shm.path().to_path_buf(), false));
    }
    for (dir, direct) in places {
        std::fs::create_dir_all(&dir).unwrap();
        let mut base = small(&dir, TestMode::Rndrw);
        base.extra_flags.direct = direct;
        prepare(&base);
        base.time_limit = None;
        base.events = 1200;
        let on_tmpfs = dir.starts_with("/dev/shm");
        async_counts_match_sync(&base, |r| match (direct, on_tmpfs) {
            (true, _) => assert_eq!(blocking_note(r), None, "O_DIRECT on ext4: all on the ring"),
            (_, true) => assert!(
                blocking_note(r).is_some_and(|n| n.contains("writes")),
                "tmpfs: {:?}",
                r.notes
            ),
            _ => {}
        });
    }
}

fn async_counts_match_sync(base: &FileioConfig, check_notes: impl Fn(&BenchResult)) {
    for mode in [TestMode::Rndrw, TestMode::Rndwr, TestMode::Seqrewr] {
        for (fsync_all, fsync_end) in [(false, false), (false, true), (true, false)] {
            let sync = FileioConfig {
                test_mode: Some(mode),
                fsync_all,
                fsync_freq: if fsync_all { 0 } else { 100 },
                fsync_end,
                ..base.clone()
            };
            let want = split(&run(&sync));
            for (threads, backlog) in [(1, 1), (1, 128), (4, 8), (4, 128)] {
                let cfg = FileioConfig {
                    io_mode: IoMode::Async,
                    async_backlog: backlog,
                    threads,
                    ..sync.clone()
                };
                let r = run(&cfg);
                let mut got = split(&r);
                if fsync_end {
                    // Every thread fsyncs every file at the end, in both modes.
                    got.3 -= (threads as u64 - 1) * 16;
                }
                assert_eq!(
                    got, want,
                    "{mode:?} fsync_all={fsync_all} fsync_end={fsync_end} threads={threads} backlog={backlog}"
                );
                assert!(
                    r.notes.iter().any(|n| n.contains("io_uring")),
                    "{:?}",
                    r.notes
                );
                check_notes(&r);
            }
        }
    }
    let (events, reads, writes, fsyncs, _) = split(&run(&FileioConfig {
        io_mode: IoMode::Async,
        fsync_end: false,
        ..base.clone()
    }));
    // 1040 requests and a round of 16 after each 100 of them: 1040 + 10 × 16 = 1200 events.
    assert_eq!((events, reads + writes, fsyncs), (1200, 1040, 10 * 16));
    assert_eq!(reads * 2, writes * 3, "rndrw at 1.5 reads per write");

    // Time-limited, 4 threads × 32 in flight: fsyncs per 100 requests equal --file-num.
    let cfg = FileioConfig {
        io_mode: IoMode::Async,
        async_backlog: 32,
        threads: 4,
        fsync_end: false,
        events: 0,
        time_limit: Some(Duration::from_secs(1)),
        ..base.clone()
    };
    let c = counters(&run(&cfg)).clone();
    let expected = (c.reads + c.writes) / 100 * 16;
    assert!(
        c.fsyncs.abs_diff(expected) <= 16,
        "fsyncs {} vs expected {expected}",
        c.fsyncs
    );
    let ratio = c.reads as f64 / c.writes as f64;
    assert!((ratio - 1.5).abs() < 0.01, "read:write {ratio}");
}

#[test]
fn async_mode_times_each_request_from_submission_to_completion() {
    let d = tempfile::tempdir().unwrap();
    let mut cfg = small(d.path(), TestMode::Rndrd);
    prepare(&cfg);
    cfg.io_mode = IoMode::Async;
    cfg.time_limit = None;
    cfg.events = 4000;
    cfg.async_backlog = 64;
    let r = run(&cfg);
    assert_eq!(counters(&r).reads, 4000);
    assert_eq!(
        r.histogram.hdr().unwrap().len(),
        4000,
        "one latency per request"
    );
    assert!(r.latency.min_us > 0.0 && r.latency.max_us >= r.latency.avg_us);
    // The latencies of requests in flight overlap: their sum exceeds the run time.
    assert!(
        r.latency.sum_ms / 1000.0 > r.total_time_s,
        "sum {} ms over {} s",
        r.latency.sum_ms,
        r.total_time_s
    );
}

#[test]
fn async_validate_checks_every_read_and_catches_a_corrupted_block() {
    let d = tempfile::tempdir().unwrap();
    async_validate_catches_corruption(d.path());
    // On tmpfs the reads run at submission: the check is the same.
    if let Some(shm) = tmpfs_dir() {
        async_validate_catches_corruption(shm.path());
    }
}

fn async_validate_catches_corruption(dir: &Path) {
    let opts = ["--file-num=4", "--file-total-size=4M", "--validate"];
    let asy = ["--file-io-mode=async", "--file-async-backlog=32"];
    ok(&spindle(dir, &[opts[0], opts[1], opts[2], "prepare"]));
    for mode in ["rndrw", "seqrewr", "seqrd"] {
        let out = ok(&spindle(
            dir,
            &[
                opts[0],
                opts[1],
                opts[2],
                asy[0],
                asy[1],
                "--threads=2",
                &format!("--file-test-mode={mode}"),
                "--time=1",
                "--format=json",
                "run",
            ],
        ));
        let r = BenchResult::from_json(&out, "stdout").unwrap();
        if mode != "seqrewr" {
            assert!(counters(&r).validated_blocks > 0, "{mode}");
        }
    }
    // Flip one byte in the middle of block 10 of test_file.2.
    let p = dir.join("test_file.2");
    let mut bytes = std::fs::read(&p).unwrap();
    bytes[10 * 16384 + 100] ^= 0x5A;
    std::fs::write(&p, &bytes).unwrap();
    let e = err(&spindle(
        dir,
        &[
            opts[0],
            opts[1],
            opts[2],
            asy[0],
            asy[1],
            "--file-test-mode=seqrd",
            "--time=5",
            "run",
        ],
    ));
    assert!(
        e.contains("Checksum mismatch") && e.contains("test_file.2"),
        "{e}"
    );
    assert!(e.contains(&format!("offset {}", 10 * 16384)), "{e}");
}

#[test]
fn async_runs_unregistered_when_the_locked_memory_limit_refuses_the_buffers() {
    // 256 KiB of locked memory (and no CAP_IPC_LOCK, which root would otherwise bypass it
    // with): room for the ring, not for 128 checksummed 16 KiB request buffers. The run goes on
    // without them, checks every read as before and says why in its notes.
    let have = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    // util-linux is Essential in Debian: a machine without these cannot run this test, and it
    // says so rather than passing without exercising the unregistered path.
    assert!(
        have("setpriv") && have("prlimit"),
        "setpriv and prlimit (Debian package util-linux) are needed to run spindle without \
         CAP_IPC_LOCK under a locked-memory limit: apt-get install util-linux"
    );
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let opts = ["--file-num=4", "--file-total-size=16M", "--validate"];
    ok(&spindle(dir, &[opts[0], opts[1], opts[2], "prepare"]));
    let run_args = [
        opts[0],
        opts[1],
        opts[2],
        "--file-io-mode=async",
        "--file-extra-flags=direct",
        "--file-test-mode=rndrd",
        "--time=0",
        "--events=2000",
        "--format=json",
        "run",
    ];
    let out = Command::new("setpriv")
        .args(["--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock", "--"])
        .args(["prlimit", "--memlock=262144:262144", "--"])
        .arg(env!("CARGO_BIN_EXE_spindle"))
        .arg("fileio")
        .arg(format!("--dir={}", dir.display()))
        .args(run_args)
        .output()
        .unwrap();
    let r = BenchResult::from_json(&ok(&out), "stdout").unwrap();
    assert_eq!(counters(&r).validated_blocks, 2000);
    assert!(
        r.notes.iter().any(
            |n| n.contains("could not register the request buffers") && n.contains("ulimit -l")
        ),
        "{:?}",
        r.notes
    );
    // Unlimited (as root here): registered, no such note.
    let out = spindle(dir, &run_args);
    let r = BenchResult::from_json(&ok(&out), "stdout").unwrap();
    if is_root() {
        assert!(
            !r.notes.iter().any(|n| n.contains("could not register")),
            "{:?}",
            r.notes
        );
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn async_validate_with_more_requests_in_flight_than_blocks() {
    // 1 file of 8 blocks, 2 threads × 16 in flight: workers wait for free blocks, never for
    // each other forever, and never read a block while it is being written.
    let d = tempfile::tempdir().unwrap();
    let mut cfg = FileioConfig {
        file_num: 1,
        total_size: 8 * 16384,
        validate: true,
        ..small(d.path(), TestMode::Rndrw)
    };
    prepare(&cfg);
    cfg.io_mode = IoMode::Async;
    cfg.async_backlog = 16;
    cfg.threads = 2;
    cfg.time_limit = None;
    cfg.events = 3000;
    let r = run(&cfg);
    let c = counters(&r);
    assert_eq!(r.events, 3000);
    assert!(c.reads > 0 && c.validated_blocks == c.reads, "{c:?}");
    for mode in [TestMode::Seqrewr, TestMode::Seqrd] {
        let r = run(&FileioConfig {
            test_mode: Some(mode),
            threads: 1,
            ..cfg.clone()
        });
        assert_eq!(r.events, 3000, "{mode:?}");
    }
}

#[test]
fn async_backlog_out_of_range_is_refused_naming_the_option() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let a = [
        "--file-num=2",
        "--file-total-size=2M",
        "--file-test-mode=rndrd",
    ];
    ok(&spindle(dir, &[a[0], a[1], "prepare"]));
    for bad in ["0", "5000", "18446744073709551615"] {
        let e = err(&spindle(
            dir,
            &[
                a[0],
                a[1],
                a[2],
                "--file-io-mode=async",
                &format!("--file-async-backlog={bad}"),
                "run",
            ],
        ));
        assert!(e.contains("--file-async-backlog"), "{bad}: {e}");
    }
    // The engine refuses it too (the suite builds its configuration without the CLI).
    let mut cfg = small(dir, TestMode::Rndrd);
    cfg.file_num = 2;
    cfg.total_size = 2 << 20;
    cfg.io_mode = IoMode::Async;
    cfg.async_backlog = 0;
    let e = fileio::run(&cfg, &Controller::new(), &Silent).unwrap_err();
    let fe = fileio::error::find(&e).expect("a typed error");
    assert_eq!(fe.option(), Some("file-async-backlog"), "{e:#}");
}

/// Compressed size / size of `path` with `gzip -c`.
fn gzip_ratio(path: &Path) -> f64 {
    let out = Command::new("gzip")
        .arg("-c")
        .arg(path)
        .output()
        .expect("gzip is installed");
    assert!(out.status.success());
    out.stdout.len() as f64 / std::fs::metadata(path).unwrap().len() as f64
}

#[test]
fn random_fill_does_not_compress_and_zero_fill_does() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let a = ["--file-num=2", "--file-total-size=8M"];
    ok(&spindle(dir, &[a[0], a[1], "prepare"]));
    let zero = gzip_ratio(&dir.join("test_file.0"));
    assert!(zero < 0.01, "zero fill compresses: {zero}");
    ok(&spindle(dir, &[a[0], a[1], "cleanup"]));
    ok(&spindle(
        dir,
        &[a[0], a[1], "--file-fill=random", "prepare"],
    ));
    let random = gzip_ratio(&dir.join("test_file.0"));
    assert!(random > 0.99, "random fill does not compress: {random}");

    // Write requests carry random data too (one sequential pass over zero-filled files): no
    // block compresses on its own (what a compressing controller sees) and no two 512-byte
    // sectors are equal (what a deduplicating one looks for). Buffered async writes run at
    // submission; O_DIRECT ones go through the ring from buffers registered with it.
    for (io, flags) in [("sync", ""), ("async", ""), ("async", "direct")] {
        ok(&spindle(dir, &[a[0], a[1], "cleanup"]));
        ok(&spindle(dir, &[a[0], a[1], "prepare"]));
        let out = ok(&spindle(
            dir,
            &[
                a[0],
                a[1],
                "--file-fill=random",
                &format!("--file-io-mode={io}"),
                &format!("--file-extra-flags={flags}"),
                "--file-test-mode=seqrewr",
                "--file-fsync-freq=0",
                "--time=0",
                "--events=512",
                "--format=json",
                "run",
            ],
        ));
        let r = BenchResult::from_json(&out, "stdout").unwrap();
        let TestOptions::Fileio(o) = &r.options else {
            panic!("fileio options expected")
        };
        assert_eq!(o.fill, Fill::Random, "the result records the fill");
        assert!(
            r.notes.iter().any(|n| n.contains("random bytes")),
            "{:?}",
            r.notes
        );
        let mut sectors = std::collections::HashSet::new();
        for f in ["test_file.0", "test_file.1"] {
            let bytes = std::fs::read(dir.join(f)).unwrap();
            for (i, block) in bytes.chunks(16384).enumerate().step_by(37) {
                let one = dir.join("block");
                std::fs::write(&one, block).unwrap();
                let ratio = gzip_ratio(&one);
                assert!(ratio > 0.99, "{io}: {f} block {i} compresses: {ratio}");
            }
            for s in bytes.chunks(512) {
                assert!(sectors.insert(s.to_vec()), "{io}: a repeated sector in {f}");
            }
        }
    }

    // Reads and random-fill writes together (async, buffered: the reads on the ring, the writes
    // at submission) over zero-filled files: every block written carries random bytes, not
    // what a read just brought in.
    ok(&spindle(dir, &[a[0], a[1], "cleanup"]));
    ok(&spindle(dir, &[a[0], a[1], "prepare"]));
    ok(&spindle(
        dir,
        &[
            a[0],
            a[1],
            "--file-fill=random",
            "--file-io-mode=async",
            "--file-test-mode=rndrw",
            "--file-fsync-freq=0",
            "--time=0",
            "--events=600",
            "run",
        ],
    ));
    let mut written = 0;
    for f in ["test_file.0", "test_file.1"] {
        let bytes = std::fs::read(dir.join(f)).unwrap();
        for (i, block) in bytes.chunks(16384).enumerate() {
            if block.iter().all(|&b| b == 0) || written >= 40 {
                continue;
            }
            written += 1;
            let one = dir.join("block");
            std::fs::write(&one, block).unwrap();
            let ratio = gzip_ratio(&one);
            assert!(ratio > 0.99, "rndrw: {f} block {i} compresses: {ratio}");
        }
    }
    assert!(written >= 40, "rndrw wrote {written} blocks");
}

/// Issue 38: `--ss`, `--ss-dur`, `--ss-ramp` judge the run's steady state with fio's words; the
/// line after the report and the document say whether and when it was attained.
#[test]
fn steady_state_options_print_the_line_and_record_the_judgement() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let a = ["--file-num=2", "--file-total-size=8M"];
    ok(&spindle(dir, &[a[0], a[1], "prepare"]));
    let ss = [
        "--file-test-mode=rndrd",
        "--ss=iops_slope:10%",
        "--ss-dur=2",
        "--ss-ramp=1",
        "--time=6",
        "--report-interval=1",
    ];
    let save = dir.join("result.json");
    let save_arg = format!("--save={}", save.display());
    let out = ok(&spindle(
        dir,
        &[
            a[0], a[1], ss[0], ss[1], ss[2], ss[3], ss[4], ss[5], &save_arg, "run",
        ],
    ));
    let line = out
        .lines()
        .find(|l| l.starts_with("steady state (iops_slope:10%, dur 2 s, ramp 1 s): "))
        .unwrap_or_else(|| panic!("no steady-state line:\n{out}"));
    let r = BenchResult::from_json(&std::fs::read_to_string(&save).unwrap(), "saved").unwrap();
    let s = r.steady_state.as_ref().expect("steady_state recorded");
    assert_eq!(s.criterion.to_string(), "iops_slope:10%");
    assert_eq!((s.dur_s, s.ramp_s), (2.0, 1.0));
    assert_eq!(s.series, "iops: reads + writes per second");
    match s.at_s {
        // The first window, (1, 3], ends at 3 s; no window ends after the 6 s run.
        Some(at) => {
            assert!(s.attained && (2.9..=6.5).contains(&at), "{s:?}");
            assert!(line.contains(&format!("attained at {at:.1} s")), "{line}");
        }
        None => assert!(
            line.contains("not attained: the flattest had a slope of"),
            "{line}"
        ),
    }
    let raw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&save).unwrap()).unwrap();
    assert_eq!(raw["steady_state"]["criterion"], "iops_slope:10%");
    assert_eq!(raw["steady_state"]["dur_s"], 2.0);

    // Without the options the text is sysbench's, and the document has the default judgement.
    let out = ok(&spindle(
        dir,
        &[a[0], a[1], ss[0], "--time=1", "--format=json", "run"],
    ));
    let r = BenchResult::from_json(&out, "stdout").unwrap();
    let s = r.steady_state.unwrap();
    assert_eq!(s.criterion.to_string(), "iops_slope:10%");
    assert!(s
        .reason
        .unwrap()
        .starts_with("not attained: no interval samples"));
    let out = ok(&spindle(dir, &[a[0], a[1], ss[0], "--time=1", "run"]));
    assert!(!out.contains("steady state"), "{out}");
}

#[test]
fn a_bad_steady_state_option_names_the_flag_and_the_words() {
    let d = tempfile::tempdir().unwrap();
    let e = err(&spindle(
        d.path(),
        &["--file-test-mode=rndrd", "--ss=foo:1", "run"],
    ));
    assert!(e.contains("--ss"), "{e}");
    assert!(
        e.contains("'foo' is not a steady-state criterion: use iops, iops_slope, bw, bw_slope, lat or lat_slope"),
        "{e}"
    );
    let e = err(&spindle(
        d.path(),
        &["--file-test-mode=rndrd", "--ss=iops:5", "run"],
    ));
    assert!(e.contains("--ss: steady state is judged on the interval samples, and --report-interval is off: set --report-interval=1"), "{e}");
}
