//! Renders TPC-C results in tpcc_start's layout, so a report can be compared line by line with
//! tpcc-mysql's: the `<Parameters>` block, the interval lines (the current layout of 2016+
//! builds, or the 2011–2016 layout older articles show), `<Raw Results>`, `<Raw Results2(sum
//! ver.)>`, `<Constraint Check>` and `<TpmC>`; then what tpcc-mysql lacks (per type percentiles
//! from HDR histograms, tpmTotal, rollbacks, retries and errors by code, reconnects). Also the
//! `-f`/`-t` file lines and the `check` report. Pure: strings in, strings out; never NaN.
//!
//! One deliberate difference: "late" means at or above the response-time limit in *seconds*
//! (TPC-C's 5/5/5/80/20 s); tpcc-mysql compares those numbers with milliseconds.

use crate::engine::measurement::TPMC_PER_WAREHOUSE;
use crate::engine::{Counters, IntervalRates, IntervalSample, TpccCounters};
use crate::model::BenchResult;
use crate::tpcc::{CheckReport, CheckStatus, NewOrderRecord, Statements, TpccConfig, TxKind};
use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

/// Which tpcc_start builds' output to follow (`--layout`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
pub enum Layout {
    /// 2016+ (HEAD): `t, trx: N, 95%: …, 99%: …, max_rt: …, n|max ×4`; `avg_rt` in raw results.
    #[default]
    #[serde(rename = "current")]
    Current,
    /// Oct 2011 – Feb 2016: `t, n(late):p99|max` per type; raw results without `avg_rt`.
    #[serde(rename = "2011")]
    Y2011,
}

impl Layout {
    pub const NAMES: &'static [&'static str] = &["current", "2011"];
}

/// tpcc_start's banner and `<Parameters>` block, with spindle's model stated.
pub fn run_header(cfg: &TpccConfig) -> String {
    let title = format!(
        "*** spindle {} TPC-C Load Generator ***",
        crate::version::VERSION
    );
    let stars = "*".repeat(title.len());
    let mut s = format!("{stars}\n{title}\n{stars}\n");
    s.push_str(&parameters(cfg));
    let _ = writeln!(s, " [connection]: {}", cfg.connections);
    let _ = writeln!(s, "     [rampup]: {} (sec.)", cfg.rampup_s);
    let _ = writeln!(s, "    [measure]: {} (sec.)", cfg.time_s);
    let home = match cfg.home_warehouse {
        crate::tpcc::HomeWarehouse::Random => "home warehouse random per transaction",
        crate::tpcc::HomeWarehouse::PerConnection => "one home warehouse per connection",
    };
    let _ = writeln!(s, "       [mode]: no keying/think time; {home}");
    let _ = writeln!(s, " [statements]: {}", statements_line(cfg.statements));
    let _ = writeln!(
        s,
        "   [rt limit]: {} seconds (New-Order/Payment/Order-Status/Delivery/Stock-Level)",
        cfg.rt_limits_s.map(|x| x.to_string()).join("/")
    );
    s
}

/// What the statement shape means, for the header.
pub fn statements_line(shape: Statements) -> &'static str {
    match shape {
        Statements::TpccMysql => "tpcc-mysql (tpcc_start's statements, one per row operation)",
        Statements::Batched => {
            "batched (spindle's fewer round trips; TpmC does not compare with tpcc-mysql's)"
        }
    }
}

/// The `<Parameters>` lines shared by the loader and the driver (password masked).
pub fn parameters(cfg: &TpccConfig) -> String {
    let c = &cfg.connection;
    let mut s = String::from("<Parameters>\n");
    match &c.socket {
        Some(p) => {
            let _ = writeln!(s, "     [socket]: {}", p.display());
        }
        None => {
            let _ = writeln!(s, "     [server]: {}", c.host);
            let _ = writeln!(s, "     [port]: {}", c.port);
        }
    }
    let _ = writeln!(s, "     [DBname]: {}", c.database);
    let _ = writeln!(s, "       [user]: {}", c.user);
    let _ = writeln!(
        s,
        "       [pass]: {}",
        if c.password.is_empty() { "" } else { "*****" }
    );
    let _ = writeln!(s, "  [warehouse]: {}", cfg.warehouses);
    s
}

