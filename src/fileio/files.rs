//! The test files during a run: open descriptors, optional whole-file mappings (mmap mode),
//! and page-aligned per-thread buffers (O_DIRECT needs aligned memory).

use super::config::{FileioConfig, FsyncMode, IoMode, TestMode};
use anyhow::{bail, Context};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;

/// A page-aligned, zero-filled byte buffer.
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
    layout: std::alloc::Layout,
}

// The buffer is plain memory owned by one thread at a time.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub fn new(len: usize) -> Self {
        let layout = std::alloc::Layout::from_size_align(len.max(1), 4096).expect("valid layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, len, layout }
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `len` bytes allocated in `new`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
    /// The start of the buffer, for the kernel to read from or write into (io_uring).
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with the same layout in `new`.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// One whole-file shared mapping.
struct Mapping {
    ptr: *mut u8,
    len: usize,
}

/// Open test files for a run.
pub struct TestFiles {
    files: Vec<File>,
    maps: Vec<Mapping>,
    fsync_mode: FsyncMode,
}

// Mappings are shared memory; concurrent copies into distinct or identical ranges are what the
// benchmark does by design (sysbench does the same with memcpy).
unsafe impl Sync for TestFiles {}
unsafe impl Send for TestFiles {}

impl TestFiles {
    /// Opens (for seqwr: creates/truncates) every file of the set.
    pub fn open(cfg: &FileioConfig, mode: TestMode) -> anyhow::Result<Self> {
        let file_size = cfg.file_size();
        let mut files = Vec::with_capacity(cfg.file_num as usize);
        for i in 0..cfg.file_num {
            let path = cfg.file_path(i);
            let dev = super::device::is_device(&path);
            let mut oo = OpenOptions::new();
            let mut flags = cfg.extra_flags.open_flags();
            // A device (`device`): opened read-only for the read modes, exclusively (the kernel
            // refuses it while mounted or held) for the write modes, never created or truncated.
            if dev && mode.writes() {
                flags |= libc::O_EXCL;
            }
            oo.read(true)
                .write(!dev || mode.writes())
                .custom_flags(flags);
            if mode == TestMode::Seqwr && !dev {
                oo.create(true).truncate(true);
            }
            let f = open_retrying(&oo, &path, dev).map_err(|e| open_error(&path, e, cfg))?;
            if mode != TestMode::Seqwr || dev {
                let len = super::device::len(&path).unwrap_or(0);
                if len < file_size {
                    return Err(super::FileioError::FileTooShort {
                        path,
                        len,
                        expected: file_size,
                    }
                    .into());
                }
            } else if cfg.io_mode == IoMode::Mmap {
                // A mapping cannot grow the file: give it its full size up front.
                f.set_len(file_size)
                    .with_context(|| format!("could not size '{}'", path.display()))?;
            }
            files.push(f);
        }
        let mut maps = Vec::new();
        if cfg.io_mode == IoMode::Mmap && file_size > 0 {
            for (i, f) in files.iter().enumerate() {
                // SAFETY: mapping a file we hold open; length is its (at least) file_size.
                let ptr = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        file_size as usize,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_SHARED,
                        f.as_raw_fd(),
                        0,
                    )
                };
                if ptr == libc::MAP_FAILED {
                    bail!(
                        "could not mmap '{}': {}",
                        cfg.file_path(i as u32).display(),
                        std::io::Error::last_os_error()
                    );
                }
                maps.push(Mapping {
                    ptr: ptr as *mut u8,
                    len: file_size as usize,
                });
            }
        }
        Ok(TestFiles {
            files,
            maps,
            fsync_mode: cfg.fsync_mode,
        })
    }

    pub fn count(&self) -> usize {
        self.files.len()
    }

    /// The descriptor of file `i` (valid while `self` lives).
    pub fn fd(&self, i: usize) -> std::os::unix::io::RawFd {
        self.files[i].as_raw_fd()
    }

    /// Reads `buf.len()` bytes at `pos` of file `i`; a short read is an error.
    #[inline]
    pub fn read(&self, i: usize, pos: u64, buf: &mut [u8]) -> std::io::Result<()> {
        if let Some(m) = self.maps.get(i) {
            let end = pos as usize + buf.len();
            assert!(end <= m.len);
            // SAFETY: range checked against the mapping length.
            unsafe {
                std::ptr::copy_nonoverlapping(m.ptr.add(pos as usize), buf.as_mut_ptr(), buf.len())
            };
            return Ok(());
        }
        let n = self.files[i].read_at(buf, pos)?;
        if n != buf.len() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "short read: {n} of {} bytes at offset {pos} of test_file.{i}",
                    buf.len()
                ),
            ));
        }
        Ok(())
    }

    /// Writes `buf` at `pos` of file `i`; a short write is an error.
    #[inline]
    pub fn write(&self, i: usize, pos: u64, buf: &[u8]) -> std::io::Result<()> {
        if let Some(m) = self.maps.get(i) {
            let end = pos as usize + buf.len();
            assert!(end <= m.len);
            // SAFETY: range checked against the mapping length.
            unsafe {
                std::ptr::copy_nonoverlapping(buf.as_ptr(), m.ptr.add(pos as usize), buf.len())
            };
            return Ok(());
        }
        let n = self.files[i].write_at(buf, pos)?;
        if n != buf.len() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::WriteZero,
                format!(
                    "short write: {n} of {} bytes at offset {pos} of test_file.{i} (disk full?)",
                    buf.len()
                ),
            ));
        }
        Ok(())
    }

    /// fsync/fdatasync (or msync in mmap mode) file `i`.
    #[inline]
    pub fn sync(&self, i: usize) -> std::io::Result<()> {
        // SAFETY: valid descriptor / mapping owned by self.
        let rc = unsafe {
            if let Some(m) = self.maps.get(i) {
                libc::msync(
                    m.ptr as *mut libc::c_void,
                    m.len,
                    libc::MS_SYNC | libc::MS_INVALIDATE,
                )
            } else {
                match self.fsync_mode {
                    FsyncMode::Fsync => libc::fsync(self.files[i].as_raw_fd()),
                    FsyncMode::Fdatasync => libc::fdatasync(self.files[i].as_raw_fd()),
                }
            }
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for TestFiles {
    fn drop(&mut self) {
        for m in &self.maps {
            // SAFETY: unmapping what we mapped.
            unsafe { libc::munmap(m.ptr as *mut libc::c_void, m.len) };
        }
    }
}

/// Opens `path`; a device's exclusive open is tried again for up to 2 s while the kernel says
/// it is busy: udev probes a device after a writer closed it (measured: a run right after
/// fio's write run on a loop device found it busy once in four), which is not "in use".
fn open_retrying(oo: &OpenOptions, path: &std::path::Path, dev: bool) -> std::io::Result<File> {
    let mut tries = 0;
    loop {
        match oo.open(path) {
            Err(e) if dev && e.raw_os_error() == Some(libc::EBUSY) && tries < 40 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            r => return r,
        }
    }
}

/// Turns an open(2) failure into a message that says what to do.
pub fn open_error(path: &std::path::Path, e: std::io::Error, cfg: &FileioConfig) -> anyhow::Error {
    let p = path.display();
    match e.raw_os_error() {
        Some(libc::ENOENT) => super::FileioError::FileMissing(path.into()).into(),
        Some(libc::EINVAL) if cfg.extra_flags.direct => {
            super::FileioError::DirectUnsupported(path.into()).into()
        }
        Some(libc::EROFS) => super::FileioError::OpenReadOnly(path.into()).into(),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            super::FileioError::OpenDenied(path.into()).into()
        }
        Some(libc::EBUSY) if super::device::is_device(path) => anyhow::anyhow!(
            "could not open '{p}' ({}) for writing: the device is in use (mounted, or held by another program); unmount it or choose another device",
            super::device::node(path).display()
        ),
        _ => anyhow::anyhow!("could not open '{p}': {e}"),
    }
}
