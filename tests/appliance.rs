//! `spindle daemon` end to end: the real loop, the real suite (a tiny fileio-only profile on a
//! directory target, or the tiny test profile on loop devices named in `[appliance] disks`),
//! the mock indicator, the control socket as the button, and ext4 or FAT images on loop devices
//! as results sticks. Needs root (losetup, mount) and dosfstools; without them the tests fail
//! saying so.

mod common;

use common::{mysql_server, sh, LoopDevice};
use spindle::appliance::control::ControlCommand;
use spindle::appliance::daemon::{run_daemon, DaemonDeps};
use spindle::appliance::launch::{RunLauncher, SuiteLauncher};
use spindle::cmd::control::send_control;
use spindle::config::appliance::{ApplianceSettings, IndicatorBackend};
use spindle::engine::Controller;
use spindle::model::{PhaseStatus, RunStatus, TargetKind};
use spindle::run::RunRequest;
use spindle::status::{MockIndicator, MockLog, Pattern, Phase, StickProblem};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn require_root() {
    common::require_root(
        "the appliance tests (loop-device sticks, FAT and ext4 images)",
        &[
            ("losetup", "mount"),
            ("mkfs.vfat", "dosfstools"),
            ("fatlabel", "dosfstools"),
            ("mkfs.ext4", "e2fsprogs"),
            ("e2label", "e2fsprogs"),
            ("mount", "mount"),
            ("umount", "mount"),
        ],
    );
}

/// A results stick: a FAT or ext4 image on a [`LoopDevice`] (pulled out on drop).
struct LoopStick {
    disk: LoopDevice,
    _dir: tempfile::TempDir,
}

impl LoopStick {
    /// `size_kib` image with filesystem `fs` (`vfat` or `ext4`) labelled `label`; `prepare`
    /// may write files onto it first.
    fn new(fs: &str, label: &str, size_kib: u64, prepare: impl FnOnce(&Path)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("stick.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(size_kib * 1024)
            .unwrap();
        // Made under a placeholder label and relabelled only after `prepare` is done, so the
        // daemon never sees the stick while the test still has it mounted.
        const PLACEHOLDER: &str = "SPTPREP";
        match fs {
            "vfat" => sh("mkfs.vfat", &["-n", PLACEHOLDER, img.to_str().unwrap()]),
            _ => sh(
                "mkfs.ext4",
                &[
                    "-q",
                    "-F",
                    "-m",
                    "0",
                    "-L",
                    PLACEHOLDER,
                    img.to_str().unwrap(),
                ],
            ),
        };
        let s = LoopStick {
            disk: LoopDevice::attach(&img),
            _dir: dir,
        };
        s.disk.with_mounted(false, prepare);
        match fs {
            "vfat" => sh("fatlabel", &[s.disk.dev(), label]),
            _ => sh("e2label", &[s.disk.dev(), label]),
        };
        s
    }

    /// Mounts the stick at a private directory, calls `f`, unmounts.
    fn with_mounted<T>(&self, read_only: bool, f: impl FnOnce(&Path) -> T) -> T {
        self.disk.with_mounted(read_only, f)
    }

    /// Pulls the stick out.
    fn detach(&mut self) {
        self.disk.detach();
    }
}

/// The stick filesystem of the behaviour tests. ext4 (a supported stick filesystem) because
/// container kernels often lack vfat; FAT itself is covered by `fat_stick_receives_the_bundle`,
/// which fails where the kernel cannot mount FAT.
const STICK_FS: &str = "ext4";

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// The tests of this file run one at a time: each daemon probes the machine's loop devices for
/// its results stick, and run in parallel one test's daemon took another test's stick (seen in
/// CI: the abort test's run was copied to the no-targets test's stick).
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// A FAT label unique to this process and test.
fn unique_label() -> String {
    format!(
        "SPT{:05X}{}",
        std::process::id() & 0xfffff,
        SEQ.fetch_add(1, Ordering::SeqCst)
    )
}

/// A running daemon with its directories; stopped (and checked dark) on `stop`/drop.
struct Appliance {
    dir: tempfile::TempDir,
    settings: ApplianceSettings,
    log: MockLog,
    stop: Controller,
    thread: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
}

impl Appliance {
    fn start(label: &str, fileio_time_s: u64) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let s = Self::settings(dir.path(), label, fileio_time_s);
        Self::start_with(dir, s)
    }

