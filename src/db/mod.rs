//! The MySQL-protocol client side shared by the OLTP and TPC-C engines: connection options
//! (`--mysql-*`), connecting with errors that name what to fix, classifying errors (ignorable,
//! connection lost, fatal), and how the benchmark loops' connections wait for replies (`sockets`, `uring`).

mod conn;
pub mod sockets;
mod uring;

pub use conn::{
    classify, describe_error, insert_batch_limit, ConnectionConfig, ErrorClass, IgnoreErrors,
};
pub use sockets::{ClientIo, IoStats};
