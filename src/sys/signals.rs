//! Ctrl-C / SIGTERM → a stop flag engines poll, so a run ends cleanly with partial results.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT/SIGTERM once [`install`] has run.
pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: async-signal-safe. A second signal restores the default action,
    // so pressing Ctrl-C twice still kills a stuck process.
    STOP.store(true, Ordering::SeqCst);
    // SAFETY: resetting a signal disposition is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
    }
}

/// Installs the handler for SIGINT and SIGTERM and returns the flag.
pub fn install() -> &'static AtomicBool {
    // SAFETY: installing a handler that only touches an atomic and resets dispositions.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    &STOP
}
