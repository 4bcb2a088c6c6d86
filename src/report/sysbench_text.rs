//! Renders fileio results as sysbench's report text (1.0.20 layout, or 0.4.12 with `--compat=0.4`).
//!
//! Labels, order, widths and units follow sysbench byte for byte where it matters to people
//! and scripts that parse it (`reads/s:`, `total time:`, `95th percentile:` …). The shared
//! blocks (General statistics, Latency, Threads fairness, histogram) are used by OLTP too.

use crate::engine::{Counters, IntervalRates, IntervalSample};
use crate::fileio::{Compat, FileioConfig, IoMode, TestMode};
use crate::model::BenchResult;
use crate::stats::SysbenchHistogram;
use crate::units::format_size_exact;
use std::fmt::Write;

/// The header printed before the workers start.
pub fn fileio_header(cfg: &FileioConfig, mode: TestMode) -> String {
    let mut s = String::new();
    let w = &mut s;
    match cfg.compat {
        Compat::V1_0 => {
            let _ = writeln!(
                w,
                "spindle {} (sysbench 1.0 compatible fileio)\n",
                crate::version::VERSION
            );
            let _ = writeln!(w, "Running the test with following options:");
            let _ = writeln!(w, "Number of threads: {}", cfg.threads);
            if let Some(iv) = cfg.report_interval {
                let _ = writeln!(
                    w,
                    "Report intermediate results every {} second(s)",
                    iv.as_secs()
                );
            }
            if cfg.rand_seed == 0 {
                let _ = writeln!(
                    w,
                    "Initializing random number generator from current time\n\n"
                );
            } else {
                let _ = writeln!(
                    w,
                    "Initializing random number generator from seed ({}).\n\n",
                    cfg.rand_seed
                );
            }
            let _ = writeln!(w, "Extra file open flags: {}", cfg.extra_flags.describe());
            let _ = writeln!(
                w,
                "{} files, {} each",
                cfg.file_num,
                format_size_exact(cfg.file_size())
            );
            let _ = writeln!(
                w,
                "{} total file size",
                format_size_exact(cfg.effective_total())
            );
            let _ = writeln!(w, "Block size {}", format_size_exact(cfg.block_size));
            if cfg.merged_requests > 0 {
                let _ = writeln!(
                    w,
                    "Merging requests up to {} for sequential IO.",
                    format_size_exact(cfg.seq_request_size())
                );
            }
            if mode.is_random() {
                let _ = writeln!(w, "Number of IO requests: {}", cfg.events);
                let _ = writeln!(
                    w,
                    "Read/Write ratio for combined random IO test: {:.2}",
                    cfg.rw_ratio
                );
            }
        }
        Compat::V0_4 => {
            let _ = writeln!(
                w,
                "spindle {} (sysbench 0.4.12 compatible fileio)\n",
                crate::version::VERSION
            );
            let _ = writeln!(w, "Running the test with following options:");
            let _ = writeln!(w, "Number of threads: {}", cfg.threads);
            if cfg.rand_seed == 0 {
                let _ = writeln!(w, "Initializing random number generator from timer.\n");
            } else {
                let _ = writeln!(
                    w,
                    "Initializing random number generator from seed ({}).\n",
                    cfg.rand_seed
                );
            }
            let _ = writeln!(w, "Extra file open flags: {}", cfg.extra_flags.open_flags());
            let _ = writeln!(
                w,
                "{} files, {} each",
                cfg.file_num,
                size_04(cfg.file_size() as f64)
            );
            let _ = writeln!(
                w,
                "{} total file size",
                size_04(cfg.effective_total() as f64)
            );
            let _ = writeln!(w, "Block size {}", size_04(cfg.block_size as f64));
            if mode.is_random() {
                let _ = writeln!(w, "Number of random requests for random IO: {}", cfg.events);
                let _ = writeln!(
                    w,
                    "Read/Write ratio for combined random IO test: {:.2}",
                    cfg.rw_ratio
                );
            }
        }
    }
    if cfg.fsync_freq > 0 {
        let _ = writeln!(
            w,
            "Periodic FSYNC enabled, calling fsync() each {} requests.",
            cfg.fsync_freq
        );
    }
    if cfg.fsync_end {
        let _ = writeln!(w, "Calling fsync() at the end of test, Enabled.");
    }
    if cfg.fsync_all {
        let _ = writeln!(w, "Calling fsync() after each write operation.");
    }
    let _ = writeln!(
        w,
        "{}",
        match cfg.io_mode {
            IoMode::Sync => "Using synchronous I/O mode",
            IoMode::Async => "Using asynchronous I/O mode",
            IoMode::Mmap => "Using fast mmaped I/O mode",
        }
    );
    let _ = writeln!(w, "Doing {} test", mode.description());
    match cfg.compat {
        Compat::V1_0 => {
            let _ = writeln!(w, "Initializing worker threads...\n\nThreads started!\n");
        }
        Compat::V0_4 => {
            let _ = writeln!(w, "Threads started!");
        }
    }
    s
}

