//! report.html from small documents: the answer's ranking and ratios, doubts, the disk facts of
//! a discovery record read from a Pi 4 fixture tree, the temperature timeline with throttling,
//! and pages for runs that have not measured anything yet.

use super::render_html;
use crate::engine::Counters;
use crate::model::bench::tests_support::sample_fileio_result;
use crate::model::{BenchResult, TestOptions, ToolInfo};
use crate::model::{
    PhaseResult, PhaseStatus, ProfileRecord, RunStatus, SuiteResult, TargetKind, TargetResult,
    SUITE_SCHEMA_VERSION,
};
use crate::sys::state::StateSample;
use crate::sys::HostInfo;

fn result(mode: crate::fileio::TestMode, iops: f64) -> BenchResult {
    let mut r = sample_fileio_result();
    if let TestOptions::Fileio(c) = &mut r.options {
        c.test_mode = Some(mode);
        c.extra_flags.direct = true;
    }
    if let Counters::Fileio(c) = &mut r.counters {
        c.reads_per_s = iops;
        c.read_mib_per_s = iops / 64.0;
    }
    // long enough for a steady state: no doubt about that
    r.measurement.total_time_s = 60.0;
    r
}

fn phase(name: &str, status: PhaseStatus, r: Option<BenchResult>) -> PhaseResult {
    PhaseResult {
        seconds: 10.0,
        error: (status != PhaseStatus::Ok).then(|| "the disk went away".to_string()),
        result: r,
        ..PhaseResult::new(name, None, status)
    }
}

fn target(name: &str, iops: f64) -> TargetResult {
    use crate::fileio::TestMode::{Rndrd, Seqrd};
    TargetResult {
        preparation: vec![format!("mkfs.ext4 -q -L spindle /dev/{name}1")],
        phases: vec![
            phase(
                "fileio-rndrd-t1",
                PhaseStatus::Ok,
                Some(result(Rndrd, iops)),
            ),
            phase(
                "fileio-seqrd-t1",
                PhaseStatus::Ok,
                Some(result(Seqrd, iops * 4.0)),
            ),
        ],
        ..TargetResult::new(
            name,
            &format!("/mnt/{name}"),
            TargetKind::Disk,
            &format!("{name} disk"),
        )
    }
}

fn suite(targets: Vec<TargetResult>) -> SuiteResult {
    SuiteResult {
        schema_version: SUITE_SCHEMA_VERSION,
        tool: ToolInfo::spindle("1.0"),
        host: HostInfo {
            hostname: "pi".into(),
            ram_bytes: 4 << 30,
            board_model: Some("Raspberry Pi 4 Model B Rev 1.4".into()),
            ..Default::default()
        },
        run_id: "pi-1".into(),
        started_at: "2025-01-01T00:00:00Z".into(),
        finished_at: Some("2025-01-01T01:00:00Z".into()),
        status: RunStatus::Complete,
        profile: ProfileRecord {
            name: "standard".into(),
            ..Default::default()
        },
        environment: None,
        governor: None,
        targets,
        together: None,
        skipped: vec![],
    }
}

#[test]
fn the_answer_ranks_the_targets_with_ratios_per_family() {
    let page = render_html(&suite(vec![target("hdd", 100.0), target("ssd", 830.0)]));
    let answer = &page[page.find("id=\"answer\"").unwrap()..page.find("id=\"tests\"").unwrap()];
    assert!(
        answer.contains("ssd is 8.3× hdd in fileio random"),
        "{answer}"
    );
    assert!(answer.contains("Overall ssd is 8.3× hdd"), "{answer}");
    // ssd ranks first, with 1.00× overall; hdd 0.12×.
    let first_row = answer.find("<td class=\"n\">1</td>").unwrap();
    assert!(answer[first_row..].starts_with("<td class=\"n\">1</td><td><b>ssd</b>"));
    assert!(answer.contains("<b>0.12×</b>"), "{answer}");
    assert!(answer.contains("No doubts found"), "{answer}");
}