    /// Settings for a daemon working in `dir`: a directory target, a tiny fileio-only
    /// profile, the mock indicator, no GPIO button, sticks labelled `label` on loop devices.
    fn settings(dir: &Path, label: &str, fileio_time_s: u64) -> ApplianceSettings {
        let target = dir.join("target");
        std::fs::create_dir(&target).unwrap();
        let profile = dir.join("tiny.toml");
        std::fs::write(
            &profile,
            format!(
                "description = \"test\"\n[[fileio]]\nfile_num = 2\ntotal_size = \"2M\"\nmodes = [\"seqwr\", \"rndrd\"]\nthreads = [1]\ntime = {fileio_time_s}\ndrop_caches = false\n"
            ),
        )
        .unwrap();
        let mut s = ApplianceSettings::default();
        s.appliance.runs_dir = dir.join("runs");
        s.appliance.control_socket = dir.join("run/control.sock");
        s.appliance.poll_interval_ms = 250;
        s.appliance.targets = vec![target];
        s.config.suite.profile = profile.display().to_string();
        s.status.backend = IndicatorBackend::Mock;
        s.button.enabled = false;
        s.stick.label = label.to_string();
        s.stick.allow_non_usb = true;
        s.stick.mount_dir = dir.join("stick");
        s
    }

    fn start_with(dir: tempfile::TempDir, settings: ApplianceSettings) -> Self {
        let launcher = Arc::new(SuiteLauncher::for_settings(&settings));
        Self::start_with_launcher(dir, settings, launcher)
    }

    fn start_with_launcher(
        dir: tempfile::TempDir,
        settings: ApplianceSettings,
        launcher: Arc<dyn RunLauncher>,
    ) -> Self {
        let (ind, log) = MockIndicator::new();
        let stop = Controller::new();
        let (st, s) = (stop.clone(), settings.clone());
        let thread = std::thread::spawn(move || {
            run_daemon(
                s,
                DaemonDeps {
                    indicator: Box::new(ind),
                    launcher,
                    gpio_button: false,
                },
                &st,
            )
        });
        let a = Appliance {
            dir,
            settings,
            log,
            stop,
            thread: Some(thread),
        };
        assert!(
            a.log.wait_for(Duration::from_secs(20), |p| matches!(
                p,
                Pattern::Ready { .. } | Pattern::NoDisks | Pattern::Copying | Pattern::Error
            )),
            "the daemon did not finish booting: {:?}",
            a.log.history()
        );
        a
    }

    fn send(&self, cmd: ControlCommand) -> String {
        send_control(&self.settings.appliance.control_socket, cmd).unwrap()
    }

    fn wait(&self, secs: u64, what: &str, want: impl Fn(&Pattern) -> bool) {
        assert!(
            self.log.wait_for(Duration::from_secs(secs), want),
            "no '{what}' pattern within {secs} s; patterns: {:?}",
            self.log.history()
        );
    }

    fn runs_dir(&self) -> PathBuf {
        self.settings.appliance.runs_dir.clone()
    }

