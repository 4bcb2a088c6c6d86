//! Atomic file writing: temp file in the same directory, fsync, rename, fsync the directory.
//! A crash leaves either the old file or the new one, never a half-written result.

use anyhow::Context;
use std::io::Write;
use std::path::Path;

/// Writes `data` to `path` atomically. The parent directory must exist.
pub fn write_atomic(path: &Path, data: &[u8]) -> anyhow::Result<()> {
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
        let mut f = std::fs::File::create(&tmp)
            .with_context(|| format!("could not create '{}'", tmp.display()))?;
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
    fn missing_directory_names_the_path() {
        let err = write_atomic(Path::new("/nonexistent-dir/x.json"), b"x").unwrap_err();
        assert!(format!("{err:#}").contains("/nonexistent-dir/x.json"));
    }
}
