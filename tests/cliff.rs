//! The SLC-cache cliff found on a disk with a known one (issue 38, item 3): a loop device that
//! the kernel throttles once a known number of bytes has reached it. `spindle suite` runs a
//! profile with only `[cliff]` on an ext4 filesystem on the loop device, inside a blkio cgroup
//! of its own (the kernel's blk-throttle, which applies to O_DIRECT bios on a loop device:
//! cgroup v1's `blkio.throttle.write_bps_device`, or v2's `io.max` where there is no v1 blkio
//! hierarchy); the test watches the device's written sectors (/sys/block/loopN/stat) and lowers
//! the cgroup's write limit the moment 1 GiB has been written. The cliff must be found
//! within ±10 % of the bytes the device had taken when the throttle fell.
//!
//! The disk's "cache" writes at 150 MB/s, not at the loop device's own speed: unthrottled it
//! takes about 2 GB/s here, a GiB in half a second, fewer 1 s samples than the 5 s a level must
//! last for the detector — a real SSD's cache lasts tens of seconds. After the cliff it writes
//! at 25 MB/s. About 25 s in all.

mod common;

use common::{sh, LoopDevice};
use spindle::model::{PhaseStatus, SuiteResult};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// cgroup v1's blkio hierarchy (this machine: the hybrid layout).
const BLKIO: &str = "/sys/fs/cgroup/blkio";
/// cgroup v2's unified hierarchy (most CI runners), where blk-throttle is `io.max`.
const UNIFIED: &str = "/sys/fs/cgroup";
const CLIFF_AT: u64 = 1 << 30;
const CACHE_BPS: u64 = 150_000_000;
const AFTER_BPS: u64 = 25_000_000;

/// Which interface to blk-throttle the machine offers.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Throttle {
    /// v1: `blkio.throttle.write_bps_device`, `MAJ:MIN BPS` (0: no limit).
    V1,
    /// v2: `io.max`, `MAJ:MIN wbps=BPS` (`max`: no limit).
    V2,
}

impl Throttle {
    /// v1's blkio controller if it is mounted, else v2's io controller (enabled for the root's
    /// children if it is not yet); `None` when neither is there.
    fn detect() -> Option<Throttle> {
        if Path::new(BLKIO)
            .join("blkio.throttle.write_bps_device")
            .exists()
        {
            return Some(Throttle::V1);
        }
        let root = Path::new(UNIFIED);
        let controllers = std::fs::read_to_string(root.join("cgroup.controllers")).ok()?;
        if !controllers.split_whitespace().any(|c| c == "io") {
            return None;
        }
        let subtree = std::fs::read_to_string(root.join("cgroup.subtree_control")).ok()?;
        if !subtree.split_whitespace().any(|c| c == "io") {
            std::fs::write(root.join("cgroup.subtree_control"), "+io").ok()?;
        }
        Some(Throttle::V2)
    }

    fn root(self) -> &'static Path {
        Path::new(match self {
            Throttle::V1 => BLKIO,
            Throttle::V2 => UNIFIED,
        })
    }

    fn file(self) -> &'static str {
        match self {
            Throttle::V1 => "blkio.throttle.write_bps_device",
            Throttle::V2 => "io.max",
        }
    }

    /// The line that limits writes to `dev` to `bps` (0: no limit).
    fn line(self, dev: &str, bps: u64) -> String {
        match (self, bps) {
            (Throttle::V1, _) => format!("{dev} {bps}"),
            (Throttle::V2, 0) => format!("{dev} wbps=max"),
            (Throttle::V2, _) => format!("{dev} wbps={bps}"),
        }
    }
}

/// A cgroup of the test's own; on drop (also after a failed assertion) its throttle is
/// cleared, whatever is still in it goes back to the root cgroup, and it is removed.
struct BlkioGroup {
    kind: Throttle,
    dir: PathBuf,
    dev: String,
}

impl BlkioGroup {
    fn new(kind: Throttle, dev: &str) -> BlkioGroup {
        let dir = kind
            .root()
            .join(format!("spindle-cliff-test-{}", std::process::id()));
        std::fs::create_dir(&dir)
            .unwrap_or_else(|e| panic!("could not create the cgroup {}: {e}", dir.display()));
        BlkioGroup {
            kind,
            dir,
            dev: dev.to_string(),
        }
    }

