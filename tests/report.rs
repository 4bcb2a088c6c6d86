//! report.html and `spindle report` end to end: bundles from real suite runs (real files and a
//! real MariaDB provisioned by spindle, through the binary), the page rendered in a real
//! headless browser (Debian's `chromium`) and checked for content and for any request outside
//! the file, and comparisons of several bundles.

use spindle::model::load;
use spindle::report::metric;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tiny_profile() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/profiles/tiny.toml")
}

fn spindle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spindle"))
        .args(args)
        .output()
        .expect("run spindle")
}

fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `spindle suite` on directory targets (created here) with `profile`, bundle in `out`.
fn run_suite(root: &Path, targets: &[&str], profile: &Path, out: &Path) {
    let mut args: Vec<String> = vec!["suite".into()];
    for t in targets {
        let dir = root.join(t);
        std::fs::create_dir_all(&dir).unwrap();
        args.push("--target".into());
        args.push(dir.display().to_string());
    }
    args.extend([
        "--profile".into(),
        profile.display().to_string(),
        "--out".into(),
        out.display().to_string(),
    ]);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_ok(&spindle(&a));
}

/// The browser, or a failure saying how to get it.
fn chromium() -> &'static str {
    let ok = Command::new("chromium")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "this test renders report.html in a headless browser: install Debian's chromium (`bash scripts/deps.sh` does)"
    );
    "chromium"
}

