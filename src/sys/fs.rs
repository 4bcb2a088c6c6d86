//! Atomic file writing: temp file in the same directory, fsync, rename, fsync the directory. A
//! crash leaves either the old file or the new one, never a half-written result. The one helper
//! for results, bundles, manifests and private records (with a file mode).

use anyhow::Context;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Writes `data` to `path` atomically (mode 0644 before the umask). The parent must exist.
pub fn write_atomic(path: &Path, data: &[u8]) -> anyhow::Result<()> {
    write_atomic_mode(path, data, 0o644)
}

/// Writes `data` to `path` atomically with file mode `mode` (exactly `mode`, whatever the umask:
/// a 0600 credentials record is never readable by others, not even for a moment).
pub fn write_atomic_mode(path: &Path, data: &[u8], mode: u32) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("'{}' is not a file path", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> anyhow::Result<()> {
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)
            .with_context(|| format!("could not create '{}'", tmp.display()))?;
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(mode))
            .with_context(|| format!("could not set the mode of '{}'", tmp.display()))?;
        f.write_all(data)
            .with_context(|| format!("could not write '{}'", tmp.display()))?;
        f.sync_all()
            .with_context(|| format!("could not fsync '{}'", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| {
            format!(
                "could not rename '{}' to '{}'",
                tmp.display(),
                path.display()
            )
        })?;
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("could not save '{}'", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn replaces_whole_file_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn private_files_get_their_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("credentials.json");
        write_atomic_mode(&p, b"{}", 0o600).unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn missing_directory_names_the_path() {
        let err = write_atomic(Path::new("/nonexistent-dir/x.json"), b"x").unwrap_err();
        assert!(format!("{err:#}").contains("/nonexistent-dir/x.json"));
    }
}