    /// Run ids on the SD card.
    fn runs(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.runs_dir())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        v.sort();
        v
    }

    fn stop(mut self) -> MockLog {
        self.shutdown();
        self.log.clone()
    }

    fn shutdown(&mut self) {
        self.stop.ask_to_stop();
        if let Some(t) = self.thread.take() {
            t.join().unwrap().unwrap();
            assert_eq!(self.log.current(), None, "LEDs left on after exit");
            assert!(
                !self.settings.appliance.control_socket.exists(),
                "control socket left behind"
            );
            let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
            assert!(
                !mounts.contains(&self.dir.path().display().to_string()),
                "something is still mounted under the test directory"
            );
        }
    }
}

impl Drop for Appliance {
    fn drop(&mut self) {
        self.stop.ask_to_stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn results_status(run_dir: &Path) -> String {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("results.json")).unwrap())
            .unwrap();
    v["status"].as_str().unwrap_or_default().to_string()
}

/// The stick's spindle/ entries.
fn stick_listing(stick: &LoopStick) -> Vec<String> {
    stick.with_mounted(true, |root| {
        let mut v: Vec<String> = std::fs::read_dir(root.join("spindle"))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    })
}

/// A run that ended with no test failed, and the stick safe to remove: its figures may be
/// judged red, which has its own pattern (these tiny profiles read their few MiB through the
/// page cache: red).
fn safe(p: &Pattern) -> bool {
    matches!(
        p,
        Pattern::SafeToRemove | Pattern::SafeToRemoveWithRedFigures
    )
}

/// A run that ended with no test failed, its results waiting for a stick (red figures or not).
fn done(p: &Pattern) -> bool {
    matches!(p, Pattern::Done | Pattern::DoneWithRedFigures)
}

#[test]
fn button_start_runs_copies_to_the_stick_and_says_safe_to_remove() {
    let _one_at_a_time = one_at_a_time();
    require_root();
    let label = unique_label();
    let stick = LoopStick::new(STICK_FS, &label, 8 * 1024, |_| {});
    let a = Appliance::start(&label, 1);
    a.wait(5, "ready", |p| *p == Pattern::Ready { disks: 1 });
    assert_eq!(a.send(ControlCommand::Start), "ok: run started");
    assert!(a
        .send(ControlCommand::Start)
        .starts_with("refused: a run is already in progress"));
    a.wait(60, "safe to remove", safe);
    let runs = a.runs();
    assert_eq!(runs.len(), 1);
    let run_dir = a.runs_dir().join(&runs[0]);
    assert_eq!(results_status(&run_dir), "complete");
    assert!(
        run_dir.join(".copied-to-stick").exists(),
        "SD copy not marked copied"
    );
    let status = a.send(ControlCommand::Status);
    assert!(status.contains("safe to remove"), "{status}");
    // The run's 2 MiB read without O_DIRECT is judged red (the page cache), and the LEDs say so.
    assert!(status.contains("some figures judged red"), "{status}");
    let log = a.stop();
    let h: Vec<Pattern> = log.history().into_iter().flatten().collect();
    let pos = |want: &dyn Fn(&Pattern) -> bool| h.iter().position(want).unwrap();
    let running = pos(&|p| {
        matches!(
            p,
            Pattern::Running {
                phase: Phase::Fileio
            }
        )
    });
    let copying = pos(&|p| *p == Pattern::Copying);
    let safe = pos(&safe);
    assert!(
        h[0] == Pattern::Booting && running < copying && copying < safe,
        "{h:?}"
    );
    // the bundle is complete on the stick, nothing partial
    assert_eq!(stick_listing(&stick), vec![runs[0].clone()]);
    stick.with_mounted(true, |root| {
        let b = root.join("spindle").join(&runs[0]);
        for f in ["results.json", "results.csv", "summary.txt"] {
            assert!(b.join(f).is_file(), "{f} missing on the stick");
        }
        assert_eq!(results_status(&b), "complete");
    });
}

