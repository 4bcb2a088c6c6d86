//! The MySQL-protocol client side shared by the OLTP and TPC-C engines: connection options
//! (`--mysql-*`), connecting with errors that name what to fix, classifying errors (ignorable,
//! connection lost, fatal), and the runtime/socket tuning the benchmark loops use.

mod conn;
pub mod sockets;

pub use conn::{
    classify, describe_error, insert_batch_limit, ConnectionConfig, ErrorClass, IgnoreErrors,
};
