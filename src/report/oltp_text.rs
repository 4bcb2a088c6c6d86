//! Renders OLTP results as sysbench 1.0's text: the run header, interval lines, the
//! `--histogram` block and the final report (SQL statistics, General statistics, Latency (ms),
//! Threads fairness), with sysbench's labels, column widths and number formats.

use crate::engine::{Counters, IntervalRates, IntervalSample};
use crate::model::BenchResult;
use std::fmt::Write as _;

/// The lines sysbench prints before the workers connect.
pub fn run_header(threads: u32, report_interval_s: u64, rand_seed: u64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "spindle {} (sysbench 1.0 compatible)\n",
        crate::version::VERSION
    );
    s.push_str("Running the test with following options:\n");
    let _ = writeln!(s, "Number of threads: {threads}");
    if report_interval_s > 0 {
        let _ = writeln!(
            s,
            "Report intermediate results every {report_interval_s} second(s)"
        );
    }
    if rand_seed == 0 {
        s.push_str("Initializing random number generator from current time\n");
    } else {
        let _ = writeln!(
            s,
            "Initializing random number generator from seed ({rand_seed})."
        );
    }
    s.push_str("\n\nInitializing worker threads...\n");
    s
}

/// One `--report-interval` line (without the newline).
pub fn interval_line(sample: &IntervalSample, percentile: u32) -> String {
    let (tps, qps, r, w, o, err, reconn) = match sample.rates {
        IntervalRates::Oltp {
            tps,
            qps,
            reads_per_s: r,
            writes_per_s: w,
            other_per_s: o,
            errors_per_s: err,
            reconnects_per_s: reconn,
        } => (tps, qps, r, w, o, err, reconn),
        _ => (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    };
    format!(
        "[ {:.0}s ] thds: {} tps: {:4.2} qps: {:4.2} (r/w/o: {:4.2}/{:4.2}/{:4.2}) \
         lat (ms,{}%): {:4.2} err/s: {:4.2} reconn/s: {:4.2}",
        sample.time_s,
        sample.threads,
        tps,
        qps,
        r,
        w,
        o,
        percentile,
        sample.latency_pct_ms,
        err,
        reconn
    )
}

/// sysbench's `--histogram` block (printed before the final report).
pub fn histogram(result: &BenchResult) -> String {
    super::sysbench_text::histogram_text(result)
}

/// The final report, from `SQL statistics:` to the blank line after `Threads fairness`.
pub fn final_report(result: &BenchResult) -> String {
    let mut s = String::new();
    if let Counters::Oltp(c) = &result.counters {
        s.push_str("SQL statistics:\n    queries performed:\n");
        for (name, n) in [
            ("read:", c.reads),
            ("write:", c.writes),
            ("other:", c.other),
            ("total:", c.queries),
        ] {
            let _ = writeln!(s, "        {name:<33}{n}");
        }
        for (name, n, per_s) in [
            ("transactions:", c.transactions, c.tps),
            ("queries:", c.queries, c.qps),
            ("ignored errors:", c.ignored_errors, c.ignored_errors_per_s),
            ("reconnects:", c.reconnects, c.reconnects_per_s),
        ] {
            let _ = writeln!(s, "    {name:<37}{n:<6} ({per_s:.2} per sec.)");
        }
    }
    s.push('\n');
    s.push_str(&super::sysbench_text::general_and_latency(result));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Fairness, HistogramData, LatencySummary, OltpCounters};
    use crate::model::{ToolInfo, SCHEMA_VERSION};
    use crate::stats::SysbenchHistogram;
    use crate::sys::HostInfo;

    /// sysbench 1.0.20's final report of `oltp_read_write --threads=2 --time=1`, byte for byte.
    const SYSBENCH: &str = "SQL statistics:
    queries performed:
        read:                            44114
        write:                           12604
        other:                           6302
        total:                           63020
    transactions:                        3151   (3141.46 per sec.)
    queries:                             63020  (62829.21 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          1.0017s
    total number of events:              3151

Latency (ms):
         min:                                    0.46
         avg:                                    0.63
         max:                                    5.83
         95th percentile:                        0.86
         sum:                                 1996.67

Threads fairness:
    events (avg/stddev):           1575.5000/53.50
    execution time (avg/stddev):   0.9983/0.00

";

    fn result() -> BenchResult {
        BenchResult {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo::spindle("1.0"),
            host: HostInfo::default(),
            test: "oltp_read_write".into(),
            options: crate::model::TestOptions::Oltp(Box::default()),
            steady_state: None,
            measurement: crate::engine::Measurement {
                started_at: String::new(),
                threads: 2,
                total_time_s: 1.0017,
                events: 3151,
                counters: Counters::Oltp(OltpCounters {
                    reads: 44114,
                    writes: 12604,
                    other: 6302,
                    queries: 63020,
                    transactions: 3151,
                    tps: 3141.46,
                    qps: 62829.21,
                    ..Default::default()
                }),
                latency: LatencySummary {
                    count: 3151,
                    min_us: 460.0,
                    avg_us: 630.0,
                    max_us: 5830.0,
                    sum_ms: 1996.67,
                    sysbench_percentile: 95.0,
                    sysbench_percentile_ms: 0.86,
                    ..Default::default()
                },
                intervals: vec![],
                fairness: Fairness {
                    events_avg: 1575.5,
                    events_stddev: 53.5,
                    exec_time_avg_s: 0.9983,
                    exec_time_stddev_s: 0.0,
                    per_thread: vec![],
                },
                histogram: HistogramData::default(),
                notes: vec![],
                diagnostics: vec![],
                error: None,
            },
        }
    }

    #[test]
    fn final_report_matches_sysbench_byte_for_byte() {
        assert_eq!(final_report(&result()), SYSBENCH);
    }

    #[test]
    fn disabled_percentile_and_interval_line() {
        let mut r = result();
        r.latency.sysbench_percentile = 0.0;
        assert!(final_report(&r).contains("\n         percentile stats:               disabled\n"));
        let s = IntervalSample {
            time_s: 1.0004,
            threads: 2,
            events: 3253,
            latency_pct_ms: 0.83,
            latency_max_ms: 2.0,
            p95_ms: 0.83,
            p99_ms: 1.1,
            rates: IntervalRates::Oltp {
                tps: 3253.28,
                qps: 65095.55,
                reads_per_s: 45571.88,
                writes_per_s: 13015.12,
                other_per_s: 6508.56,
                errors_per_s: 0.0,
                reconnects_per_s: 0.0,
            },
        };
        assert_eq!(
            interval_line(&s, 95),
            "[ 1s ] thds: 2 tps: 3253.28 qps: 65095.55 (r/w/o: 45571.88/13015.12/6508.56) \
             lat (ms,95%): 0.83 err/s: 0.00 reconn/s: 0.00"
        );
    }

    #[test]
    fn histogram_rows_like_sysbench() {
        let mut r = result();
        let h = SysbenchHistogram::new();
        let i = h.bucket_of(536_000) as u16; // ≈ 0.536 ms
        r.histogram.sysbench_buckets = vec![(i - 3, 2), (i, 1432)];
        let text = histogram(&r);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Latency histogram (values are in milliseconds)");
        assert_eq!(
            lines[1],
            "       value  ------------- distribution ------------- count"
        );
        assert_eq!(
            lines[2],
            "       0.508 |                                         2"
        );
        assert_eq!(
            lines[3],
            "       0.536 |**************************************** 1432"
        );
        assert_eq!(lines[4], " ");
    }
}
