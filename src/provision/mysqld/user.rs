//! The OS account the server runs as: as root `mysql` when it exists (spindle chowns the
//! datadir and run dir to it), else root; as a normal user, that user.

use anyhow::Context;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// An OS account the server runs as.
#[derive(Clone, Debug)]
pub(super) struct OsUser {
    pub(super) name: String,
    pub(super) uid: u32,
    pub(super) gid: u32,
}

pub(super) fn lookup_user(name: &str) -> Option<OsUser> {
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: getpwnam returns NULL or a pointer to a static passwd record we copy at once.
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    if pw.is_null() {
        return None;
    }
    let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
    Some(OsUser {
        name: name.to_string(),
        uid,
        gid,
    })
}

/// Who the server should run as: as root, `mysql` if it exists, else `root`. As a normal
/// user: `None` (the server runs as the calling user and gets no `--user`).
pub(super) fn choose_run_as() -> Option<OsUser> {
    if !crate::sys::is_root() {
        return None;
    }
    Some(lookup_user("mysql").unwrap_or(OsUser {
        name: "root".into(),
        uid: 0,
        gid: 0,
    }))
}

/// The first ancestor of `path` that `user` cannot enter (no search permission), if any.
pub(super) fn unreachable_ancestor(path: &Path, user: &OsUser) -> Option<(PathBuf, u32)> {
    use std::os::unix::fs::MetadataExt as _;
    if user.uid == 0 {
        return None;
    }
    for a in path.ancestors().skip(1) {
        let Ok(md) = std::fs::metadata(a) else {
            continue;
        };
        let mode = md.mode();
        let ok = if md.uid() == user.uid {
            mode & 0o100 != 0
        } else if md.gid() == user.gid {
            mode & 0o010 != 0
        } else {
            mode & 0o001 != 0
        };
        if !ok {
            return Some((a.to_path_buf(), mode & 0o7777));
        }
    }
    None
}

pub(super) fn chown_to(path: &Path, user: Option<&OsUser>) -> anyhow::Result<()> {
    if let Some(u) = user {
        std::os::unix::fs::chown(path, Some(u.uid), Some(u.gid))
            .with_context(|| format!("could not give '{}' to user '{}'", path.display(), u.name))?;
    }
    Ok(())
}

pub(super) fn create_dir_for(path: &Path, user: Option<&OsUser>, mode: u32) -> anyhow::Result<()> {
    std::fs::create_dir_all(path)
        .with_context(|| format!("could not create directory '{}'", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("could not set permissions of '{}'", path.display()))?;
    chown_to(path, user)
}
