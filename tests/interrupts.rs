//! Ctrl-C and a closed stdout, through the real binary: `spindle fileio`, `oltp` and `tpcc`
//! interrupted mid-run say "interrupted", exit 130 and mark their figures partial (the text
//! report's `PARTIAL:` line, the result document's note); every subcommand piped into
//! `head -1` (and into a pipe nobody reads) ends without a panic. (The suite's SIGINT/SIGTERM
//! tests are in `suite.rs`.)

mod common;

use common::TestServer;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What an interrupted command printed and how it ended.
struct Interrupted {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// From the signal to the exit.
    took: Duration,
}

/// Starts spindle with `args`, sends SIGINT one second after `marker` appeared on its stdout.
fn interrupt_after(args: &[&str], marker: &str) -> Interrupted {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spindle"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let (seen_tx, seen_rx) = std::sync::mpsc::channel();
    let wanted = marker.to_string();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.contains(&wanted) {
                let _ = seen_tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let seen = seen_rx.recv_timeout(Duration::from_secs(120)).is_ok();
    std::thread::sleep(Duration::from_secs(1));
    let sent = Instant::now();
    // SAFETY: signalling our own child, as Ctrl-C would.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let took = sent.elapsed();
    let out = Interrupted {
        code: status.code(),
        stdout: reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
        took,
    };
    assert!(
        seen,
        "never printed {marker:?}:\n{}\n{}",
        out.stdout, out.stderr
    );
    out
}

/// Exit 130, "interrupted" on stderr, the text report marked PARTIAL, the saved document's
/// note, and a stop well before the run's own end.
fn assert_interrupted(o: &Interrupted, planned: &str, saved: &Path) {
    assert_eq!(o.code, Some(130), "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stderr.contains("spindle: interrupted by a signal"),
        "{}",
        o.stderr
    );
    let partial = o
        .stdout
        .lines()
        .find(|l| l.starts_with("PARTIAL: interrupted by a signal after"))
        .unwrap_or_else(|| panic!("no PARTIAL line:\n{}", o.stdout));
    assert!(
        partial.contains(planned) && partial.contains("partial"),
        "{partial}"
    );
    assert!(
        o.took < Duration::from_secs(20),
        "stopped after {:?}",
        o.took
    );
    let doc = std::fs::read_to_string(saved).expect("--save wrote the document");
    let r = spindle::model::BenchResult::from_json(&doc, "saved").unwrap();
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("the figures are partial")),
        "{:?}",
        r.notes
    );
}

