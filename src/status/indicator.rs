//! The `Indicator` trait, the blink engine shared by the LED backends, and the console and
//! mock backends.
//!
//! LED backends implement the small [`LedDriver`] (switch one LED, restore on close); a
//! [`LedIndicator`] runs a thread that plays the pattern's [`Schedule`] on it. Dropping the
//! indicator stops the thread, turns every LED off and restores what was there before.

use super::pattern::{schedule, LedRole, Pattern, Schedule};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

type DarkFn = Box<dyn Fn() + Send + Sync>;

/// Ways to darken the LEDs from a panic hook (the release build aborts on panic, so drops do
/// not run). Each must be quick and never block.
static EMERGENCY_DARK: Mutex<Vec<DarkFn>> = Mutex::new(Vec::new());

/// Registers `f` to run if the process panics (see [`install_panic_hook`]).
pub fn on_panic_darken(f: impl Fn() + Send + Sync + 'static) {
    if let Ok(mut v) = EMERGENCY_DARK.lock() {
        v.push(Box::new(f));
    }
}

/// Installs a panic hook that darkens every registered LED, then runs the previous hook.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Ok(v) = EMERGENCY_DARK.try_lock() {
            for f in v.iter() {
                f();
            }
        }
        previous(info);
    }));
}

/// Something that shows a [`Pattern`] to a person.
pub trait Indicator: Send {
    /// Backend name for logs (`gpio`, `onboard`, `console`, `mock`).
    fn backend(&self) -> &'static str;
    /// Shows `pattern` until the next call.
    fn show(&mut self, pattern: Pattern);
    /// Turns everything off and gives the hardware back (also done on drop).
    fn shutdown(&mut self);
}

/// One backend's hardware: switch a LED on or off.
pub trait LedDriver: Send + 'static {
    /// Which roles this hardware has (the on-board LEDs have no yellow).
    fn roles(&self) -> &[LedRole];
    /// Lights or darkens one LED. Errors are reported once by the caller and otherwise ignored:
    /// a LED that cannot be switched must never stop a benchmark.
    fn set(&mut self, role: LedRole, lit: bool) -> std::io::Result<()>;
    /// Everything off, original state restored (triggers, pin modes).
    fn restore(&mut self);
}

struct Shared {
    current: Mutex<(Schedule, Instant, bool)>,
    changed: Condvar,
}

/// The log line for a pattern change, the same for every backend (the journal's record of what
/// the LEDs showed; the image's tests read it): `status: <pattern> (green …, …)`, written
/// through [`crate::sys::log::say!`] as `spindle: status: …`.
pub fn pattern_line(pattern: Pattern) -> String {
    let s = schedule(pattern);
    format!(
        "status: {pattern} (green {}, yellow {}, red {})",
        s.green.describe(),
        s.yellow.describe(),
        s.red.describe()
    )
}

