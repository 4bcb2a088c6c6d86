//! Every rendering of the result documents (`model`): sysbench-style text, CSV, `summary.txt`,
//! the offline HTML page, comparisons of several runs, and the bundle that writes a run's
//! document beside its renderings (`bundle.rs`). Nothing here measures or defines the schema.

pub mod appclass;
pub mod bundle;
pub mod cdm;
pub mod cliff;
pub mod compare;
pub mod csv;
pub mod doubts;
pub mod figures;
pub mod group;
pub mod health;
pub mod html;
pub mod markdown;
pub mod metric;
pub mod oltp_text;
pub mod params;
pub mod queueing;
pub mod rank;
pub mod regimes;
pub mod repeat;
pub mod server;
pub mod summary;
pub mod sysbench_text;
pub mod together;
pub mod tpcc_text;
pub mod validity;
