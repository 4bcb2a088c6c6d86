//! The results stick: detection, atomic bundle copy, safe unmount; and the runs directory on
//! the SD card that keeps every run until a stick has it.

pub mod problem;
pub mod runs;
pub mod settings;
pub mod stick;

pub use problem::StickProblem;
pub use runs::{RunEntry, RunStore};
pub use stick::{copy_pending, find_sticks, inspect, CopyReport, ResultsStick, StickInspection};
