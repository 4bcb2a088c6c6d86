//! `init`: checks (empty directory, free space), the run directory, my.cnf, and the flavor's
//! own initialisation tool; undone on failure.

use super::config::{self, MysqldSettings};
use super::layout::{self, Layout, ServerRecord};
use super::process::{file_len, log_tail_since};
use super::shared::*;
use super::user::*;
use super::version::{Flavor, ServerBinary};
use crate::sys::runner::CommandRunner;
use anyhow::{bail, Context};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// Free space `init` requires: 256 MiB (system tables, undo, temp) plus twice the redo log.
pub fn required_free_bytes(settings: &MysqldSettings) -> u64 {
    256 * MIB + 2 * settings.log_file_size
}

/// Free bytes for an unprivileged user on the filesystem holding `path` (or its nearest
/// existing ancestor).
pub fn free_bytes(path: &Path) -> anyhow::Result<(PathBuf, u64)> {
    let mut p = path;
    while !p.exists() {
        p = p.parent().unwrap_or(Path::new("/"));
    }
    let c = std::ffi::CString::new(path_arg(p)?)?;
    // SAFETY: `c` is a valid NUL-terminated path and `st` is a properly sized out-parameter.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("could not read free space of '{}'", p.display()));
    }
    #[allow(clippy::unnecessary_cast)]
    Ok((p.to_path_buf(), st.f_bavail as u64 * st.f_frsize as u64))
}

/// Does `dir` hold a server's system schema (MariaDB/MySQL `mysql/`, MySQL 8 `mysql.ibd`)?
pub(super) fn looks_like_datadir(dir: &Path) -> bool {
    dir.join("mysql").is_dir() || dir.join("mysql.ibd").is_file()
}

/// Removes everything inside `dir` (not `dir` itself: it may be a mount point).
pub(super) fn clear_dir(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            let _ = if p.is_dir() && !p.is_symlink() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
        }
    }
}

/// Creates the datadir, writes my.cnf next to it and initialises it the flavor's way.
///
/// Refuses ([`MysqldError::NotEmpty`]) a datadir that exists and is not empty, and
/// ([`MysqldError::NoSpace`]) a filesystem with less than [`required_free_bytes`] free.
/// On failure, whatever init created is removed again.
pub fn init(spec: &ServerSpec) -> anyhow::Result<()> {
    let binary = detect(spec)?;
    let datadir = layout::absolute_datadir(&spec.datadir)?;
    let existed = datadir.exists();
    if existed {
        if !datadir.is_dir() {
            bail!(
                "--datadir '{}' exists and is not a directory: choose a directory path",
                datadir.display()
            );
        }
        let non_empty = std::fs::read_dir(&datadir)
            .with_context(|| format!("could not read --datadir '{}'", datadir.display()))?
            .next()
            .is_some();
        if non_empty {
            let initialised = looks_like_datadir(&datadir);
            return Err(MysqldError::NotEmpty {
                path: datadir.clone(),
                what: if initialised {
                    "is already an initialised MySQL data directory".into()
                } else {
                    "exists and is not empty".into()
                },
                fix: if initialised {
                    let run_dir = Layout::new(&datadir)
                        .map(|l| l.run_dir.display().to_string())
                        .unwrap_or_default();
                    format!("start it with `spindle mysqld start --datadir {0}`, or stop it and delete '{0}' and '{run_dir}' to start over", datadir.display())
                } else {
                    "choose a new or empty directory (e.g. a 'mysql' subdirectory)".into()
                },
            }
            .into());
        }
    }
    let need = required_free_bytes(&spec.settings);
    let (fs_path, free) = free_bytes(&datadir)?;
    if free < need {
        return Err(MysqldError::NoSpace {
            path: fs_path,
            free_mib: free / MIB,
            need_mib: need.div_ceil(MIB),
        }
        .into());
    }

    let run_as = choose_run_as();
    std::fs::create_dir_all(&datadir)
        .with_context(|| format!("could not create --datadir '{}'", datadir.display()))?;
    let datadir = layout::absolute_datadir(&datadir)?;
    let result = init_created(spec, &binary, &datadir, run_as.as_ref());
    if result.is_err() {
        clear_dir(&datadir);
        if !existed {
            let _ = std::fs::remove_dir(&datadir);
        }
    }
    result
}

