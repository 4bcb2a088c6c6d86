//! All disks at once (issue 39, item 3) on real loop devices: `spindle suite --disk` erases
//! blank loop disks (GPT, ext4 on an offset loop), runs a small profile with `[together]` on
//! each alone, then on every disk at the same time. With two disks each gets its ratio
//! (together ÷ alone); with three of one "model" (loop devices report none: they are grouped
//! as loop devices) and one of them throttled by the kernel's blk-throttle (cgroup v1's
//! `blkio.throttle.{read,write}_bps_device`, or v2's `io.max` where there is no v1 blkio
//! hierarchy), that one is named the outlier, and the other two are not.
//!
//! The throttle is set once each disk's filesystem is mounted (so mkfs's discard and journal
//! are not slowed), on every loop device over its image or over it, for the spindle process's
//! cgroup: 3 MB/s for the bad disk, 8 MB/s for the others (so they measure alike, as identical
//! disks do, whatever else the machine is doing). It holds for the solo runs too, so the bad
//! disk's ratio stays near 1 while its figure together is far below the others'.

mod common;

use common::{assert_ok, require_root, LoopDevice};
use spindle::model::together::TogetherRun;
use spindle::model::{PhaseStatus, SuiteResult};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const BLKIO: &str = "/sys/fs/cgroup/blkio";
const UNIFIED: &str = "/sys/fs/cgroup";
/// What the throttled disk may read and write per second.
const SLOW_BPS: u64 = 3_000_000;
/// What the other disks may read and write per second: all three are throttle-bound, so the
/// healthy ones measure alike (the machine's own noise — loop devices read the host's page
/// cache — would otherwise spread them by tens of percent), as identical disks do. Low enough
/// for a machine that cannot move much more: in a Debian 13 guest under QEMU's TCG
/// (`scripts/cgroup2-guest.sh`) three disks at once wrote 11–16 MiB/s each at a 60 MB/s limit,
/// CPU-bound, and spread too far for the median to single one out.
const FAST_BPS: u64 = 8_000_000;

const PROFILE: &str = r#"description = "all disks at once, small"
[[fileio]]
file_num = 1
total_size = "32M"
block_size = "64K"
modes = ["seqrd", "rndwr"]
threads = [1]
time = 3
extra_flags = "direct"
drop_caches = true
fill = "random"

[together]
time = 3
"#;

fn load(out: &Path) -> SuiteResult {
    let text = std::fs::read_to_string(out.join("results.json")).unwrap();
    SuiteResult::from_json(&text, "results.json").unwrap()
}

fn runs(r: &SuiteResult) -> &[TogetherRun] {
    &r.together.as_ref().expect("the all-at-once record").runs
}