fn tpcc_rates(s: &IntervalSample) -> Option<([u64; 5], &IntervalRates)> {
    match &s.rates {
        r @ IntervalRates::Tpcc {
            new_orders,
            payments,
            order_status,
            deliveries,
            stock_levels,
            ..
        } => Some((
            [
                *new_orders,
                *payments,
                *order_status,
                *deliveries,
                *stock_levels,
            ],
            r,
        )),
        _ => None,
    }
}

/// One interval line (without the newline).
pub fn interval_line(s: &IntervalSample, layout: Layout) -> String {
    let Some((
        n,
        IntervalRates::Tpcc {
            late,
            p95_ms,
            p99_ms,
            max_ms,
            ..
        },
    )) = tpcc_rates(s)
    else {
        return String::new();
    };
    let t = s.time_s.round() as u64;
    match layout {
        Layout::Current => format!(
            "{t:4}, trx: {}, 95%: {:.3}, 99%: {:.3}, max_rt: {:.3}, {}|{:.3}, {}|{:.3}, {}|{:.3}, {}|{:.3}",
            n[0], p95_ms[0], p99_ms[0], max_ms[0], n[1], max_ms[1], n[2], max_ms[2], n[3], max_ms[3],
            n[4], max_ms[4]
        ),
        Layout::Y2011 => {
            let mut line = format!("{t:4}");
            for i in 0..5 {
                let _ = write!(
                    line,
                    ", {}({}):{:.3}|{:.3}",
                    n[i], late[i], p99_ms[i], max_ms[i]
                );
            }
            line
        }
    }
}

/// `a / b × 100`, 0 when `b` is 0 (never NaN).
fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

fn ok(pass: bool) -> &'static str {
    if pass {
        " [OK]"
    } else {
        " [NG] *"
    }
}

/// From `<Raw Results>` to `<TpmC>`, then spindle's block.
pub fn final_report(r: &BenchResult, layout: Layout) -> String {
    let Counters::Tpcc(c) = &r.counters else {
        return String::new();
    };
    let mut s = String::from("\n<Raw Results>\n");
    for (i, t) in c.per_type.iter().enumerate() {
        match layout {
            Layout::Current => {
                let _ = writeln!(
                    s,
                    "  [{i}] sc:{} lt:{}  rt:{}  fl:{} avg_rt: {:.1} ({})",
                    t.success, t.late, t.retries, t.failures, t.avg_ms, t.rt_limit_s
                );
            }
            Layout::Y2011 => {
                let _ = writeln!(
                    s,
                    "  [{i}] sc:{}  lt:{}  rt:{}  fl:{} ",
                    t.success, t.late, t.retries, t.failures
                );
            }
        }
    }
    let _ = writeln!(s, " in {} sec.", c.measured_s.round() as u64);
    s.push_str("\n<Raw Results2(sum ver.)>\n");
    for (i, t) in c.per_type.iter().enumerate() {
        let _ = writeln!(
            s,
            "  [{i}] sc:{}  lt:{}  rt:{}  fl:{} ",
            t.success, t.late, t.retries, t.failures
        );
    }
    s.push_str(&constraint_check(c));
    s.push_str("\n<TpmC>\n");
    let _ = writeln!(s, "                 {:.3} TpmC", c.tpmc);
    s.push_str(&spindle_block(r, c));
    s
}

