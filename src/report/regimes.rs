//! The two passes of `[oltp.regimes]` side by side — seed 004's lesson in one run: per target,
//! each OLTP test's CPU-bound and I/O-bound figures and their ratio (what the disk costs when
//! the data set no longer fits in the buffer pool), and across targets how much the choice of
//! disk matters in each regime (the best target's figure ÷ the worst's). Pure, from the
//! document; summary.txt and report.html render it.

use super::metric;
use super::rank::times;
use crate::model::{Phase, Regime};
use crate::model::{PhaseStatus, SuiteResult};
use std::fmt::Write as _;

/// One target's figures of one test in both regimes (complete runs only).
#[derive(Clone, Debug, PartialEq)]
pub struct RegimeRow {
    /// Index into `SuiteResult::targets`.
    pub target: usize,
    pub cpu_bound: Option<f64>,
    pub io_bound: Option<f64>,
}

impl RegimeRow {
    /// CPU-bound ÷ I/O-bound: how much slower the same workload runs once the disk matters.
    pub fn ratio(&self) -> Option<f64> {
        Some(self.cpu_bound? / self.io_bound.filter(|v| *v > 0.0)?)
    }

    fn get(&self, r: Regime) -> Option<f64> {
        match r {
            Regime::CpuBound => self.cpu_bound,
            Regime::IoBound => self.io_bound,
        }
    }
}

/// One OLTP test (workload and threads) run in both regimes.
#[derive(Clone, Debug, PartialEq)]
pub struct RegimeTest {
    /// The test without its regime: `oltp-read_only-t8`.
    pub test: String,
    pub unit: &'static str,
    pub rows: Vec<RegimeRow>,
}

impl RegimeTest {
    /// How much the choice of disk matters in `regime`: the best target's figure ÷ the worst's
    /// (with both targets), when two or more targets have a figure.
    pub fn disk_choice(&self, regime: Regime) -> Option<(f64, usize, usize)> {
        let figs: Vec<(usize, f64)> = self
            .rows
            .iter()
            .filter_map(|r| Some((r.target, r.get(regime).filter(|v| *v > 0.0)?)))
            .collect();
        if figs.len() < 2 {
            return None;
        }
        let best = figs
            .iter()
            .cloned()
            .reduce(|a, b| if b.1 > a.1 { b } else { a })?;
        let worst = figs
            .iter()
            .cloned()
            .reduce(|a, b| if b.1 < a.1 { b } else { a })?;
        Some((best.1 / worst.1, best.0, worst.0))
    }
}

/// Every OLTP test of the run that has a regime, in plan order.
pub fn tests(s: &SuiteResult) -> Vec<RegimeTest> {
    let mut out: Vec<RegimeTest> = Vec::new();
    for (ti, t) in s.targets.iter().enumerate() {
        for p in &t.phases {
            let Some(Phase::OltpRun {
                workload,
                threads,
                regime: Some(regime),
            }) = p.phase
            else {
                continue;
            };
            let test = Phase::OltpRun {
                workload,
                threads,
                regime: None,
            }
            .name();
            let figure = p
                .result
                .as_ref()
                .filter(|_| p.status == PhaseStatus::Ok)
                .map(|r| metric::primary(r).value);
            let i = match out.iter().position(|x| x.test == test) {
                Some(i) => i,
                None => {
                    out.push(RegimeTest {
                        test,
                        unit: "tps",
                        rows: vec![],
                    });
                    out.len() - 1
                }
            };
            let rows = &mut out[i].rows;
            let row = match rows.iter().position(|r| r.target == ti) {
                Some(k) => &mut rows[k],
                None => {
                    rows.push(RegimeRow {
                        target: ti,
                        cpu_bound: None,
                        io_bound: None,
                    });
                    rows.last_mut().expect("just pushed")
                }
            };
            match regime {
                Regime::CpuBound => row.cpu_bound = figure,
                Regime::IoBound => row.io_bound = figure,
            }
        }
    }
    out
}

/// Geometric means over the tests: each target's CPU ÷ I/O ratio, and the disk choice factor
/// per regime. `None` where no test has the figure.
pub struct Overall {
    pub ratio_per_target: Vec<(usize, f64)>,
    pub disk_choice: [(Regime, Option<f64>); 2],
}

pub fn overall(s: &SuiteResult, tests: &[RegimeTest]) -> Overall {
    let ratio_per_target = (0..s.targets.len())
        .filter_map(|i| {
            let r: Vec<f64> = tests
                .iter()
                .filter_map(|t| t.rows.iter().find(|r| r.target == i)?.ratio())
                .collect();
            Some((i, metric::geomean(&r)?))
        })
        .collect();
    let choice = |regime| {
        let v: Vec<f64> = tests
            .iter()
            .filter_map(|t| Some(t.disk_choice(regime)?.0))
            .collect();
        metric::geomean(&v)
    };
    Overall {
        ratio_per_target,
        disk_choice: [
            (Regime::CpuBound, choice(Regime::CpuBound)),
            (Regime::IoBound, choice(Regime::IoBound)),
        ],
    }
}

