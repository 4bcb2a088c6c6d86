//! Ctrl-C / SIGTERM → whatever should end (a [`SignalTarget`]: the engine's controller): the
//! first signal asks it to stop (finish the current request, keep the partial result), a second
//! one aborts it, a third gets the default action (so a stuck process can still be killed from
//! the keyboard).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// What the signals act on.
pub trait SignalTarget: Send + Sync {
    /// The first SIGINT/SIGTERM.
    fn stop(&self);
    /// The second one.
    fn abort(&self);
}

/// Signals received since [`install`].
static SIGNALS: AtomicU32 = AtomicU32::new(0);
/// The controllers to notify; a watcher thread turns the counter into their calls.
static CONTROLLERS: Mutex<Vec<Box<dyn SignalTarget>>> = Mutex::new(Vec::new());

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic add: async-signal-safe. The second signal resets the dispositions, so a
    // third one kills the process.
    if SIGNALS.fetch_add(1, Ordering::SeqCst) >= 1 {
        // SAFETY: resetting a signal disposition is async-signal-safe.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
        }
    }
}

/// Installs the handler for SIGINT and SIGTERM (once per process) and makes `controller`
/// follow it: stop on the first signal, abort on the second.
pub fn install(controller: Box<dyn SignalTarget>) {
    let mut list = CONTROLLERS.lock().unwrap_or_else(|e| e.into_inner());
    let first = list.is_empty();
    list.push(controller);
    drop(list);
    if !first {
        return;
    }
    // SAFETY: installing a handler that only touches an atomic and resets dispositions.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    let _ = std::thread::Builder::new()
        .name("signals".into())
        .spawn(|| {
            let mut seen = 0;
            loop {
                let n = SIGNALS.load(Ordering::SeqCst);
                if n != seen {
                    seen = n;
                    let list = CONTROLLERS.lock().unwrap_or_else(|e| e.into_inner());
                    for c in list.iter() {
                        if n >= 2 {
                            c.abort();
                        } else {
                            c.stop();
                        }
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        });
}

/// Whether a signal arrived since [`install`].
pub fn received() -> bool {
    SIGNALS.load(Ordering::SeqCst) > 0
}
