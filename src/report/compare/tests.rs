//! The comparison's rules, pinned on small documents: matching by stable id, ratios to a disk
//! or a run, median and spread of repeats, parameter differences kept apart, the CSV shape.

use super::*;
use crate::engine::Counters;
use crate::fileio::TestMode;
use crate::model::bench::tests_support::sample_fileio_result;
use crate::model::load::{single_test_run, Loaded};
use crate::model::TestOptions;

/// A run with one disk target `serial` and one rndrw result of `iops` requests/s.
fn run(run_id: &str, serial: &str, iops: f64, total_size: u64) -> Loaded {
    let mut r = sample_fileio_result();
    if let TestOptions::Fileio(c) = &mut r.options {
        c.test_mode = Some(TestMode::Rndrw);
        c.total_size = total_size;
    }
    if let Counters::Fileio(c) = &mut r.counters {
        c.reads_per_s = iops * 0.6;
        c.writes_per_s = iops * 0.4;
    }
    let mut s = single_test_run(r, run_id);
    s.targets[0].name = format!("sd{}", &serial[..1]);
    s.targets[0].kind = crate::model::TargetKind::Disk;
    s.targets[0].disk = serde_json::from_value(serde_json::json!({
        "name": s.targets[0].name, "path": "/dev/x", "serial": serial,
        "stable_id": format!("usb-{serial}"), "model": format!("Model {serial}"),
        "removable": false, "read_only": false, "content_read": true, "swap": false,
        "stick_marker": false
    }))
    .expect("a disk record");
    Loaded {
        origin: format!("/sticks/{run_id}/results.json"),
        suite: s,
    }
}

const G: u64 = 1 << 30;

#[test]
fn disks_are_matched_by_stable_id_and_compared_with_the_first() {
    let inputs = [
        run("r1", "ssd1", 1000.0, G),
        run("r2", "hdd1", 100.0, G),
        run("r3", "ssd1", 1200.0, G),
    ];
    let c = compare(&inputs, &[], None).unwrap();
    assert_eq!(c.disks.len(), 2, "{:?}", c.disks);
    assert_eq!(c.baseline, Baseline::Disk(0));
    assert_eq!(c.tests.len(), 1);
    let t = &c.tests[0];
    assert_eq!(t.apart, None);
    let ssd = t.rows.iter().find(|r| r.disk == 0).unwrap();
    assert_eq!(ssd.n, 2);
    assert!((ssd.median.unwrap() - 1100.0).abs() < 1e-9);
    assert_eq!((ssd.min, ssd.max), (1000.0, 1200.0));
    let hdd = t.rows.iter().find(|r| r.disk == 1).unwrap();
    assert!((hdd.ratio.unwrap() - 100.0 / 1100.0).abs() < 1e-9);
    let s = c.summary.iter().find(|s| s.disk == 1).unwrap();
    assert_eq!((s.wins, s.losses), (0, 1));
    assert!((s.overall.unwrap() - 100.0 / 1100.0).abs() < 1e-9);
    let text = text::render(&c);
    assert!(
        text.contains("0.09×") && text.contains("1100 ±9.1%"),
        "{text}"
    );
}

#[test]
fn a_run_baseline_compares_each_disk_with_itself() {
    let inputs = [
        run("before", "ssd1", 1000.0, G),
        run("after", "ssd1", 1500.0, G),
    ];
    let c = compare(&inputs, &[], Some("before")).unwrap();
    assert_eq!(c.baseline, Baseline::Run(0));
    let row = &c.tests[0].rows[0];
    assert_eq!(row.median, Some(1500.0));
    assert!((row.ratio.unwrap() - 1.5).abs() < 1e-9);
    assert_eq!((c.summary[0].wins, c.summary[0].losses), (1, 0));
    // The path as typed also names the run; a disk by serial or target name.
    let given = ["/sticks/before/".to_string(), "/sticks/after/".to_string()];
    let c = compare(&inputs, &given, Some("/sticks/after")).unwrap();
    assert_eq!(c.baseline, Baseline::Run(1));
    let c = compare(&inputs, &[], Some("ssd1")).unwrap();
    assert_eq!(c.baseline, Baseline::Disk(0));
    let e = compare(&inputs, &[], Some("nope")).unwrap_err().to_string();
    assert!(
        e.contains("--baseline 'nope'") && e.contains("before"),
        "{e}"
    );
}

