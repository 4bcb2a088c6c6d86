//! spindle's version, printed by `--version` and embedded in every result document and every
//! file spindle writes for itself (a leaf: anything may read it without an arrow to the root).

/// The crate's version (Cargo.toml).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
