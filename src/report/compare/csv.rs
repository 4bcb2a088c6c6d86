//! The long-format CSV of a comparison: one row per run × disk × test × metric, so results of
//! many appliances load straight into pandas or DuckDB.

use super::Comparison;
use crate::engine::Counters;
use crate::model::load::Loaded;
use crate::model::BenchResult;
use crate::report::metric;
use crate::report::params;
use std::fmt::Write as _;

/// The CSV header.
pub const HEADER: &str = "run_id,source,machine,disk_key,disk,target,test,family,comparable,params,status,validity,metric,unit,value";

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// (metric, unit, value) of a result: the ranked figure first, then counters and latency.
pub fn metrics(r: &BenchResult) -> Vec<(String, &'static str, f64)> {
    let m = metric::primary(r);
    let mut out = vec![("score".to_string(), m.unit, m.value)];
    let mut add = |name: &str, unit: &'static str, v: f64| out.push((name.to_string(), unit, v));
    match &r.counters {
        Counters::Fileio(c) => {
            add("reads_per_s", "1/s", c.reads_per_s);
            add("writes_per_s", "1/s", c.writes_per_s);
            add("fsyncs_per_s", "1/s", c.fsyncs_per_s);
            add("read_mib_per_s", "MiB/s", c.read_mib_per_s);
            add("written_mib_per_s", "MiB/s", c.written_mib_per_s);
        }
        Counters::Oltp(c) => {
            add("tps", "1/s", c.tps);
            add("qps", "1/s", c.qps);
            add("ignored_errors_per_s", "1/s", c.ignored_errors_per_s);
            add("reconnects_per_s", "1/s", c.reconnects_per_s);
        }
        Counters::Tpcc(c) => {
            add("tpmc", "1/min", c.tpmc);
            for t in &c.per_type {
                add(&format!("{}_p95_ms", t.name), "ms", t.p95_ms);
                add(&format!("{}_p99_ms", t.name), "ms", t.p99_ms);
            }
        }
    }
    let l = &r.latency;
    for (name, us) in [
        ("latency_min_ms", l.min_us),
        ("latency_avg_ms", l.avg_us),
        ("latency_p50_ms", l.p50_us),
        ("latency_p95_ms", l.p95_us),
        ("latency_p99_ms", l.p99_us),
        ("latency_p99_9_ms", l.p99_9_us),
        ("latency_max_ms", l.max_us),
    ] {
        add(name, "ms", us / 1e3);
    }
    add("events", "count", r.events as f64);
    add("total_time_s", "s", r.total_time_s);
    out
}

/// Whether run `run`'s figure of `test` on disk `disk` is in a table compared with the baseline.
fn comparable(c: &Comparison, run: usize, disk: usize, test: &str) -> bool {
    c.tests.iter().any(|t| {
        t.test == test
            && t.apart.is_none()
            && t.rows
                .iter()
                .any(|r| r.disk == disk && r.values.iter().any(|v| v.0 == run))
    })
}

/// The CSV of every result of `inputs` (the runs `c` was computed from).
pub fn render(inputs: &[Loaded], c: &Comparison) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    for (ri, l) in inputs.iter().enumerate() {
        let s = &l.suite;
        for t in &s.targets {
            let key = t.stable_key(&s.host.hostname);
            let di = c.disks.iter().position(|d| d.key == key).unwrap_or(0);
            for p in &t.phases {
                let Some(r) = &p.result else { continue };
                let Some(family) = metric::family(&p.name, Some(r)) else {
                    continue;
                };
                let fixed = [
                    field(&s.run_id),
                    field(&l.origin),
                    field(&c.runs[ri].machine),
                    field(&key),
                    field(&c.disks[di].label),
                    field(&t.name),
                    field(&p.name),
                    family.id().to_string(),
                    if comparable(c, ri, di, &p.name) {
                        "yes"
                    } else {
                        "no"
                    }
                    .to_string(),
                    field(&params::describe(r)),
                    field(p.status.as_str()),
                    crate::report::validity::of_phase(s, t, p)
                        .map_or("", |v| v.verdict.word())
                        .to_string(),
                ]
                .join(",");
                for (m, unit, v) in metrics(r) {
                    let _ = writeln!(out, "{fixed},{},{unit},{v}", field(&m));
                }
            }
        }
    }
    out
}
