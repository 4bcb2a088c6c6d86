//! `--datadir`: reach the server `spindle mysqld` started on a data directory.

use super::ConnectionConfig;
use crate::cli::OltpArgs;
use std::path::Path;

/// Fills socket, user, password and database from the datadir unless given explicitly.
pub fn apply(_conn: &mut ConnectionConfig, datadir: &Path, _args: &OltpArgs) -> anyhow::Result<()> {
    anyhow::bail!(
        "--datadir {}: not wired to the mysqld provisioning yet",
        datadir.display()
    )
}
