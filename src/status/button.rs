//! The button decoder: raw edges with timestamps in, short and long presses out. Pure, so the
//! bounce cases are unit-tested without hardware.
//!
//! The debounced level changes only after the raw level has been stable for `debounce`, so a
//! bouncing contact gives one press and a spike shorter than `debounce` gives none. A long press
//! is reported while the button is still held (as soon as it has been down `long_press`); its
//! release then reports nothing. A short press is reported on release.

use std::time::Duration;

/// A decoded button action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Press {
    /// Pressed and released within the long-press time: start a run / acknowledge.
    Short,
    /// Held at least the long-press time: abort the run.
    Long,
}

/// Turns edges into presses. Times are offsets from any fixed origin.
#[derive(Clone, Debug)]
pub struct ButtonDecoder {
    debounce: Duration,
    long_press: Duration,
    raw: bool,
    raw_since: Duration,
    stable: bool,
    down_at: Duration,
    long_sent: bool,
}

impl ButtonDecoder {
    /// A decoder with the button released.
    pub fn new(debounce: Duration, long_press: Duration) -> Self {
        ButtonDecoder {
            debounce,
            long_press,
            raw: false,
            raw_since: Duration::ZERO,
            stable: false,
            down_at: Duration::ZERO,
            long_sent: false,
        }
    }

    /// Lets a raw level that has been stable long enough become the debounced level.
    fn settle(&mut self, now: Duration) -> Option<Press> {
        if self.raw == self.stable || now.saturating_sub(self.raw_since) < self.debounce {
            return None;
        }
        self.stable = self.raw;
        if self.stable {
            self.down_at = self.raw_since;
            self.long_sent = false;
            None
        } else if self.long_sent {
            None
        } else if self.raw_since.saturating_sub(self.down_at) >= self.long_press {
            // Released after the long-press time without a poll in between.
            Some(Press::Long)
        } else {
            Some(Press::Short)
        }
    }

    /// An edge at time `t`: `pressed` is the new raw level (true = button down).
    pub fn edge(&mut self, t: Duration, pressed: bool) -> Option<Press> {
        let out = self.settle(t).or_else(|| self.long(t));
        if pressed != self.raw {
            self.raw = pressed;
            self.raw_since = t;
        }
        out
    }

    /// Call regularly (every ≤ 50 ms): settles bounces and reports a long press while held.
    pub fn poll(&mut self, now: Duration) -> Option<Press> {
        self.settle(now).or_else(|| self.long(now))
    }

    /// The button was already down when watching began (stuck, or held through a restart):
    /// nothing is reported for it, not even on its release.
    pub fn held_at_start(&mut self, now: Duration) {
        self.raw = true;
        self.raw_since = now;
        self.stable = true;
        self.down_at = now;
        self.long_sent = true;
    }

    /// When [`poll`](Self::poll) next has something to do: the end of a debounce wait, or the
    /// long-press time while the button is held. `None`: nothing until the next edge (so a
    /// watcher can block without a timeout).
    pub fn next_deadline(&self) -> Option<Duration> {
        if self.raw != self.stable {
            Some(self.raw_since + self.debounce)
        } else if self.stable && !self.long_sent {
            Some(self.down_at + self.long_press)
        } else {
            None
        }
    }

    fn long(&mut self, now: Duration) -> Option<Press> {
        if self.stable
            && self.raw
            && !self.long_sent
            && now.saturating_sub(self.down_at) >= self.long_press
        {
            self.long_sent = true;
            return Some(Press::Long);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// Feeds (time ms, level) edges, polling every 10 ms up to `end`; returns presses with times.
    fn run(edges: &[(u64, bool)], end: u64) -> Vec<(u64, Press)> {
        let mut d = ButtonDecoder::new(ms(30), ms(3000));
        let mut out = Vec::new();
        let mut i = 0;
        for t in (0..=end).step_by(10) {
            while i < edges.len() && edges[i].0 <= t {
                if let Some(p) = d.edge(ms(edges[i].0), edges[i].1) {
                    out.push((edges[i].0, p));
                }
                i += 1;
            }
            if let Some(p) = d.poll(ms(t)) {
                out.push((t, p));
            }
        }
        out
    }

    #[test]
    fn clean_short_press() {
        let r = run(&[(100, true), (300, false)], 1000);
        assert_eq!(r, vec![(330, Press::Short)]);
    }

    #[test]
    fn bouncing_contacts_give_one_press() {
        let bounce = [
            (100, true),
            (102, false),
            (105, true),
            (109, false),
            (111, true),
            (400, false),
            (403, true),
            (406, false),
        ];
        let r = run(&bounce, 2000);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].1, Press::Short);
    }