fn constraint_check(c: &TpccCounters) -> String {
    let done = |i: usize| c.per_type.get(i).map(|t| t.success + t.late).unwrap_or(0);
    let total: u64 = (0..5).map(done).sum();
    let mut s =
        String::from("\n<Constraint Check> (all must be [OK])\n [transaction percentage]\n");
    for (i, label, min) in [
        (1, "        Payment", 43.0),
        (2, "   Order-Status", 4.0),
        (3, "       Delivery", 4.0),
        (4, "    Stock-Level", 4.0),
    ] {
        let f = pct(done(i), total);
        let _ = writeln!(s, "{label}: {f:3.2}% (>={min:4.1}%){}", ok(f >= min));
    }
    s.push_str(" [response time (at least 90% passed)]\n");
    for (i, k) in TxKind::ALL.iter().enumerate() {
        let sc = c.per_type.get(i).map(|t| t.success).unwrap_or(0);
        let f = pct(sc, done(i));
        let _ = writeln!(s, "{:>15}: {f:3.2}% {}", k.label(), ok(f >= 90.0));
    }
    s
}

/// What tpcc-mysql does not print.
/// `NOPM 1,234.5, efficiency 960.0 % of 12.86 TpmC per warehouse`: the TPC-C figures
/// HammerDB and go-tpc print beside TpmC.
pub fn nopm_line(c: &TpccCounters) -> String {
    let mut l = format!("NOPM {:.1}", c.nopm());
    if let Some(e) = c.efficiency_pct() {
        l.push_str(&format!(
            ", efficiency {e:.1} % of {TPMC_PER_WAREHOUSE} TpmC per warehouse"
        ));
    }
    l
}

fn spindle_block(r: &BenchResult, c: &TpccCounters) -> String {
    let mut s = String::from(
        "\n<spindle: response times per type> (ms, wall clock from first try to commit, ramp-up excluded)\n",
    );
    let _ = writeln!(
        s,
        "{:>15} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "", "count", "avg", "p50", "p90", "p95", "p99", "p99.9", "max"
    );
    for (k, t) in TxKind::ALL.iter().zip(&c.per_type) {
        let _ = writeln!(
            s,
            "{:>15} {:>9} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
            k.label(),
            t.success + t.late,
            t.avg_ms,
            t.p50_ms,
            t.p90_ms,
            t.p95_ms,
            t.p99_ms,
            t.p99_9_ms,
            t.max_ms
        );
    }
    s.push_str("\n<spindle: totals>\n");
    let _ = writeln!(s, "           TpmC: {:.3} (New-Orders per minute)", c.tpmc);
    let _ = writeln!(
        s,
        "       tpmTotal: {:.3} (all transactions per minute)",
        c.tpm_total
    );
    let _ = writeln!(
        s,
        "           NOPM: {:.3} (committed New-Orders per minute, as HammerDB counts them)",
        c.nopm()
    );
    if let Some(e) = c.efficiency_pct() {
        let _ = writeln!(
            s,
            "     efficiency: {e:.1} % (TpmC over {TPMC_PER_WAREHOUSE} x {} warehouses)",
            c.warehouses
        );
    }
    let rb = c.per_type.first().map(|t| t.rollbacks).unwrap_or(0);
    let _ = writeln!(
        s,
        "      rollbacks: {rb} (New-Orders with an unused item, counted as completed)"
    );
    let retries: u64 = c.per_type.iter().map(|t| t.retries).sum();
    let failures: u64 = c.per_type.iter().map(|t| t.failures).sum();
    let _ = writeln!(
        s,
        "        retries: {retries}{}",
        by_code(&c.errors_by_code)
    );
    for (k, t) in TxKind::ALL.iter().zip(&c.per_type) {
        if t.retries > 0 {
            let _ = writeln!(
                s,
                "{:>15}: {}{}",
                k.label(),
                t.retries,
                by_code(&t.errors_by_code)
            );
        }
    }
    let _ = writeln!(s, "       failures: {failures}");
    let _ = writeln!(s, "     reconnects: {}", c.reconnects);
    for n in &r.notes {
        let _ = writeln!(s, "           note: {n}");
    }
    if let Some(e) = &r.error {
        let _ = writeln!(s, "          ERROR: {e}");
    }
    s
}

