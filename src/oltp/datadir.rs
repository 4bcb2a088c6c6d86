//! `--datadir`: reach the server `spindle mysqld` started on a data directory (its socket and
//! benchmark login), unless `--mysql-*` flags name them explicitly.

use super::ConnectionConfig;
use crate::cli::OltpArgs;
use anyhow::Context;
use std::path::Path;

/// Fills socket, user, password and database from the datadir; explicit flags win.
pub fn apply(conn: &mut ConnectionConfig, datadir: &Path, args: &OltpArgs) -> anyhow::Result<()> {
    let info = crate::provision::mysqld::client_info(datadir)
        .with_context(|| format!("--datadir {}", datadir.display()))?;
    if args.mysql_socket.is_none() {
        conn.socket = Some(info.socket);
    }
    if args.mysql_user.is_none() {
        conn.user = info.user;
    }
    if args.mysql_password.is_none() {
        conn.password = info.password;
    }
    if args.mysql_db.is_none() {
        conn.database = info.database;
    }
    Ok(())
}
