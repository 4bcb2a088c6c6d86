//! `spindle report compare`: several runs (one appliance over time, or sticks from several
//! appliances) side by side. Disks are matched by their stable id across runs; every test keeps
//! one row per disk with the median and spread of its repeated runs and the ratio to the
//! baseline (a disk, or a run for a before/after view); results whose parameters differ from the
//! baseline's are kept apart with the differing options named, never compared silently. Every
//! figure keeps the doubts of the result it came from (`report::doubts`), numbered once for
//! the whole comparison, and its validity verdict (`report::validity`: the colour per run, and
//! the reasons no doubt states among the doubts). The per-family geometric means and the wins/losses summarise it.
//! [`compare`] is pure; the renderers are in [`text`], [`html`] and [`csv`].

pub mod csv;
pub mod html;
pub mod text;

use super::metric::{self, Family};
use super::params;
use crate::model::load::Loaded;
use crate::model::{Colour, PhaseResult, PhaseStatus, SuiteResult, TargetResult};
use crate::stats::repeat::{Difference, Summary};
use anyhow::bail;
use serde_json::Value;

/// One run compared.
#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    /// The file it was read from.
    pub origin: String,
    pub run_id: String,
    /// Board model or host name, and the host name.
    pub machine: String,
    pub profile: String,
    pub status: String,
    pub spindle: String,
}

/// One disk (or directory), matched across runs by its stable key.
#[derive(Clone, Debug, PartialEq)]
pub struct DiskInfo {
    pub key: String,
    /// The target names it had, joined with `/`.
    pub label: String,
    pub model: Option<String>,
    /// Serial number, for matching `--baseline`.
    pub serial: Option<String>,
}

/// What ratios are relative to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// Each test's figure of this disk (median over its runs).
    Disk(usize),
    /// Each disk's own figure in this run (before/after).
    Run(usize),
}

/// One disk's figures of one test.
#[derive(Clone, Debug, PartialEq)]
pub struct DiskRow {
    pub disk: usize,
    /// (run, figure, ran to its end) in run order.
    pub values: Vec<(usize, f64, bool)>,
    /// Median of the complete figures (without the baseline run's, for a run baseline).
    pub median: Option<f64>,
    /// Smallest and largest of those figures.
    pub min: f64,
    pub max: f64,
    /// The number of figures the median is over.
    pub n: usize,
    pub ratio: Option<f64>,
    /// (run, doubt) of each figure's doubts, before numbering.
    doubt_texts: Vec<(usize, String)>,
    /// The numbers (from 1) of the doubts about this row's figures, in [`Comparison::doubts`].
    pub doubts: Vec<usize>,
    /// (run, verdict) of each figure (`report::validity`), in run order.
    pub validity: Vec<(usize, Colour)>,
    /// The repeats the median is over (every run of every figure pooled): mean, median, CV,
    /// the 95 % interval; for the figure and for its p99 latency.
    pub spread: Option<Summary>,
    pub p99: Option<Summary>,
    /// Against the baseline, with 2 or more repeats on both sides: the ratio of the means,
    /// its 95 % interval and faster / slower / not distinguishable; and the same for p99.
    pub difference: Option<Difference>,
    pub p99_difference: Option<Difference>,
    /// (run, repeats) behind this row's figures and their p99s, before pooling.
    samples: Vec<(usize, Vec<f64>, Vec<f64>)>,
}

/// One doubt of the comparison and the figures it holds for.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareDoubt {
    pub text: String,
    /// (disk, runs) of the figures it holds for.
    pub who: Vec<(usize, Vec<usize>)>,
}

/// One test, or one parameter variant of a test.
#[derive(Clone, Debug, PartialEq)]
pub struct TestTable {
    pub test: String,
    pub family: Family,
    pub unit: &'static str,
    /// The parameter line of the variant.
    pub params: String,
    /// Set when the parameters differ from the baseline's: the differing options.
    pub apart: Option<Vec<String>>,
    pub rows: Vec<DiskRow>,
}

/// A disk's summary over the comparable tests.
#[derive(Clone, Debug, PartialEq)]
pub struct DiskSummary {
    pub disk: usize,
    /// (family, geometric mean of the ratios, number of tests).
    pub families: Vec<(Family, f64, usize)>,
    pub overall: Option<f64>,
    pub wins: usize,
    pub losses: usize,
}