#[test]
fn long_run_is_aborted_cleanly_mid_phase() {
    let _one_at_a_time = one_at_a_time();
    require_root();
    let a = Appliance::start(&unique_label(), 60);
    assert_eq!(
        a.send(ControlCommand::Abort),
        "refused: no run is in progress"
    );
    assert_eq!(a.send(ControlCommand::Start), "ok: run started");
    a.wait(30, "running fileio", |p| {
        *p == Pattern::Running {
            phase: Phase::Fileio,
        }
    });
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(a.send(ControlCommand::Abort), "ok: aborting the run");
    a.wait(30, "done", done);
    let runs = a.runs();
    assert_eq!(runs.len(), 1);
    let run_dir = a.runs_dir().join(&runs[0]);
    assert_eq!(results_status(&run_dir), "aborted");
    assert!(!run_dir.join(".copied-to-stick").exists());
    // the work directory is cleaned up by the suite
    let left: Vec<_> = std::fs::read_dir(&a.settings.appliance.targets[0])
        .unwrap()
        .collect();
    assert!(left.is_empty(), "work files left: {left:?}");
    a.stop();
}

#[test]
fn full_stick_keeps_the_run_on_the_sd_card_and_shows_the_problem() {
    let _one_at_a_time = one_at_a_time();
    require_root();
    let label = unique_label();
    // A 1 MiB FAT image, nearly filled.
    let stick = LoopStick::new(STICK_FS, &label, 1024, |root| {
        let free = fs_free(root);
        std::fs::write(
            root.join("filler.bin"),
            vec![0u8; (free - 8 * 1024) as usize],
        )
        .unwrap();
    });
    let a = Appliance::start(&label, 1);
    assert_eq!(a.send(ControlCommand::Start), "ok: run started");
    a.wait(60, "stick full", |p| {
        *p == Pattern::StickProblem {
            problem: StickProblem::Full,
        }
    });
    let runs = a.runs();
    assert_eq!(runs.len(), 1);
    let run_dir = a.runs_dir().join(&runs[0]);
    assert!(run_dir.join("results.json").is_file());
    assert!(!run_dir.join(".copied-to-stick").exists());
    a.stop();
    let listing = stick_listing(&stick);
    assert!(
        listing.is_empty(),
        "something landed on the full stick: {listing:?}"
    );
}

fn fs_free(p: &Path) -> u64 {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: statvfs into a zeroed struct we own.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        assert_eq!(libc::statvfs(c.as_ptr(), &mut st), 0);
        st.f_bavail as u64 * st.f_frsize as u64
    }
}

#[test]
fn stick_removed_before_the_copy_and_a_later_stick_gets_the_run() {
    let _one_at_a_time = one_at_a_time();
    require_root();
    let label = unique_label();
    let mut first = LoopStick::new(STICK_FS, &label, 8 * 1024, |_| {});
    let a = Appliance::start(&label, 3);
    assert_eq!(a.send(ControlCommand::Start), "ok: run started");
    a.wait(30, "running", |p| matches!(p, Pattern::Running { .. }));
    first.detach();
    a.wait(60, "done", done);
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        !a.log.history().contains(&Some(Pattern::Copying)),
        "copied to a stick that was pulled: {:?}",
        a.log.history()
    );
    let runs = a.runs();
    assert_eq!(runs.len(), 1);
    assert!(!a
        .runs_dir()
        .join(&runs[0])
        .join(".copied-to-stick")
        .exists());
    // a later stick receives the run
    let second = LoopStick::new(STICK_FS, &label, 8 * 1024, |_| {});
    a.wait(30, "safe to remove", safe);
    a.stop();
    assert_eq!(stick_listing(&second), vec![runs[0].clone()]);
}

