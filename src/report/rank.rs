//! The answer of a suite run, computed purely from its document: each test's figures per target
//! with the ratio to the best, a score per test family (the geometric mean over the family's
//! tests of each target's ratio to the best), and an overall ranking (geometric mean of the
//! family scores). What makes a figure doubtful is `doubts`.

use super::metric::{self, Family};
use crate::model::{Phase, Regime};
use crate::model::{PhaseResult, PhaseStatus, SuiteResult};

/// One test (a measurement phase) across the targets of a run.
#[derive(Clone, Debug)]
pub struct TestView<'a> {
    /// The phase name (`fileio-rndrw-t4`).
    pub name: String,
    pub family: Family,
    /// Unit of the ranked figure (`req/s`, `MiB/s`, `tps`, `TpmC`).
    pub unit: &'static str,
    /// One row per target that has this phase, in target order.
    pub rows: Vec<Row<'a>>,
    /// Best figure among the rows that ran to their end.
    pub best: Option<f64>,
}

/// One target's outcome of a test.
#[derive(Clone, Debug)]
pub struct Row<'a> {
    /// Index into `SuiteResult::targets`.
    pub target: usize,
    pub phase: &'a PhaseResult,
    /// The ranked figure (also of a partial result).
    pub value: Option<f64>,
}

impl Row<'_> {
    /// The figure, when the phase ran to its end and measured something.
    pub fn counted(&self) -> Option<f64> {
        self.value
            .filter(|v| *v > 0.0 && self.phase.status == PhaseStatus::Ok)
    }
}

impl TestView<'_> {
    /// `value / best` for `row`, when both are usable.
    pub fn ratio(&self, row: &Row) -> Option<f64> {
        Some(row.counted()? / self.best.filter(|b| *b > 0.0)?)
    }
}

/// Every measurement phase of the run, in plan order.
pub fn tests(s: &SuiteResult) -> Vec<TestView<'_>> {
    let mut names: Vec<(String, Family)> = Vec::new();
    for t in &s.targets {
        for p in &t.phases {
            if let Some(f) = metric::family_of(p) {
                if !names.iter().any(|(n, _)| n == &p.name) {
                    names.push((p.name.clone(), f));
                }
            }
        }
    }
    names
        .into_iter()
        .map(|(name, family)| {
            let rows: Vec<Row> = s
                .targets
                .iter()
                .enumerate()
                .filter_map(|(i, t)| {
                    let p = t.phases.iter().find(|p| p.name == name)?;
                    let value = p.result.as_ref().map(|r| metric::primary(r).value);
                    Some(Row {
                        target: i,
                        phase: p,
                        value,
                    })
                })
                .collect();
            let unit = rows
                .iter()
                .find_map(|r| r.phase.result.as_ref())
                .map_or("", |r| metric::primary(r).unit);
            let best = rows.iter().filter_map(Row::counted).reduce(f64::max);
            TestView {
                name,
                family,
                unit,
                rows,
                best,
            }
        })
        .collect()
}

/// A family's score per target.
#[derive(Clone, Debug, PartialEq)]
pub struct FamilyScore {
    pub family: Family,
    /// Tests that every target completed: the ones the score is over.
    pub tests: Vec<String>,
    /// Tests left out because some target has no figure for them, with the reason.
    pub left_out: Vec<(String, String)>,
    /// (target index, geometric mean of its ratios to the best), best first.
    pub scores: Vec<(usize, f64)>,
}

/// The ranking of a run's targets.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    pub families: Vec<FamilyScore>,
    /// (target index, geometric mean of its family scores), best first; targets without a
    /// score in every family are left out.
    pub overall: Vec<(usize, f64)>,
}

fn sort_desc(v: &mut [(usize, f64)]) {
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
}