fn by_code(m: &std::collections::BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = m.iter().map(|(c, n)| format!("error {c}: {n}")).collect();
    format!(" ({})", parts.join(", "))
}

/// One line of tpcc_start's `-f` file: `time_count response_ms`.
pub fn report_file_line(r: &NewOrderRecord) -> String {
    format!("{} {:.3}\n", r.time_count, r.rt_ms)
}

fn sec_nsec(t: SystemTime) -> (u64, u32) {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    (d.as_secs(), d.subsec_nanos())
}

/// One line of tpcc_start's `-t` file (committed New-Orders only; `None` for a rollback).
pub fn trx_file_line(r: &NewOrderRecord) -> Option<String> {
    if r.rolled_back {
        return None;
    }
    let (fs, fns) = sec_nsec(r.finish);
    let (ss, sns) = sec_nsec(r.start);
    Some(format!(
        "t_num: {} finish: {fs} {fns} start: {ss} {sns}\n",
        r.connection
    ))
}

/// The `check` report: one line per condition and warehouse, then the verdict.
pub fn check_report(r: &CheckReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "TPC-C consistency conditions 3.3.2.1-3.3.2.12 in '{}' ({} warehouse(s))",
        r.database, r.warehouses
    );
    for c in &r.results {
        let _ = write!(
            s,
            "{:<9} warehouse {}: {} {}",
            c.clause(),
            c.warehouse,
            c.status.word(),
            crate::tpcc::check::condition_text(c.condition)
        );
        if !c.detail.is_empty() {
            let _ = write!(s, " -- {}", c.detail);
        }
        s.push('\n');
    }
    let failed: Vec<String> = r
        .failures()
        .map(|c| format!("{} on warehouse {}", c.clause(), c.warehouse))
        .collect();
    let checked = r
        .results
        .iter()
        .filter(|c| c.status != CheckStatus::Skipped)
        .count();
    if failed.is_empty() {
        let _ = writeln!(s, "PASSED: {checked} checks in {:.1} s", r.elapsed_s);
    } else {
        let _ = writeln!(
            s,
            "FAILED: {} of {checked} checks: {}",
            failed.len(),
            failed.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Measurement, TpccTypeCounters};
    use crate::model::TestOptions;

    fn sample() -> IntervalSample {
        IntervalSample {
            time_s: 10.0,
            threads: 50,
            events: 4172,
            latency_pct_ms: 4.2,
            latency_max_ms: 4.809,
            p95_ms: 4.2,
            p99_ms: 4.6,
            rates: IntervalRates::Tpcc {
                new_orders: 1819,
                payments: 1807,
                order_status: 181,
                deliveries: 183,
                stock_levels: 182,
                late: [0; 5],
                p95_ms: [4.2, 0.8, 0.4, 5.0, 14.0],
                p99_ms: [4.355, 0.892, 0.438, 5.179, 14.491],
                max_ms: [4.809, 2.73, 1.125, 5.824, 14.828],
                tpmc: 10914.0,
                retries: 0,
                reconnects: 0,
            },
        }
    }

    #[test]
    fn interval_lines_in_both_layouts() {
        // Seed 003's first line, 2011–2016 layout.
        assert_eq!(
            interval_line(&sample(), Layout::Y2011),
            "  10, 1819(0):4.355|4.809, 1807(0):0.892|2.730, 181(0):0.438|1.125, \
             183(0):5.179|5.824, 182(0):14.491|14.828"
        );
        assert_eq!(
            interval_line(&sample(), Layout::Current),
            "  10, trx: 1819, 95%: 4.200, 99%: 4.355, max_rt: 4.809, 1807|2.730, 181|1.125, \
             183|5.824, 182|14.828"
        );
    }

    fn result(per: [(u64, u64); 5], measured_s: f64) -> BenchResult {
        let per_type = TxKind::ALL
            .iter()
            .zip(per)
            .map(|(k, (sc, lt))| TpccTypeCounters {
                name: k.name().into(),
                success: sc,
                late: lt,
                rt_limit_s: 5.0,
                ..Default::default()
            })
            .collect();
        let mut r = BenchResult::new(
            TestOptions::Tpcc(Box::default()),
            Measurement {
                started_at: String::new(),
                threads: 50,
                total_time_s: measured_s,
                events: 0,
                counters: Counters::Tpcc(TpccCounters {
                    warehouses: 10,
                    tpmc: if measured_s > 0.0 {
                        (per[0].0 + per[0].1) as f64 * 60.0 / measured_s
                    } else {
                        0.0
                    },
                    measured_s,
                    per_type,
                    ..Default::default()
                }),
                latency: Default::default(),
                intervals: vec![],
                fairness: Default::default(),
                histogram: Default::default(),
                notes: vec![],
                diagnostics: vec![],
                error: None,
            },
        );
        r.host = Default::default();
        r
    }

    #[test]
    fn raw_results_constraint_check_and_tpmc_like_seed_003() {
        let r = result(
            [(49575, 50), (49590, 0), (4962, 0), (4964, 0), (4962, 0)],
            300.0,
        );
        let text = final_report(&r, Layout::Y2011);
        let want = "
<Raw Results>
  [0] sc:49575  lt:50  rt:0  fl:0 
  [1] sc:49590  lt:0  rt:0  fl:0 
  [2] sc:4962  lt:0  rt:0  fl:0 
  [3] sc:4964  lt:0  rt:0  fl:0 
  [4] sc:4962  lt:0  rt:0  fl:0 
 in 300 sec.
";
        assert!(text.starts_with(want), "{text}");
        for line in [
            "        Payment: 43.46% (>=43.0%) [OK]\n",
            "   Order-Status: 4.35% (>= 4.0%) [OK]\n",
            "      New-Order: 99.90%  [OK]\n",
            "        Payment: 100.00%  [OK]\n",
            "\n<TpmC>\n                 9925.000 TpmC\n",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
        assert!(final_report(&r, Layout::Current)
            .contains("  [0] sc:49575 lt:50  rt:0  fl:0 avg_rt: 0.0 (5)\n"));
    }

    #[test]
    fn the_statement_shape_is_named_in_the_header_and_the_caption() {
        let mut r = result([(1, 0); 5], 10.0);
        let TestOptions::Tpcc(cfg) = &r.options else {
            unreachable!()
        };
        assert!(run_header(cfg).contains(" [statements]: tpcc-mysql (tpcc_start's"));
        assert!(crate::report::params::describe(&r).contains("tpcc-mysql statements"));
        if let TestOptions::Tpcc(c) = &mut r.options {
            c.statements = Statements::Batched;
        }
        assert!(crate::report::params::describe(&r).contains("batched statements"));
    }

    #[test]
    fn an_empty_run_prints_zeros_not_nan() {
        let text = final_report(&result([(0, 0); 5], 0.0), Layout::Current);
        assert!(!text.to_lowercase().contains("nan"), "{text}");
        assert!(
            text.contains("        Payment: 0.00% (>=43.0%) [NG] *"),
            "{text}"
        );
        assert!(text.contains("0.000 TpmC"), "{text}");
    }

    #[test]
    fn file_lines_match_tpcc_start() {
        let t = UNIX_EPOCH + std::time::Duration::new(1_700_000_000, 5);
        let rec = NewOrderRecord {
            connection: 3,
            time_count: 20,
            rt_ms: 4.25,
            start: t,
            finish: t + std::time::Duration::from_millis(4),
            rolled_back: false,
        };
        assert_eq!(report_file_line(&rec), "20 4.250\n");
        assert_eq!(
            trx_file_line(&rec).unwrap(),
            "t_num: 3 finish: 1700000000 4000005 start: 1700000000 5\n"
        );
        let rb = NewOrderRecord {
            rolled_back: true,
            ..rec
        };
        assert_eq!(trx_file_line(&rb), None);
    }
}
