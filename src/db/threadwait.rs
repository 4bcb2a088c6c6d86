//! The holder of a client thread's own place to await its connections' replies (its io_uring,
//! [`super::sharedring`], or its epoll instance, [`super::threadepoll`]; which one:
//! [`super::ringdrive::install`]), and whether [`super::ringdrive`] runs the thread's sessions.

use std::cell::{Cell, RefCell};
use std::thread::LocalKey;

thread_local! {
    /// [`super::ringdrive::drive`] runs this thread's sessions: a wait leaves the sleeping
    /// to it.
    pub(super) static DRIVING: Cell<bool> = const { Cell::new(false) };
}

/// One thread-local value of type `T` per thread, made on demand.
pub(super) struct PerThread<T: 'static>(pub(super) &'static LocalKey<RefCell<Option<T>>>);

impl<T> PerThread<T> {
    /// Makes this thread's value with `make` unless it has one; whether it has one now.
    pub(super) fn install(&self, make: impl FnOnce() -> Option<T>) -> bool {
        self.0.with(|v| {
            let mut v = v.borrow_mut();
            if v.is_none() {
                *v = make();
            }
            v.is_some()
        })
    }

    pub(super) fn installed(&self) -> bool {
        self.0.with(|v| v.borrow().is_some())
    }

    /// Drops this thread's value (a test's thread, between ways); wires still attached to it
    /// wait no more (their next statement fails).
    pub(super) fn remove(&self) {
        self.0.with(|v| v.borrow_mut().take());
    }

    /// Runs `f` on this thread's value; `None` without one.
    pub(super) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        self.0.try_with(|v| v.borrow_mut().as_mut().map(f)).ok()?
    }
}
