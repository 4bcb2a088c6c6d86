//! Command runners: glue between parsed arguments, the engines and the renderers. Each runner
//! turns its arguments into an engine config (via `config`), calls the engine, prints with
//! `report`, and returns the exit code. No benchmark logic lives here.

pub mod control;
pub mod daemon;
pub mod fileio;
pub mod leds;
pub mod mysqld;
pub mod suite;
