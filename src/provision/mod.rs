//! Disk preparation and the private mysqld: flavor detection, datadir init, my.cnf, lifecycle.

pub mod mysqld;
pub mod prepare;
pub mod release;
pub mod scratch;
mod steps;
pub mod target;
