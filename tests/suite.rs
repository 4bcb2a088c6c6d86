//! `spindle suite` end to end: real files, a real MariaDB provisioned by spindle, and (as root)
//! loop devices as disks. The acceptance runs use the built-in quick profile; the others a tiny
//! test profile.

mod common;

use common::{assert_ok, sh, LoopDevice};
use spindle::model::{PhaseStatus, RunStatus, SuiteResult};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tiny_profile() -> String {
    format!(
        "{}/tests/fixtures/profiles/tiny.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn require_root(what: &str) {
    common::require_root(what, &[("losetup", "mount"), ("mkfs.ext4", "e2fsprogs")]);
}

fn suite(args: &[&str]) -> Output {
    let mut v = vec!["suite"];
    v.extend_from_slice(args);
    common::spindle(&v)
}

fn load(out: &Path) -> SuiteResult {
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json exists");
    SuiteResult::from_json(&text, "results.json").expect("results.json parses")
}

fn phase<'a>(r: &'a SuiteResult, target: &str, name: &str) -> &'a spindle::model::PhaseResult {
    let t = r
        .targets
        .iter()
        .find(|t| t.name == target)
        .unwrap_or_else(|| panic!("no target {target}"));
    t.phases
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no phase {name} on {target}"))
}

/// The tiny profile with OLTP runs of `secs` seconds, written into `dir`.
fn tiny_with_oltp_time(dir: &Path, secs: u64) -> PathBuf {
    let path = dir.join(format!("tiny-{secs}s.toml"));
    let text = std::fs::read_to_string(tiny_profile())
        .unwrap()
        .replace("time = 2", &format!("time = {secs}"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Starts `spindle suite` on directory targets in the background.
fn spawn_suite(targets: &[&Path], profile: &Path, out: &Path) -> std::process::Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_spindle"));
    cmd.arg("suite");
    for t in targets {
        cmd.arg("--target").arg(t);
    }
    cmd.arg("--profile")
        .arg(profile)
        .arg("--out")
        .arg(out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (at most two minutes) until the bundle records phase `name` as finished.
fn wait_for_phase(out: &Path, name: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        let seen = std::fs::read_to_string(out.join("results.json"))
            .map(|t| t.contains(&format!("\"name\": \"{name}\"")))
            .unwrap_or(false);
        if seen {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    false
}

/// Tests of the tiny profile.
const TINY: &[&str] = &[
    "fileio-seqwr-t2",
    "fileio-rndrw-t2",
    "fileio-seqrd-t2",
    "fileio2-rndrd-4KiB-qd8-t1",
    "oltp-read_write-t2",
    "oltp-point_select-t2",
];

/// Tests of the built-in quick profile.
const QUICK: &[&str] = &[
    "fileio-seqwr-t4",
    "fileio-seqrewr-t4",
    "fileio-seqrd-t4",
    "fileio-rndrd-t4",
    "fileio-rndwr-t4",
    "fileio-rndrw-t4",
    "oltp-read_write-t4",
    "oltp-read_only-t4",
    "oltp-write_only-t4",
    "oltp-point_select-t4",
];

fn assert_complete_bundle(out: &Path, r: &SuiteResult, target: &str, tests: &[&str]) {
    for &test in tests {
        let p = phase(r, target, test);
        assert_eq!(p.status, PhaseStatus::Ok, "{target} {test}: {:?}", p.error);
        assert!(p.result.is_some(), "{target} {test} has numbers");
        let txt = std::fs::read_to_string(out.join(target).join(format!("{test}.txt"))).unwrap();
        assert!(txt.contains("Threads fairness:"), "{txt}");
    }
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    let last = tests[tests.len() - 1];
    assert!(
        summary.contains(target) && summary.contains(last),
        "{summary}"
    );
    let page = std::fs::read_to_string(out.join("report.html")).expect("report.html in the bundle");
    assert!(
        page.contains(&format!("<b>{target}</b>")) && page.contains(last),
        "report.html names {target} and {last}"
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let rows = csv
        .lines()
        .filter(|l| l.contains(&format!(",{target},")))
        .count();
    assert!(rows >= tests.len(), "{csv}");
}

#[test]
fn suite_on_a_directory_writes_a_complete_bundle() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("scratch");
    std::fs::create_dir(&target).unwrap();
    let out = d.path().join("bundle");
    let o = suite(&[
        "--target",
        target.to_str().unwrap(),
        "--profile",
        &tiny_profile(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let r = load(&out);
    assert_eq!(r.status, RunStatus::Complete);
    assert_complete_bundle(&out, &r, "scratch", TINY);
    assert!(r.targets[0].state_before.is_some() && r.targets[0].state_after.is_some());
    // The TPC-C phase ran tpcc-mysql's statements (the profile's default) and says so.
    let tpcc = phase(&r, "scratch", "tpcc-w1-c2");
    assert_eq!(tpcc.status, PhaseStatus::Ok, "{:?}", tpcc.error);
    let options = serde_json::to_value(&tpcc.result.as_ref().unwrap().options).unwrap();
    assert_eq!(options["statements"], "tpcc-mysql", "{options}");
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(summary.contains("tpcc-mysql statements"), "{summary}");
    // TPC-C as HammerDB and go-tpc print it: NOPM and the efficiency beside TpmC.
    assert!(
        summary.contains("NOPM ") && summary.contains("% of 12.86 TpmC per warehouse"),
        "{summary}"
    );
    // Sensors this machine lacks are "not measured" with the reason, never "none reported";
    // the probe is kept in the result.
    let sensors = r.targets[0].state_before.as_ref().unwrap().sensors.clone();
    let sensors = sensors.expect("the state snapshot records the sensor probe");
    if !sensors.raspberry_pi {
        assert!(
            summary.contains("under-voltage: not measured (not a Raspberry Pi"),
            "{summary}"
        );
        assert!(!summary.contains("none reported"), "{summary}");
    }
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains("tpcc-mysql statements"),
        "report.html names the shape"
    );
    assert!(
        page.contains("TpmC, NOPM "),
        "report.html gives NOPM beside TpmC"
    );
    // Nothing of the work is left in the target, and no server is left running.
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "work directory removed"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("Results bundle:"));
}

#[test]
fn suite_as_a_normal_user() {
    require_root("switching to a normal user");
    // `nobody` needs to reach the binary: copy it somewhere world-readable.
    let d = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let bin = d.path().join("spindle");
    std::fs::copy(env!("CARGO_BIN_EXE_spindle"), &bin).unwrap();
    let target = d.path().join("scratch");
    let out = d.path().join("bundle");
    let st = Command::new("runuser")
        .args(["-u", "nobody", "--", "mkdir", target.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(st.success());
    let o = Command::new("runuser")
        .args([
            "-u",
            "nobody",
            "--",
            bin.to_str().unwrap(),
            "suite",
            "--target",
            target.to_str().unwrap(),
        ])
        .args(["--profile", "quick", "--out", out.to_str().unwrap()])
        .env("HOME", d.path())
        .env("TMPDIR", d.path())
        .current_dir(d.path())
        .output()
        .unwrap();
    assert_ok(&o);
    let r = load(&out);
    assert_complete_bundle(&out, &r, "scratch", QUICK);
    // Every result judged (issue 38): a verdict and a steady state on each; quick's reads
    // without O_DIRECT on 256 MiB, under 2x this machine's RAM, are red for the page cache,
    // with the numbers.
    for p in r.targets[0].phases.iter().filter(|p| p.result.is_some()) {
        let v = p.validity.as_ref();
        assert!(v.is_some(), "{}: no validity", p.name);
        let ss = p.result.as_ref().unwrap().steady_state.as_ref();
        assert!(ss.is_some(), "{}: no steady_state", p.name);
    }
    let v = phase(&r, "scratch", "fileio-seqrd-t4")
        .validity
        .clone()
        .unwrap();
    assert_eq!(v.verdict, spindle::model::Colour::Red, "{}", v.line());
    let cache = v.reasons.iter().find(|x| x.rule == "page_cache").unwrap();
    assert!(
        cache.text.contains("256.0 MiB file set is under 2×") && cache.text.contains("of RAM"),
        "{}",
        cache.text
    );
    // The block device's own counters say how little of what the test read reached it (the
    // set was just written and, as a normal user, could not be dropped from the cache).
    if let Some(io) = &phase(&r, "scratch", "fileio-seqrd-t4").device_io {
        let dev = v.reasons.iter().find(|x| x.rule == "device_bytes");
        let dev = dev.unwrap_or_else(|| panic!("{io:?} but no device_bytes reason: {}", v.line()));
        assert_eq!(dev.colour, spindle::model::Colour::Red, "{}", dev.text);
        assert!(dev.text.contains("came from a cache"), "{}", dev.text);
    }
    // Not root: the page cache could not be dropped; the result records it and the page-cache
    // doubt says so.
    let p = phase(&r, "scratch", "fileio-seqrd-t4");
    assert_eq!(p.caches_dropped, Some(false));
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(
        doubt_lines(&summary).iter().any(|l| l.contains(
            "the page cache may serve it (it could not be dropped before the run: that needs root)"
        )),
        "{summary}"
    );
}

#[test]
fn suite_on_loop_disks_benchmarks_blank_ones_and_never_touches_data() {
    require_root("loop devices");
    let d = tempfile::tempdir().unwrap();
    let a = LoopDevice::new(d.path(), "blank-a", 1200);
    let b = LoopDevice::new(d.path(), "blank-b", 1200);
    let data = LoopDevice::new(d.path(), "data", 1200);
    // The third disk holds a filesystem with a file.
    sh("mkfs.ext4", &["-q", "-L", "mydata", data.dev()]);
    data.with_mounted(false, |mnt| {
        std::fs::write(mnt.join("precious.txt"), "do not lose me").unwrap()
    });
    let before = data.sha256();

    let out = d.path().join("bundle");
    let o = suite(&[
        "--disk",
        a.dev(),
        "--disk",
        b.dev(),
        "--disk",
        data.dev(),
        "--profile",
        "quick",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let r = load(&out);
    assert_eq!(r.targets.len(), 2, "two blank disks benchmarked");
    assert_complete_bundle(&out, &r, a.name(), QUICK);
    assert_complete_bundle(&out, &r, b.name(), QUICK);
    let skipped = r
        .skipped
        .iter()
        .find(|s| s.device == data.dev())
        .expect("data disk listed as skipped");
    assert!(skipped.reason.contains("data"), "{}", skipped.reason);
    assert_eq!(
        data.sha256(),
        before,
        "the data disk is byte-for-byte unchanged"
    );
    // The blank disks were partitioned (GPT) and formatted by spindle, and are unmounted again.
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(
        !mounts.contains(a.dev()) && !mounts.contains(b.dev()),
        "released: {mounts}"
    );
    assert!(
        !r.targets[0].preparation.is_empty(),
        "exact commands recorded"
    );
    assert!(
        r.targets[0].preparation.iter().any(|c| c.contains("mkfs")),
        "{:?}",
        r.targets[0].preparation
    );
}

#[test]
fn killing_the_server_mid_run_keeps_the_error_and_the_other_targets_results() {
    let d = tempfile::tempdir().unwrap();
    let t1 = d.path().join("first");
    let t2 = d.path().join("second");
    std::fs::create_dir(&t1).unwrap();
    std::fs::create_dir(&t2).unwrap();
    let out = d.path().join("bundle");
    // A longer OLTP run on the first target gives the killer time to strike.
    let profile = tiny_with_oltp_time(d.path(), 8);
    let child = spawn_suite(&[&t1, &t2], &profile, &out);
    // Once the first target's first OLTP run (point_select: read-only workloads come first on
    // the shared tables) is under way, SIGKILL its server.
    let datadir = t1.join("spindle-work/mysql");
    let mut killed = false;
    if wait_for_phase(&out, "oltp-point_select-prepare") {
        std::thread::sleep(std::time::Duration::from_secs(2));
        if let Ok(st) = spindle::provision::mysqld::status(&datadir) {
            if let (true, Some(pid)) = (st.running, st.pid) {
                // SAFETY: sending a signal to the server's pid.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                killed = true;
            }
        }
    }
    let o = child.wait_with_output().unwrap();
    assert!(killed, "never saw the server of the first target running");
    assert!(!o.status.success(), "a failed phase gives a non-zero exit");
    let r = load(&out);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let first = r
        .targets
        .iter()
        .find(|t| t.name == "first")
        .expect("first target");
    assert!(
        first
            .phases
            .iter()
            .any(|p| p.name == "oltp-point_select-t2"),
        "the run phase is recorded; suite stderr:\n{stderr}"
    );
    let p = phase(&r, "first", "oltp-point_select-t2");
    assert_eq!(p.status, PhaseStatus::Failed);
    let err = p.error.as_deref().unwrap_or("");
    assert!(!err.is_empty(), "the error is recorded");
    assert!(p.result.is_some(), "partial numbers are kept");
    let next = phase(&r, "first", "oltp-read_write-t2");
    assert_eq!(next.status, PhaseStatus::Skipped);
    assert_eq!(
        next.error.as_deref(),
        Some("the database server stopped earlier in the run"),
        "skipped because the server stopped, worded as such"
    );
    assert_complete_bundle(&out, &r, "second", TINY);
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(summary.contains("Failures:"), "{summary}");
    // Not a clean run: the status line says so.
    let status = summary.lines().find(|l| l.starts_with("run: ")).unwrap();
    assert!(
        status.contains("status: complete (1 phase failed, ") && status.ends_with(" skipped)"),
        "{status}"
    );
    // and why they were skipped, in both views
    assert!(
        summary.contains("\nSkipped phases:\n  first ")
            && summary.contains(": the database server stopped earlier in the run\n"),
        "{summary}"
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains("Skipped phases: first "),
        "report.html lists them"
    );
}

#[test]
fn bad_arguments_are_named() {
    let d = tempfile::tempdir().unwrap();
    let o = suite(&[
        "--target",
        d.path().join("missing").to_str().unwrap(),
        "--profile",
        "quick",
    ]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--target"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = suite(&[
        "--target",
        d.path().to_str().unwrap(),
        "--profile",
        "fastest",
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--profile"));
    let cfg = d.path().join("bad.toml");
    std::fs::write(&cfg, "[disks]\nallow_usb3 = true\n").unwrap();
    let o = suite(&[
        "--target",
        d.path().to_str().unwrap(),
        "--config",
        cfg.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("allow_usb3"));
}

#[test]
fn sigterm_stops_cleanly_and_keeps_partial_results() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("scratch");
    std::fs::create_dir(&target).unwrap();
    let out = d.path().join("bundle");
    let profile = tiny_with_oltp_time(d.path(), 60);
    let child = spawn_suite(&[&target], &profile, &out);
    // Once the 60 s OLTP run has started, send SIGTERM as systemd or `kill` would.
    let datadir = target.join("spindle-work/mysql");
    let sent = wait_for_phase(&out, "oltp-point_select-prepare");
    if sent {
        std::thread::sleep(std::time::Duration::from_secs(2));
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    }
    let started = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(sent, "the OLTP run never started");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(45),
        "the run stopped promptly, not after its 60 s"
    );
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("interrupted by a signal during scratch oltp-point_select-t2"),
        "{stderr}"
    );
    let r = load(&out);
    assert_eq!(r.status, RunStatus::Aborted);
    let p = phase(&r, "scratch", "oltp-point_select-t2");
    assert_eq!(p.status, PhaseStatus::Interrupted, "{:?}", p.error);
    assert!(
        p.result.as_ref().is_some_and(|b| b.events > 0),
        "partial numbers kept"
    );
    assert!(p.error.as_deref().unwrap_or("").contains("partial"));
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(
        summary.contains("during scratch oltp-point_select-t2 (2 later measurement(s) not made)"),
        "the banner names the phase that was running: {summary}"
    );
    assert!(summary.contains("(interrupted: partial)"), "{summary}");
    assert_eq!(
        phase(&r, "scratch", "oltp-read_write-t2").status,
        PhaseStatus::Aborted
    );
    assert_eq!(
        phase(&r, "scratch", "mysqld-stop").status,
        PhaseStatus::Ok,
        "the server was stopped"
    );
    assert!(!spindle::provision::mysqld::status(&datadir)
        .map(|s| s.running)
        .unwrap_or(false));
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "work directory removed"
    );
}

#[test]
fn sigint_during_the_tpcc_load_marks_that_phase_interrupted_not_failed() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("scratch");
    std::fs::create_dir(&target).unwrap();
    let out = d.path().join("bundle");
    let child = spawn_suite(&[&target], Path::new(&tiny_profile()), &out);
    let sent = wait_for_phase(&out, "tpcc-prepare");
    if sent {
        std::thread::sleep(std::time::Duration::from_millis(500));
        // SAFETY: signalling our own child, as Ctrl-C would.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    }
    let o = child.wait_with_output().unwrap();
    assert!(sent, "the TPC-C load never started");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted by a signal during scratch tpcc-prepare"),
        "{stderr}"
    );
    let r = load(&out);
    assert_eq!(r.status, RunStatus::Aborted);
    let p = phase(&r, "scratch", "tpcc-prepare");
    assert_eq!(p.status, PhaseStatus::Interrupted, "{:?}", p.error);
    let why = p.error.as_deref().unwrap_or("");
    assert!(
        why.contains("interrupted") && !why.contains("prepare again"),
        "{why}"
    );
    assert_eq!(
        phase(&r, "scratch", "tpcc-w1-c2").status,
        PhaseStatus::Aborted
    );
    assert_eq!(phase(&r, "scratch", "tpcc-cleanup").status, PhaseStatus::Ok);
    assert_eq!(phase(&r, "scratch", "mysqld-stop").status, PhaseStatus::Ok);
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(
        summary.contains(
            "STOPPED on request (the button, Ctrl-C or SIGTERM) during scratch tpcc-prepare"
        ),
        "{summary}"
    );
    assert!(
        !summary.contains("Failures:") && !summary.contains("prepare again"),
        "an interrupted phase is no failure: {summary}"
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("during scratch tpcc-prepare"), "{stdout}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("during scratch tpcc-prepare"),
        "report.html names it too"
    );
}

/// The doubt lines of a summary.txt (`  [n] …`).
fn doubt_lines(summary: &str) -> Vec<&str> {
    summary
        .lines()
        .filter(|l| {
            l.strip_prefix("  [")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .map(str::trim)
        .collect()
}

/// Whether `text` has a byte count of seven digits or more (`67108864 bytes`).
fn has_raw_byte_count(text: &str) -> bool {
    let pieces: Vec<&str> = text.split(" bytes").collect();
    pieces[..pieces.len() - 1]
        .iter()
        .any(|p| p.chars().rev().take_while(|c| c.is_ascii_digit()).count() >= 7)
}

/// HTML text escaping as report.html does it.
fn html_escaped(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[test]
fn a_quick_run_on_tmpfs_says_ram_and_carries_the_same_doubts_in_every_view() {
    let d = tempfile::tempdir_in("/dev/shm").expect("/dev/shm (tmpfs) is writable");
    let target = d.path().join("shm");
    std::fs::create_dir(&target).unwrap();
    let out = tempfile::tempdir().unwrap();
    let bundle = out.path().join("bundle");
    let o = suite(&[
        "--target",
        target.to_str().unwrap(),
        "--profile",
        "quick",
        "--out",
        bundle.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let r = load(&bundle);
    let fs = r.targets[0]
        .filesystem
        .as_ref()
        .expect("the filesystem is recorded");
    assert_eq!((fs.fs_type.as_str(), fs.in_ram), ("tmpfs", true));

    let summary = std::fs::read_to_string(bundle.join("summary.txt")).unwrap();
    assert!(
        summary.contains("filesystem: tmpfs (in RAM, not a disk)"),
        "{summary}"
    );
    // `report show` prints what summary.txt holds, byte for byte.
    let show = common::spindle(&["report", "show", bundle.to_str().unwrap()]);
    assert_ok(&show);
    assert_eq!(String::from_utf8_lossy(&show.stdout), summary);
    let doubts = doubt_lines(&summary);
    assert!(
        doubts
            .iter()
            .any(|l| l
                .contains("on tmpfs, a filesystem in RAM: the figures measure memory, not a disk")),
        "{summary}"
    );
    assert!(
        doubts
            .iter()
            .any(|l| l.contains("fits in the 64.0 MiB buffer pool")),
        "the OLTP data set fits the quick profile's buffer pool: {summary}"
    );
    // Every figure carries the numbers of its doubts: on tmpfs, at least the RAM one.
    let ram = doubts
        .iter()
        .position(|l| l.contains("a filesystem in RAM"))
        .unwrap()
        + 1;
    for test in QUICK {
        let row = summary
            .lines()
            .skip_while(|l| !l.starts_with(&format!("{test}  (")))
            .nth(2)
            .unwrap_or_else(|| panic!("no table for {test}: {summary}"));
        let refs = row.split_whitespace().nth(6).unwrap_or("");
        assert!(
            refs.split(',').any(|n| n == ram.to_string()),
            "{test}: {row}"
        );
    }
    // report.html lists the very same doubts and names the filesystem as RAM.
    let page = std::fs::read_to_string(bundle.join("report.html")).unwrap();
    for line in &doubts {
        assert!(
            page.contains(&format!("<li>{}</li>", html_escaped(line))),
            "report.html lacks {line:?}"
        );
    }
    assert!(page.contains("<b>tmpfs (in RAM, not a disk)</b>"));
    // Every figure on /dev/shm is red, in the document and in every rendering.
    let measured: Vec<_> = r.targets[0]
        .phases
        .iter()
        .filter(|p| p.result.is_some())
        .collect();
    assert!(measured.len() >= QUICK.len());
    for p in measured {
        let v = p.validity.as_ref().unwrap();
        assert_eq!(
            v.verdict,
            spindle::model::Colour::Red,
            "{}: {}",
            p.name,
            v.line()
        );
        assert_eq!(v.reasons[0].rule, "in_ram", "{}", v.line());
    }
    let red = "validity: red — in_ram (red): on tmpfs, a filesystem in RAM: not a disk figure.";
    assert!(
        summary
            .lines()
            .filter(|l| l.trim_start().starts_with(red))
            .count()
            >= QUICK.len(),
        "{summary}"
    );
    assert!(page.contains("validity: <b class=\"v-red\">red</b> — in_ram (red)"));
    // What a reader does not need: reassurance dressed as a fact, developer diagnostics, raw
    // byte counts.
    for text in [&summary, &page] {
        assert!(!text.contains("page cache dropped before the run"));
        assert!(!text.contains("wake-ups"));
        assert!(!has_raw_byte_count(text), "a raw byte count");
    }
}

fn regimes_profile() -> String {
    format!(
        "{}/tests/fixtures/profiles/regimes.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn a_profile_with_both_regimes_shows_each_targets_cpu_and_io_bound_figures_and_their_ratio() {
    // Two targets: a directory on the machine's disk and one in RAM.
    let d = tempfile::tempdir().unwrap();
    let disk = d.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let ram = shm.path().join("ram");
    std::fs::create_dir(&ram).unwrap();
    let out = d.path().join("bundle");
    let o = suite(&[
        "--target",
        disk.to_str().unwrap(),
        "--target",
        ram.to_str().unwrap(),
        "--profile",
        &regimes_profile(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let r = load(&out);
    use spindle::model::Regime;
    for target in ["disk", "ram"] {
        for restart in ["mysqld-restart-cpu_bound", "mysqld-restart-io_bound"] {
            let p = phase(&r, target, restart);
            assert_eq!(
                p.status,
                PhaseStatus::Ok,
                "{target} {restart}: {:?}",
                p.error
            );
            assert!(
                p.notes
                    .iter()
                    .any(|n| n.starts_with("server restarted, buffer pool ")),
                "{:?}",
                p.notes
            );
            assert!(
                p.caches_dropped.is_some(),
                "the page cache is dropped between the regimes"
            );
        }
        assert_eq!(phase(&r, target, "oltp-prewarm").status, PhaseStatus::Ok);
        for workload in ["point_select", "read_only"] {
            for regime in Regime::ALL {
                let name = format!("oltp-{workload}-t2-{}", regime.key());
                let p = phase(&r, target, &name);
                assert_eq!(p.status, PhaseStatus::Ok, "{target} {name}: {:?}", p.error);
                let fit = p
                    .data_set
                    .expect("the data set against the buffer pool is recorded");
                assert!(fit.measured, "measured from the table files");
                assert_eq!(fit.regime(), regime, "{target} {name}: {fit:?}");
            }
        }
    }
    // Both figures and their ratio per target, as summary.txt and report.html show them.
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(
        summary.contains("Two regimes on the same data set"),
        "{summary}"
    );
    let tps = |t: &str, n: &str| {
        let p = phase(&r, t, n);
        let spindle::engine::Counters::Oltp(c) = &p.result.as_ref().unwrap().counters else {
            panic!("{n} is OLTP")
        };
        c.tps
    };
    for target in ["disk", "ram"] {
        let (cpu, io) = (
            tps(target, "oltp-read_only-t2-cpu_bound"),
            tps(target, "oltp-read_only-t2-io_bound"),
        );
        let ratio = cpu / io;
        let shown = if ratio < 2.0 {
            format!("{ratio:.2}×")
        } else {
            format!("{ratio:.1}×")
        };
        let row = format!("    {target:<12} {cpu:>12.2} {io:>12.2} {shown:>11}");
        assert!(summary.contains(&row), "{row:?} in {summary}");
    }
    assert!(summary.contains("    disk choice "), "{summary}");
    assert!(summary.contains("The choice of disk matters "), "{summary}");
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("id=\"regimes\"") && page.contains("disk choice (best ÷ worst)"));
    // The CPU-bound pass is shown beside its twin, not ranked.
    assert!(page.contains("CPU-bound on purpose: see the two regimes"));
    assert!(
        !page.contains("id=\"t-oltp-prewarm\""),
        "the prewarm is a step, not a test"
    );
}

#[test]
fn a_reused_scratch_disk_is_named_on_the_console_and_in_the_summary() {
    require_root("loop devices");
    let d = tempfile::tempdir().unwrap();
    let disk = LoopDevice::new(d.path(), "scratch", 1200);
    let profile = d.path().join("fileio.toml");
    std::fs::write(
        &profile,
        "[[fileio]]\nfile_num = 1\ntotal_size = \"4M\"\nmodes = [\"rndrd\"]\nthreads = [1]\ntime = 1\n",
    )
    .unwrap();
    let run = |name: &str| {
        let out = d.path().join(name);
        let o = suite(&[
            "--disk",
            disk.dev(),
            "--profile",
            profile.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_ok(&o);
        (o, std::fs::read_to_string(out.join("summary.txt")).unwrap())
    };
    let (first, summary) = run("first");
    assert!(!String::from_utf8_lossy(&first.stderr).contains("reused"));
    assert!(!summary.contains("reused"), "{summary}");
    // The second run finds the disk the first one formatted, and says how it knew.
    let (second, summary) = run("second");
    let stderr = String::from_utf8_lossy(&second.stderr);
    let said = format!("{}: reused as spindle's scratch disk: ", disk.dev());
    assert!(stderr.contains(&said), "{stderr}");
    assert!(
        stderr.contains(
            "holds only spindle's files and its marker .spindle-disk.json names this disk"
        ),
        "{stderr}"
    );
    let line = summary
        .lines()
        .find(|l| l.contains("reused as spindle's scratch disk"))
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(line.contains("label spindle-"), "{line}");
}