#[test]
fn malformed_stick_config_is_reported_on_the_stick_and_nothing_is_copied() {
    let _one_at_a_time = one_at_a_time();
    require_root();
    let label = unique_label();
    let stick = LoopStick::new(STICK_FS, &label, 8 * 1024, |root| {
        std::fs::write(
            root.join("spindle.toml"),
            "profile = \"quick\"\ncommand = \"reboot\"\n",
        )
        .unwrap();
    });
    let a = Appliance::start(&label, 1);
    a.wait(10, "error", |p| *p == Pattern::Error);
    assert_eq!(a.send(ControlCommand::Start), "ok: run started");
    a.wait(60, "error after the run", |_| {
        a.runs().first().is_some_and(|r| {
            a.runs_dir().join(r).join("results.json").is_file()
                && results_status(&a.runs_dir().join(r)) == "complete"
        })
    });
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(a.log.current(), Some(Pattern::Error));
    assert!(!a.log.history().contains(&Some(Pattern::Copying)));
    a.stop();
    let text = stick.with_mounted(true, |root| {
        std::fs::read_to_string(root.join("spindle/config-error.txt")).unwrap()
    });
    assert!(text.contains("command"), "{text}");
    assert_eq!(stick_listing(&stick), vec!["config-error.txt".to_string()]);
}

/// The stick's `flavors` chooses the server among those `[mysqld.binaries]` lists (as the
/// image lists its Oracle MySQL): a run with `flavors = ["mysql"]` on the stick measures its
/// database phases on MySQL, not on the MariaDB in PATH.
#[test]
fn the_stick_chooses_the_server() {
    let _one_at_a_time = one_at_a_time();
    require_root();
    let label = unique_label();
    let _stick = LoopStick::new(STICK_FS, &label, 8 * 1024, |root| {
        std::fs::write(root.join("spindle.toml"), "flavors = [\"mysql\"]\n").unwrap();
    });
    let dir = tempfile::tempdir().unwrap();
    let mut s = Appliance::settings(dir.path(), &label, 1);
    s.config.suite.profile = format!(
        "{}/tests/fixtures/profiles/tiny.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    s.config
        .mysqld
        .binaries
        .insert("mysql".into(), mysql_server());
    let a = Appliance::start_with(dir, s);
    a.wait(10, "ready", |p| *p == Pattern::Ready { disks: 1 });
    assert_eq!(a.send(ControlCommand::Start), "ok: run started");
    a.wait(300, "safe to remove", safe);
    // (Read before `stop`, which removes the daemon's directories.)
    let run = a.runs_dir().join(&a.runs()[0]);
    let r: spindle::model::SuiteResult =
        serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).unwrap()).unwrap();
    a.stop();
    assert_eq!(r.status, RunStatus::Complete);
    let t = &r.targets[0];
    let servers: Vec<&str> = t.servers.iter().map(|v| v.flavor.as_str()).collect();
    assert_eq!(servers, ["MySQL"]);
    let oltp: Vec<&str> = t
        .phases
        .iter()
        .filter(|p| p.name.starts_with("oltp-") && p.status == PhaseStatus::Ok)
        .map(|p| p.name.as_str())
        .collect();
    assert!(!oltp.is_empty(), "{:?}", t.phases);
}

/// Ignored by default because some CI kernels (this project's included) cannot mount FAT at
/// all; `.ci/run` runs it with `--ignored` whenever /proc/filesystems lists vfat and says so
/// when it cannot. The QEMU end-to-end test (image/test/e2e.sh) uses a real FAT stick.
#[test]
#[ignore = "needs a kernel that can mount vfat; .ci/run runs it when /proc/filesystems has vfat"]
fn fat_stick_receives_the_bundle() {
    let _one_at_a_time = one_at_a_time();
    require_root();
    let fss = std::fs::read_to_string("/proc/filesystems").unwrap();
    assert!(
        fss.split_whitespace().any(|f| f == "vfat"),
        "this test needs a kernel that can mount FAT (vfat is not in /proc/filesystems; load the vfat module or run on a host kernel with CONFIG_VFAT_FS)"
    );
    let label = unique_label();
    let stick = LoopStick::new("vfat", &label, 8 * 1024, |_| {});
    let a = Appliance::start(&label, 1);
    assert_eq!(a.send(ControlCommand::Start), "ok: run started");
    a.wait(60, "safe to remove", safe);
    let runs = a.runs();
    a.stop();
    assert_eq!(stick_listing(&stick), runs);
}

