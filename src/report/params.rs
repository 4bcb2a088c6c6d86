//! The parameters of a test as a reader sees them: one line for captions ([`describe`]), a
//! fingerprint of the options that change what is measured ([`fingerprint`]: paths, sockets,
//! credentials and seeds left out), and the differences between two fingerprints
//! ([`differences`]), which is why `report compare` keeps two results apart.

use crate::fileio::FileioConfig;
use crate::model::{BenchResult, TestOptions};
use crate::oltp::{OltpConfig, RandConfig};
use crate::tpcc::TpccConfig;
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

/// The options that decide what a test measures, as JSON: the typed options with where the
/// files or the server were (`dir`, `connection`), the seeds, the reporting cadence and
/// percentile, and how the client waited for replies (threads, io, LOAD DATA) set to one
/// value, so they never tell two results apart. Named as fields, so a renamed one fails to
/// compile instead of leaking into `report compare`; a new field counts until it is listed.
pub fn fingerprint(r: &BenchResult) -> Value {
    let measured = match &r.options {
        TestOptions::Fileio(c) => TestOptions::Fileio(FileioConfig {
            dir: Default::default(),
            rand_seed: 0,
            report_interval: None,
            histogram: false,
            percentile: 0.0,
            ..c.clone()
        }),
        TestOptions::Oltp(c) => TestOptions::Oltp(Box::new(OltpConfig {
            connection: Default::default(),
            rand: RandConfig { seed: 0, ..c.rand },
            report_interval_s: 0,
            percentile: 0,
            client_threads: 0,
            skip_write_wakeups: false,
            client_io: Default::default(),
            load_data: false,
            ..(**c).clone()
        })),
        TestOptions::Tpcc(c) => TestOptions::Tpcc(Box::new(TpccConfig {
            connection: Default::default(),
            seed: 0,
            report_interval_s: 0,
            client_threads: 0,
            skip_write_wakeups: false,
            client_io: Default::default(),
            ..(**c).clone()
        })),
    };
    serde_json::to_value(&measured).unwrap_or(Value::Null)
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

    #[test]
    fn where_and_how_the_client_ran_never_tells_two_oltp_or_tpcc_results_apart() {
        let fileio = sample_fileio_result();
        let oltp = |c: OltpConfig| BenchResult {
            options: TestOptions::Oltp(Box::new(c)),
            ..fileio.clone()
        };
        let a = OltpConfig::default();
        let mut b = a.clone();
        b.connection.database = "elsewhere".into();
        b.rand.seed = 9;
        (b.client_threads, b.report_interval_s, b.load_data) = (2, 1, true);
        b.skip_write_wakeups = !a.skip_write_wakeups;
        b.client_io = crate::db::ClientIo::DirectEpoll;
        assert_eq!(fingerprint(&oltp(a.clone())), fingerprint(&oltp(b.clone())));
        b.rand.kind = crate::oltp::RandType::Pareto;
        let d = differences(&fingerprint(&oltp(a)), &fingerprint(&oltp(b)));
        assert_eq!(d, vec!["rand.kind special vs pareto".to_string()]);

        let tpcc = |c: TpccConfig| BenchResult {
            options: TestOptions::Tpcc(Box::new(c)),
            ..fileio.clone()
        };
        let a = TpccConfig::default();
        let mut b = a.clone();
        (b.seed, b.client_threads, b.report_interval_s) = (5, 3, 1);
        b.connection.port = 3307;
        assert_eq!(fingerprint(&tpcc(a.clone())), fingerprint(&tpcc(b.clone())));
        b.warehouses += 1;
        let d = differences(&fingerprint(&tpcc(a.clone())), &fingerprint(&tpcc(b)));
        assert_eq!(
            d,
            vec![format!(
                "warehouses {} vs {}",
                a.warehouses,
                a.warehouses + 1
            )]
        );
    }
}