/// Runs the suite on `disks` with [`PROFILE`]; `started` gets the child's pid at once.
/// Returns the bundle, its result and the progress lines (stderr).
fn suite(
    d: &Path,
    disks: &[&LoopDevice],
    started: impl FnOnce(u32),
) -> (PathBuf, SuiteResult, String) {
    let profile = d.join("together.toml");
    std::fs::write(&profile, PROFILE).unwrap();
    let out = d.join("bundle");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_spindle"));
    cmd.arg("suite");
    for disk in disks {
        cmd.args(["--disk", disk.dev()]);
    }
    cmd.arg("--profile").arg(&profile).arg("--out").arg(&out);
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    started(child.id());
    let o = child.wait_with_output().unwrap();
    assert_ok(&o);
    let r = load(&out);
    (out, r, String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn with_two_loop_disks_each_gets_its_ratio_together_over_alone() {
    require_root(
        "the all-at-once test",
        &[("losetup", "mount"), ("mkfs.ext4", "e2fsprogs")],
    );
    let d = tempfile::tempdir().unwrap();
    let a = LoopDevice::new(d.path(), "a", 1200);
    let b = LoopDevice::new(d.path(), "b", 1200);
    let (out, r, progress) = suite(d.path(), &[&a, &b], |_| {});
    // The all-at-once runs are steps of the progress count, after both disks' phases: the
    // set's preparation and its two runs, the last of them the count's last step.
    let counted: Vec<&str> = progress
        .lines()
        .filter(|l| l.contains("] all disks: "))
        .collect();
    assert_eq!(counted.len(), 3, "{progress}");
    let last = counted[2].split(']').next().unwrap();
    let (i, n) = last.rsplit_once('[').unwrap().1.split_once('/').unwrap();
    assert_eq!(i, n, "{progress}");
    assert!(
        counted[2].contains("all disks: fileio-rndwr-t1 ("),
        "{progress}"
    );
    let runs = runs(&r);
    let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["together-fileio-seqrd-t1", "together-fileio-rndwr-t1"]
    );
    for run in runs {
        assert_eq!(run.disks.len(), 2, "{run:?}");
        for disk in &run.disks {
            assert_eq!(disk.status, PhaseStatus::Ok, "{disk:?}");
            let ratio = disk.ratio.unwrap_or_else(|| panic!("no ratio: {disk:?}"));
            let (t, alone) = (disk.mib_s.unwrap(), disk.alone_mib_s.unwrap());
            assert!(
                t > 0.0 && alone > 0.0 && (ratio - t / alone).abs() < 1e-9,
                "{disk:?}"
            );
            assert_eq!(disk.group.as_deref(), Some("loop device"));
            assert!(
                disk.outlier.is_none(),
                "two disks name no outlier: {disk:?}"
            );
            // Judged as a solo figure is, with its own device's bytes (each disk's files are
            // on a loop device of its own).
            let io = disk.device_io.as_ref().expect("the device's counters");
            assert!(io.device.starts_with("loop"), "{io:?}");
            let v = disk.validity.as_ref().expect("a verdict");
            assert!(
                v.reasons.iter().all(|r| r.rule != "device_bytes"),
                "every byte reached the device (O_DIRECT): {v:?}"
            );
            eprintln!(
                "{} {}: {t:.1} MiB/s together, {alone:.1} alone, {ratio:.2}×",
                run.name, disk.target
            );
        }
        assert_eq!(run.buses.len(), 1, "loop devices share no USB controller");
    }
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    let line = "all disks at once: ";
    assert_eq!(
        summary.matches(line).count(),
        2,
        "one line per target: {summary}"
    );
    assert!(
        summary.contains("All disks at once (each run started"),
        "{summary}"
    );
    let md = assert_ok(&common::spindle(&[
        "report",
        "show",
        "--markdown",
        out.to_str().unwrap(),
    ]));
    assert!(md.contains("| together-fileio-seqrd-t1 | "), "{md}");
    assert!(
        summary.contains(": validity: amber — link_ceiling (amber): not judged"),
        "loop devices have no link: {summary}"
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(
        csv.matches(",together-fileio-seqrd-t1,ok,").count(),
        2,
        "{csv}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h3>All disks at once</h3>"));
}

/// A cgroup of the test's own with a read and write limit per device; on drop (also after a
/// failed assertion) the limits are cleared, its processes go back to the root and it is removed.
struct Throttle {
    v1: bool,
    dir: PathBuf,
    devs: std::sync::Mutex<Vec<String>>,
}

impl Throttle {
    fn new() -> Throttle {
        let v1 = Path::new(BLKIO)
            .join("blkio.throttle.read_bps_device")
            .exists();
        let root = Path::new(if v1 { BLKIO } else { UNIFIED });
        if !v1 {
            let controllers =
                std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
            assert!(
                controllers.split_whitespace().any(|c| c == "io"),
                "the all-at-once test needs the kernel's blk-throttle: cgroup v1's blkio controller at {BLKIO} or v2's io controller at {UNIFIED} (io.max)"
            );
            let sub = std::fs::read_to_string(root.join("cgroup.subtree_control")).unwrap();
            if !sub.split_whitespace().any(|c| c == "io") {
                std::fs::write(root.join("cgroup.subtree_control"), "+io").unwrap();
            }
        }
        let dir = root.join(format!("spindle-together-test-{}", std::process::id()));
        std::fs::create_dir(&dir)
            .unwrap_or_else(|e| panic!("could not create the cgroup {}: {e}", dir.display()));
        Throttle {
            v1,
            dir,
            devs: Default::default(),
        }
    }

    fn add(&self, pid: u32) {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string()).unwrap();
    }

    /// Limits `dev` (`MAJ:MIN`) to `bps` read and written (0: no limit).
    fn limit(&self, dev: &str, bps: u64) {
        let lines = if self.v1 {
            vec![
                ("blkio.throttle.read_bps_device", format!("{dev} {bps}")),
                ("blkio.throttle.write_bps_device", format!("{dev} {bps}")),
            ]
        } else if bps == 0 {
            vec![("io.max", format!("{dev} rbps=max wbps=max"))]
        } else {
            vec![("io.max", format!("{dev} rbps={bps} wbps={bps}"))]
        };
        for (file, line) in lines {
            std::fs::write(self.dir.join(file), &line)
                .unwrap_or_else(|e| panic!("{file} does not take '{line}': {e}"));
        }
        if bps > 0 {
            self.devs.lock().unwrap().push(dev.to_string());
        }
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        for dev in std::mem::take(&mut *self.devs.lock().unwrap()) {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.limit(&dev, 0)));
        }
        let root = self.dir.parent().unwrap().to_path_buf();
        let procs = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.split_whitespace() {
            let _ = std::fs::write(root.join("cgroup.procs"), pid);
        }
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The loop devices over `disk` (its image, or the device itself: spindle's offset loop) that
/// are mounted, as `(name, MAJ:MIN)`.
fn mounted_loops_over(disk: &LoopDevice) -> Vec<(String, String)> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let mut found = Vec::new();
    for e in std::fs::read_dir("/sys/block").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let backing =
            std::fs::read_to_string(e.path().join("loop/backing_file")).unwrap_or_default();
        let backing = backing.trim();
        let over = backing == disk.dev() || Path::new(backing) == disk.image();
        if over && mounts.contains(&format!("/dev/{name} ")) {
            let dev = std::fs::read_to_string(e.path().join("dev")).unwrap();
            found.push((name, dev.trim().to_string()));
        }
    }
    // Or a partition the kernel shows (a loop device with partition scanning): the throttle
    // goes on the whole device, which blk-throttle limits (never a partition).
    let parts = std::fs::read_dir(format!("/sys/block/{}", disk.name())).unwrap();
    for e in parts.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(disk.name()) && mounts.contains(&format!("/dev/{name} ")) {
            let dev = std::fs::read_to_string(format!("/sys/block/{}/dev", disk.name())).unwrap();
            found.push((name, dev.trim().to_string()));
        }
    }
    found
}