/// Renders `html` to `png` in headless chromium, no network features, a throwaway profile.
fn screenshot(html: &Path, png: &Path, height: u32) {
    let profile = tempfile::tempdir().unwrap();
    let o = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size=1000,{height}"))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("run chromium");
    assert!(
        png.exists() && std::fs::metadata(png).unwrap().len() > 0,
        "chromium made no screenshot: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Pixels of a PNG: (total, not white, distinct colours, pixels near each of `colours`).
fn pixel_stats(png: &Path, colours: &[[u8; 3]]) -> (usize, usize, usize, Vec<usize>) {
    let decoder = png::Decoder::new(std::fs::File::open(png).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = info.color_type.samples();
    assert!(step >= 3, "an RGB screenshot, got {:?}", info.color_type);
    let mut distinct = std::collections::HashSet::new();
    let (mut total, mut ink) = (0, 0);
    let mut near = vec![0; colours.len()];
    for px in buf[..info.buffer_size()].chunks(step) {
        let rgb = [px[0], px[1], px[2]];
        total += 1;
        if rgb != [255, 255, 255] {
            ink += 1;
        }
        distinct.insert(rgb);
        for (i, c) in colours.iter().enumerate() {
            if (0..3).all(|k| (rgb[k] as i32 - c[k] as i32).abs() <= 4) {
                near[i] += 1;
            }
        }
    }
    (total, ink, distinct.len(), near)
}

/// No request can leave the file: no URL, no script, no external style or image, and every
/// `src=`/`href=` is an anchor of this page.
fn assert_self_contained(html: &str) {
    for bad in [
        "http://", "https://", "<script", "<link", "<img", "<iframe", "@import", "url(",
    ] {
        assert!(!html.contains(bad), "the page contains {bad:?}");
    }
    for attr in ["src=", "href="] {
        for (i, _) in html.match_indices(attr) {
            let value = &html[i + attr.len()..];
            let quote = value.chars().next().unwrap();
            let value = value[1..].split(quote).next().unwrap();
            assert!(
                value.starts_with('#'),
                "{attr}{value} points outside the page"
            );
            let id = format!("id=\"{}\"", &value[1..]);
            assert!(
                html.contains(&id),
                "anchor {value} has no target in the page"
            );
        }
    }
}

const BLUE: [u8; 3] = [0x00, 0x72, 0xb2];
const ORANGE: [u8; 3] = [0xe6, 0x9f, 0x00];

#[test]
fn a_bundle_holds_a_report_that_renders_offline_in_a_browser() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("bundle");
    run_suite(d.path(), &["ssd", "hdd"], &tiny_profile(), &out);
    let page_path = out.join("report.html");
    let page = std::fs::read_to_string(&page_path).expect("the bundle holds report.html");
    assert_self_contained(&page);
    for want in [
        "The answer",
        "ssd",
        "hdd",
        "fileio-rndrw-t2",
        "oltp-point_select-t2",
        "latency by percentile",
        "Environment",
    ] {
        assert!(page.contains(want), "report.html lacks {want:?}");
    }
    // A real browser draws it: both targets' colours (bars, lines) and plenty of ink.
    let png = d.path().join("report.png");
    screenshot(&page_path, &png, 3000);
    let (total, ink, distinct, near) = pixel_stats(&png, &[BLUE, ORANGE]);
    assert!(
        ink * 20 > total,
        "mostly blank: {ink} of {total} pixels drawn"
    );
    assert!(distinct > 30, "only {distinct} colours");
    assert!(
        near[0] > 500 && near[1] > 500,
        "the targets' colours are missing: {near:?}"
    );
    // `report html` rebuilds the same page from results.json; `report show` prints the summary.
    let again = d.path().join("again.html");
    let o = spindle(&[
        "report",
        "html",
        out.join("results.json").to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert_ok(&o);
    assert_eq!(std::fs::read_to_string(&again).unwrap(), page);
    let o = spindle(&["report", "show", out.to_str().unwrap()]);
    assert_ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("fileio-rndrw-t2") && text.contains("hdd"),
        "{text}"
    );
}

/// The figure of `test` on the only target of the bundle in `dir`.
fn figure(dir: &Path, test: &str) -> f64 {
    let l = load::load(dir).unwrap();
    let p = l.suite.targets[0]
        .phases
        .iter()
        .find(|p| p.name == test)
        .unwrap();
    metric::primary(p.result.as_ref().unwrap()).value
}

const FILEIO_ONLY_16M: &str = "description = \"tests: fileio only, twice the tiny files\"\n\
[[fileio]]\nfile_num = 2\ntotal_size = \"16M\"\nblock_size = \"16K\"\n\
modes = [\"seqwr\", \"rndrw\", \"seqrd\"]\nthreads = [2]\ntime = 1\n";

#[test]
fn compare_shows_ratios_keeps_other_parameters_apart_and_names_bad_files() {
    let d = tempfile::tempdir().unwrap();
    let (a, b, c) = (d.path().join("A"), d.path().join("B"), d.path().join("C"));
    run_suite(d.path(), &["ssd"], &tiny_profile(), &a);
    run_suite(d.path(), &["hdd"], &tiny_profile(), &b);
    let other = d.path().join("bigger.toml");
    std::fs::write(&other, FILEIO_ONLY_16M).unwrap();
    run_suite(d.path(), &["ssd"], &other, &c);

    // Two targets in two bundles: ratios of hdd to the baseline ssd, test by test.
    let (html, csv) = (d.path().join("cmp.html"), d.path().join("cmp.csv"));
    let o = spindle(&[
        "report",
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(text.contains("Baseline: disk ssd"), "{text}");
    assert!(!text.contains("NOT COMPARED"), "{text}");
    for test in ["fileio-rndrw-t2", "fileio-seqrd-t2", "oltp-read_write-t2"] {
        let want = format!("{:.2}×", figure(&b, test) / figure(&a, test));
        let at = text.find(&format!("\n{test} ")).expect(test);
        let hdd = text[at..]
            .lines()
            .find(|l| l.trim_start().starts_with("hdd "))
            .unwrap();
        assert!(
            hdd.contains(&want),
            "{test}: want {want} in {hdd:?}\n{text}"
        );
    }
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(rows.starts_with(spindle::report::compare::csv::HEADER));
    let scores = rows.lines().filter(|l| l.contains(",score,")).count();
    // tiny.toml measures 7 tests: 3 sync fileio, 1 async fileio, 2 OLTP, 1 TPC-C
    assert_eq!(
        scores,
        2 * 7,
        "one score row per run × disk × test:\n{rows}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert_self_contained(&page);
    let png = d.path().join("cmp.png");
    screenshot(&html, &png, 1400);
    let (total, ink, _, near) = pixel_stats(&png, &[BLUE, ORANGE]);
    assert!(
        ink * 20 > total && near[0] > 200 && near[1] > 200,
        "{ink}/{total} {near:?}"
    );

    // Different profiles: the fileio tests differ in total_size and are shown apart.
    let o = spindle(&[
        "report",
        "compare",
        a.to_str().unwrap(),
        c.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(text.contains("Shown apart"), "{text}");
    let apart = &text[text.find("Shown apart").unwrap()..];
    assert!(
        apart.contains("fileio-rndrw-t2")
            && apart.contains(&format!("total_size {} vs {}", 8 << 20, 16 << 20)),
        "{text}"
    );

    // Malformed and foreign files, and a directory that is no bundle, are named.
    let bad = d.path().join("bad.json");
    std::fs::write(&bad, "{ not json").unwrap();
    let foreign = d.path().join("foreign.json");
    std::fs::write(&foreign, r#"{"name": "some other tool"}"#).unwrap();
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for (path, says) in [
        (&bad, "is not JSON"),
        (&foreign, "not a spindle results document"),
        (&empty, "holds no results.json"),
    ] {
        let o = spindle(&[
            "report",
            "compare",
            a.to_str().unwrap(),
            path.to_str().unwrap(),
        ]);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("'{}", path.display())) && err.contains(says),
            "{err}"
        );
    }
}

#[test]
fn crystaldiskmarks_rows_and_the_a1_a2_check_show_in_every_rendering_and_as_markdown() {
    // CrystalDiskMark's four shapes and the A1/A2 jobs measured by spindle's async O_DIRECT engine on a directory.
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let profile = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/profiles/cdm.toml");
    let out = d.path().join("bundle");
    run_suite(d.path(), &["disk"], &profile, &out);
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    let section = summary
        .split("\nCrystalDiskMark's rows (MB/s = 10^6 B/s")
        .nth(1)
        .unwrap_or_else(|| panic!("no CrystalDiskMark section: {summary}"));
    for row in ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"] {
        let line = section
            .lines()
            .find(|l| l.trim_start().starts_with(row))
            .unwrap_or_else(|| panic!("no {row}: {section}"));
        // Read and write both measured: two "(p99 … ms)" cells, no "-".
        assert_eq!(line.matches("(p99 ").count(), 2, "{line}");
        // Only the set with a repeat of its own (3) gives the best of its runs.
        let best = if row == "RND4K Q1T1" { 2 } else { 0 };
        assert_eq!(line.matches(" best of 3 (p99 ").count(), best, "{line}");
    }
    let r = spindle::model::SuiteResult::from_json(
        &std::fs::read_to_string(out.join("results.json")).unwrap(),
        "results.json",
    )
    .unwrap();
    let runs: Vec<usize> = r.targets[0]
        .phases
        .iter()
        .filter(|p| p.name.starts_with("fileio4-rnd"))
        .map(|p| p.repeats.as_ref().map_or(1, |rp| rp.runs.len()))
        .collect();
    assert_eq!(
        runs,
        [3, 3],
        "each of the set's two runs three times, kept once"
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("<h3>CrystalDiskMark's rows</h3>") && page.contains("RND4K Q32T1"));
    let md = spindle(&["report", "show", "--markdown", out.to_str().unwrap()]);
    assert_ok(&md);
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.contains("| disk | RND4K Q1T1 | "), "{md}");
    // Every measured phase is a row with its validity colour.
    let rows = md
        .lines()
        .filter(|l| l.starts_with("| disk | fileio"))
        .count();
    assert_eq!(rows, 11, "{md}");
    // The A1/A2 check from its three jobs, with the margins, in every rendering.
    let class = summary
        .lines()
        .find(|l| l.trim_start().starts_with("disk ") && l.contains("sequential write"))
        .unwrap_or_else(|| panic!("no A1/A2 line: {summary}"));
    assert!(
        ["A2: ", "A1: ", "below A1: "]
            .iter()
            .any(|v| class.contains(v))
            && class.contains("of A1's 1,500"),
        "{class}"
    );
    assert!(page.contains("<h3>Application performance class (A1/A2)</h3>"));
    assert!(md.contains("A1/A2 on disk: "), "{md}");
}

#[test]
fn the_standard_profile_runs_the_a1_a2_check_with_the_published_jobs_options() {
    // raspberrypi-ui/agnostics data/sd_bench.fio: size=64m, direct=1, ioengine=libaio,
    // iodepth=4; seq-write bs=512k (one pass); rand-4k-write and rand-4k-read bs=4k runtime=10;
    // end_fsync=1 and no fsync between requests.
    use spindle::fileio::TestMode::{Rndrd, Rndwr, Seqwr};
    use spindle::report::appclass::{is_job, RND_BLOCK, SEQ_BLOCK};
    let p = spindle::config::profile::SuiteProfile::load("standard").unwrap();
    let mut found = vec![];
    for set in &p.fileio {
        for &mode in &set.modes {
            let mut o = set.base.clone();
            o.test_mode = Some(mode);
            o.threads = set.threads[0];
            o.total_size = set.total.bytes(8 << 30);
            let block = if mode == Seqwr { SEQ_BLOCK } else { RND_BLOCK };
            if set.threads.len() == 1 && is_job(&o, mode, block) {
                assert_eq!(o.fsync_freq, 0, "{mode:?}");
                assert!(o.fsync_end, "{mode:?}: fio's end_fsync=1");
                match mode {
                    Seqwr => assert_eq!(
                        (o.time_limit, o.events * o.block_size),
                        (None, 64 << 20),
                        "one pass over the 64 MiB file"
                    ),
                    _ => assert_eq!(o.time_limit, Some(std::time::Duration::from_secs(10))),
                }
                found.push(mode);
            }
        }
    }
    found.sort_by_key(|m| format!("{m:?}"));
    assert_eq!(found, [Rndrd, Rndwr, Seqwr]);
}