pub(super) fn init_created(
    spec: &ServerSpec,
    binary: &ServerBinary,
    datadir: &Path,
    run_as: Option<&OsUser>,
) -> anyhow::Result<()> {
    let l = Layout::new(datadir)?;
    // The server user owns the datadir and the run dir (it writes logs, pid, socket there).
    let server_user = run_as.filter(|u| u.uid != 0);
    if let Some(u) = server_user {
        for p in [&l.datadir, &l.run_dir] {
            if let Some((dir, mode)) = unreachable_ancestor(p, u) {
                bail!(
                    "the server runs as user '{}', which cannot enter '{}' (mode {:o}); allow it with `chmod o+x {}` or choose a datadir under a directory it can reach",
                    u.name,
                    dir.display(),
                    mode,
                    dir.display()
                );
            }
        }
    }
    create_dir_for(&l.datadir, server_user, 0o750)?;
    create_dir_for(&l.run_dir, server_user, 0o755)?;
    create_dir_for(&l.binlog_dir, server_user, 0o750)?;
    let tmpdir = spec
        .settings
        .tmpdir
        .clone()
        .unwrap_or_else(|| l.tmpdir.clone());
    if spec.settings.tmpdir.is_none() {
        create_dir_for(&tmpdir, server_user, 0o750)?;
    }
    if let Some(sock_dir) = l.socket.parent().filter(|d| !d.starts_with(&l.run_dir)) {
        create_dir_for(sock_dir, server_user, 0o755)?;
    }
    // A leftover from an earlier datadir of the same name would not match the new one.
    let _ = std::fs::remove_file(&l.credentials);
    touch_log(&l.error_log, server_user)?;

    let paths = config::CnfPaths {
        datadir: l.datadir.clone(),
        socket: l.socket.clone(),
        pid_file: l.pid_file.clone(),
        error_log: l.error_log.clone(),
        tmpdir,
        binlog_base: l.binlog_dir.join("mysql-bin"),
    };
    let cnf = config::render_my_cnf(
        &spec.settings,
        &config::CnfTarget {
            flavor: binary.flavor,
            version: binary.version,
            paths: &paths,
            tcp_port: spec.tcp_port,
            ram_bytes: crate::sys::HostInfo::collect().ram_bytes,
        },
    );
    std::fs::write(&l.my_cnf, cnf)
        .with_context(|| format!("could not write '{}'", l.my_cnf.display()))?;
    std::fs::set_permissions(&l.my_cnf, std::fs::Permissions::from_mode(0o644))?;

    run_install_tool(binary, &l, run_as)?;
    if !looks_like_datadir(&l.datadir) {
        bail!(
            "initialising '{}' reported success but created no system schema; see '{}'",
            l.datadir.display(),
            l.error_log.display()
        );
    }
    let record = ServerRecord {
        binary: binary.clone(),
        run_as: run_as.map(|u| u.name.clone()),
        spindle_version: crate::version::VERSION.to_string(),
    };
    layout::write_json(&l.server_json, &record, 0o644)
}

/// Runs the flavor's own initialisation (mariadb-install-db, or mysqld --initialize-insecure)
/// with the written my.cnf; an error quotes the new lines of the server's error log.
fn run_install_tool(
    binary: &ServerBinary,
    l: &Layout,
    run_as: Option<&OsUser>,
) -> anyhow::Result<()> {
    let defaults = format!("--defaults-file={}", path_arg(&l.my_cnf)?);
    let user_arg = run_as.map(|u| format!("--user={}", u.name));
    let log_start = file_len(&l.error_log);
    let runner = CommandRunner::new();
    let outcome = match binary.flavor {
        Flavor::MariaDb => {
            let script = binary.install_db.as_ref().with_context(|| {
                format!(
                    "MariaDB's 'mariadb-install-db' (or 'mysql_install_db') was not found next to '{}' or in PATH; install the full mariadb-server package",
                    binary.mysqld.display()
                )
            })?;
            let mut args = vec![
                defaults,
                format!("--datadir={}", path_arg(&l.datadir)?),
                "--auth-root-authentication-method=normal".into(),
                "--skip-test-db".into(),
                "--skip-name-resolve".into(),
            ];
            args.extend(user_arg);
            if let Some(base) = binary.mysqld.parent().and_then(Path::parent) {
                if base != Path::new("/usr") {
                    args.push(format!("--basedir={}", path_arg(base)?));
                }
            }
            runner.run(path_arg(script)?, &args)
        }
        Flavor::MySql | Flavor::Percona => {
            let mut args = vec![defaults, "--initialize-insecure".into()];
            args.extend(user_arg);
            runner.run(path_arg(&binary.mysqld)?, &args)
        }
    };
    if let Err(e) = outcome {
        let tail = log_tail_since(&l.error_log, log_start);
        bail!(
            "initialising {} in '{}' failed (the datadir is removed again): {e:#}\n\nlast lines of the server's error log '{}':\n{tail}",
            binary.describe(),
            l.datadir.display(),
            l.error_log.display()
        );
    }
    Ok(())
}

pub(super) fn touch_log(path: &Path, owner: Option<&OsUser>) -> anyhow::Result<()> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("could not create the error log '{}'", path.display()))?;
    chown_to(path, owner)
}
