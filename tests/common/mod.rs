//! Shared integration-test helpers, one copy each: the private test server, the loop device with
//! its careful teardown, root/tool requirements that say what to install, running commands and
//! the spindle binary, checksums and fixture trees.
#![allow(dead_code)]

mod loopdev;
mod server;

#[allow(unused_imports)]
pub use loopdev::LoopDevice;
#[allow(unused_imports)]
pub use server::*;

use spindle::sys::SysRoot;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Whether the tests run as root.
pub fn is_root() -> bool {
    spindle::sys::is_root()
}

/// Fails the test unless it runs as root and every `(program, package)` is installed; the
/// message says what `what` needs and what to install.
pub fn require_root(what: &str, tools: &[(&str, &str)]) {
    assert!(
        is_root(),
        "{what} needs root (loop devices, partitioning, mounts): run the tests as root, e.g. `sudo -E cargo test`"
    );
    require_tools(what, tools);
}

/// Fails the test unless every `(program, package)` is installed, naming the package.
pub fn require_tools(what: &str, tools: &[(&str, &str)]) {
    for (tool, package) in tools {
        assert!(
            spindle::sys::runner::which(tool).is_some(),
            "{what} needs '{tool}': apt-get install {package}"
        );
    }
}

/// Runs `program args…`; fails the test with its stderr unless it succeeds. Returns stdout,
/// trimmed.
pub fn sh(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("could not run {program} (is it installed?): {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The SHA-256 of a file, as hex.
pub fn sha256(path: &Path) -> String {
    sh("sha256sum", &[path.to_str().expect("UTF-8 path")])
        .split_whitespace()
        .next()
        .expect("sha256sum prints a digest")
        .to_string()
}

/// `tests/fixtures/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A fixture tree (sys/, proc/, dev/, run/) as a [`SysRoot`].
pub fn fixture_root(name: &str) -> SysRoot {
    let p = fixture(name);
    assert!(
        p.join("sys").is_dir(),
        "fixture tree {} is missing (regenerate with tests/fixtures/build.py)",
        p.display()
    );
    SysRoot::new(p)
}

/// Runs the spindle binary with `args`.
pub fn spindle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spindle"))
        .args(args)
        .output()
        .expect("run the spindle binary")
}

/// The command succeeded; otherwise fail showing everything it printed. Returns its stdout.
pub fn assert_ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The command failed; otherwise fail showing what it printed. Returns its stderr.
pub fn assert_fails(o: &Output) -> String {
    assert!(
        !o.status.success(),
        "expected a failure, got success:\n{}",
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8_lossy(&o.stderr).into_owned()
}
