//! A loop device over a sparse image file: the one disk double of the root-only tests. On drop
//! (also after a failed assertion) it undoes whatever a test or a failed run could leave behind:
//! mounts of the device, of its partitions and of loop devices over its image (spindle attaches
//! such offset loops), the kernel's partition nodes, and every loop device over the image.

use super::sh;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct LoopDevice {
    image: PathBuf,
    dev: Option<String>,
}

impl LoopDevice {
    /// A sparse, zero-filled image `<dir>/<name>.img` of `mib` MiB, attached.
    pub fn new(dir: &Path, name: &str, mib: u64) -> LoopDevice {
        let image = dir.join(format!("{name}.img"));
        std::fs::File::create(&image)
            .unwrap()
            .set_len(mib << 20)
            .unwrap();
        Self::attach(&image)
    }

    /// Attaches an existing image file.
    pub fn attach(image: &Path) -> LoopDevice {
        Self::attach_with(image, &[])
    }

    /// Attaches an existing image file write-protected (`losetup -r`), like a stick with its
    /// lock switch on.
    pub fn attach_read_only(image: &Path) -> LoopDevice {
        Self::attach_with(image, &["-r"])
    }

    fn attach_with(image: &Path, extra: &[&str]) -> LoopDevice {
        let mut args = extra.to_vec();
        args.extend(["--find", "--show", image.to_str().unwrap()]);
        let dev = sh("losetup", &args);
        LoopDevice {
            image: image.to_path_buf(),
            dev: Some(dev),
        }
    }

    /// `/dev/loopN`.
    pub fn dev(&self) -> &str {
        self.dev.as_deref().expect("the loop device is attached")
    }

    /// `loopN`.
    pub fn name(&self) -> &str {
        self.dev().trim_start_matches("/dev/")
    }

    pub fn image(&self) -> &Path {
        &self.image
    }

    /// `file:<image>`, the stable id `spindle disks` shows for it.
    pub fn stable_id(&self) -> String {
        format!("file:{}", self.image.display())
    }

    /// The SHA-256 of the image.
    pub fn sha256(&self) -> String {
        super::sha256(&self.image)
    }

    /// Loop devices attached to the image (ours plus any spindle left behind).
    pub fn attached(&self) -> Vec<String> {
        sh(
            "losetup",
            &[
                "--noheadings",
                "--output",
                "NAME",
                "-j",
                self.image.to_str().unwrap(),
            ],
        )
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
    }

    /// Lines of /proc/mounts for this device, its partitions, or loops over its image.
    pub fn mounts(&self) -> Vec<String> {
        let devs = self.attached();
        let own = self.dev.clone().unwrap_or_default();
        std::fs::read_to_string("/proc/mounts")
            .unwrap_or_default()
            .lines()
            .filter(|l| {
                let src = l.split_whitespace().next().unwrap_or("");
                (!own.is_empty() && src.starts_with(&own))
                    || devs.iter().any(|d| src.starts_with(d.as_str()))
            })
            .map(str::to_string)
            .collect()
    }

    /// Mounts the device (`ro` or `rw`) at a private directory, calls `f`, unmounts.
    pub fn with_mounted<T>(&self, read_only: bool, f: impl FnOnce(&Path) -> T) -> T {
        let m = tempfile::tempdir().unwrap();
        let opts = if read_only { "ro" } else { "rw" };
        sh(
            "mount",
            &["-o", opts, self.dev(), m.path().to_str().unwrap()],
        );
        struct Unmount<'a>(&'a Path);
        impl Drop for Unmount<'_> {
            fn drop(&mut self) {
                let _ = Command::new("umount").arg(self.0).status();
            }
        }
        let _u = Unmount(m.path());
        f(m.path())
    }

    /// Pulls the disk out: unmounts (lazily: a daemon may still hold it for a moment) and
    /// detaches everything over the image. Idempotent.
    pub fn detach(&mut self) {
        for line in self.mounts() {
            if let Some(mp) = line.split_whitespace().nth(1) {
                let _ = Command::new("umount").args(["-l", mp]).status();
            }
        }
        if let Some(dev) = self.dev.take() {
            // Partitions the kernel added for a table spindle wrote: the next user of this
            // loop device must not see stale ones.
            let _ = Command::new("partx").args(["-d", &dev]).output();
            let _ = Command::new("losetup").args(["-d", &dev]).status();
        }
        for d in self.attached() {
            let _ = Command::new("losetup").args(["-d", &d]).status();
        }
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        self.detach();
    }
}
