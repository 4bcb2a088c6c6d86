//! `spindle.toml`: the appliance/CLI configuration file (see `config/spindle.toml` for every key
//! with its default). Parsed strictly: unknown keys and bad values are errors naming the key.

use crate::disk::DiskPolicy;
use crate::provision::mysqld::Flavor;
use anyhow::Context;
use serde::Deserialize;
use std::path::Path;

/// The whole configuration file.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SpindleConfig {
    pub suite: SuiteSection,
    /// Which disks are benchmark targets and how they may be prepared.
    pub disks: DiskPolicy,
    pub mysqld: MysqldSection,
}

/// `[suite]`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SuiteSection {
    /// Profile name (check, quick, standard, reference) or path to a profile file.
    pub profile: String,
    /// Directory for results bundles; empty = `./spindle-results`.
    pub out: String,
}

impl Default for SuiteSection {
    fn default() -> Self {
        SuiteSection {
            profile: "standard".into(),
            out: String::new(),
        }
    }
}

/// `[mysqld]`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MysqldSection {
    /// Server program; empty or absent = detect from PATH.
    #[serde(deserialize_with = "unless_empty")]
    pub binary: Option<std::path::PathBuf>,
    /// `mariadb`, `mysql` or `percona`; empty or absent = detect.
    #[serde(deserialize_with = "unless_empty")]
    pub flavor: Option<Flavor>,
    /// Several servers on every target: the database phases run once per flavor, in this
    /// order (`["mariadb", "mysql"]`); empty = the one server of `binary`/`flavor`.
    pub flavors: Vec<Flavor>,
    /// `[mysqld.binaries]`: where each flavor's server program is (`mysql =
    /// "/opt/spindle-mysql/spindle/bin/mysqld"`); a flavor without one is found in PATH.
    pub binaries: std::collections::BTreeMap<String, std::path::PathBuf>,
}

/// One server a suite runs its database phases on: its program and flavor when given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerChoice {
    /// The server program; `None` = mariadbd/mysqld from PATH.
    pub mysqld: Option<std::path::PathBuf>,
    /// The flavor: forced for one server, the server's name when there are several.
    pub flavor: Option<Flavor>,
}

impl MysqldSection {
    /// The servers a suite runs on, in order: one per entry of `flavors`, else the one of
    /// `binary` and `flavor`. `[mysqld.binaries]` says where each flavor's program is (a machine
    /// may list more flavors than a run uses: the image lists the MySQL it carries, a stick's
    /// `flavors` chooses). Errors name the key.
    pub fn servers(&self) -> anyhow::Result<Vec<ServerChoice>> {
        let mut programs: Vec<(Flavor, &std::path::PathBuf)> = Vec::new();
        for (key, path) in &self.binaries {
            let flavor: Flavor = key
                .parse()
                .map_err(|e| anyhow::anyhow!("[mysqld.binaries] {key}: {e}"))?;
            programs.push((flavor, path));
        }
        let program_of = |f: Flavor| {
            programs
                .iter()
                .find(|(k, _)| *k == f)
                .map(|(_, p)| (*p).clone())
        };
        if self.flavors.is_empty() {
            // `binary` wins; else the program `[mysqld.binaries]` gives for `flavor`.
            let mysqld = self
                .binary
                .clone()
                .or_else(|| self.flavor.and_then(program_of));
            return Ok(vec![ServerChoice {
                mysqld,
                flavor: self.flavor,
            }]);
        }
        if self.binary.is_some() && !self.flavor.is_some_and(|f| self.flavors.contains(&f)) {
            anyhow::bail!(
                "[mysqld] binary: with flavors = {:?}, say whose program it is: set flavor to one of them, or give it in [mysqld.binaries]",
                self.flavor_names()
            );
        }
        let mut out: Vec<ServerChoice> = Vec::new();
        for &f in &self.flavors {
            if out.iter().any(|c| c.flavor == Some(f)) {
                anyhow::bail!("[mysqld] flavors names {f} twice: one run per flavor");
            }
            // `binary` is the program of `flavor` (checked above to be one of them).
            let mysqld = self
                .binary
                .clone()
                .filter(|_| self.flavor == Some(f))
                .or_else(|| program_of(f));
            out.push(ServerChoice {
                mysqld,
                flavor: Some(f),
            });
        }
        Ok(out)
    }

    fn flavor_names(&self) -> Vec<String> {
        self.flavors.iter().map(|f| f.key().to_string()).collect()
    }
}

/// A string key whose empty value means "not set" (as `config/spindle.toml` writes them),
/// parsed into its type once, here: a bad value is an error naming the key.
fn unless_empty<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    let s = String::deserialize(d)?;
    match s.trim() {
        "" => Ok(None),
        t => t.parse().map(Some).map_err(serde::de::Error::custom),
    }
}