    #[test]
    fn spikes_shorter_than_debounce_are_ignored() {
        assert!(run(
            &[(100, true), (110, false), (500, true), (520, false)],
            5000
        )
        .is_empty());
    }

    #[test]
    fn long_press_fires_while_held_and_release_adds_nothing() {
        let r = run(&[(100, true), (5000, false)], 6000);
        assert_eq!(r, vec![(3100, Press::Long)]);
        let just_short = run(&[(0, true), (2990, false)], 4000);
        assert_eq!(just_short, vec![(3020, Press::Short)]);
    }

    #[test]
    fn long_press_without_polls_is_reported_on_release() {
        let mut d = ButtonDecoder::new(ms(30), ms(3000));
        assert_eq!(d.edge(ms(0), true), None);
        assert_eq!(d.edge(ms(4000), false), Some(Press::Long));
        assert_eq!(d.poll(ms(4040)), None);
        assert_eq!(d.poll(ms(9000)), None);
    }

    /// Feeds edges at CLOCK_MONOTONIC nanosecond timestamps the way the GPIO watcher does:
    /// no periodic poll, only one at each [`ButtonDecoder::next_deadline`]. Returns presses
    /// with their times in ms after `T0`.
    fn run_on_events(edges_ns: &[(u64, bool)], held: bool) -> Vec<(u64, Press)> {
        const T0: u64 = 86_400_000_000_000; // a day after boot
        let mut d = ButtonDecoder::new(ms(30), ms(3000));
        if held {
            d.held_at_start(Duration::from_nanos(T0));
        }
        let at = |t: Duration| (t.as_nanos() as u64 - T0) / 1_000_000;
        let mut out = Vec::new();
        let mut i = 0;
        let mut wakes = 0;
        loop {
            let edge = edges_ns.get(i).map(|e| Duration::from_nanos(T0 + e.0));
            match (edge, d.next_deadline()) {
                (Some(e), Some(dl)) if dl < e => {
                    wakes += 1;
                    out.extend(d.poll(dl).map(|p| (at(dl), p)));
                }
                (Some(e), _) => {
                    out.extend(d.edge(e, edges_ns[i].1).map(|p| (at(e), p)));
                    i += 1;
                }
                (None, Some(dl)) => {
                    wakes += 1;
                    out.extend(d.poll(dl).map(|p| (at(dl), p)));
                }
                (None, None) => break,
            }
            assert!(wakes < 100, "the watcher would spin: {out:?}");
        }
        out
    }

    #[test]
    fn event_timestamps_give_presses_without_polling() {
        // QEMU's gpio-key: high for 100 ms (system_powerdown), kernel-debounced edges.
        let r = run_on_events(&[(5_000_000, true), (105_000_123, false)], false);
        assert_eq!(r, vec![(135, Press::Short)]);
        // Held 4 s: the long press fires at 3 s, while still held; the release adds nothing.
        let r = run_on_events(&[(0, true), (4_000_000_000, false)], false);
        assert_eq!(r, vec![(3000, Press::Long)]);
        // Two presses in a row, the second bouncing on release.
        let r = run_on_events(
            &[
                (0, true),
                (200_000_000, false),
                (600_000_000, true),
                (800_000_000, false),
                (801_000_000, true),
                (803_000_000, false),
            ],
            false,
        );
        assert_eq!(r, vec![(230, Press::Short), (833, Press::Short)]);
    }

    #[test]
    fn released_and_idle_means_no_wake_up() {
        let mut d = ButtonDecoder::new(ms(30), ms(3000));
        assert_eq!(d.next_deadline(), None);
        d.edge(ms(10), true);
        assert_eq!(d.next_deadline(), Some(ms(40)), "settling the press");
        d.poll(ms(40));
        assert_eq!(d.next_deadline(), Some(ms(3010)), "held: the long press");
        d.edge(ms(500), false);
        assert_eq!(d.poll(ms(530)), Some(Press::Short));
        assert_eq!(d.next_deadline(), None);
    }

    #[test]
    fn a_button_held_at_start_is_ignored_until_released() {
        assert!(run_on_events(&[(5_000_000_000, false)], true).is_empty());
        let r = run_on_events(
            &[
                (5_000_000_000, false),
                (6_000_000_000, true),
                (6_100_000_000, false),
            ],
            true,
        );
        assert_eq!(r, vec![(6130, Press::Short)]);
    }

    #[test]
    fn two_real_presses_give_two_shorts() {
        let r = run(&[(0, true), (200, false), (600, true), (800, false)], 1500);
        assert_eq!(
            r.iter().map(|x| x.1).collect::<Vec<_>>(),
            vec![Press::Short, Press::Short]
        );
    }
}
