//! The appliance run: the plan (pure), the suite runner that executes it across targets, the
//! pure state machine and the daemon loop that drives it from the button, the LEDs and the stick.

pub mod control;
pub mod daemon;
pub mod plan;
pub mod state;
pub mod suite;
pub mod targets;