/// The whole comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub runs: Vec<RunInfo>,
    pub disks: Vec<DiskInfo>,
    pub baseline: Baseline,
    pub tests: Vec<TestTable>,
    pub summary: Vec<DiskSummary>,
    /// Every doubt of the figures compared, numbered from 1 in table order.
    pub doubts: Vec<CompareDoubt>,
}

impl Comparison {
    /// "disk sda (usb-…)" or "run host-2024…" for headings.
    pub fn baseline_label(&self) -> String {
        match self.baseline {
            Baseline::Disk(d) => format!("disk {} ({})", self.disks[d].label, self.disks[d].key),
            Baseline::Run(r) => format!("run {} ({})", self.runs[r].run_id, self.runs[r].origin),
        }
    }
}

/// One measured result of one run.
struct Entry {
    run: usize,
    disk: usize,
    test: String,
    family: Family,
    unit: &'static str,
    value: f64,
    ok: bool,
    fingerprint: Value,
    params: String,
    /// The result's doubts (`report::doubts`), then the reasons of its validity verdict that
    /// no doubt states (the link ceiling, the page cache at 2× RAM, USB trouble).
    doubts: Vec<String>,
    validity: Option<Colour>,
    /// Every repeat's figure (one when the phase ran once) and p99 latency.
    samples: Vec<f64>,
    p99s: Vec<f64>,
}

/// The validity rules whose reasons a comparison lists beside the doubts (the other rules
/// restate a doubt).
const OWN_RULES: &[&str] = &["link_ceiling", "page_cache", "usb_trouble"];

/// The doubts of phase `p` and its verdict.
fn doubts_and_verdict(
    s: &SuiteResult,
    t: &TargetResult,
    p: &PhaseResult,
) -> (Vec<String>, Option<Colour>) {
    use crate::report::doubts::{self, Kind};
    let found = doubts::of_result(s, t, p);
    // The page-cache doubt (under 1× RAM) already says what the rule (under 2×) would.
    let cache_said = found.iter().any(|d| d.kind == Kind::PageCache);
    let mut doubts: Vec<String> = found.into_iter().map(|d| d.text).collect();
    let v = crate::report::validity::of_phase(s, t, p);
    for r in v.iter().flat_map(|v| &v.reasons) {
        if OWN_RULES.contains(&r.rule.as_str()) && !(cache_said && r.rule == "page_cache") {
            doubts.push(format!(
                "validity {} ({}): {}",
                r.colour.word(),
                r.rule,
                r.text
            ));
        }
    }
    (doubts, v.map(|v| v.verdict))
}

fn collect(inputs: &[Loaded]) -> (Vec<RunInfo>, Vec<DiskInfo>, Vec<Entry>) {
    let mut runs = Vec::new();
    let mut disks: Vec<DiskInfo> = Vec::new();
    let mut entries = Vec::new();
    for (ri, l) in inputs.iter().enumerate() {
        let s = &l.suite;
        runs.push(RunInfo {
            origin: l.origin.clone(),
            run_id: s.run_id.clone(),
            machine: match &s.host.board_model {
                Some(b) => format!("{b} ({})", s.host.hostname),
                None => s.host.hostname.clone(),
            },
            profile: s.profile.name.clone(),
            status: s.status_line(),
            spindle: s.tool.version.clone(),
        });
        for t in &s.targets {
            let key = t.stable_key(&s.host.hostname);
            let di = match disks.iter().position(|d| d.key == key) {
                Some(i) => i,
                None => {
                    let f = t.disk_facts(s.environment.as_ref());
                    disks.push(DiskInfo {
                        key,
                        label: String::new(),
                        model: f.model,
                        serial: f.serial,
                    });
                    disks.len() - 1
                }
            };
            let d = &mut disks[di];
            if !d.label.split('/').any(|n| n == t.name) {
                d.label = if d.label.is_empty() {
                    t.name.clone()
                } else {
                    format!("{}/{}", d.label, t.name)
                };
            }
            for p in &t.phases {
                let Some(r) = &p.result else { continue };
                let Some(family) = metric::family(&p.name, Some(r)) else {
                    continue;
                };
                let m = metric::primary(r);
                let (doubts, validity) = doubts_and_verdict(s, t, p);
                let ok = p.status == PhaseStatus::Ok && m.value > 0.0;
                let (samples, p99s) = match &p.repeats {
                    Some(rp) => (rp.values(), rp.p99s()),
                    None if ok => (vec![m.value], metric::p99_ms(r).into_iter().collect()),
                    None => (vec![], vec![]),
                };
                entries.push(Entry {
                    run: ri,
                    disk: di,
                    test: p.name.clone(),
                    family,
                    unit: m.unit,
                    value: m.value,
                    ok,
                    fingerprint: workload(t, p, r, validity),
                    params: params::describe(r),
                    doubts,
                    validity,
                    samples,
                    p99s,
                });
            }
        }
    }
    (runs, disks, entries)
}

