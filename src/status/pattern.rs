//! The one set of status patterns and the pure mapping pattern → per-LED schedule.
//!
//! Three roles: green, yellow, red. The on-board LEDs show green (ACT) and red (PWR) only;
//! every pattern is told apart by green and red alone, yellow only adds detail (the phase).
//! README.md's table "What the LEDs say" follows [`schedule`]; the tests pin it down.

pub use crate::sink::StickProblem;
use serde::{Deserialize, Serialize};
use std::fmt;

/// On time of a slow blink, and its off time (1 Hz).
pub const SLOW_MS: u64 = 500;
/// On and off time of a fast blink (5 Hz).
pub const FAST_MS: u64 = 100;
/// On time of one flash in a counted group.
pub const COUNT_ON_MS: u64 = 200;
/// Off time between flashes in a counted group.
pub const COUNT_OFF_MS: u64 = 300;
/// Dark pause after a counted group, before it repeats.
pub const COUNT_PAUSE_MS: u64 = 1500;
/// Highest count shown; larger numbers show as this many flashes.
pub const MAX_COUNT: u32 = 9;

/// What part of the suite is running (shown as a flash count on yellow).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Preparing a disk: signature check, partition, mkfs, mount (1 flash).
    Prepare,
    /// sysbench-compatible fileio (2 flashes).
    Fileio,
    /// A private mysqld and the OLTP workloads (3 flashes).
    Oltp,
    /// TPC-C (4 flashes).
    Tpcc,
}

impl Phase {
    /// Maps a suite phase name (`fileio seqwr`, `oltp_read_write`, `tpcc`, `prepare sda`) to a
    /// phase; anything unknown counts as preparation.
    pub fn from_name(name: &str) -> Phase {
        let n = name.to_ascii_lowercase();
        if n.contains("tpcc") || n.contains("tpc-c") {
            Phase::Tpcc
        } else if n.contains("oltp") || n.contains("mysql") || n.contains("sysbench") {
            Phase::Oltp
        } else if n.contains("fileio") {
            Phase::Fileio
        } else {
            Phase::Prepare
        }
    }

    /// Flash count on yellow.
    pub fn count(self) -> u32 {
        match self {
            Phase::Prepare => 1,
            Phase::Fileio => 2,
            Phase::Oltp => 3,
            Phase::Tpcc => 4,
        }
    }
}

/// The LED flash count of a stick problem (on red).
pub fn problem_count(p: StickProblem) -> u32 {
    match p {
        StickProblem::NotFound => 1,
        StickProblem::Full => 2,
        StickProblem::ReadOnly => 3,
    }
}

/// Everything the appliance can tell a person through its LEDs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "pattern", rename_all = "snake_case")]
pub enum Pattern {
    /// Starting up, scanning disks.
    Booting,
    /// Waiting for the button; `disks` eligible disks found (0 shows as [`Pattern::NoDisks`]).
    Ready { disks: usize },
    /// A run is in progress.
    Running { phase: Phase },
    /// Copying results to the stick: do not pull it.
    Copying,
    /// The run ended; its results wait on the SD card for a stick.
    Done,
    /// The run ended and some tests failed (summary.txt says which and why); the results wait
    /// for a stick.
    DoneWithFailures,
    /// The run ended, no test failed, but some figures are judged red (`report::validity`:
    /// faster than the link, in RAM, served from the page cache); the results wait for a stick.
    DoneWithRedFigures,
    /// Something needs attention (a run failed, the stick's spindle.toml is invalid).
    Error,
    /// No eligible disk is attached.
    NoDisks,
    /// Results are on the stick, it is unmounted: pull it.
    SafeToRemove,
    /// Results are on the stick, it is unmounted, and some tests failed: pull it and read
    /// summary.txt.
    SafeToRemoveWithFailures,
    /// Results are on the stick, it is unmounted, no test failed but some figures are red:
    /// pull it and read summary.txt (each figure's validity line says why).
    SafeToRemoveWithRedFigures,
    /// The stick could not take the results; they stay on the SD card and are retried.
    StickProblem { problem: StickProblem },
}