/// Plays schedules on a [`LedDriver`] from a thread (25 ms resolution), and logs each change.
pub struct LedIndicator {
    name: &'static str,
    last: Option<Pattern>,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

const TICK: Duration = Duration::from_millis(25);

impl LedIndicator {
    /// Starts the blink thread on `driver`, all LEDs dark.
    pub fn start(name: &'static str, mut driver: impl LedDriver) -> Self {
        let shared = Arc::new(Shared {
            current: Mutex::new((Schedule::DARK, Instant::now(), true)),
            changed: Condvar::new(),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (sh, st) = (shared.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name(format!("leds-{name}"))
            .spawn(move || {
                let roles: Vec<LedRole> = driver.roles().to_vec();
                let mut lit: Vec<Option<bool>> = vec![None; roles.len()];
                let mut warned = false;
                while !st.load(Ordering::SeqCst) {
                    let (sched, since) = {
                        let mut g = sh.current.lock().unwrap_or_else(|e| e.into_inner());
                        if g.2 {
                            g.2 = false;
                            lit.iter_mut().for_each(|l| *l = None);
                        }
                        (g.0, g.1)
                    };
                    let t = since.elapsed().as_millis() as u64;
                    for (i, role) in roles.iter().enumerate() {
                        let want = sched.get(*role).level_at(t);
                        if lit[i] != Some(want) {
                            if let Err(e) = driver.set(*role, want) {
                                if !warned {
                                    crate::sys::log::say!(
                                        "status: could not switch the {role:?} LED: {e}"
                                    );
                                    warned = true;
                                }
                            }
                            lit[i] = Some(want);
                        }
                    }
                    let g = sh.current.lock().unwrap_or_else(|e| e.into_inner());
                    let _ = sh.changed.wait_timeout(g, TICK);
                }
                driver.restore();
            })
            .expect("spawning a thread only fails when the system is out of resources");
        LedIndicator {
            name,
            last: None,
            shared,
            stop,
            thread: Some(thread),
        }
    }
}

impl Indicator for LedIndicator {
    fn backend(&self) -> &'static str {
        self.name
    }

    fn show(&mut self, pattern: Pattern) {
        if self.last != Some(pattern) {
            crate::sys::log::say!("{}", pattern_line(pattern));
            self.last = Some(pattern);
        }
        let mut g = self
            .shared
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *g = (schedule(pattern), Instant::now(), true);
        self.shared.changed.notify_all();
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.shared.changed.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for LedIndicator {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// No LEDs: only the log line of every pattern change ([`pattern_line`]).
#[derive(Debug, Default)]
pub struct ConsoleIndicator {
    last: Option<Pattern>,
}

impl Indicator for ConsoleIndicator {
    fn backend(&self) -> &'static str {
        "console"
    }

    fn show(&mut self, pattern: Pattern) {
        if self.last != Some(pattern) {
            crate::sys::log::say!("{}", pattern_line(pattern));
            self.last = Some(pattern);
        }
    }

    fn shutdown(&mut self) {
        self.last = None;
    }
}

/// One recorded change: when, and the pattern (`None` = shut down, all dark).
pub type MockEntry = (Instant, Option<Pattern>);

/// What the mock indicator saw: every change with the time it happened.
#[derive(Clone, Debug, Default)]
pub struct MockLog(Arc<Mutex<Vec<MockEntry>>>);

impl MockLog {
    /// Every pattern shown, in order (`None` = shut down, all dark).
    pub fn history(&self) -> Vec<Option<Pattern>> {
        self.entries().into_iter().map(|(_, p)| p).collect()
    }

    /// Every change with its time.
    pub fn entries(&self) -> Vec<MockEntry> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The pattern showing now (`None` before the first or after shutdown).
    pub fn current(&self) -> Option<Pattern> {
        self.history().last().copied().flatten()
    }

    /// Waits up to `timeout` for a pattern matching `want` to have been shown; true if it was.
    pub fn wait_for(&self, timeout: Duration, want: impl Fn(&Pattern) -> bool) -> bool {
        let end = Instant::now() + timeout;
        loop {
            if self.history().iter().flatten().any(&want) {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn push(&self, p: Option<Pattern>) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((Instant::now(), p));
    }
}

/// Records every change in a [`MockLog`] (tests).
#[derive(Debug, Default)]
pub struct MockIndicator {
    log: MockLog,
    last: Option<Pattern>,
}

impl MockIndicator {
    /// A mock and the log its changes go to.
    pub fn new() -> (Self, MockLog) {
        let log = MockLog::default();
        (
            MockIndicator {
                log: log.clone(),
                last: None,
            },
            log,
        )
    }
}

impl Indicator for MockIndicator {
    fn backend(&self) -> &'static str {
        "mock"
    }

    fn show(&mut self, pattern: Pattern) {
        if self.last != Some(pattern) {
            self.log.push(Some(pattern));
            self.last = Some(pattern);
        }
    }

    fn shutdown(&mut self) {
        if self.last.is_some() {
            self.log.push(None);
            self.last = None;
        }
    }
}

impl Drop for MockIndicator {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::pattern::Phase;

    /// A driver that records the level of each LED over time.
    #[derive(Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<(LedRole, bool)>>>, Arc<AtomicBool>);

    impl LedDriver for Recorder {
        fn roles(&self) -> &[LedRole] {
            &LedRole::ALL
        }
        fn set(&mut self, role: LedRole, lit: bool) -> std::io::Result<()> {
            self.0.lock().unwrap().push((role, lit));
            Ok(())
        }
        fn restore(&mut self) {
            for r in LedRole::ALL {
                self.0.lock().unwrap().push((r, false));
            }
            self.1.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn blink_thread_plays_the_schedule_and_leaves_leds_dark() {
        let rec = Recorder::default();
        let mut ind = LedIndicator::start("test", rec.clone());
        ind.show(Pattern::Running {
            phase: Phase::Fileio,
        });
        std::thread::sleep(Duration::from_millis(1200));
        ind.show(Pattern::Error);
        std::thread::sleep(Duration::from_millis(100));
        drop(ind);
        let log = rec.0.lock().unwrap().clone();
        assert!(rec.1.load(Ordering::SeqCst), "restore was not called");
        let green: Vec<bool> = log
            .iter()
            .filter(|(r, _)| *r == LedRole::Green)
            .map(|(_, l)| *l)
            .collect();
        // slow blink over 1.2 s: on, off, on (then error: off, restore: off)
        assert!(
            green.windows(2).filter(|w| !w[0] && w[1]).count() >= 1,
            "{green:?}"
        );
        assert!(log.iter().any(|(r, l)| *r == LedRole::Red && *l));
        // after drop every LED's last state is dark
        for r in LedRole::ALL {
            let last = log.iter().rev().find(|(x, _)| *x == r).unwrap();
            assert!(!last.1, "{r:?} left lit");
        }
    }

    #[test]
    fn mock_records_changes_once_and_shutdown() {
        let (mut m, log) = MockIndicator::new();
        m.show(Pattern::Booting);
        m.show(Pattern::Booting);
        m.show(Pattern::NoDisks);
        assert_eq!(log.current(), Some(Pattern::NoDisks));
        drop(m);
        assert_eq!(
            log.history(),
            vec![Some(Pattern::Booting), Some(Pattern::NoDisks), None]
        );
        assert!(log.wait_for(Duration::ZERO, |p| *p == Pattern::Booting));
        assert!(!log.wait_for(Duration::ZERO, |p| *p == Pattern::Error));
    }
}