/// What must be equal for two figures to be compared: the test's options (`params`), the
/// server's flavor and pinned settings for a database test, and whether the validity verdict
/// is red — a red figure against a green or amber one compares a cache or a broken run with a
/// disk.
fn workload(
    t: &TargetResult,
    p: &PhaseResult,
    r: &crate::model::BenchResult,
    validity: Option<Colour>,
) -> Value {
    let mut fp = params::fingerprint(r);
    if let Value::Object(o) = &mut fp {
        if !matches!(r.options, crate::model::TestOptions::Fileio(_)) {
            let server = match &p.server {
                Some(k) => {
                    let name = k
                        .parse::<crate::provision::mysqld::Flavor>()
                        .map(|f| f.to_string())
                        .unwrap_or_default();
                    t.servers.iter().find(|v| v.flavor == name)
                }
                None => t.servers.first(),
            };
            if let Some(v) = server {
                o.insert("server_flavor".into(), Value::from(v.flavor.clone()));
                // Where a file went (the datadir, the binlog's base name) is not what is measured.
                let pinned: serde_json::Map<String, Value> = v
                    .settings
                    .iter()
                    .map(|(k, x)| {
                        let x = if x.starts_with('/') { "(a path)" } else { x };
                        (k.clone(), Value::from(x))
                    })
                    .collect();
                o.insert("server_settings".into(), Value::Object(pinned));
            }
        }
        // Red: the figure is not the disk's (a cache, a broken link). Green and amber are both
        // the disk's, amber with a doubt the validity column shows.
        if let Some(c) = validity {
            let judged = if c == Colour::Red {
                "red"
            } else {
                "green or amber"
            };
            o.insert("validity".into(), Value::from(judged));
        }
    }
    fp
}

