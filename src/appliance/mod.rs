//! The appliance run plan, its pure state machine and the daemon loop (filled by the appliance issue).

pub mod daemon;
pub mod state;
