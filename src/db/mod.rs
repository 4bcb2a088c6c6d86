//! The MySQL-protocol client side shared by the OLTP and TPC-C engines: connection options
//! (`--mysql-*`), connecting with errors that name what to fix, classifying errors (ignorable,
//! connection lost, fatal), the client threads of a run (`clients`: spawn, connect and prepare,
//! the ready handshake, join) and how the benchmark loops' connections wait for replies
//! (`sockets`, `uring`, `wire` on `blocking`), and `link`, a connection whose statements go
//! through the wire when there is one.

mod blocking;
pub(crate) mod clients;
mod conn;
pub mod link;
mod packets;
mod reactorwait;
pub mod ringdrive;
mod ringwire;
pub mod sharedring;
pub mod sockets;
pub mod threadepoll;
mod uring;
pub mod wire;

pub use conn::{
    classify, describe_error, insert_batch_limit, ConnectionConfig, ErrorClass, IgnoreErrors,
};
pub use link::Link;
pub use sockets::{ClientIo, IoStats};
pub use wire::{Param, Wire};