#[test]
fn doubts_name_failed_phases_throttling_and_slow_links() {
    let mut hdd = target("hdd", 100.0);
    hdd.phases[0].status = PhaseStatus::Failed;
    hdd.samples = vec![
        StateSample {
            t_s: 0.0,
            temp_c: Some(61.0),
            throttled: Some(0),
            undervoltage: Some(false),
        },
        StateSample {
            t_s: 5.0,
            temp_c: Some(82.5),
            throttled: Some(0x50005),
            undervoltage: Some(true),
        },
        StateSample {
            t_s: 10.0,
            temp_c: Some(80.0),
            throttled: Some(0x50000),
            undervoltage: Some(false),
        },
    ];
    let root = crate::sys::SysRoot::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/pi4-usb2-port"
    ));
    let slow = crate::disk::scan(&root, false)
        .unwrap()
        .into_iter()
        .find(|d| {
            d.usb
                .as_ref()
                .is_some_and(|u| u.link_speed.is_some_and(|l| !l.is_superspeed()))
        })
        .expect("the fixture has a disk on a USB 2 link");
    let mut ssd = target("ssd", 830.0);
    ssd.disk = Some(slow);
    let mut s = suite(vec![hdd, ssd]);
    s.status = RunStatus::Aborted;
    let page = render_html(&s);
    for want in [
        "The run is aborted",
        "[1] hdd (fileio-rndrd-t1): did not finish (failed): the figures are partial.",
        "[2] hdd (every result): the Pi reported under-voltage now",
        "[3] ssd (every result): on a High-Speed 480 Mb/s link, not USB 3",
        "100 (failed) <sup title=\"doubts\">1,2</sup>",
        "Not in the scores",
        "max 82.5 °C",
        "under-voltage: SEEN: the supply voltage dropped too low; throttling: under-voltage now",
    ] {
        assert!(page.contains(want), "missing {want:?}");
    }
    // The red throttling band and the measurement bands are drawn on the timeline.
    assert!(page.contains("fill=\"#d1242f\""));
    assert!(page.contains(">rndrd-t1<"));
}

#[test]
fn the_environment_shows_a_fixture_disk_and_says_what_was_not_recorded() {
    let root = crate::sys::SysRoot::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/pi4-hub"
    ));
    let disks = crate::disk::scan(&root, false).unwrap();
    let jm = disks
        .iter()
        .find(|d| d.usb.as_ref().and_then(|u| u.vid_pid()).as_deref() == Some("152d:0578"))
        .expect("the pi4-hub fixture has a JMicron bridge (behind a hub)");
    let mut t = target("sda", 500.0);
    t.disk = Some(jm.clone());
    let page = render_html(&suite(vec![t]));
    let env = &page[page.find("id=\"environment\"").unwrap()..];
    for want in [
        "152d:0578 (JMicron JMS578)",
        "SuperSpeed 5 Gb/s",
        "<code>mkfs.ext4 -q -L spindle /dev/sda1</code>",
        "ext4",
        "Raspberry Pi 4 Model B Rev 1.4",
    ] {
        assert!(env.contains(want), "missing {want:?} in {env}");
    }
    if let Some(d) = &jm.usb.as_ref().unwrap().driver {
        assert!(env.contains(&format!("<td>{d}</td>")), "driver {d}");
    }
    // Facts nobody collected yet are said to be missing, not left blank.
    let quirks = &env[env.find("usb-storage quirks").unwrap()..];
    assert!(quirks[..200].contains("not recorded"), "{}", &quirks[..200]);
    assert!(page.contains("One target was measured"));
}