#[test]
fn sigint_stops_fileio_run_with_partial_figures() {
    let d = tempfile::tempdir().unwrap();
    let dir = format!("--dir={}", d.path().display());
    let base = [dir.as_str(), "--file-num=4", "--file-total-size=16M"];
    let mut prep = base.to_vec();
    prep.push("prepare");
    common::assert_ok(&common::spindle(&{
        let mut a = vec!["fileio"];
        a.extend(prep);
        a
    }));
    let saved = d.path().join("r.json");
    let save = saved.to_str().unwrap();
    let mut args = vec!["fileio"];
    args.extend(base);
    args.extend([
        "--file-test-mode=rndrd",
        "--time=60",
        "--report-interval=1",
        "--save",
        save,
        "run",
    ]);
    let o = interrupt_after(&args, "Threads started!");
    assert_interrupted(&o, "of --time=60", &saved);
    assert!(
        o.stdout.contains("Throughput:"),
        "the report is printed: {}",
        o.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_stops_oltp_and_tpcc_runs_with_partial_figures() {
    let srv = TestServer::start().await;
    let datadir = srv.datadir().to_str().unwrap().to_string();
    let d = tempfile::tempdir().unwrap();
    let oltp = |cmd: &str| {
        let mut v: Vec<String> = [
            "oltp",
            "read_only",
            "--table-size=2000",
            "--threads=2",
            "--datadir",
            &datadir,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.push(cmd.into());
        v
    };
    let run = |v: Vec<String>| {
        let refs: Vec<&str> = v.iter().map(String::as_str).collect();
        common::assert_ok(&common::spindle(&refs))
    };
    run(oltp("prepare"));
    let saved = d.path().join("oltp.json");
    let mut args = oltp("run");
    args.extend([
        "--time=60".to_string(),
        "--save".into(),
        saved.to_str().unwrap().into(),
    ]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = tokio::task::block_in_place(|| interrupt_after(&refs, "Threads started!"));
    assert_interrupted(&o, "of --time=60", &saved);
    assert!(o.stdout.contains("SQL statistics:"), "{}", o.stdout);
    run(oltp("cleanup"));

    // TPC-C: tpcc_start's line, 60 s measured, stopped a second after MEASURING START.
    run(vec![
        "tpcc".into(),
        "--datadir".into(),
        datadir.clone(),
        "-w".into(),
        "1".into(),
        "prepare".into(),
    ]);
    let saved = d.path().join("tpcc.json");
    let line = format!(
        "tpcc run --datadir {datadir} -w 1 -c 2 -r 0 -l 60 -i 1 --save {}",
        saved.display()
    );
    let args: Vec<&str> = line.split_whitespace().collect();
    let o = tokio::task::block_in_place(|| interrupt_after(&args, "MEASURING START."));
    assert_interrupted(&o, "of 60 s", &saved);
    assert!(o.stdout.contains("TpmC"), "{}", o.stdout);
}

/// How one command ended with its stdout closed early: fine unless it panicked.
fn assert_no_panic(what: &str, status: std::process::ExitStatus, stderr: &str) {
    assert!(
        !stderr.contains("panicked") && status.code() != Some(101),
        "{what} panicked: {stderr}"
    );
    assert_ne!(
        status.signal(),
        Some(libc::SIGABRT),
        "{what} aborted: {stderr}"
    );
    assert!(
        status.code().is_some_and(|c| c <= 2) || status.signal() == Some(libc::SIGPIPE),
        "{what}: {status:?} {stderr}"
    );
}

/// Runs `args` twice: piped into `head -1`, and into a pipe whose reader is already gone.
fn closed_stdout(args: &[&str]) {
    let what = args.join(" ");
    let mut spindle = Command::new(env!("CARGO_BIN_EXE_spindle"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let head = Command::new("head")
        .arg("-1")
        .stdin(spindle.stdout.take().unwrap())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(head.success());
    let o = spindle.wait_with_output().unwrap();
    assert_no_panic(
        &format!("{what} | head -1"),
        o.status,
        &String::from_utf8_lossy(&o.stderr),
    );

    let (read, write) = std::io::pipe().unwrap();
    drop(read);
    let o = Command::new(env!("CARGO_BIN_EXE_spindle"))
        .args(args)
        .stdout(write)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_no_panic(
        &format!("{what} > closed pipe"),
        o.status,
        &String::from_utf8_lossy(&o.stderr),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_subcommand_panics_on_a_closed_stdout() {
    let srv = TestServer::start().await;
    let datadir = srv.datadir().to_str().unwrap().to_string();
    let d = tempfile::tempdir().unwrap();
    let p = |x: &str| d.path().join(x).to_str().unwrap().to_string();
    let (files, bundle, init) = (p("files"), p("bundle"), p("init/mysql"));
    std::fs::create_dir(&files).unwrap();
    let profile = format!(
        "{}/tests/fixtures/profiles/tiny.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let html = p("r.html");
    // One command line per subcommand (paths from temporary directories hold no spaces).
    let commands = [
        "--help".to_string(),
        format!("fileio --dir={files} --file-num=2 --file-total-size=4M prepare"),
        format!("fileio --dir={files} --file-num=2 --file-total-size=4M --file-test-mode=rndrd --time=1 run"),
        format!("fileio --dir={files} --file-num=2 cleanup"),
        format!("oltp read_only --table-size=500 --datadir {datadir} prepare"),
        format!("oltp read_only --table-size=500 --time=1 --datadir {datadir} run"),
        format!("oltp read_only --datadir {datadir} cleanup"),
        format!("tpcc --datadir {datadir} -w 1 prepare"),
        format!("tpcc run --datadir {datadir} -w 1 -c 1 -r 0 -l 1 -i 1"),
        format!("tpcc --datadir {datadir} check"),
        format!("tpcc --datadir {datadir} cleanup"),
        format!("mysqld status --datadir {datadir}"),
        format!("mysqld init --datadir {init}"),
        "disks".to_string(),
        "disks --json".to_string(),
        "daemon --help".to_string(),
        "leds test --backend console --seconds 0.05".to_string(),
        "start --socket /nonexistent/spindle.sock".to_string(),
        "abort --socket /nonexistent/spindle.sock".to_string(),
        format!("suite --target {files} --profile check --dry-run"),
        format!("suite --target {files} --profile {profile} --out {bundle}"),
        format!("report show {bundle}"),
        format!("report html {bundle} -o {html}"),
        format!("report compare {bundle} {bundle}"),
    ];
    for line in &commands {
        let args: Vec<&str> = line.split_whitespace().collect();
        tokio::task::block_in_place(|| closed_stdout(&args));
    }
    // The suite ran to its end although nobody read its summary, and released its target.
    let r = std::fs::read_to_string(Path::new(&bundle).join("results.json")).unwrap();
    assert!(r.contains("\"status\": \"complete\""), "{r}");
    assert_eq!(
        std::fs::read_dir(&files).unwrap().count(),
        0,
        "work directory removed"
    );
}
