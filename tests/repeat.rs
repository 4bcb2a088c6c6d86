//! Repeats and trusted comparisons (issue 39, item 1), on real runs: `spindle suite --repeat 3`
//! twice with the same profile on the same directory (an A/A pair), then `report compare`.
//! - The A/A pair: every figure gets a verdict (the share "not distinguishable" is printed: see
//!   the end of the test for why it is not asserted).
//! - The intervals are reproducible: the same bundles give the same comparison, and every
//!   repeated result's statistics are recomputed from the runs the bundle records.
//! - A pair that really differs (the second run's figures of one test halved, everything else
//!   as measured) is called slower, with an interval below 1.
//! - Mismatched workloads are kept apart with what differs named: a block size, a validity
//!   colour.
//!
//! The runs are on tmpfs (`/dev/shm`): there the figures are the CPU's and memory's, which
//! hold still on an idle machine. This VM's virtio disk does not: its own speed swung several-
//! fold between bundles a minute apart (random 16 KiB reads at 2k and at 17k requests/s, load
//! average under 2), and an A/A pair there is rightly called different. One test in this
//! binary, so nothing of the suite's own runs beside it.

mod common;

use common::{assert_ok, spindle};
use spindle::model::load::{load, Loaded};
use spindle::model::{Colour, SuiteResult};
use spindle::report::compare::{compare, Baseline};
use spindle::stats::repeat::Verdict;
use std::path::Path;

fn suite(dir: &Path, out: &Path) {
    let profile = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/profiles/aa.toml");
    assert_ok(&spindle(&[
        "suite",
        "--target",
        dir.to_str().unwrap(),
        "--profile",
        profile.to_str().unwrap(),
        "--repeat",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]));
}

/// `suite` written as another bundle's results.json, loaded back.
fn derived(dir: &Path, s: &SuiteResult) -> Loaded {
    std::fs::create_dir_all(dir).unwrap();
    let f = dir.join("results.json");
    std::fs::write(&f, serde_json::to_string(s).unwrap()).unwrap();
    load(dir).unwrap()
}