#[test]
fn run_cut_by_a_power_loss_is_marked_interrupted_and_still_copied() {
    let _one_at_a_time = one_at_a_time();
    require_root();
    let label = unique_label();
    let stick = LoopStick::new(STICK_FS, &label, 8 * 1024, |_| {});
    // What the SD card holds after a power cut mid-run: a bundle that still says "running".
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let old = runs.join("20260101-000000-pi");
    std::fs::create_dir_all(&old).unwrap();
    // A dead run's leftovers in the work directory: an empty mount-point folder.
    let leftover = runs.join(".work/20260101-000000-pi/mnt/sdb-x");
    std::fs::create_dir_all(&leftover).unwrap();
    use spindle::model::{PhaseResult, TargetResult};
    let phase = |name: &str, status| PhaseResult::new(name, None, status);
    let target = |name: &str, phases| TargetResult {
        phases,
        ..TargetResult::new(name, &format!("/mnt/{name}"), TargetKind::Disk, "")
    };
    let doc = spindle::model::SuiteResult {
        schema_version: spindle::model::SUITE_SCHEMA_VERSION,
        tool: spindle::model::ToolInfo::spindle("1.0"),
        host: spindle::sys::HostInfo::collect(),
        run_id: "20260101-000000-pi".into(),
        started_at: "2026-01-01T00:00:00Z".into(),
        finished_at: None,
        status: RunStatus::Running,
        profile: Default::default(),
        environment: None,
        governor: None,
        // the first disk mid-fileio, the second prepared and not reached
        targets: vec![
            target(
                "sda",
                vec![
                    phase("system-state-before", PhaseStatus::Ok),
                    phase("fileio-prepare", PhaseStatus::Ok),
                    phase("fileio-seqwr-t4", PhaseStatus::Running),
                ],
            ),
            target("sdb", vec![]),
        ],
        together: None,
        skipped: vec![],
    };
    spindle::report::bundle::write_bundle(&old, &doc).unwrap();
    let s = Appliance::settings(dir.path(), &label, 1);
    assert_eq!(s.appliance.runs_dir, runs);
    let a = Appliance::start_with(dir, s);
    a.wait(30, "safe to remove", safe);
    assert_eq!(results_status(&old), "interrupted");
    assert!(old.join(".copied-to-stick").exists());
    let r = spindle::model::SuiteResult::from_json(
        &std::fs::read_to_string(old.join("results.json")).unwrap(),
        "results.json",
    )
    .unwrap();
    let names: Vec<&str> = r.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["sda", "sdb"], "every prepared target is listed");
    let last = r.targets[0].phases.last().unwrap();
    assert_eq!(
        (last.name.as_str(), last.status),
        ("fileio-seqwr-t4", PhaseStatus::Interrupted)
    );
    assert!(
        !leftover.exists(),
        "the dead run's mount-point folder is cleared"
    );
    a.stop();
    assert_eq!(
        stick_listing(&stick),
        vec!["20260101-000000-pi".to_string()]
    );
    stick.with_mounted(true, |root| {
        let copy = root.join("spindle/20260101-000000-pi");
        assert_eq!(results_status(&copy), "interrupted");
        // the copy's summary says where the run stopped and what it never reached
        let summary = std::fs::read_to_string(copy.join("summary.txt")).unwrap();
        assert!(
            summary.contains("INTERRUPTED: the machine lost power or spindle stopped during sda fileio-seqwr-t4.")
                && summary.contains("Targets not reached: sdb."),
            "{summary}"
        );
    });
}

