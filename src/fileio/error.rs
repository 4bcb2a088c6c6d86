//! The fileio engine's errors. Each says what failed in the engine's words (a directory, a file,
//! a size) and the fix; [`FileioError::option`] names the sysbench option it is about, so the CLI
//! can put the flag in front (`--dir: …`) and the suite the profile key (`fileio[0].total_size`).

use std::path::PathBuf;

/// What went wrong before or while the files were used.
#[derive(Debug, thiserror::Error)]
pub enum FileioError {
    #[error("directory '{0}' does not exist: create it or choose another directory")]
    DirMissing(PathBuf),
    #[error("directory '{0}' cannot be read: {1}")]
    DirUnreadable(PathBuf, std::io::Error),
    #[error("'{0}' is not a directory")]
    NotADirectory(PathBuf),
    #[error("directory '{0}' is on a read-only filesystem: choose a writable directory")]
    ReadOnly(PathBuf),
    #[error("directory '{0}' is not writable by this user: choose a writable directory or fix its permissions")]
    NotWritable(PathBuf),
    #[error("a file set of {total} bytes needs {needed} more bytes in '{dir}', but only {avail} are free: choose a smaller total size or another directory")]
    NoSpace {
        total: u64,
        needed: u64,
        dir: PathBuf,
        avail: u64,
    },
    #[error("the files in '{dir}' were prepared as {prepared_num} files of {prepared_size} bytes, but this run needs {num} files of at least {file_size} bytes each: run with at most the prepared number and size, or clean up and prepare again")]
    SetTooSmall {
        dir: PathBuf,
        prepared_num: u32,
        prepared_size: u64,
        num: u32,
        /// Bytes per file the run addresses.
        file_size: u64,
    },
    #[error("file '{path}' is {len} bytes, but at least {expected} are expected: prepare the files with the same number and total size first")]
    FileTooShort {
        path: PathBuf,
        len: u64,
        expected: u64,
    },
    #[error("test file '{0}' does not exist: prepare the files with the same number and total size first")]
    FileMissing(PathBuf),
    #[error("test file '{}' is the block device {} of {len} bytes, but the run addresses {expected} bytes of each file: lower the total size (or spread it over more devices with more files)", path.display(), device.display())]
    DeviceTooSmall {
        path: PathBuf,
        device: PathBuf,
        len: u64,
        expected: u64,
    },
    #[error("test file '{}' is the block device {}, which holds {found}: spindle writes only to a blank device (no partition table or file system); run a read mode on it, or use a blank device (wipefs -a {} erases what it holds)", path.display(), device.display(), device.display())]
    DeviceNotBlank {
        path: PathBuf,
        device: PathBuf,
        found: String,
    },
    #[error("checksum validation needs checksummed files, but the files in '{0}' were prepared (or last written) without it: clean up and prepare them with validation on")]
    NotChecksummed(PathBuf),
    #[error("checksum validation: the files were prepared with {prepared}-byte blocks, this run uses {block}: use the same block size")]
    ValidateBlockSize { prepared: u64, block: u64 },
    #[error("O_DIRECT needs the request size ({request}) and the per-file size ({file_size}) to be multiples of the device's logical block size ({lbs} bytes)")]
    DirectAlignment {
        request: u64,
        file_size: u64,
        lbs: u64,
    },
    #[error("could not open '{0}' with O_DIRECT: its filesystem does not support direct I/O (tmpfs, some FUSE filesystems); use another directory or turn direct I/O off")]
    DirectUnsupported(PathBuf),
    #[error("could not open '{0}' for writing: the directory is on a read-only filesystem")]
    OpenReadOnly(PathBuf),
    #[error("could not open '{0}': permission denied; run as a user that may write to the directory, or choose another one")]
    OpenDenied(PathBuf),
    #[error("a test mode is required for run: seqwr, seqrewr, seqrd, rndrd, rndwr or rndrw")]
    NoTestMode,
    #[error("asynchronous I/O uses io_uring, which is not available here: {reason}")]
    IoUringUnavailable { reason: String },
    #[error("{backlog} requests in flight per thread is out of range: use 1 to {max}")]
    AsyncBacklog { backlog: u32, max: u32 },
    #[error("{backlog} requests in flight of {request} bytes each would take {} MiB of buffers per thread (at most {} MiB): lower the backlog or the request size", backlog * request / (1 << 20), max / (1 << 20))]
    AsyncBuffers {
        backlog: u64,
        request: u64,
        max: u64,
    },
}

impl FileioError {
    /// The sysbench option (without `--`) this error is about, if any.
    pub fn option(&self) -> Option<&'static str> {
        use FileioError::*;
        Some(match self {
            DirMissing(_) | DirUnreadable(..) | NotADirectory(_) | ReadOnly(_) | NotWritable(_)
            | OpenReadOnly(_) | OpenDenied(_) => "dir",
            NoSpace { .. } => "file-total-size",
            SetTooSmall { .. } | FileTooShort { .. } | FileMissing(_) | DeviceTooSmall { .. } => {
                "file-total-size"
            }
            DeviceNotBlank { .. } => "file-test-mode",
            NotChecksummed(_) => "validate",
            ValidateBlockSize { .. } => "file-block-size",
            DirectAlignment { .. } | DirectUnsupported(_) => "file-extra-flags",
            NoTestMode => "file-test-mode",
            IoUringUnavailable { .. } => "file-io-mode",
            AsyncBacklog { .. } | AsyncBuffers { .. } => "file-async-backlog",
        })
    }
}

/// The `FileioError` in `e`'s chain, if there is one.
pub fn find(e: &anyhow::Error) -> Option<&FileioError> {
    e.chain().find_map(|c| c.downcast_ref::<FileioError>())
}