/// One `--report-interval` line.
pub fn fileio_interval_line(s: &IntervalSample, cfg: &FileioConfig) -> String {
    let IntervalRates::Fileio {
        read_mib_per_s,
        written_mib_per_s,
        fsyncs_per_s,
        ..
    } = s.rates
    else {
        return String::new();
    };
    match cfg.compat {
        Compat::V1_0 => format!(
            "[ {:.0}s ] reads: {:4.2} MiB/s writes: {:4.2} MiB/s fsyncs: {:4.2}/s latency (ms,{}%): {:4.3}",
            s.time_s,
            read_mib_per_s,
            written_mib_per_s,
            fsyncs_per_s,
            pct_label(cfg.percentile),
            s.latency_pct_ms
        ),
        Compat::V0_4 => format!(
            "[{:4.0}s] reads: {:4.2} MB/s writes: {:4.2} MB/s fsyncs: {:4.2}/s response time: {:4.3}ms ({}%)",
            s.time_s,
            read_mib_per_s,
            written_mib_per_s,
            fsyncs_per_s,
            s.latency_pct_ms,
            pct_label(cfg.percentile)
        ),
    }
}

fn pct_label(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}", p as u64)
    } else {
        format!("{p}")
    }
}

/// The final report (after the workers finished).
pub fn fileio_report(r: &BenchResult, cfg: &FileioConfig) -> String {
    let Counters::Fileio(c) = &r.counters else {
        return String::new();
    };
    let mut s = String::new();
    let w = &mut s;
    match cfg.compat {
        Compat::V1_0 => {
            if cfg.histogram {
                w.push_str(&histogram_text(r));
            }
            let _ = writeln!(w, "\nFile operations:");
            let _ = writeln!(w, "    reads/s:                      {:4.2}", c.reads_per_s);
            let _ = writeln!(
                w,
                "    writes/s:                     {:4.2}",
                c.writes_per_s
            );
            let _ = writeln!(
                w,
                "    fsyncs/s:                     {:4.2}",
                c.fsyncs_per_s
            );
            let _ = writeln!(w, "\nThroughput:");
            let _ = writeln!(
                w,
                "    read, MiB/s:                  {:4.2}",
                c.read_mib_per_s
            );
            let _ = writeln!(
                w,
                "    written, MiB/s:               {:4.2}\n",
                c.written_mib_per_s
            );
            w.push_str(&general_and_latency(r));
        }
        Compat::V0_4 => {
            let _ = writeln!(w, "Done.\n");
            let _ = writeln!(
                w,
                "Operations performed:  {} Read, {} Write, {} Other = {} Total",
                c.reads,
                c.writes,
                c.fsyncs,
                c.reads + c.writes + c.fsyncs
            );
            let secs = r.total_time_s.max(1e-9);
            let _ = writeln!(
                w,
                "Read {}  Written {}  Total transferred {}  ({}/sec)",
                size_04(c.bytes_read as f64),
                size_04(c.bytes_written as f64),
                size_04((c.bytes_read + c.bytes_written) as f64),
                size_04((c.bytes_read + c.bytes_written) as f64 / secs)
            );
            let _ = writeln!(
                w,
                "{:8.2} Requests/sec executed\n",
                (c.reads + c.writes) as f64 / secs
            );
            let l = &r.latency;
            let _ = writeln!(w, "Test execution summary:");
            let _ = writeln!(
                w,
                "    total time:                          {:.4}s",
                r.total_time_s
            );
            let _ = writeln!(w, "    total number of events:              {}", r.events);
            let _ = writeln!(
                w,
                "    total time taken by event execution: {:.4}",
                l.sum_ms / 1e3
            );
            let _ = writeln!(w, "    per-request statistics:");
            let _ = writeln!(
                w,
                "         min:                            {:10.2}ms",
                l.min_us / 1e3
            );
            let _ = writeln!(
                w,
                "         avg:                            {:10.2}ms",
                l.avg_us / 1e3
            );
            let _ = writeln!(
                w,
                "         max:                            {:10.2}ms",
                l.max_us / 1e3
            );
            if l.sysbench_percentile > 0.0 {
                let _ = writeln!(
                    w,
                    "         approx. {:>3} percentile:         {:10.2}ms",
                    pct_label(l.sysbench_percentile),
                    l.sysbench_percentile_ms
                );
            }
            w.push('\n');
            w.push_str(&fairness_text(r));
        }
    }
    if let Some(e) = &r.error {
        let _ = writeln!(w, "\nFATAL: the run ended early: {e}");
    }
    s
}

