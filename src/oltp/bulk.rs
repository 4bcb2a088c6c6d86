//! bulk_insert's per-connection state: the multi-row INSERT being built (kept on the session
//! across a reconnect, filled by the events in `events.rs`).

/// One thread's bulk INSERT in the making (sysbench's per-connection bulk buffer and the
/// script's `cursize`).
#[derive(Debug, Default)]
pub struct Bulk {
    /// Rows appended so far (the last row's id and k).
    pub(super) cursize: u64,
    /// `INSERT INTO sbtestN VALUES` and the rows not yet sent.
    pub(super) sql: String,
    /// Length of the `INSERT … VALUES` head.
    pub(super) head: usize,
    /// Rows in `sql`.
    pub(super) rows: u64,
}