#[test]
fn named_loop_disks_are_benchmarked_and_a_data_disk_is_left_alone() {
    let _one_at_a_time = one_at_a_time();
    require_root();
    common::require_tools(
        "named_loop_disks_are_benchmarked_and_a_data_disk_is_left_alone",
        &[
            ("partx", "util-linux"),
            ("sha256sum", "coreutils"),
            ("parted", "parted"),
        ],
    );
    // The images outlive the daemon's directory (removed when it stops) and the loop devices.
    let images = tempfile::tempdir().unwrap();
    let a = LoopDevice::new(images.path(), "blank-a", 1200);
    let b = LoopDevice::new(images.path(), "blank-b", 1200);
    let data = LoopDevice::new(images.path(), "data", 1200);
    sh("mkfs.ext4", &["-q", "-L", "mydata", data.dev()]);
    let mnt = tempfile::tempdir().unwrap();
    sh("mount", &[data.dev(), mnt.path().to_str().unwrap()]);
    std::fs::write(mnt.path().join("precious.txt"), "do not lose me").unwrap();
    sh("umount", &[mnt.path().to_str().unwrap()]);
    let before = data.sha256();

    let label = unique_label();
    let stick = LoopStick::new(STICK_FS, &label, 8 * 1024, |_| {});
    let dir = tempfile::tempdir().unwrap();
    let mut s = Appliance::settings(dir.path(), &label, 1);
    s.appliance.targets.clear();
    s.appliance.disks = vec![a.stable_id(), b.stable_id(), data.stable_id()];
    s.config.suite.profile = format!(
        "{}/tests/fixtures/profiles/tiny.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    s.validate().unwrap();
    let app = Appliance::start_with(dir, s);
    app.wait(10, "ready with the two blank disks", |p| {
        *p == Pattern::Ready { disks: 2 }
    });
    assert_eq!(app.send(ControlCommand::Start), "ok: run started");
    app.wait(600, "safe to remove", safe);
    let runs = app.runs();
    assert_eq!(runs.len(), 1);
    app.stop();

    let r: spindle::model::SuiteResult = stick.with_mounted(true, |root| {
        let text =
            std::fs::read_to_string(root.join("spindle").join(&runs[0]).join("results.json"))
                .expect("the bundle is on the stick");
        serde_json::from_str(&text).unwrap()
    });
    assert_eq!(r.status, RunStatus::Complete);
    let mut names: Vec<&str> = r.targets.iter().map(|t| t.name.as_str()).collect();
    names.sort();
    let mut want = vec![a.name(), b.name()];
    want.sort();
    assert_eq!(names, want, "both blank disks, and only them, benchmarked");
    for t in &r.targets {
        assert_eq!(t.kind, TargetKind::Disk);
        assert!(
            t.preparation.iter().any(|c| c.contains("mkfs.ext4")),
            "{}: {:?}",
            t.name,
            t.preparation
        );
        for kind in ["fileio-", "oltp-"] {
            assert!(
                t.phases.iter().any(|p| p.name.starts_with(kind)),
                "{}: no {kind} phase",
                t.name
            );
        }
        for p in &t.phases {
            assert_eq!(
                p.status,
                PhaseStatus::Ok,
                "{} {}: {:?}",
                t.name,
                p.name,
                p.error
            );
        }
    }
    let skipped = r
        .skipped
        .iter()
        .find(|s| s.device == data.dev())
        .unwrap_or_else(|| panic!("data disk not listed as skipped: {:?}", r.skipped));
    assert!(skipped.reason.contains("data"), "{}", skipped.reason);
    assert_eq!(skipped.id, data.stable_id());
    assert_eq!(
        data.sha256(),
        before,
        "the data disk is byte-for-byte unchanged"
    );
    // released: nothing mounted, no partition nodes or extra loop devices left
    for d in [&a, &b, &data] {
        assert_eq!(
            d.mounts(),
            Vec::<String>::new(),
            "{} still mounted",
            d.dev()
        );
        assert_eq!(
            d.attached(),
            vec![d.dev().to_string()],
            "loop devices left over {}",
            d.dev()
        );
    }
}

/// A launcher that fails (or panics) instead of running the suite.
struct Broken {
    panic: bool,
}

impl RunLauncher for Broken {
    fn launch(
        &self,
        _req: &RunRequest,
        _observer: &dyn spindle::run::SuiteObserver,
        _stop: &Controller,
    ) -> anyhow::Result<spindle::appliance::state::RunOutcome> {
        if self.panic {
            panic!("launcher bug (expected by the test)");
        }
        anyhow::bail!("no target could be prepared")
    }
}

#[test]
fn a_run_that_cannot_start_or_crashes_shows_error_and_keeps_a_note() {
    let _one_at_a_time = one_at_a_time();
    // No root needed: no stick, a directory target, a launcher that fails.
    for panic in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let s = Appliance::settings(dir.path(), &unique_label(), 1);
        let a = Appliance::start_with_launcher(dir, s, Arc::new(Broken { panic }));
        assert_eq!(a.send(ControlCommand::Start), "ok: run started");
        a.wait(10, "error", |p| *p == Pattern::Error);
        let runs = a.runs();
        assert_eq!(runs.len(), 1);
        let note = std::fs::read_to_string(a.runs_dir().join(&runs[0]).join("ERROR.txt")).unwrap();
        let want = if panic {
            "crashed"
        } else {
            "no target could be prepared"
        };
        assert!(note.contains(want), "{note}");
        // the daemon goes on: a new run can be started
        assert_eq!(a.send(ControlCommand::Start), "ok: run started");
        let log = a.stop();
        assert!(log.history().contains(&Some(Pattern::Error)));
    }
}

