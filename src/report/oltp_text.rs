//! Renders OLTP results as sysbench 1.0's text: the run header, interval lines, the
//! `--histogram` block and the final report (SQL statistics, General statistics, Latency (ms),
//! Threads fairness), with sysbench's labels, column widths and number formats.

use super::model::{BenchResult, Counters, IntervalRates, IntervalSample};
use crate::stats::SysbenchHistogram;
use std::fmt::Write as _;

/// The lines sysbench prints before the workers connect.
pub fn run_header(threads: u32, report_interval_s: u64, rand_seed: u64) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "spindle {} (sysbench 1.0 compatible)\n", crate::VERSION);
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
            reads_per_s,
            writes_per_s,
            other_per_s,
            errors_per_s,
            reconnects_per_s,
        } => (
            tps,
            qps,
            reads_per_s,
            writes_per_s,
            other_per_s,
            errors_per_s,
            reconnects_per_s,
        ),
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
    let h = SysbenchHistogram::new();
    let buckets = &result.histogram.sysbench_buckets;
    let max = buckets.iter().map(|&(_, c)| c).max().unwrap_or(0).max(1);
    let mut s = String::from("Latency histogram (values are in milliseconds)\n");
    s.push_str("       value  ------------- distribution ------------- count\n");
    let stars = "*".repeat(40);
    for &(i, c) in buckets {
        let width = ((c as f64 * 40.0 / max as f64) + 0.5).floor() as usize;
        let _ = writeln!(
            s,
            "{:12.3} |{:<40} {}",
            h.bucket_value_ms(i as usize),
            &stars[..width.min(40)],
            c
        );
    }
    s.push_str(" \n");
    s
}

/// The final report, from `SQL statistics:` to the blank line after `Threads fairness`.
pub fn final_report(result: &BenchResult) -> String {
    let mut s = String::new();
    if let Counters::Oltp(c) = &result.counters {
        s.push_str("SQL statistics:\n    queries performed:\n");
        let _ = writeln!(s, "        read:                            {}", c.reads);
        let _ = writeln!(s, "        write:                           {}", c.writes);
        let _ = writeln!(s, "        other:                           {}", c.other);
        let _ = writeln!(s, "        total:                           {}", c.queries);
        let _ = writeln!(
            s,
            "    transactions:                        {:<6} ({:.2} per sec.)",
            c.transactions, c.tps
        );
        let _ = writeln!(
            s,
            "    queries:                             {:<6} ({:.2} per sec.)",
            c.queries, c.qps
        );
        let _ = writeln!(
            s,
            "    ignored errors:                      {:<6} ({:.2} per sec.)",
            c.ignored_errors, c.ignored_errors_per_s
        );
        let _ = writeln!(
            s,
            "    reconnects:                          {:<6} ({:.2} per sec.)",
            c.reconnects, c.reconnects_per_s
        );
    }
    let l = &result.latency;
    s.push('\n');
    s.push_str("General statistics:\n");
    let _ = writeln!(
        s,
        "    total time:                          {:.4}s",
        result.total_time_s
    );
    let _ = writeln!(
        s,
        "    total number of events:              {}",
        result.events
    );
    s.push('\n');
    s.push_str("Latency (ms):\n");
    let _ = writeln!(s, "         min: {:39.2}", l.min_us / 1e3);
    let _ = writeln!(s, "         avg: {:39.2}", l.avg_us / 1e3);
    let _ = writeln!(s, "         max: {:39.2}", l.max_us / 1e3);
    if l.sysbench_percentile > 0.0 {
        let _ = writeln!(
            s,
            "        {:3}th percentile: {:27.2}",
            l.sysbench_percentile as u32, l.sysbench_percentile_ms
        );
    } else {
        s.push_str("         percentile stats:               disabled\n");
    }
    let _ = writeln!(s, "         sum: {:39.2}", l.sum_ms);
    s.push('\n');
    let f = &result.fairness;
    s.push_str("Threads fairness:\n");
    let _ = writeln!(
        s,
        "    events (avg/stddev):           {:.4}/{:3.2}",
        f.events_avg, f.events_stddev
    );
    let _ = writeln!(
        s,
        "    execution time (avg/stddev):   {:.4}/{:3.2}",
        f.exec_time_avg_s, f.exec_time_stddev_s
    );
    s.push('\n');
    s
}