/// Resolves `--baseline`: a run (run id or file/directory given) or a disk (stable id,
/// serial, target name). Default: the first disk of the first run.
fn resolve_baseline(
    arg: Option<&str>,
    given: &[String],
    runs: &[RunInfo],
    disks: &[DiskInfo],
) -> anyhow::Result<Baseline> {
    let Some(a) = arg.map(str::trim) else {
        if disks.is_empty() {
            bail!("no target in the runs given: nothing to compare");
        }
        return Ok(Baseline::Disk(0));
    };
    let run = runs.iter().enumerate().position(|(i, r)| {
        r.run_id == a
            || r.origin == a
            || given
                .get(i)
                .is_some_and(|g| g.trim_end_matches('/') == a.trim_end_matches('/'))
    });
    let disk = disks.iter().position(|d| {
        d.key == a
            || d.key.strip_prefix("/dev/disk/by-id/") == Some(a)
            || d.serial.as_deref() == Some(a)
            || d.label.split('/').any(|n| n == a)
    });
    match (run, disk) {
        (Some(_), Some(_)) => bail!(
            "--baseline '{a}' names both a run and a disk: give the run id or the disk's stable id"
        ),
        (Some(r), None) => Ok(Baseline::Run(r)),
        (None, Some(d)) => Ok(Baseline::Disk(d)),
        (None, None) => bail!(
            "--baseline '{a}' names no run or disk here: runs are {}; disks are {}",
            runs.iter()
                .map(|r| r.run_id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            disks
                .iter()
                .map(|d| format!("{} ({})", d.label, d.key))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The rows of one variant (entries of one test with equal parameters).
fn rows(variant: &[&Entry], baseline: Baseline) -> Vec<DiskRow> {
    let mut disks: Vec<usize> = variant.iter().map(|e| e.disk).collect();
    disks.sort_unstable();
    disks.dedup();
    let mut rows: Vec<DiskRow> = disks
        .into_iter()
        .map(|d| {
            let mine: Vec<&&Entry> = variant.iter().filter(|e| e.disk == d).collect();
            let values: Vec<(usize, f64, bool)> =
                mine.iter().map(|e| (e.run, e.value, e.ok)).collect();
            let others: Vec<f64> = mine
                .iter()
                .filter(|e| e.ok && baseline != Baseline::Run(e.run))
                .map(|e| e.value)
                .collect();
            let mut pool = if others.is_empty() {
                mine.iter().filter(|e| e.ok).map(|e| e.value).collect()
            } else {
                others
            };
            DiskRow {
                disk: d,
                values,
                n: pool.len(),
                min: pool.iter().cloned().fold(f64::INFINITY, f64::min),
                max: pool.iter().cloned().fold(0.0, f64::max),
                median: median(&mut pool),
                ratio: None,
                doubt_texts: mine
                    .iter()
                    .flat_map(|e| e.doubts.iter().map(|d| (e.run, d.clone())))
                    .collect(),
                doubts: vec![],
                validity: mine
                    .iter()
                    .filter_map(|e| e.validity.map(|v| (e.run, v)))
                    .collect(),
                spread: None,
                p99: None,
                difference: None,
                p99_difference: None,
                samples: mine
                    .iter()
                    .filter(|e| e.ok)
                    .map(|e| (e.run, e.samples.clone(), e.p99s.clone()))
                    .collect(),
            }
        })
        .collect();
    judge_rows(&mut rows, baseline);
    let base_disk = match baseline {
        Baseline::Disk(b) => rows.iter().find(|r| r.disk == b).and_then(|r| r.median),
        Baseline::Run(_) => None,
    };
    for r in &mut rows {
        let base = match baseline {
            Baseline::Disk(_) => base_disk,
            Baseline::Run(run) => r.values.iter().find(|v| v.0 == run && v.2).map(|v| v.1),
        };
        r.ratio = match (r.median, base) {
            (Some(m), Some(b)) if b > 0.0 => Some(m / b),
            _ => None,
        };
    }
    rows
}

/// The repeats of `row` pooled over its runs, without the baseline run's for a run baseline
/// (as its median is): (figures, p99s).
fn pooled(row: &DiskRow, baseline: Baseline) -> (Vec<f64>, Vec<f64>) {
    let others = row
        .samples
        .iter()
        .filter(|s| baseline != Baseline::Run(s.0))
        .count();
    let take = |s: &&(usize, Vec<f64>, Vec<f64>)| others == 0 || baseline != Baseline::Run(s.0);
    let v = row.samples.iter().filter(take).flat_map(|s| s.1.clone());
    let p = row.samples.iter().filter(take).flat_map(|s| s.2.clone());
    (v.collect(), p.collect())
}

/// Each row's spread over its repeats and its difference from the baseline's repeats (the
/// baseline disk's pooled, or this disk's in the baseline run).
fn judge_rows(rows: &mut [DiskRow], baseline: Baseline) {
    use crate::stats::repeat::{compare, summarise, NOISE};
    let base_disk = match baseline {
        Baseline::Disk(b) => rows
            .iter()
            .find(|r| r.disk == b)
            .map(|r| pooled(r, baseline)),
        Baseline::Run(_) => None,
    };
    for r in rows.iter_mut() {
        let (v, p) = pooled(r, baseline);
        r.spread = summarise(&v);
        r.p99 = summarise(&p);
        let base = match baseline {
            Baseline::Disk(b) if b == r.disk => None,
            Baseline::Disk(_) => base_disk.clone(),
            Baseline::Run(run) => r
                .samples
                .iter()
                .find(|s| s.0 == run)
                .filter(|_| r.samples.iter().any(|s| s.0 != run))
                .map(|s| (s.1.clone(), s.2.clone())),
        };
        if let Some((bv, bp)) = base {
            r.difference = compare(&v, &bv, NOISE);
            // Lower latency is better: renderers word p99's verdict higher or lower, not faster.
            r.p99_difference = compare(&p, &bp, NOISE);
        }
    }
}

/// Does this entry belong to the baseline?
fn is_baseline(e: &Entry, b: Baseline) -> bool {
    match b {
        Baseline::Disk(d) => e.disk == d,
        Baseline::Run(r) => e.run == r,
    }
}

fn tables(entries: &[Entry], baseline: Baseline) -> Vec<TestTable> {
    let mut names: Vec<&str> = Vec::new();
    for e in entries {
        if !names.contains(&e.test.as_str()) {
            names.push(&e.test);
        }
    }
    let mut out = Vec::new();
    for name in names {
        let all: Vec<&Entry> = entries.iter().filter(|e| e.test == name).collect();
        // Parameter variants, in first-seen order.
        let mut variants: Vec<Vec<&Entry>> = Vec::new();
        for e in &all {
            match variants
                .iter_mut()
                .find(|v| v[0].fingerprint == e.fingerprint)
            {
                Some(v) => v.push(e),
                None => variants.push(vec![e]),
            }
        }
        let reference = variants
            .iter()
            .position(|v| v.iter().any(|e| is_baseline(e, baseline)))
            .unwrap_or(0);
        let ref_fp = variants[reference][0].fingerprint.clone();
        for (vi, v) in variants.iter().enumerate() {
            let apart = (vi != reference).then(|| {
                let d = params::differences(&ref_fp, &v[0].fingerprint);
                if d.is_empty() {
                    vec!["different parameters".into()]
                } else {
                    d
                }
            });
            out.push(TestTable {
                test: name.to_string(),
                family: v[0].family,
                unit: v[0].unit,
                params: v[0].params.clone(),
                apart,
                rows: rows(v, baseline),
            });
        }
    }
    out
}

fn summarise(disks: usize, tables: &[TestTable], baseline: Baseline) -> Vec<DiskSummary> {
    (0..disks)
        .map(|d| {
            let mut families = Vec::new();
            let (mut wins, mut losses) = (0, 0);
            for f in Family::ALL {
                let ratios: Vec<f64> = tables
                    .iter()
                    .filter(|t| t.apart.is_none() && t.family == f)
                    .filter_map(|t| t.rows.iter().find(|r| r.disk == d)?.ratio)
                    .collect();
                if baseline != Baseline::Disk(d) {
                    wins += ratios.iter().filter(|r| **r > 1.0).count();
                    losses += ratios.iter().filter(|r| **r < 1.0).count();
                }
                if let Some(g) = metric::geomean(&ratios) {
                    families.push((f, g, ratios.len()));
                }
            }
            let g: Vec<f64> = families.iter().map(|f| f.1).collect();
            DiskSummary {
                disk: d,
                overall: metric::geomean(&g),
                families,
                wins,
                losses,
            }
        })
        .collect()
}

/// Numbers the rows' doubts in table order (the compared tables first, then those shown
/// apart, as the renderers print them).
fn number_doubts(tests: &mut [TestTable]) -> Vec<CompareDoubt> {
    let mut out: Vec<CompareDoubt> = Vec::new();
    let order: Vec<usize> = (0..tests.len())
        .filter(|i| tests[*i].apart.is_none())
        .chain((0..tests.len()).filter(|i| tests[*i].apart.is_some()))
        .collect();
    for ti in order {
        for row in &mut tests[ti].rows {
            for (run, text) in std::mem::take(&mut row.doubt_texts) {
                let i = match out.iter().position(|d| d.text == text) {
                    Some(i) => i,
                    None => {
                        out.push(CompareDoubt { text, who: vec![] });
                        out.len() - 1
                    }
                };
                let who = &mut out[i].who;
                match who.iter_mut().find(|(d, _)| *d == row.disk) {
                    Some((_, runs)) if runs.contains(&run) => {}
                    Some((_, runs)) => runs.push(run),
                    None => who.push((row.disk, vec![run])),
                }
                if !row.doubts.contains(&(i + 1)) {
                    row.doubts.push(i + 1);
                }
            }
            row.doubts.sort_unstable();
        }
    }
    out
}

/// Compares `inputs`; `given` are the paths as the user typed them (for `--baseline RUN`).
pub fn compare(
    inputs: &[Loaded],
    given: &[String],
    baseline: Option<&str>,
) -> anyhow::Result<Comparison> {
    let (runs, disks, entries) = collect(inputs);
    let baseline = resolve_baseline(baseline, given, &runs, &disks)?;
    let mut tests = tables(&entries, baseline);
    let doubts = number_doubts(&mut tests);
    let summary = summarise(disks.len(), &tests, baseline);
    Ok(Comparison {
        runs,
        disks,
        baseline,
        tests,
        summary,
        doubts,
    })
}

#[cfg(test)]
mod tests;