/// Sets its flag when dropped.
struct Done<'a>(&'a AtomicBool);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[test]
fn with_three_same_model_loop_disks_the_throttled_one_is_named_the_outlier() {
    require_root(
        "the all-at-once test",
        &[("losetup", "mount"), ("mkfs.ext4", "e2fsprogs")],
    );
    let throttle = Throttle::new();
    let d = tempfile::tempdir().unwrap();
    let disks: Vec<LoopDevice> = ["a", "b", "c"]
        .iter()
        .map(|n| LoopDevice::new(d.path(), n, 1200))
        .collect();
    let slow = &disks[2];
    let done = AtomicBool::new(false);
    let (out, r, _) = std::thread::scope(|scope| {
        let watch = scope.spawn(|| {
            // Throttle each disk's filesystem (and the loop device under it) once mounted.
            let mut limited = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(300);
            while !done.load(Ordering::Relaxed) && Instant::now() < deadline {
                for disk in &disks {
                    let bps = if disk.name() == slow.name() {
                        SLOW_BPS
                    } else {
                        FAST_BPS
                    };
                    for (name, dev) in mounted_loops_over(disk) {
                        if !limited.contains(&name) {
                            throttle.limit(&dev, bps);
                            let parent = format!("/sys/block/{}/dev", disk.name());
                            let parent = std::fs::read_to_string(parent).unwrap();
                            throttle.limit(parent.trim(), bps);
                            limited.push(name);
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            limited
        });
        let refs: Vec<&LoopDevice> = disks.iter().collect();
        let stop = Done(&done); // also when the run fails
        let r = suite(d.path(), &refs, |pid| throttle.add(pid));
        drop(stop);
        assert!(
            !watch.join().unwrap().is_empty(),
            "the slow disk was never mounted"
        );
        r
    });
    let slow_target = r
        .targets
        .iter()
        .find(|t| t.disk.as_ref().is_some_and(|k| k.name == slow.name()))
        .expect("the slow disk is a target")
        .name
        .clone();
    let runs = runs(&r);
    assert_eq!(runs.len(), 2);
    for run in runs {
        assert_eq!(run.disks.len(), 3, "{run:?}");
        for disk in &run.disks {
            eprintln!(
                "{} {}: {:.1} MiB/s together, {:.1} alone, ratio {:?}, outlier {:?}",
                run.name,
                disk.target,
                disk.mib_s.unwrap_or(0.0),
                disk.alone_mib_s.unwrap_or(0.0),
                disk.ratio,
                disk.outlier
            );
            assert!(disk.ratio.is_some(), "{disk:?}");
            assert_eq!(disk.group.as_deref(), Some("loop device"));
            assert_eq!(
                disk.outlier.is_some(),
                disk.target == slow_target,
                "{run:?}"
            );
        }
    }
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(
        summary.contains(&format!(
            "OUTLIER: {slow_target} in together-fileio-seqrd-t1: "
        )),
        "{summary}"
    );
    let line = summary
        .lines()
        .find(|l| l.contains("all disks at once:") && l.contains("OUTLIER"))
        .unwrap_or_else(|| panic!("no outlier in the Targets table: {summary}"));
    assert_eq!(summary.matches("OUTLIER of its model").count(), 1, "{line}");
    let show = assert_ok(&common::spindle(&["report", "show", out.to_str().unwrap()]));
    assert!(
        show.contains("OUTLIER of its model in together-fileio-seqrd-t1, together-fileio-rndwr-t1"),
        "{show}"
    );
}