/// The sentences under the tables: per target its ratio, and the disk choice per regime.
pub fn sentences(s: &SuiteResult, tests: &[RegimeTest]) -> Vec<String> {
    let o = overall(s, tests);
    let n = crate::units::count(tests.len() as u64, "test");
    let mut out: Vec<String> = o
        .ratio_per_target
        .iter()
        .map(|(i, r)| {
            format!(
                "{}: the CPU-bound figure is {} the I/O-bound one (geometric mean over {n})",
                s.targets[*i].name,
                times(*r)
            )
        })
        .collect();
    if let [(_, Some(cpu)), (_, Some(io))] = o.disk_choice {
        out.push(format!(
            "The choice of disk matters {} when CPU-bound and {} when I/O-bound (best ÷ worst target, geometric mean over {n})",
            times(cpu),
            times(io)
        ));
    }
    out
}

fn cell(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.2}"))
}

/// summary.txt's section (nothing for a run without regimes).
pub fn summary_section(w: &mut String, s: &SuiteResult) {
    let tests = tests(s);
    if tests.is_empty() {
        return;
    }
    let _ = writeln!(
        w,
        "\nTwo regimes on the same data set (seed 004): CPU-bound (it fits in the buffer pool) and I/O-bound (it does not):"
    );
    for t in &tests {
        let _ = writeln!(w, "  {}  ({})", t.test, t.unit);
        let _ = writeln!(
            w,
            "    {:<12} {:>12} {:>12} {:>11}",
            "target", "CPU-bound", "I/O-bound", "CPU ÷ I/O"
        );
        for r in &t.rows {
            let _ = writeln!(
                w,
                "    {:<12} {:>12} {:>12} {:>11}",
                s.targets[r.target].name,
                cell(r.cpu_bound),
                cell(r.io_bound),
                r.ratio().map_or("-".into(), times)
            );
        }
        let choice = |regime| t.disk_choice(regime).map_or("-".into(), |c| times(c.0));
        if t.rows.len() > 1 {
            let _ = writeln!(
                w,
                "    {:<12} {:>12} {:>12}   (best ÷ worst target)",
                "disk choice",
                choice(Regime::CpuBound),
                choice(Regime::IoBound)
            );
        }
    }
    for line in sentences(s, &tests) {
        let _ = writeln!(w, "  {line}.");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Counters, OltpCounters};
    use crate::model::suite::tests_support::two_disk_suite;
    use crate::model::TestOptions;
    use crate::oltp::Workload;

    /// Two targets, read_only at 4 threads in both regimes: ssd 1000/800 tps, hdd 950/100.
    fn regimes_suite() -> SuiteResult {
        let mut s = two_disk_suite();
        for (t, (cpu, io)) in s.targets.iter_mut().zip([(1000.0, 800.0), (950.0, 100.0)]) {
            let template = t.phases[0].clone();
            t.phases.clear();
            for (regime, tps) in [(Regime::CpuBound, cpu), (Regime::IoBound, io)] {
                let mut p = template.clone();
                p.phase = Some(Phase::OltpRun {
                    workload: Workload::ReadOnly,
                    threads: 4,
                    regime: Some(regime),
                });
                p.name = p.phase.unwrap().name();
                let r = p.result.as_mut().unwrap();
                r.options = TestOptions::Oltp(Box::default());
                r.counters = Counters::Oltp(OltpCounters {
                    tps,
                    ..Default::default()
                });
                t.phases.push(p);
            }
        }
        s
    }

    #[test]
    fn each_target_gets_both_figures_and_the_disk_choice_per_regime() {
        let s = regimes_suite();
        let t = tests(&s);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].test, "oltp-read_only-t4");
        assert_eq!(t[0].rows[0].ratio(), Some(1.25));
        assert_eq!(t[0].rows[1].ratio(), Some(9.5));
        let (cpu, best, worst) = t[0].disk_choice(Regime::CpuBound).unwrap();
        assert!((cpu - 1000.0 / 950.0).abs() < 1e-9 && (best, worst) == (0, 1));
        assert_eq!(t[0].disk_choice(Regime::IoBound).unwrap().0, 8.0);
        assert_eq!(
            sentences(&s, &t),
            [
                "ssd: the CPU-bound figure is 1.25× the I/O-bound one (geometric mean over 1 test)",
                "hdd: the CPU-bound figure is 9.5× the I/O-bound one (geometric mean over 1 test)",
                "The choice of disk matters 1.05× when CPU-bound and 8.0× when I/O-bound (best ÷ worst target, geometric mean over 1 test)"
            ]
        );
        let mut text = String::new();
        summary_section(&mut text, &s);
        assert!(
            text.contains("    ssd               1000.00       800.00       1.25×"),
            "{text}"
        );
        assert!(
            text.contains("    disk choice         1.05×         8.0×"),
            "{text}"
        );
    }

    #[test]
    fn a_failed_pass_has_no_figure_and_no_ratio() {
        let mut s = regimes_suite();
        s.targets[1].phases[1].status = PhaseStatus::Failed;
        let t = tests(&s);
        assert_eq!(t[0].rows[1].io_bound, None);
        assert_eq!(t[0].rows[1].ratio(), None);
        assert_eq!(t[0].disk_choice(Regime::IoBound), None);
        // a run without regimes has no section
        let mut text = String::new();
        summary_section(&mut text, &two_disk_suite());
        assert_eq!(text, "");
    }
}
