//! The result model (versioned JSON documents) and every rendering of it: sysbench-style text,
//! JSON, and later CSV/HTML. Engines return results; this module renders; nothing here measures.

pub mod model;
pub mod oltp_text;
pub mod suite;
pub mod sysbench_text;
pub mod tpcc_text;

pub use model::*;