impl Pattern {
    /// Every pattern once (with representative parameters), in the order `spindle leds test`
    /// shows them.
    pub fn all() -> Vec<Pattern> {
        vec![
            Pattern::Booting,
            Pattern::Ready { disks: 2 },
            Pattern::NoDisks,
            Pattern::Running {
                phase: Phase::Prepare,
            },
            Pattern::Running {
                phase: Phase::Fileio,
            },
            Pattern::Running { phase: Phase::Oltp },
            Pattern::Running { phase: Phase::Tpcc },
            Pattern::Copying,
            Pattern::Done,
            Pattern::DoneWithFailures,
            Pattern::DoneWithRedFigures,
            Pattern::SafeToRemove,
            Pattern::SafeToRemoveWithFailures,
            Pattern::SafeToRemoveWithRedFigures,
            Pattern::Error,
            Pattern::StickProblem {
                problem: StickProblem::NotFound,
            },
            Pattern::StickProblem {
                problem: StickProblem::Full,
            },
            Pattern::StickProblem {
                problem: StickProblem::ReadOnly,
            },
        ]
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Booting => f.write_str("booting"),
            Pattern::Ready { disks } => write!(f, "ready ({disks} disk(s))"),
            Pattern::Running { phase } => write!(f, "running ({phase:?})"),
            Pattern::Copying => f.write_str("copying results to the stick"),
            Pattern::Done => f.write_str("done (results wait for a stick)"),
            Pattern::DoneWithFailures => {
                f.write_str("done, some tests failed (results wait for a stick)")
            }
            Pattern::DoneWithRedFigures => {
                f.write_str("done, some figures judged red (results wait for a stick)")
            }
            Pattern::Error => f.write_str("error"),
            Pattern::NoDisks => f.write_str("no disks"),
            Pattern::SafeToRemove => f.write_str("safe to remove the stick"),
            Pattern::SafeToRemoveWithFailures => {
                f.write_str("safe to remove the stick; some tests failed")
            }
            Pattern::SafeToRemoveWithRedFigures => {
                f.write_str("safe to remove the stick; some figures judged red")
            }
            Pattern::StickProblem { problem: p } => write!(f, "stick problem: {p}"),
        }
    }
}

/// What one LED does over time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    Off,
    On,
    /// Repeats `on_ms` lit, `off_ms` dark.
    Blink {
        on_ms: u64,
        off_ms: u64,
    },
    /// `n` flashes (`COUNT_ON_MS` lit, `COUNT_OFF_MS` dark), then `COUNT_PAUSE_MS` dark; repeats.
    Count {
        n: u32,
    },
}

impl Signal {
    /// A slow (1 Hz) blink.
    pub const SLOW: Signal = Signal::Blink {
        on_ms: SLOW_MS,
        off_ms: SLOW_MS,
    };
    /// A fast (5 Hz) blink.
    pub const FAST: Signal = Signal::Blink {
        on_ms: FAST_MS,
        off_ms: FAST_MS,
    };

    /// A counted group of `n` flashes, clamped to 1..=[`MAX_COUNT`].
    pub fn count(n: usize) -> Signal {
        Signal::Count {
            n: n.clamp(1, MAX_COUNT as usize) as u32,
        }
    }

    /// Whether the LED is lit `t_ms` milliseconds after the signal started.
    pub fn level_at(self, t_ms: u64) -> bool {
        match self {
            Signal::Off => false,
            Signal::On => true,
            Signal::Blink { on_ms, off_ms } => {
                let period = (on_ms + off_ms).max(1);
                t_ms % period < on_ms
            }
            Signal::Count { n } => {
                let flash = COUNT_ON_MS + COUNT_OFF_MS;
                let period = u64::from(n) * flash - COUNT_OFF_MS + COUNT_PAUSE_MS;
                let t = t_ms % period;
                t < u64::from(n) * flash && t % flash < COUNT_ON_MS
            }
        }
    }

    /// Words for the README table and the console backend.
    pub fn describe(self) -> String {
        match self {
            Signal::Off => "off".into(),
            Signal::On => "on".into(),
            s if s == Signal::SLOW => "slow blink".into(),
            s if s == Signal::FAST => "fast blink".into(),
            Signal::Blink { on_ms, off_ms } => format!("blink {on_ms}/{off_ms} ms"),
            Signal::Count { n } => format!("{n} flash(es), pause"),
        }
    }
}

/// Which LED a signal is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LedRole {
    /// Green LED, or the on-board ACT LED.
    Green,
    /// Yellow LED (GPIO wiring only).
    Yellow,
    /// Red LED, or the on-board PWR LED.
    Red,
}

impl LedRole {
    pub const ALL: [LedRole; 3] = [LedRole::Green, LedRole::Yellow, LedRole::Red];
}

/// What every LED does for one pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub green: Signal,
    pub yellow: Signal,
    pub red: Signal,
}

impl Schedule {
    /// The signal of one LED.
    pub fn get(&self, role: LedRole) -> Signal {
        match role {
            LedRole::Green => self.green,
            LedRole::Yellow => self.yellow,
            LedRole::Red => self.red,
        }
    }

    /// All LEDs dark.
    pub const DARK: Schedule = Schedule {
        green: Signal::Off,
        yellow: Signal::Off,
        red: Signal::Off,
    };
}

