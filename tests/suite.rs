//! `spindle suite` end to end: real files, a real MariaDB provisioned by spindle, and (as root)
//! loop devices as disks. The acceptance runs use the built-in quick profile; the others a tiny
//! test profile.

use spindle::report::suite::SuiteResult;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tiny_profile() -> String {
    format!(
        "{}/tests/fixtures/profiles/tiny.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn require_root(what: &str) {
    assert!(
        is_root(),
        "{what} needs root (loop devices, mounts): run the tests as root"
    );
}

fn suite(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spindle"))
        .arg("suite")
        .args(args)
        .output()
        .expect("run spindle suite")
}

/// The command succeeded; otherwise fail showing what it printed.
fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn load(out: &Path) -> SuiteResult {
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json exists");
    serde_json::from_str(&text).expect("results.json parses")
}

fn phase<'a>(
    r: &'a SuiteResult,
    target: &str,
    name: &str,
) -> &'a spindle::report::suite::PhaseResult {
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
        assert_eq!(p.status, "ok", "{target} {test}: {:?}", p.error);
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
    assert_eq!(r.status, "complete");
    assert_complete_bundle(&out, &r, "scratch", TINY);
    assert!(r.targets[0].state_before.is_some() && r.targets[0].state_after.is_some());
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
    // Not root: the page cache could not be dropped, and the result says so.
    let notes = &phase(&r, "scratch", "fileio-seqrd-t4").notes;
    assert!(notes.iter().any(|n| n.contains("needs root")), "{notes:?}");
}

/// A loop device over an image file, detached on drop.
struct Loop {
    dev: String,
    image: PathBuf,
}

impl Loop {
    fn new(dir: &Path, name: &str, mib: u64) -> Loop {
        let image = dir.join(format!("{name}.img"));
        let f = std::fs::File::create(&image).unwrap();
        f.set_len(mib << 20).unwrap();
        let o = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&image)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        Loop {
            dev: String::from_utf8(o.stdout).unwrap().trim().to_string(),
            image,
        }
    }
    fn name(&self) -> String {
        self.dev.trim_start_matches("/dev/").to_string()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-R").arg(&self.dev).status();
        let _ = Command::new("partx").args(["-d", &self.dev]).output();
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

fn sha256(path: &Path) -> String {
    let o = Command::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8(o.stdout)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn suite_on_loop_disks_benchmarks_blank_ones_and_never_touches_data() {
    require_root("loop devices");
    let d = tempfile::tempdir().unwrap();
    let a = Loop::new(d.path(), "blank-a", 1200);
    let b = Loop::new(d.path(), "blank-b", 1200);
    let data = Loop::new(d.path(), "data", 1200);
    // The third disk holds a filesystem with a file.
    let st = Command::new("mkfs.ext4")
        .args(["-q", "-L", "mydata"])
        .arg(&data.dev)
        .status()
        .unwrap();
    assert!(st.success());
    let mnt = d.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    assert!(Command::new("mount")
        .arg(&data.dev)
        .arg(&mnt)
        .status()
        .unwrap()
        .success());
    std::fs::write(mnt.join("precious.txt"), "do not lose me").unwrap();
    assert!(Command::new("umount").arg(&mnt).status().unwrap().success());
    let before = sha256(&data.image);

    let out = d.path().join("bundle");
    let o = suite(&[
        "--disk",
        &a.dev,
        "--disk",
        &b.dev,
        "--disk",
        &data.dev,
        "--profile",
        "quick",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let r = load(&out);
    assert_eq!(r.targets.len(), 2, "two blank disks benchmarked");
    assert_complete_bundle(&out, &r, &a.name(), QUICK);
    assert_complete_bundle(&out, &r, &b.name(), QUICK);
    let skipped = r
        .skipped
        .iter()
        .find(|s| s.device == data.dev)
        .expect("data disk listed as skipped");
    assert!(skipped.reason.contains("data"), "{}", skipped.reason);
    assert_eq!(
        sha256(&data.image),
        before,
        "the data disk is byte-for-byte unchanged"
    );
    // The blank disks were partitioned (GPT) and formatted by spindle, and are unmounted again.
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(
        !mounts.contains(&a.dev) && !mounts.contains(&b.dev),
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
    // Once the first target's read_write run is under way, SIGKILL its server.
    let datadir = t1.join("spindle-work/mysql");
    let mut killed = false;
    if wait_for_phase(&out, "oltp-read_write-prepare") {
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
        first.phases.iter().any(|p| p.name == "oltp-read_write-t2"),
        "the run phase is recorded; suite stderr:\n{stderr}"
    );
    let p = phase(&r, "first", "oltp-read_write-t2");
    assert_eq!(p.status, "failed");
    let err = p.error.as_deref().unwrap_or("");
    assert!(!err.is_empty(), "the error is recorded");
    assert!(p.result.is_some(), "partial numbers are kept");
    assert_eq!(phase(&r, "first", "oltp-point_select-t2").status, "skipped");
    assert_complete_bundle(&out, &r, "second", TINY);
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(summary.contains("Failures:"), "{summary}");
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
    let sent = wait_for_phase(&out, "oltp-read_write-prepare");
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
    let r = load(&out);
    assert_eq!(r.status, "aborted");
    let p = phase(&r, "scratch", "oltp-read_write-t2");
    assert_eq!(p.status, "aborted");
    assert!(
        p.result.as_ref().is_some_and(|b| b.events > 0),
        "partial numbers kept"
    );
    assert_eq!(
        phase(&r, "scratch", "oltp-point_select-t2").status,
        "aborted"
    );
    assert_eq!(
        phase(&r, "scratch", "mysqld-stop").status,
        "ok",
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