#[test]
fn a_run_with_only_a_data_disk_leaves_a_note_on_the_stick_saying_why() {
    let _one_at_a_time = one_at_a_time();
    require_root();
    let images = tempfile::tempdir().unwrap();
    let data = LoopDevice::new(images.path(), "data", 1200);
    sh("mkfs.ext4", &["-q", "-L", "mydata", data.dev()]);
    let before = data.sha256();
    let label = unique_label();
    let stick = LoopStick::new(STICK_FS, &label, 8 * 1024, |_| {});
    let dir = tempfile::tempdir().unwrap();
    let mut s = Appliance::settings(dir.path(), &label, 1);
    s.appliance.targets.clear();
    s.appliance.disks = vec![data.stable_id()];
    let app = Appliance::start_with(dir, s);
    app.wait(10, "no usable disk", |p| *p == Pattern::NoDisks);
    assert_eq!(app.send(ControlCommand::Start), "ok: run started");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let copied = |app: &Appliance| {
        app.runs()
            .iter()
            .any(|r| app.runs_dir().join(r).join(".copied-to-stick").exists())
    };
    while !copied(&app) {
        assert!(
            std::time::Instant::now() < deadline,
            "the note never reached the stick"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let runs = app.runs();
    let log = app.stop();
    assert!(
        log.history().contains(&Some(Pattern::NoDisks)),
        "nothing to do shows as no usable disks"
    );
    let h = log.history();
    let after_copy = h
        .iter()
        .skip_while(|p| **p != Some(Pattern::Copying))
        .nth(1);
    assert_eq!(
        after_copy,
        Some(&Some(Pattern::NoDisks)),
        "after the copy: no usable disks, not a plain success: {h:?}"
    );
    let summary = stick.with_mounted(true, |root| {
        std::fs::read_to_string(root.join("spindle").join(&runs[0]).join("summary.txt"))
            .expect("the note is on the stick")
    });
    assert!(summary.contains("NOTHING WAS BENCHMARKED"), "{summary}");
    assert!(
        summary.contains(data.dev()) && summary.contains("holds data"),
        "{summary}"
    );
    assert_eq!(data.sha256(), before, "the data disk is untouched");
}
