//! The daemon loop (being written).
