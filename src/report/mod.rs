//! The result model (versioned JSON documents) and every rendering of it: sysbench-style text,
//! JSON, CSV, `summary.txt`, the offline HTML page, and comparisons of several runs. Engines
//! return results; this module renders; nothing here measures.

pub mod access;
pub mod compare;
pub mod csv;
pub mod doubts;
pub mod health;
pub mod html;
pub mod load;
pub mod metric;
pub mod model;
pub mod oltp_text;
pub mod params;
pub mod phase;
pub mod queueing;
pub mod rank;
pub mod regimes;
pub mod suite;
pub mod summary;
pub mod sysbench_text;
pub mod tpcc_text;

pub use model::*;