/// sysbench 1.0's "General statistics", "Latency (ms)" and "Threads fairness" blocks (fileio
/// and OLTP share them), ending with sysbench's blank line.
pub fn general_and_latency(r: &BenchResult) -> String {
    let mut s = String::new();
    let w = &mut s;
    let l = &r.latency;
    let _ = writeln!(w, "General statistics:");
    let _ = writeln!(
        w,
        "    total time:                          {:.4}s",
        r.total_time_s
    );
    let _ = writeln!(w, "    total number of events:              {}", r.events);
    let _ = writeln!(w, "\nLatency (ms):");
    let _ = writeln!(w, "         min: {:>39.2}", l.min_us / 1e3);
    let _ = writeln!(w, "         avg: {:>39.2}", l.avg_us / 1e3);
    let _ = writeln!(w, "         max: {:>39.2}", l.max_us / 1e3);
    if l.sysbench_percentile > 0.0 {
        let _ = writeln!(
            w,
            "        {:>3}th percentile: {:>27.2}",
            pct_label(l.sysbench_percentile),
            l.sysbench_percentile_ms
        );
    } else {
        let _ = writeln!(w, "         percentile stats:               disabled");
    }
    let _ = writeln!(w, "         sum: {:>39.2}\n", l.sum_ms);
    w.push_str(&fairness_text(r));
    s
}

fn fairness_text(r: &BenchResult) -> String {
    let f = &r.fairness;
    format!(
        "Threads fairness:\n    events (avg/stddev):           {:.4}/{:3.2}\n    execution time (avg/stddev):   {:.4}/{:3.2}\n\n",
        f.events_avg, f.events_stddev, f.exec_time_avg_s, f.exec_time_stddev_s
    )
}

/// sysbench's `--histogram` block (cumulative buckets, bars scaled to the largest bucket).
pub fn histogram_text(r: &BenchResult) -> String {
    let h = SysbenchHistogram::from_nonempty(&r.histogram.sysbench_buckets);
    let mut s = String::from("Latency histogram (values are in milliseconds)\n");
    s.push_str("       value  ------------- distribution ------------- count\n");
    let max = r
        .histogram
        .sysbench_buckets
        .iter()
        .map(|&(_, c)| c)
        .max()
        .unwrap_or(0);
    for &(i, c) in &r.histogram.sysbench_buckets {
        let bar = ((c as f64 * 40.0 / max.max(1) as f64) + 0.5).floor() as usize;
        let _ = writeln!(
            s,
            "{:12.3} |{:<40} {}",
            h.bucket_value_ms(i as usize),
            "*".repeat(bar.min(40)),
            c
        );
    }
    s.push_str(" \n");
    s
}

/// sysbench 0.4's size format: binary units with a one-letter suffix plus "b", `%.5g`.
pub fn size_04(bytes: f64) -> String {
    let units = ["b", "Kb", "Mb", "Gb", "Tb"];
    let mut v = bytes;
    let mut u = 0;
    while v >= 1024.0 && u < units.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{}{}", fmt_g5(v), units[u])
}

/// C's `%.5g` for the magnitudes sysbench prints (no exponent form needed below 1e5).
pub fn fmt_g5(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = v.abs().log10().floor() as i32 + 1;
    let decimals = (5 - digits).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_like_sysbench_0_4() {
        assert_eq!(size_04(93.75 * 1048576.0), "93.75Mb");
        assert_eq!(size_04(62.5 * 1048576.0), "62.5Mb");
        assert_eq!(size_04(3.1757 * 1073741824.0), "3.1757Gb");
        assert_eq!(size_04(2.5413 * 1048576.0), "2.5413Mb");
        assert_eq!(size_04(16384.0), "16Kb");
        assert_eq!(size_04(400.0 * 1048576.0), "400Mb");
        assert_eq!(size_04(50.0 * 1073741824.0), "50Gb");
        assert_eq!(fmt_g5(18.0661), "18.066");
    }

    #[test]
    fn latency_block_is_right_aligned_at_column_53() {
        let mut r = crate::model::bench::tests_support::sample_fileio_result();
        r.latency.sysbench_percentile = 95.0;
        let text = general_and_latency(&r);
        for line in text.lines().filter(|l| l.starts_with("         ")) {
            assert_eq!(line.len(), 53, "{line:?}");
        }
        r.latency.sysbench_percentile = 0.0;
        assert!(
            general_and_latency(&r).contains("         percentile stats:               disabled")
        );
    }
}