impl SpindleConfig {
    /// Parses a configuration text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Self> {
        toml::from_str(text).map_err(|e| anyhow::anyhow!("{origin}: {e}"))
    }

    /// Reads a configuration file.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--config: could not read '{}'", path.display()))?;
        Self::parse(&text, &path.display().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_default_file_parses_to_the_defaults() {
        // The shipped file holds every table (the daemon's too); it reads back as the defaults.
        let all = crate::config::appliance::ApplianceSettings::parse(
            include_str!("../../config/spindle.toml"),
            "config/spindle.toml",
        )
        .unwrap();
        assert_eq!(all, crate::config::appliance::ApplianceSettings::default());
    }

    #[test]
    fn several_flavors_each_with_its_program() {
        let c = SpindleConfig::parse(
            "[mysqld]\nflavors = [\"mariadb\", \"mysql\"]\n[mysqld.binaries]\nmysql = \"/opt/m/mysqld\"\n",
            "x.toml",
        )
        .unwrap();
        let s = c.mysqld.servers().unwrap();
        assert_eq!(
            s,
            [
                ServerChoice {
                    mysqld: None,
                    flavor: Some(Flavor::MariaDb)
                },
                ServerChoice {
                    mysqld: Some("/opt/m/mysqld".into()),
                    flavor: Some(Flavor::MySql)
                }
            ]
        );
        // `binary` with the `flavor` it belongs to, among several.
        let c = SpindleConfig::parse(
            "[mysqld]\nbinary = \"/x/mysqld\"\nflavor = \"mysql\"\nflavors = [\"mariadb\", \"mysql\"]\n",
            "x.toml",
        )
        .unwrap();
        assert_eq!(
            c.mysqld.servers().unwrap()[1].mysqld,
            Some("/x/mysqld".into())
        );
        assert_eq!(c.mysqld.servers().unwrap()[0].mysqld, None);
        // Programs of flavors a run does not use are a list of what the machine has.
        let c = SpindleConfig::parse(
            "[mysqld]\nflavors = [\"mariadb\"]\n[mysqld.binaries]\nmysql = \"/opt/m/mysqld\"\n",
            "x.toml",
        )
        .unwrap();
        assert_eq!(
            c.mysqld.servers().unwrap(),
            [ServerChoice {
                mysqld: None,
                flavor: Some(Flavor::MariaDb)
            }]
        );
        // One server by its flavor: its program from [mysqld.binaries].
        let c = SpindleConfig::parse(
            "[mysqld]\nflavor = \"mysql\"\n[mysqld.binaries]\nmysql = \"/opt/m/mysqld\"\n",
            "x.toml",
        )
        .unwrap();
        assert_eq!(
            c.mysqld.servers().unwrap()[0].mysqld,
            Some("/opt/m/mysqld".into())
        );
        // The one-server keys as before.
        let c = SpindleConfig::parse("[mysqld]\nbinary = \"/x/mysqld\"\n", "x.toml").unwrap();
        assert_eq!(
            c.mysqld.servers().unwrap(),
            [ServerChoice {
                mysqld: Some("/x/mysqld".into()),
                flavor: None
            }]
        );
        for (text, says) in [
            ("flavors = [\"oracle\"]", "oracle"),
            ("flavors = [\"mysql\", \"mysql\"]", "twice"),
            (
                "flavors = [\"mysql\"]\n[mysqld.binaries]\ndb2 = \"/m\"",
                "db2",
            ),
            (
                "binary = \"/x\"\nflavors = [\"mysql\", \"mariadb\"]",
                "[mysqld] binary: with flavors",
            ),
        ] {
            let e = SpindleConfig::parse(&format!("[mysqld]\n{text}\n"), "x.toml")
                .and_then(|c| c.mysqld.servers().map(|_| ()))
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn unknown_keys_and_bad_values_are_named() {
        let e = SpindleConfig::parse("[disks]\nallow_usb3 = true\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("allow_usb3"), "{e}");
        let e = SpindleConfig::parse("[mysqld]\nflavor = \"oracle\"\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("flavor") && e.contains("use mariadb, mysql or percona"),
            "{e}"
        );
        let c = SpindleConfig::parse(
            "[mysqld]\nflavor = \"percona\"\nbinary = \"/opt/ps/bin/mysqld\"\n",
            "x.toml",
        )
        .unwrap();
        assert_eq!(c.mysqld.flavor, Some(Flavor::Percona));
        assert_eq!(c.mysqld.binary, Some("/opt/ps/bin/mysqld".into()));
        let c = SpindleConfig::parse("[mysqld]\nflavor = \"\"\nbinary = \"\"\n", "x.toml").unwrap();
        assert_eq!(c.mysqld, MysqldSection::default());
        let e = SpindleConfig::parse("[disks]\nmin_size_bytes = \"big\"\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("min_size_bytes"), "{e}");
    }
}
