//! The appliance: the pure state machine, the daemon loop that drives it from the button, the
//! control socket, the LEDs and the results stick, and starts runs through `run`.

pub mod control;
pub mod daemon;
pub mod launch;
mod recovery;
pub mod state;
mod sticks;