/// The pattern table: pattern → what each LED does.
pub fn schedule(pattern: Pattern) -> Schedule {
    use Signal::{Off, On};
    let s = |green, yellow, red| Schedule { green, yellow, red };
    match pattern {
        Pattern::Booting => s(On, On, On),
        Pattern::Ready { disks: 0 } | Pattern::NoDisks => s(Off, Off, Signal::SLOW),
        Pattern::Ready { disks } => s(Signal::count(disks), Off, Off),
        Pattern::Running { phase } => s(Signal::SLOW, Signal::count(phase.count() as usize), Off),
        Pattern::Copying => s(Signal::FAST, Signal::FAST, Off),
        Pattern::Done => s(On, Off, Signal::SLOW),
        Pattern::DoneWithFailures => s(On, Off, Signal::FAST),
        Pattern::DoneWithRedFigures => s(On, Off, Signal::count(2)),
        Pattern::Error => s(Off, Off, On),
        Pattern::SafeToRemove => s(On, Off, Off),
        Pattern::SafeToRemoveWithFailures => s(On, Off, Signal::count(1)),
        Pattern::SafeToRemoveWithRedFigures => s(On, Off, Signal::count(3)),
        Pattern::StickProblem { problem: p } => {
            s(Off, Off, Signal::count(problem_count(p) as usize))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lit/dark sequence of a signal over `ms`, sampled every 50 ms.
    fn trace(s: Signal, ms: u64) -> Vec<bool> {
        (0..ms / 50).map(|i| s.level_at(i * 50)).collect()
    }

    #[test]
    fn every_pattern_is_distinguishable_on_green_and_red_alone() {
        let all = Pattern::all();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                let (sa, sb) = (schedule(*a), schedule(*b));
                let same_two = sa.green == sb.green && sa.red == sb.red;
                let running_pair =
                    matches!((a, b), (Pattern::Running { .. }, Pattern::Running { .. }));
                assert!(
                    !same_two || running_pair,
                    "{a} and {b} look the same on the on-board LEDs"
                );
                assert_ne!(sa, sb, "{a} and {b} look the same on three LEDs");
            }
        }
    }

    #[test]
    fn table_matches_the_readme() {
        assert_eq!(
            schedule(Pattern::Ready { disks: 3 }).green,
            Signal::Count { n: 3 }
        );
        assert_eq!(
            schedule(Pattern::Ready { disks: 0 }),
            schedule(Pattern::NoDisks)
        );
        assert_eq!(
            schedule(Pattern::Ready { disks: 40 }).green,
            Signal::Count { n: MAX_COUNT }
        );
        assert_eq!(
            schedule(Pattern::Running { phase: Phase::Oltp }),
            Schedule {
                green: Signal::SLOW,
                yellow: Signal::Count { n: 3 },
                red: Signal::Off
            }
        );
        assert_eq!(schedule(Pattern::Error).red, Signal::On);
        assert_eq!(
            schedule(Pattern::StickProblem {
                problem: StickProblem::ReadOnly
            })
            .red,
            Signal::Count { n: 3 }
        );
        assert_eq!(schedule(Pattern::SafeToRemove).green, Signal::On);
        assert_eq!(schedule(Pattern::SafeToRemove).red, Signal::Off);
    }

    #[test]
    fn blink_levels_follow_the_timing() {
        assert_eq!(trace(Signal::SLOW, 2000), {
            let mut v = Vec::new();
            for _ in 0..2 {
                v.extend([true; 10]);
                v.extend([false; 10]);
            }
            v
        });
        assert!(Signal::FAST.level_at(0) && !Signal::FAST.level_at(150));
        assert!(!Signal::Off.level_at(123) && Signal::On.level_at(123));
    }

    #[test]
    fn counted_flashes_show_n_rising_edges_per_period() {
        for n in 1..=MAX_COUNT {
            let s = Signal::Count { n };
            let period =
                u64::from(n) * (COUNT_ON_MS + COUNT_OFF_MS) - COUNT_OFF_MS + COUNT_PAUSE_MS;
            let t: Vec<bool> = (0..period / 10).map(|i| s.level_at(i * 10)).collect();
            let rises = t.windows(2).filter(|w| !w[0] && w[1]).count() + usize::from(t[0]);
            assert_eq!(rises as u32, n, "count {n}");
            // the pause is dark and longer than any gap between flashes
            assert!(!s.level_at(period - 1) && !s.level_at(period - COUNT_PAUSE_MS + 1));
            assert!(s.level_at(period));
        }
    }

    #[test]
    fn phase_names_map_to_phases() {
        assert_eq!(Phase::from_name("fileio seqwr"), Phase::Fileio);
        assert_eq!(Phase::from_name("oltp_read_write"), Phase::Oltp);
        assert_eq!(Phase::from_name("mysqld start"), Phase::Oltp);
        assert_eq!(Phase::from_name("TPCC"), Phase::Tpcc);
        assert_eq!(Phase::from_name("prepare sda"), Phase::Prepare);
        assert_eq!(Phase::from_name(""), Phase::Prepare);
    }

    #[test]
    fn patterns_serialize_with_a_tag() {
        let j = serde_json::to_string(&Pattern::Running { phase: Phase::Tpcc }).unwrap();
        assert_eq!(j, r#"{"pattern":"running","phase":"tpcc"}"#);
    }
}
