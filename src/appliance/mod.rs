//! The appliance run: the plan (pure), the suite runner that executes it across targets, and
//! (later) the state machine and daemon loop that drive it from the button.

pub mod plan;
pub mod suite;
