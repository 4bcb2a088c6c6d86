//! Latency recording: sysbench's 1024-bucket histogram (for percentiles that match sysbench's
//! reports), an HDR histogram in nanoseconds (for exact p50…p99.99), and the summaries the result
//! model stores. Every engine records into [`LatencyRecorder`]s and merges them at the end.
//! Steady state as fio judges it, on a series of per-interval values: [`steady`]. The
//! SLC-cache cliff of a sustained write, by change-point detection: [`cliff`]. Repeated runs of
//! a figure: mean, median, CV, seeded bootstrap intervals and verdicts: [`repeat`].

pub mod cliff;
mod latency;
pub mod repeat;
pub mod steady;
mod sysbench_hist;

pub use latency::{
    fairness, Fairness, HistogramData, LatencyRecorder, LatencySummary, ThreadShare,
};
pub use sysbench_hist::SysbenchHistogram;
