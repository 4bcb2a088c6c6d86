//! The results schema: the versioned documents a run leaves and every reader takes back — a
//! test's result ([`BenchResult`]: an engine's [`crate::engine::Measurement`] with its
//! options, the tool and the host; `bench.rs`), the steps of a suite run ([`Phase`],
//! [`Regime`]; `phase.rs`), a whole suite run ([`SuiteResult`]; `suite.rs`), its targets and
//! phase results (`target.rs`; a measurement's repeated runs: `repeat.rs`) and their statuses (`status.rs`), with the views every
//! rendering shares: what the statuses say (`outcome.rs`) and a disk's recorded facts
//! (`facts.rs`). The SLC-cache cliff phase's record is `cliff.rs`. Reading a document back, older schemas upgraded, is here too (`load.rs` for
//! `spindle report`'s files); rendering is `report`'s, writing a run's bundle
//! `report::bundle`'s. Nothing here measures or renders.

pub mod bench;
pub mod cliff;
pub mod facts;
pub mod load;
pub mod outcome;
pub mod phase;
pub mod repeat;
pub mod status;
pub mod suite;
pub mod target;
pub mod validity;

pub use bench::{BenchResult, TestOptions, ToolInfo, SCHEMA_VERSION};
pub use cliff::CliffRecord;
pub use facts::DiskFacts;
pub use phase::{Family, Phase, Queue, Regime, When};
pub use status::{PhaseStatus, RunStatus, TargetKind};
pub use suite::{
    estimated_data_bytes, run_id, ProfileRecord, Skipped, SuiteResult, SUITE_SCHEMA_VERSION,
};
pub use target::{
    DataSetFit, FilesystemRecord, PhaseResult, ServerInfo, SmartRecord, TargetResult,
};
pub use validity::{Colour, Validity};