    /// Limits the group's writes to the device to `bps` bytes per second (0: no limit).
    fn throttle(&self, bps: u64) {
        let file = self.dir.join(self.kind.file());
        std::fs::write(&file, self.kind.line(&self.dev, bps))
            .unwrap_or_else(|e| panic!("{} does not take the limit: {e}", file.display()));
    }

    fn add(&self, pid: u32) {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string())
            .expect("the process moves into the cgroup");
    }
}

impl Drop for BlkioGroup {
    fn drop(&mut self) {
        let _ = std::fs::write(
            self.dir.join(self.kind.file()),
            self.kind.line(&self.dev, 0),
        );
        let procs = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.split_whitespace() {
            let _ = std::fs::write(self.kind.root().join("cgroup.procs"), pid);
        }
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The spindle run, killed if the test ends before it does.
struct Run(Child);

impl Drop for Run {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Bytes the device has taken (field 7 of /sys/block/<dev>/stat: sectors written, 512 bytes).
fn written_bytes(name: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let sectors: u64 = stat.split_whitespace().nth(6).unwrap().parse().unwrap();
    sectors * 512
}

/// Every file named `name` below `dir`.
fn find_files(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            found.extend(find_files(&p, name));
        } else if e.file_name() == name {
            found.push(p);
        }
    }
    found
}

fn require_blk_throttle() -> Throttle {
    common::require_root(
        "the cliff test",
        &[("losetup", "mount"), ("mkfs.ext4", "e2fsprogs")],
    );
    Throttle::detect().unwrap_or_else(|| {
        panic!(
            "the cliff test needs the kernel's blk-throttle: cgroup v1's blkio controller at \
             {BLKIO} (blkio.throttle.write_bps_device) or cgroup v2's io controller at \
             {UNIFIED} (io.max); a kernel with CONFIG_BLK_DEV_THROTTLING"
        )
    })
}

#[test]
fn a_cliff_the_kernel_makes_at_one_gib_is_found_within_ten_percent() {
    let kind = require_blk_throttle();
    let d = tempfile::tempdir().unwrap();
    let disk = LoopDevice::new(d.path(), "cliff", 3072);
    // No lazy initialisation: ext4lazyinit would zero inode tables in the background while the
    // test counts the device's written bytes (tens of MB, unthrottled, in no test's control).
    sh(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0",
            disk.dev(),
        ],
    );
    let mnt = d.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    sh("mount", &[disk.dev(), mnt.to_str().unwrap()]);
    let target = mnt.join("scratch");
    std::fs::create_dir(&target).unwrap();
    let profile = d.path().join("cliff.toml");
    std::fs::write(
        &profile,
        "description = \"the cliff test\"\n[cliff]\nsize = \"2G\"\ntime = 22\nkeep_free = \"256M\"\n",
    )
    .unwrap();
    let out = d.path().join("bundle");
    let (log, err) = (d.path().join("stdout"), d.path().join("stderr"));
    let majmin = std::fs::read_to_string(format!("/sys/block/{}/dev", disk.name())).unwrap();
    let group = BlkioGroup::new(kind, majmin.trim());
    group.throttle(CACHE_BPS);
    let base = written_bytes(disk.name());
    let mut run = Run(Command::new(env!("CARGO_BIN_EXE_spindle"))
        .arg("suite")
        .arg("--target")
        .arg(&target)
        .arg("--profile")
        .arg(&profile)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::from(std::fs::File::create(&log).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&err).unwrap()))
        .spawn()
        .unwrap());
    group.add(run.0.id());

    // Watch the device; the cliff comes when it has taken CLIFF_AT bytes.
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut thrown_at = None;
    while run.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the suite ran over 90 s");
        let written = written_bytes(disk.name()) - base;
        if thrown_at.is_none() && written >= CLIFF_AT {
            group.throttle(AFTER_BPS);
            thrown_at = Some(written);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = run.0.wait().unwrap();
    assert!(
        status.success(),
        "spindle suite failed ({status}):\n{}\n{}",
        std::fs::read_to_string(&log).unwrap_or_default(),
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    let thrown_at = thrown_at.expect("the device took 1 GiB before the write ended");

    let text = std::fs::read_to_string(out.join("results.json")).unwrap();
    let r = SuiteResult::from_json(&text, "results.json").unwrap();
    let phase = r.targets[0]
        .phases
        .iter()
        .find(|p| p.name == "fileio-cliff")
        .expect("a fileio-cliff phase");
    assert_eq!(phase.status, PhaseStatus::Ok, "{:?}", phase.error);
    let rec = phase.cliff.as_ref().expect("the phase records its cliff");
    assert!(rec.samples.len() >= 15, "{} samples", rec.samples.len());
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let cliffs = &rec.finding.cliffs;
    assert_eq!(cliffs.len(), 1, "one cliff: {}", rec.summary_line());
    let c = cliffs[0];
    let error = (c.at_bytes as f64 - thrown_at as f64) / thrown_at as f64;
    eprintln!(
        "throttle at {:.3} GiB on the device; cliff found at {:.3} GiB ({:+.1} %): {}",
        gib(thrown_at),
        gib(c.at_bytes),
        error * 100.0,
        rec.summary_line()
    );
    let series: Vec<String> = rec
        .samples
        .iter()
        .map(|s| format!("{:.2}s:{:.0}MB", s.t_s, s.bytes as f64 / 1e6))
        .collect();
    eprintln!("the series: {}", series.join(" "));
    assert!(error.abs() <= 0.10, "{:+.1} % off", error * 100.0);
    let near = |mb_s: f64, bps: u64| (mb_s - bps as f64 / 1e6).abs() <= 0.2 * bps as f64 / 1e6;
    assert!(near(c.before_mb_s, CACHE_BPS), "{c:?}");
    assert!(near(c.after_mb_s, AFTER_BPS), "{c:?}");
    // Every rendering says it: summary.txt (= `report show`) and report.html's chart.
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    let said = format!("cliff at {:.2} GiB", gib(c.at_bytes));
    assert!(
        summary.contains("SLC-cache cliff") && summary.contains(&said),
        "{summary}"
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    let sec = page
        .split("<section id=\"cliff\">")
        .nth(1)
        .expect("report.html has the chart");
    assert!(
        sec.contains(&format!(">cliff {:.2} GiB</text>", gib(c.at_bytes))),
        "{sec}"
    );
    // The write's file is gone.
    assert_eq!(
        find_files(&mnt, spindle::fileio::sustained::FILE_NAME),
        Vec::<PathBuf>::new()
    );
    drop(group);
    sh("umount", &[mnt.to_str().unwrap()]);
}

/// A target in RAM skips the phase saying why; a bad `[cliff]` value is refused before anything
/// runs, naming `cliff.<key>` and the fix. No root needed.
#[test]
fn a_ram_target_skips_the_cliff_and_a_bad_key_is_named() {
    let d = tempfile::tempdir().unwrap();
    let bad = d.path().join("bad.toml");
    std::fs::write(&bad, "[cliff]\nsize = \"64G\"\ntime = 0\n").unwrap();
    let o = common::spindle(&["suite", "--profile", bad.to_str().unwrap(), "--dry-run"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "a time of 0 is refused");
    assert!(err.contains("cliff.time: is 0"), "{err}");
    std::fs::write(&bad, "[cliff]\nsize = \"lots\"\ntime = 60\n").unwrap();
    let o = common::spindle(&["suite", "--profile", bad.to_str().unwrap(), "--dry-run"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cliff.size: 'lots' is not a size"), "{err}");

    let shm = Path::new("/dev/shm");
    let on_tmpfs = std::fs::read_to_string("/proc/mounts")
        .unwrap()
        .lines()
        .any(|l| {
            l.split_whitespace().take(3).collect::<Vec<_>>() == ["tmpfs", "/dev/shm", "tmpfs"]
        });
    assert!(on_tmpfs, "this test needs /dev/shm on tmpfs (a RAM target)");
    let target = tempfile::tempdir_in(shm).unwrap();
    let profile = d.path().join("cliff.toml");
    std::fs::write(&profile, "[cliff]\nsize = \"1G\"\ntime = 5\n").unwrap();
    let out = d.path().join("bundle");
    let o = common::spindle(&[
        "suite",
        "--target",
        target.path().to_str().unwrap(),
        "--profile",
        profile.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(out.join("results.json"))
        .unwrap_or_else(|_| panic!("no bundle: {}", String::from_utf8_lossy(&o.stderr)));
    let r = SuiteResult::from_json(&text, "results.json").unwrap();
    let p = r.targets[0]
        .phases
        .iter()
        .find(|p| p.name == "fileio-cliff")
        .expect("a fileio-cliff phase");
    assert_eq!(p.status, PhaseStatus::Skipped, "{p:?}");
    assert!(p.error.as_deref().unwrap_or("").contains("in RAM"), "{p:?}");
    assert!(p.cliff.is_none());
}
