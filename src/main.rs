//! The `spindle` binary: parse the command line, run it through the library, report errors once.

use std::io::Write;

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    restore_sigpipe(&args);
    let code = match spindle::run_from_args(args) {
        Ok(code) => code,
        Err(err) => {
            // Not eprintln!: a closed stderr must not turn an error into a panic.
            let _ = writeln!(std::io::stderr(), "Error: {err:#}");
            1
        }
    };
    std::process::exit(code);
}

/// A closed stdout (`spindle disks | head -1`) ends spindle quietly, as it ends sysbench and
/// other Unix tools: the default action of SIGPIPE, which Rust's runtime ignores (every write
/// would then fail with EPIPE and `println!` panic). Not for the commands that hold what must be
/// released on the way out (`suite`: disks, servers; `daemon`; `leds`: lit LEDs): they keep
/// SIGPIPE ignored and never fail on a closed stdout (their progress goes to stderr, the log).
fn restore_sigpipe(args: &[std::ffi::OsString]) {
    let command = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy())
        .find(|a| !a.starts_with('-'));
    if matches!(command.as_deref(), Some("suite" | "daemon" | "leds")) {
        return;
    }
    // SAFETY: setting a signal disposition before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
