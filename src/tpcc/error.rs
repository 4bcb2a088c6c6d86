//! The TPC-C engine's own errors. Each says what is wrong in the engine's words (a number of
//! warehouses, a database, its tables) and the fix; [`TpccError::option`] names the option it is
//! about, so the CLI can put its flag in front and the suite its profile key.

/// Highest warehouse id tpcc-mysql's schema can hold (`w_id smallint`).
pub const MAX_WAREHOUSES: u32 = 32_767;

#[derive(Debug, thiserror::Error)]
pub enum TpccError {
    #[error("the number of warehouses must be between 1 and {MAX_WAREHOUSES} (got {0})")]
    Warehouses(u64),
    #[error("at least one connection is needed (got 0)")]
    Connections,
    #[error("at least one load connection is needed (got 0)")]
    LoadConnections,
    #[error("the measured time must be at least 1 second (got 0)")]
    Time,
    #[error("the reconnect timeout must be a number of seconds >= 0")]
    ReconnectTimeout,
    #[error("the response-time limit of {0} must be a positive number of seconds")]
    RtLimit(&'static str),
    #[error(
        "database '{database}' already holds TPC-C tables ({}): replace them, or drop them with cleanup first",
        tables.join(", ")
    )]
    TablesExist {
        database: String,
        tables: Vec<String>,
    },
    #[error(
        "database '{database}' has no complete set of TPC-C tables (missing: {}): load them with prepare first, or name the database that holds them",
        missing.join(", ")
    )]
    TablesMissing {
        database: String,
        missing: Vec<String>,
    },
    #[error("database '{database}' holds {loaded} warehouse(s) but {asked} were asked for: use at most {loaded}, or prepare {asked}")]
    TooManyWarehouses {
        database: String,
        asked: u32,
        loaded: u32,
    },
    #[error("database '{database}' has TPC-C tables without data (no warehouse rows): the load did not finish; clean up and prepare again")]
    Empty { database: String },
}

impl TpccError {
    /// The command-line option (without `--`) this error is about, if any.
    pub fn option(&self) -> Option<&'static str> {
        use TpccError::*;
        Some(match self {
            Warehouses(_) | TooManyWarehouses { .. } => "warehouses",
            Connections => "connections",
            LoadConnections => "load-connections",
            Time => "time",
            ReconnectTimeout => "reconnect-timeout",
            RtLimit(_) => return None,
            TablesExist { .. } => "replace",
            TablesMissing { .. } | Empty { .. } => "mysql-db",
        })
    }
}

/// The `TpccError` in `e`'s chain, if there is one.
pub fn find(e: &anyhow::Error) -> Option<&TpccError> {
    e.chain().find_map(|c| c.downcast_ref::<TpccError>())
}
