//! Which server is installed: flavor and version parsed from `mysqld --version` output.

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The MySQL-family server variants spindle knows how to initialise and configure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    /// MariaDB (`mariadbd`, `mariadb-install-db`).
    MariaDb,
    /// Oracle MySQL Community/Enterprise (`mysqld --initialize-insecure`).
    MySql,
    /// Percona Server for MySQL (initialised like MySQL).
    Percona,
}

impl fmt::Display for Flavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Flavor::MariaDb => "MariaDB",
            Flavor::MySql => "MySQL",
            Flavor::Percona => "Percona Server",
        })
    }
}

impl Flavor {
    /// The flavor's word in config files, results and phase names (`mariadb`, `mysql`,
    /// `percona`).
    pub fn key(&self) -> &'static str {
        match self {
            Flavor::MariaDb => "mariadb",
            Flavor::MySql => "mysql",
            Flavor::Percona => "percona",
        }
    }
}

impl FromStr for Flavor {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "mariadb" => Ok(Flavor::MariaDb),
            "mysql" => Ok(Flavor::MySql),
            "percona" | "percona-server" | "ps" => Ok(Flavor::Percona),
            other => Err(format!(
                "unknown server flavor '{other}': use mariadb, mysql or percona"
            )),
        }
    }
}

/// A server version `major.minor.patch` (suffixes such as `-MariaDB-0+deb12u1` are dropped).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct ServerVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl ServerVersion {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        ServerVersion {
            major,
            minor,
            patch,
        }
    }

    /// True if this version is `major.minor.patch` or newer.
    pub fn at_least(&self, major: u32, minor: u32, patch: u32) -> bool {
        *self >= ServerVersion::new(major, minor, patch)
    }
}

impl fmt::Display for ServerVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Parses the output of `mariadbd --version` / `mysqld --version`, e.g.
/// `mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)` or
/// `/usr/sbin/mysqld  Ver 8.0.35-27 for Linux on aarch64 (Percona Server (GPL), Release '27', …)`.
pub fn parse_version(text: &str) -> anyhow::Result<(Flavor, ServerVersion)> {
    let line = text
        .lines()
        .find(|l| l.contains(" Ver "))
        .with_context(|| format!("no ' Ver ' in the server's --version output: {text:?}"))?;
    let after = &line[line.find(" Ver ").map(|i| i + 5).unwrap_or(0)..];
    let token = after.split_whitespace().next().unwrap_or("");
    let numeric: String = token
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let mut parts = numeric.split('.').filter(|p| !p.is_empty());
    let mut next = || parts.next().and_then(|p| p.parse::<u32>().ok());
    let (Some(major), minor, patch) = (next(), next(), next()) else {
        bail!("could not read a version number from the server's --version output: {line:?}");
    };
    let version = ServerVersion::new(major, minor.unwrap_or(0), patch.unwrap_or(0));
    let flavor = if line.contains("MariaDB") {
        Flavor::MariaDb
    } else if line.contains("Percona") {
        Flavor::Percona
    } else {
        Flavor::MySql
    };
    Ok((flavor, version))
}

/// An installed server: what it is and where its programs are.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerBinary {
    /// Server flavor (detected, or forced with `--flavor`).
    pub flavor: Flavor,
    /// Parsed version.
    pub version: ServerVersion,
    /// The first line of `--version`, verbatim.
    pub version_text: String,
    /// The server program (`mariadbd` or `mysqld`).
    pub mysqld: PathBuf,
    /// MariaDB's `mariadb-install-db` / `mysql_install_db` (None for MySQL/Percona).
    pub install_db: Option<PathBuf>,
}

impl ServerBinary {
    /// "MariaDB 10.11.19" and the like.
    pub fn describe(&self) -> String {
        format!("{} {}", self.flavor, self.version)
    }
}

/// Finds MariaDB's install script: next to the server (tarball layouts), then in PATH.
pub(crate) fn find_install_db(mysqld: &Path) -> Option<PathBuf> {
    let names = ["mariadb-install-db", "mysql_install_db"];
    if let Some(bin) = mysqld.parent() {
        let base = bin.parent();
        let mut dirs = vec![bin.to_path_buf()];
        if let Some(b) = base {
            dirs.push(b.join("bin"));
            dirs.push(b.join("scripts"));
        }
        for d in dirs {
            for n in names {
                let p = d.join(n);
                if p.is_file() {
                    return Some(p);
                }
            }
        }
    }
    names.iter().find_map(|n| crate::sys::runner::which(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mariadb_10_11_debian() {
        let s =
            "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n";
        assert_eq!(
            parse_version(s).unwrap(),
            (Flavor::MariaDb, ServerVersion::new(10, 11, 19))
        );
    }

    #[test]
    fn mysql_8_0_community_and_ubuntu() {
        let s = "/usr/sbin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)";
        assert_eq!(
            parse_version(s).unwrap(),
            (Flavor::MySql, ServerVersion::new(8, 0, 36))
        );
        let s = "/usr/sbin/mysqld  Ver 8.0.36-0ubuntu0.22.04.1 for Linux on x86_64 ((Ubuntu))";
        assert_eq!(
            parse_version(s).unwrap(),
            (Flavor::MySql, ServerVersion::new(8, 0, 36))
        );
    }

    #[test]
    fn percona_8_0_and_5_7() {
        let s = "/usr/sbin/mysqld  Ver 8.0.35-27 for Linux on aarch64 (Percona Server (GPL), Release '27', Revision '2f8eeab2')";
        assert_eq!(
            parse_version(s).unwrap(),
            (Flavor::Percona, ServerVersion::new(8, 0, 35))
        );
        let s = "/usr/local/mysql/bin/mysqld  Ver 5.7.27-30 for Linux on armv7l (Percona Server (GPL), Release 30, Revision 8916819)";
        assert_eq!(
            parse_version(s).unwrap(),
            (Flavor::Percona, ServerVersion::new(5, 7, 27))
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(parse_version("").is_err());
        assert!(parse_version("mysqld Ver x.y").is_err());
        assert!(parse_version("hello world").is_err());
    }

    #[test]
    fn flavor_names_round_trip() {
        for f in [Flavor::MariaDb, Flavor::MySql, Flavor::Percona] {
            let name = match f {
                Flavor::MariaDb => "mariadb",
                Flavor::MySql => "mysql",
                Flavor::Percona => "percona",
            };
            assert_eq!(name.parse::<Flavor>().unwrap(), f);
        }
        assert_eq!(Flavor::Percona.to_string(), "Percona Server");
        assert!("oracle".parse::<Flavor>().is_err());
    }
}