#[test]
fn a_a_runs_get_verdicts_a_real_difference_is_called_and_mismatches_are_kept_apart() {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let shm = tempfile::tempdir_in("/dev/shm").expect("tmpfs at /dev/shm");
    let target = shm.path().join("disk");
    std::fs::create_dir_all(&target).unwrap();
    let (b1, b2) = (d.path().join("b1"), d.path().join("b2"));
    suite(&target, &b1);
    suite(&target, &b2);
    let runs = [load(&b1).unwrap(), load(&b2).unwrap()];
    let given = [b1.display().to_string(), b2.display().to_string()];
    let base = runs[0].suite.run_id.clone();

    // Every measurement ran 3 times; the kept result is the median run's.
    for p in runs[0].suite.targets[0]
        .phases
        .iter()
        .filter(|p| p.result.is_some())
    {
        let rp = p
            .repeats
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no repeats", p.name));
        assert_eq!(rp.runs.len(), 3, "{}", p.name);
        let kept = spindle::report::metric::primary(p.result.as_ref().unwrap()).value;
        let mut v = rp.values();
        v.sort_by(f64::total_cmp);
        // (serde_json reads floats back to within one unit in the last place.)
        assert!(
            (kept - v[1]).abs() <= 1e-9 * kept,
            "{}: the median run is kept: {kept} vs {v:?}",
            p.name
        );
    }

    // A/A: every figure compared (the share not distinguishable is printed at the end).
    let c = compare(&runs, &given, Some(&base)).unwrap();
    assert_eq!(c.baseline, Baseline::Run(0));
    let verdicts: Vec<(String, Verdict)> = c
        .tests
        .iter()
        .filter(|t| t.apart.is_none())
        .flat_map(|t| {
            t.rows
                .iter()
                .filter_map(|r| Some((t.test.clone(), r.difference?.verdict)))
        })
        .collect();
    let apart: Vec<&str> = c
        .tests
        .iter()
        .filter(|t| t.apart.is_some())
        .map(|t| t.test.as_str())
        .collect();
    assert!(
        verdicts.len() + apart.len() >= 10 && apart.len() <= 1,
        "every figure compared: {verdicts:?}, apart {apart:?}"
    );

    // Reproducible: the same bundles, the same comparison, to the last digit of every interval.
    assert_eq!(compare(&runs, &given, Some(&base)).unwrap(), c);
    let text = |args: &[&str]| assert_ok(&spindle(args));
    let args = [
        "report",
        "compare",
        b1.to_str().unwrap(),
        b2.to_str().unwrap(),
        "--baseline",
        &base,
    ];
    let first = text(&args);
    assert_eq!(text(&args), first);
    assert!(
        first.contains("95% interval of the mean") && first.contains("not distinguishable"),
        "{first}"
    );
    // One run against one: the comparison says what its intervals leave out.
    assert!(
        first.contains("runs of each disk, taken at different times"),
        "{first}"
    );
    let summary = std::fs::read_to_string(b1.join("summary.txt")).unwrap();
    assert!(
        summary.contains("repeats: 3 runs (the figures above are run ")
            && summary.contains(", 95 % interval "),
        "{summary}"
    );
    let csv = std::fs::read_to_string(b1.join("results.csv")).unwrap();
    assert!(
        csv.lines().next().unwrap().ends_with(
            ",validity,repeats,mean,median,cv_pct,ci95_low,ci95_high,p99_ci95_low_ms,p99_ci95_high_ms"
        ),
        "{csv}"
    );

    // A real difference: run 2's random reads at half their speed.
    let slow_test = "fileio-rndrd-t1";
    let mut slow = runs[1].suite.clone();
    let p = slow.targets[0]
        .phases
        .iter_mut()
        .find(|p| p.name == slow_test)
        .unwrap();
    for r in &mut p.repeats.as_mut().unwrap().runs {
        r.value /= 2.0;
    }
    let slowed = [runs[0].clone(), derived(&d.path().join("slow"), &slow)];
    let c = compare(&slowed, &[], Some(&base)).unwrap();
    let row = &c.tests.iter().find(|t| t.test == slow_test).unwrap().rows[0];
    let diff = row.difference.expect("a verdict with 3 repeats a side");
    assert_eq!(diff.verdict, Verdict::Lower, "{diff:?}");
    assert!(diff.ci.1 < 1.0 && diff.ci.0 < diff.ratio, "{diff:?}");
    let out = spindle::report::compare::text::render(&c);
    assert!(out.contains(&format!("slower {:.2}×", diff.ratio)), "{out}");

    // Mismatched workloads: another block size, another validity colour.
    let mut other = runs[1].suite.clone();
    for p in &mut other.targets[0].phases {
        match p.name.as_str() {
            "fileio-rndwr-t1" => {
                if let Some(spindle::model::TestOptions::Fileio(o)) =
                    p.result.as_mut().map(|r| &mut r.options)
                {
                    o.block_size = 8192;
                }
            }
            "fileio-seqrd-t1" => {
                let v = p.validity.as_mut().expect("schema 5: a stored verdict");
                v.verdict = if v.verdict == Colour::Red {
                    Colour::Green
                } else {
                    Colour::Red
                };
            }
            _ => {}
        }
    }
    let mixed = [runs[0].clone(), derived(&d.path().join("other"), &other)];
    let c = compare(&mixed, &[], Some(&base)).unwrap();
    let apart = |name: &str| {
        c.tests
            .iter()
            .find(|t| t.test == name && t.apart.is_some())
            .and_then(|t| t.apart.clone())
            .unwrap_or_else(|| panic!("{name} compared across different workloads"))
            .join("; ")
    };
    assert!(apart("fileio-rndwr-t1").contains("block_size 16384 vs 8192"));
    assert!(apart("fileio-seqrd-t1").starts_with("validity "));

    // The A/A share is printed, not asserted: on this 2-vCPU VM two bundles of the same profile
    // a minute apart can differ by 10-25 % (the whole run faster or slower with the host's
    // load), more than the spread of the repeats within one bundle. With Student's t in the
    // intervals seven release-build pairs had 8, 9, 4, 9, 9, 6 and 9 of 10 not distinguishable
    // (the 2-thread figures, which keep both vCPUs busy, moved most: up to 2.04x), and
    // ten 1-thread figures 84 % over five pairs (README; issue 39 keeps its 90 % point open).
    let same = verdicts
        .iter()
        .filter(|v| v.1 == Verdict::NotDistinguishable)
        .count();
    eprintln!(
        "A/A: {same} of {} not distinguishable: {verdicts:?}",
        verdicts.len()
    );
}
