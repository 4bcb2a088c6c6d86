//! The MySQL client side shared by the OLTP and TPC-C engines.
//!
//! * `conn`: `ConnectionConfig` (`--mysql-*`, the read timeout), connecting with errors that
//!   name what to fix, error classes (ignorable, connection lost, fatal).
//! * `clients`: the session harness both engines run on (one OS thread per share of the
//!   connections, connect and prepare, the ready handshake, the abort grace, join); an engine
//!   implements `clients::Sessions` on its run's state, which holds a `clients::ClientRun`.
//! * `sockets`: the one place that chooses how a reply is awaited (`ClientIo`, hidden
//!   `--client-io`: `direct`, the default of both engines, `direct-epoll`, or `reactor`,
//!   mysql_async's own path and the baseline); each client thread's runtime.
//! * What happens when a session sends one statement the direct way: after mysql_async has
//!   connected and prepared, the socket leaves its tokio stream (`blocking`: made blocking,
//!   mysql_async going on over it for everything else); `wire` encodes the COM_STMT_EXECUTE or
//!   COM_QUERY and awaits the reply in the client thread's own place (`ringdrive::install`): its
//!   io_uring (`sharedring`: the request linked before the reply's receive, one
//!   `io_uring_enter` for what the thread's connections queued) or, where the kernel refuses
//!   it, its epoll instance (`threadepoll`: a send, an `epoll_wait`, a receive); then it frames
//!   the packets (`packets`) and skips the rows (OLTP) or decodes them (TPC-C, through `link`,
//!   whose statements go to the wire when there is one). `ringdrive` runs a thread's sessions
//!   instead of tokio's scheduler and sleeps in that ring or epoll instance.

mod blocking;
pub(crate) mod clients;
mod conn;
pub mod link;
mod packets;
pub mod ringdrive;
pub mod sharedring;
pub mod sockets;
pub mod threadepoll;
mod threadwait;
pub mod wire;

pub use conn::{
    classify, describe_error, insert_batch_limit, ConnectionConfig, ErrorClass, IgnoreErrors,
};
pub use link::Link;
pub use sockets::{ClientIo, IoStats};
pub use wire::{Param, Wire};