#[test]
fn a_run_without_results_still_makes_a_page() {
    let mut s = suite(vec![]);
    s.status = RunStatus::Running;
    s.finished_at = None;
    let page = render_html(&s);
    assert!(page.contains("No test has produced a figure yet"));
    assert!(page.contains("still going"));
    assert!(page.trim_end().ends_with("</html>"));
    let mut t = target("sda", 1.0);
    t.phases.clear();
    let page = render_html(&suite(vec![t]));
    assert!(page.contains("No measurement has run yet"));
}

#[test]
fn an_interrupted_run_says_where_it_stopped_at_the_top() {
    let mut sda = target("sda", 100.0);
    sda.phases[1].status = PhaseStatus::Interrupted;
    let mut s = suite(vec![
        sda,
        TargetResult {
            phases: vec![],
            ..target("sdb", 1.0)
        },
    ]);
    s.status = RunStatus::Interrupted;
    let page = render_html(&s);
    let top = &page[..page.find("<nav>").unwrap()];
    assert!(
        top.contains("<p class=\"doubts\">INTERRUPTED: the machine lost power or spindle stopped during sda fileio-seqrd-t1. The numbers below are the phases that finished before. Targets not reached: sdb.</p>"),
        "{top}"
    );
    s.status = RunStatus::Complete;
    assert!(!render_html(&s).contains("INTERRUPTED"));
}

#[test]
fn a_short_run_shows_every_interval_or_says_it_was_too_short_for_a_time_series() {
    use crate::engine::{IntervalRates, IntervalSample};
    let sample = |t: f64| IntervalSample {
        time_s: t,
        threads: 1,
        events: 100,
        latency_pct_ms: 1.0,
        latency_max_ms: 2.0,
        p95_ms: 1.0,
        p99_ms: 1.5,
        rates: IntervalRates::Fileio {
            read_mib_per_s: 10.0,
            written_mib_per_s: 0.0,
            reads_per_s: 100.0 + t,
            writes_per_s: 0.0,
            fsyncs_per_s: 0.0,
        },
    };
    let mut ssd = target("ssd", 830.0);
    ssd.phases.truncate(1);
    let r = ssd.phases[0].result.as_mut().unwrap();
    r.measurement.intervals = vec![sample(1.0), sample(2.0), sample(3.0)];
    let page = render_html(&suite(vec![ssd.clone()]));
    let over_time = &page[page.find("fileio-rndrd-t1 req/s over time").unwrap()..];
    let chart = &over_time[..over_time.find("</svg>").unwrap()];
    assert_eq!(
        chart.matches("<circle").count(),
        3,
        "a dot on every interval"
    );
    // one interval: no chart that is a single dot, but a sentence
    let r = ssd.phases[0].result.as_mut().unwrap();
    r.measurement.intervals.truncate(1);
    let page = render_html(&suite(vec![ssd]));
    assert!(!page.contains("fileio-rndrd-t1 req/s over time"));
    assert!(
        page.contains("Over time: the run was too short for a time series (one report interval of 1 s); the figures above are the whole run."),
        "the page says why there is no chart"
    );
}

#[test]
fn each_test_section_shows_the_validity_verdict_of_its_results() {
    let mut ssd = target("ssd", 830.0);
    ssd.filesystem = Some(crate::model::FilesystemRecord {
        fs_type: "tmpfs".into(),
        source: Some("tmpfs".into()),
        in_ram: true,
    });
    let page = render_html(&suite(vec![target("hdd", 100.0), ssd]));
    let tests = &page[page.find("id=\"tests\"").unwrap()..];
    assert!(
        tests.contains(
            "ssd: validity: <b class=\"v-red\">red</b> — in_ram (red): on tmpfs, a filesystem in RAM: not a disk figure."
        ),
        "{tests}"
    );
    // hdd: a disk with no discovery record, so its link is not known: amber, not green
    assert!(
        tests.contains("hdd: validity: <b class=\"v-amber\">amber</b> — link_ceiling (amber): not judged: link unknown (the disk&#39;s discovery record is missing)"),
        "{tests}"
    );
}