fn family_score(s: &SuiteResult, family: Family, views: &[&TestView]) -> Option<FamilyScore> {
    let n_targets = s.targets.len();
    let mut used = Vec::new();
    let mut left_out = Vec::new();
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); n_targets];
    for v in views {
        // The CPU-bound pass of `[oltp.regimes]` measures the CPU on purpose: it is shown
        // beside its I/O-bound twin, not ranked.
        let cpu_bound = v.rows.iter().any(|r| {
            matches!(
                r.phase.phase,
                Some(Phase::OltpRun {
                    regime: Some(Regime::CpuBound),
                    ..
                })
            )
        });
        if cpu_bound {
            left_out.push((
                v.name.clone(),
                "CPU-bound on purpose: see the two regimes".to_string(),
            ));
            continue;
        }
        let complete = v.rows.len() == n_targets && v.rows.iter().all(|r| v.ratio(r).is_some());
        if !complete {
            let missing: Vec<String> = v
                .rows
                .iter()
                .filter(|r| v.ratio(r).is_none())
                .map(|r| format!("{} {}", s.targets[r.target].name, r.phase.status))
                .collect();
            let why = if v.rows.len() < n_targets {
                "not run on every target".to_string()
            } else {
                missing.join(", ")
            };
            left_out.push((v.name.clone(), why));
            continue;
        }
        used.push(v.name.clone());
        for r in &v.rows {
            ratios[r.target].push(v.ratio(r).unwrap_or(0.0));
        }
    }
    if used.is_empty() && left_out.is_empty() {
        return None;
    }
    let mut scores: Vec<(usize, f64)> = ratios
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i, metric::geomean(r)?)))
        .collect();
    sort_desc(&mut scores);
    Some(FamilyScore {
        family,
        tests: used,
        left_out,
        scores,
    })
}

/// Ranks the targets of `s` from its tests.
pub fn rank(s: &SuiteResult, views: &[TestView]) -> Ranking {
    let n = s.targets.len();
    let families: Vec<FamilyScore> = Family::ALL
        .iter()
        .filter_map(|f| {
            let vs: Vec<&TestView> = views.iter().filter(|v| v.family == *f).collect();
            family_score(s, *f, &vs)
        })
        .collect();
    let scored: Vec<&FamilyScore> = families.iter().filter(|f| !f.tests.is_empty()).collect();
    let mut overall: Vec<(usize, f64)> = (0..n)
        .filter_map(|i| {
            let per: Vec<f64> = scored
                .iter()
                .filter_map(|f| f.scores.iter().find(|(t, _)| *t == i).map(|x| x.1))
                .collect();
            (per.len() == scored.len() && !per.is_empty())
                .then(|| metric::geomean(&per))
                .flatten()
                .map(|g| (i, g))
        })
        .collect();
    sort_desc(&mut overall);
    Ranking { families, overall }
}

/// A ratio as the articles quote it: `8.3×`, or `1.04×` when it is close to 1.
pub fn times(r: f64) -> String {
    if r < 2.0 {
        format!("{r:.2}×")
    } else {
        format!("{r:.1}×")
    }
}

/// "sda is 8.3× sdb in OLTP (geometric mean of 4 tests)" per family with two or more targets,
/// and overall.
pub fn ratio_sentences(s: &SuiteResult, r: &Ranking) -> Vec<String> {
    let name = |i: usize| s.targets[i].name.as_str();
    let mut out = Vec::new();
    for f in r.families.iter().filter(|f| f.scores.len() >= 2) {
        let (top, low) = (f.scores[0], f.scores[f.scores.len() - 1]);
        out.push(format!(
            "{} is {} {} in {} (geometric mean of {} test{})",
            name(top.0),
            times(top.1 / low.1),
            name(low.0),
            f.family.name(),
            f.tests.len(),
            if f.tests.len() == 1 { "" } else { "s" }
        ));
    }
    if r.overall.len() >= 2 {
        let (top, low) = (r.overall[0], r.overall[r.overall.len() - 1]);
        out.push(format!(
            "Overall {} is {} {} (geometric mean of the family scores)",
            name(top.0),
            times(top.1 / low.1),
            name(low.0)
        ));
    }
    out
}