#[test]
fn different_parameters_are_kept_apart_with_the_reason() {
    let inputs = [
        run("r1", "ssd1", 1000.0, G),
        run("r2", "hdd1", 100.0, 4 * G),
    ];
    let c = compare(&inputs, &[], None).unwrap();
    assert_eq!(c.tests.len(), 2);
    let apart = c.tests.iter().find(|t| t.apart.is_some()).unwrap();
    let why = apart.apart.as_ref().unwrap();
    assert_eq!(why, &vec![format!("total_size {} vs {}", G, 4 * G)]);
    assert!(apart.rows.iter().all(|r| r.ratio.is_none()));
    // Nothing from the apart variant reaches the summary.
    let hdd = c.summary.iter().find(|s| s.disk == 1).unwrap();
    assert_eq!(hdd.overall, None);
    assert_eq!((hdd.wins, hdd.losses), (0, 0));
    let text = text::render(&c);
    assert!(
        text.contains("NOT COMPARED") && text.contains("total_size"),
        "{text}"
    );
}

#[test]
fn the_csv_has_one_row_per_run_disk_test_and_metric() {
    let inputs = [
        run("r1", "ssd1", 1000.0, G),
        run("r2", "hdd1", 100.0, 4 * G),
    ];
    let c = compare(&inputs, &[], None).unwrap();
    let text = csv::render(&inputs, &c);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], csv::HEADER);
    let per = csv::metrics(&inputs[0].suite.targets[0].phases[0].result.clone().unwrap()).len();
    assert_eq!(lines.len(), 1 + 2 * per);
    let cols = csv::HEADER.split(',').count();
    let score: Vec<&str> = lines
        .iter()
        .filter(|l| l.contains(",score,"))
        .copied()
        .collect();
    assert_eq!(score.len(), 2);
    assert!(
        score[0].starts_with("r1,") && score[0].contains(",yes,"),
        "{}",
        score[0]
    );
    assert!(score[1].contains(",no,"), "{}", score[1]);
    for l in &lines {
        // The params column is quoted (it holds commas); count fields outside quotes.
        let mut n = 1;
        let mut quoted = false;
        for ch in l.chars() {
            match ch {
                '"' => quoted = !quoted,
                ',' if !quoted => n += 1,
                _ => {}
            }
        }
        assert_eq!(n, cols, "{l}");
    }
}

#[test]
fn the_html_page_is_self_contained() {
    let inputs = [
        run("r1", "ssd1", 1000.0, G),
        run("r2", "hdd1", 100.0, 4 * G),
    ];
    let c = compare(&inputs, &[], None).unwrap();
    let page = html::render(&c);
    assert!(page.starts_with("<!DOCTYPE html>") && page.trim_end().ends_with("</html>"));
    assert!(page.contains("Shown apart") && page.contains("total_size"));
    assert!(!page.contains("http") && !page.contains("src="));
}

