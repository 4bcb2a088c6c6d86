//! The parameters of a test as a reader sees them: one line for captions ([`describe`]), a
//! fingerprint of the options that change what is measured ([`fingerprint`]: paths, sockets,
//! credentials and seeds left out), and the differences between two fingerprints
//! ([`differences`]), which is why `report compare` keeps two results apart.

use crate::model::{BenchResult, TestOptions};
use crate::units::{count, human_size};
use serde_json::Value;

/// One line: mode or workload, threads, sizes, flags, duration, tool and compat.
pub fn describe(r: &BenchResult) -> String {
    let mut parts: Vec<String> = Vec::new();
    match &r.options {
        TestOptions::Fileio(c) => {
            parts.push(c.test_mode.map_or("fileio", |m| m.name()).to_string());
            parts.push(count(c.threads as u64, "thread"));
            parts.push(format!(
                "{} files, {} total, {} blocks",
                c.file_num,
                human_size(c.total_size),
                human_size(c.block_size)
            ));
            if let Some(flags) = c.extra_flags.flag_names() {
                parts.push(format!("files opened {flags}"));
            }
            if c.test_mode.is_some_and(|m| m.writes()) {
                parts.push(format!("fsync every {} requests", c.fsync_freq));
            }
            if let Some(t) = c.time_limit {
                parts.push(format!("{} s", t.as_secs_f64()));
            }
            if c.events > 0 {
                parts.push(count(c.events, "request"));
            }
        }
        TestOptions::Oltp(c) => {
            parts.push(c.test_name());
            parts.push(count(c.threads as u64, "thread"));
            parts.push(format!("{} tables × {} rows", c.tables, c.table_size));
            parts.push(format!("rand {}", c.rand.kind.name()));
            if c.time_s > 0 {
                parts.push(format!("{} s", c.time_s));
            }
            if c.events > 0 {
                parts.push(count(c.events, "transaction"));
            }
        }
        TestOptions::Tpcc(c) => {
            parts.push("tpcc".into());
            parts.push(format!(
                "{}, {}",
                count(c.warehouses as u64, "warehouse"),
                count(c.connections as u64, "connection")
            ));
            parts.push(format!("{} statements", c.statements.name()));
            if c.home_warehouse == crate::tpcc::HomeWarehouse::PerConnection {
                parts.push("home warehouse per connection".into());
            }
            parts.push(format!(
                "ramp-up {} s, {} s measured",
                c.rampup_s,
                c.measured_s()
            ));
        }
    }
    parts.push(format!(
        "{} {} (sysbench {} behaviour)",
        r.tool.name, r.tool.version, r.tool.compat
    ));
    parts.join(", ")
}

/// The options that decide what a test measures, as JSON: the typed options without where the
/// files or the server were (`dir`, `connection`), the seed and the interval length.
pub fn fingerprint(r: &BenchResult) -> Value {
    let mut v = serde_json::to_value(&r.options).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        for k in [
            "dir",
            "connection",
            "rand_seed",
            "report_interval",
            "report_interval_s",
            "histogram",
            "percentile",
            "client_threads",
            "skip_write_wakeups",
            "client_io",
            "load_data",
        ] {
            o.remove(k);
        }
        if let Some(rand) = o.get_mut("rand").and_then(|r| r.as_object_mut()) {
            rand.remove("seed");
        }
    }
    v
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(Value::String(s)) => s.clone(),
        Some(x) => x.to_string(),
    }
}

fn diff_into(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(w)) => diff_into(&p, u, w, out),
                    (u, w) => out.push(format!("{p} {} vs {}", show(u), show(w))),
                }
            }
        }
        _ if a != b => out.push(format!("{path} {} vs {}", show(Some(a)), show(Some(b)))),
        _ => {}
    }
}

/// The options that differ between two fingerprints, as `key a vs b`, in key order.
pub fn differences(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff_into("", a, b, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bench::tests_support::sample_fileio_result;

    #[test]
    fn the_fingerprint_ignores_paths_and_differences_name_the_keys() {
        let a = sample_fileio_result();
        let mut b = a.clone();
        if let TestOptions::Fileio(c) = &mut b.options {
            c.dir = "/elsewhere".into();
            c.rand_seed = 7;
        }
        assert_eq!(fingerprint(&a), fingerprint(&b));
        if let TestOptions::Fileio(c) = &mut b.options {
            c.total_size = 4 << 30;
            c.threads = 8;
        }
        let d = differences(&fingerprint(&a), &fingerprint(&b));
        assert_eq!(
            d,
            vec![
                "threads 1 vs 8".to_string(),
                format!("total_size {} vs {}", 2u64 << 30, 4u64 << 30)
            ]
        );
        let line = describe(&a);
        assert!(
            line.contains(", 1 thread,") && line.contains("128 files"),
            "{line}"
        );
        if let TestOptions::Fileio(c) = &mut b.options {
            c.extra_flags.direct = true;
        }
        let line = describe(&b);
        assert!(
            line.contains("8 threads") && line.contains("files opened O_DIRECT"),
            "{line}"
        );
    }
}