#[test]
fn every_figure_keeps_its_doubts_numbered_once_for_the_comparison() {
    // 1 GiB files without O_DIRECT on an 8 GiB machine: the page cache may serve them; the
    // documents' runs of 2 s are short. r2 ran on a machine with 512 MiB: no page-cache doubt.
    let mut inputs = [
        run("r1", "ssd1", 1000.0, G),
        run("r2", "hdd1", 100.0, G),
        run("r3", "ssd1", 1300.0, G),
    ];
    for l in &mut inputs {
        l.suite.host.ram_bytes = 8 * G;
    }
    inputs[1].suite.host.ram_bytes = G / 2;
    let c = compare(&inputs, &[], None).unwrap();
    let text = text::render(&c);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  [") && l.contains(" in run"))
        .collect();
    assert_eq!(
        lines,
        [
            "  [1] sds in runs 1, 3: the 1.0 GiB file set is smaller than RAM (8.0 GiB) and not opened O_DIRECT: the page cache may serve it; not I/O-bound.",
            "  [2] sds in runs 1, 3; sdh in run 2: measured for less than 30 s: too short for a steady state (the disk's own cache, write-back and warm-up weigh more than in a longer run)."
        ],
        "{text}"
    );
    let ssd = &c.tests[0].rows.iter().find(|r| r.disk == 0).unwrap();
    let hdd = &c.tests[0].rows.iter().find(|r| r.disk == 1).unwrap();
    assert_eq!(
        (ssd.doubts.clone(), hdd.doubts.clone()),
        (vec![1, 2], vec![2])
    );
    assert!(
        text.contains(" 1,2     amber    [1] 1000, [3] 1300"),
        "{text}"
    );
    let page = html::render(&c);
    assert!(page.contains("<li>[1] sds in runs 1, 3: the 1.0 GiB file set"));
}

#[test]
fn each_figure_shows_its_verdict_per_run_and_the_reasons_no_doubt_states() {
    // The same USB 2.0 disk twice: run 1 read 200 MiB/s (above the 57.2 MiB/s the link can
    // carry at all: red), run 2 read 20 MiB/s.
    let mut inputs = [run("r1", "ssd1", 1000.0, G), run("r2", "ssd1", 900.0, G)];
    for (l, mib) in inputs.iter_mut().zip([200.0, 20.0]) {
        let t = &mut l.suite.targets[0];
        let d = t.disk.as_mut().unwrap();
        d.transport = Some(crate::disk::Transport::Usb);
        d.usb = Some(crate::disk::UsbInfo {
            link_speed: Some(crate::disk::LinkSpeed(480.0)),
            ..Default::default()
        });
        let r = t.phases[0].result.as_mut().unwrap();
        if let Counters::Fileio(c) = &mut r.counters {
            c.read_mib_per_s = mib;
        }
    }
    let c = compare(&inputs, &[], Some("r1")).unwrap();
    // A red figure is never compared with one that is not: run 2's is kept apart, saying why.
    assert_eq!(c.tests.len(), 2, "{:?}", c.tests);
    let row = &c.tests[0].rows[0];
    assert_eq!(row.validity, vec![(0, Colour::Red)]);
    assert_eq!(text::validity_cell(row), "red");
    let apart = c.tests[1]
        .apart
        .as_ref()
        .expect("run 2 kept apart")
        .join("; ");
    assert_eq!(apart, "validity red vs green or amber");
    assert_ne!(c.tests[1].rows[0].validity[0].1, Colour::Red);
    let text = text::render(&c);
    assert!(
        text.contains("validity red (link_ceiling): ") && text.contains("200"),
        "{text}"
    );
    assert!(text.contains("parameters differ: validity red vs green or amber"));
    assert!(html::render(&c).contains("the parameters differ — validity red vs green or amber"));
    let rows = csv::render(&inputs, &c);
    // validity,metric,unit,value end each row (params before them hold commas).
    assert!(csv::HEADER.ends_with(",validity,metric,unit,value"));
    let verdicts: Vec<&str> = rows
        .lines()
        .skip(1)
        .filter(|l| l.contains(",score,"))
        .map(|l| l.rsplit(',').nth(3).unwrap())
        .collect();
    assert_eq!(verdicts[0], "red", "{rows}");
    assert_ne!(verdicts[1], "red", "{rows}");
}

#[test]
fn database_figures_compare_only_on_the_same_server_flavor_and_settings() {
    // One OLTP figure per run; the servers' paths differ, their flavor and buffer pool may.
    let oltp = |id: &str, flavor: &str, pool: &str, dir: &str| {
        let mut l = run(id, "ssd1", 1000.0, G);
        let t = &mut l.suite.targets[0];
        let r = t.phases[0].result.as_mut().unwrap();
        r.options = TestOptions::Oltp(Box::default());
        r.counters = Counters::Oltp(crate::engine::OltpCounters {
            tps: 500.0,
            ..Default::default()
        });
        t.phases[0].name = "oltp-read_write-t4".into();
        t.servers = vec![crate::model::ServerInfo {
            flavor: flavor.into(),
            settings: [
                ("innodb_buffer_pool_size".to_string(), pool.to_string()),
                ("log_bin".to_string(), format!("{dir}/binlog/mysql-bin")),
            ]
            .into(),
            ..Default::default()
        }];
        l
    };
    let same = [
        oltp("r1", "MariaDB", "256M", "/a"),
        oltp("r2", "MariaDB", "256M", "/b"),
    ];
    let c = compare(&same, &[], Some("r1")).unwrap();
    assert!(c.tests.iter().all(|t| t.apart.is_none()), "{:?}", c.tests);
    let other = [
        oltp("r1", "MariaDB", "256M", "/a"),
        oltp("r2", "MySQL", "1G", "/a"),
    ];
    let c = compare(&other, &[], Some("r1")).unwrap();
    let apart = c.tests.iter().find_map(|t| t.apart.clone()).unwrap();
    assert_eq!(
        apart,
        vec![
            "server_flavor MariaDB vs MySQL".to_string(),
            "server_settings.innodb_buffer_pool_size 256M vs 1G".to_string()
        ]
    );
}

/// `l` with its one figure repeated: `values` as the runs, the first kept.
fn repeated(mut l: Loaded, values: &[f64]) -> Loaded {
    use crate::model::repeat::{RepeatRun, Repeats};
    let runs = values
        .iter()
        .map(|&value| RepeatRun {
            value,
            unit: "req/s".into(),
            p99_ms: Some(1.0),
            ok: true,
            seconds: 1.0,
        })
        .collect();
    l.suite.targets[0].phases[0].repeats = Some(Repeats {
        runs,
        kept: 0,
        until_ci_pct: None,
    });
    l
}

#[test]
fn a_verdict_between_single_runs_says_what_its_interval_leaves_out() {
    let a = |id: &str, s: &str, v: f64| repeated(run(id, s, v, G), &[v, v * 1.01, v * 0.99]);
    // A run against a run: the baseline side is one run, whatever else is given.
    let c = compare(
        &[a("r1", "ssd1", 1000.0), a("r2", "ssd1", 1300.0)],
        &[],
        Some("r1"),
    )
    .unwrap();
    assert!(c.tests[0].rows[0].difference.is_some());
    let note = text::scope_note(&c).expect("a note for one run against one");
    assert!(
        note.contains("runs of each disk, taken at different times"),
        "{note}"
    );
    assert!(text::render(&c).contains(note));
    assert!(html::render(&c).contains(&crate::report::html::page::esc(note)));
    // Two disks, each measured in two runs: the occasions' spread is in both sides' repeats.
    let both = [
        a("r1", "ssd1", 1000.0),
        a("r2", "hdd1", 100.0),
        a("r3", "ssd1", 1100.0),
        a("r4", "hdd1", 110.0),
    ];
    let c = compare(&both, &[], None).unwrap();
    assert!(c.tests[0].rows.iter().any(|r| r.difference.is_some()));
    assert_eq!(text::scope_note(&c), None);
    // Without repeats there is no verdict, so nothing to qualify.
    let c = compare(
        &[run("r1", "ssd1", 1.0, G), run("r2", "ssd1", 2.0, G)],
        &[],
        Some("r1"),
    );
    assert_eq!(text::scope_note(&c.unwrap()), None);
}
