//! The appliance's pure state machine: `(State, Event) -> (State, Vec<Action>)`.
//!
//! The daemon loop turns hardware, timers and the control socket into [`Event`]s and carries out
//! the [`Action`]s; nothing here touches the system, so every transition is unit-tested. What
//! the LEDs show is a pure function of the state ([`pattern`]); a `Show` action is emitted
//! whenever it changes.

use crate::status::{Pattern, Phase, StickProblem};

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    /// Every phase ran (some may have failed; see `failed_phases`); `red_figures` results
    /// are judged red (`report::validity`).
    Completed {
        failed_phases: usize,
        red_figures: usize,
    },
    /// Nothing was benchmarked: every disk was left out (the bundle says why).
    NothingToDo,
    /// The suite could not run at all.
    Failed,
    /// Stopped by a long press, `spindle abort` or a signal.
    Aborted,
}

/// What the appliance is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Scanning disks and sticks before the first `Booted` event.
    Booting,
    /// Waiting for the button.
    Idle,
    /// A run is in progress; `aborting` once an abort was requested.
    Running { phase: Phase, aborting: bool },
    /// A run ended and nobody acknowledged it yet (short press → Idle).
    Finished { outcome: RunOutcome },
    /// A signal arrived; the daemon is stopping. `was` is what it was doing (a run being
    /// stopped, how the last run ended, ready, no disks): the LEDs keep saying so until the
    /// daemon has stopped.
    ShuttingDown { was: Activity },
}

/// What the LEDs are about: every mode but shutting down (which keeps showing the one before).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    Booting,
    Idle,
    Running { phase: Phase },
    Finished { outcome: RunOutcome },
}

impl Mode {
    /// What the appliance is (or, shutting down, was) doing.
    pub fn activity(self) -> Activity {
        match self {
            Mode::Booting => Activity::Booting,
            Mode::Idle => Activity::Idle,
            Mode::Running { phase, .. } => Activity::Running { phase },
            Mode::Finished { outcome } => Activity::Finished { outcome },
            Mode::ShuttingDown { was } => was,
        }
    }
}

/// The results stick, as far as the state machine knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stick {
    Absent,
    /// Inserted, nothing to do (or waiting for the run to end).
    Present,
    /// Results are being copied.
    Copying,
    /// Everything copied, unmounted: safe to remove.
    Copied,
    /// The stick could not take the results (or was pulled mid-copy).
    Problem(StickProblem),
    /// Its spindle.toml is invalid; nothing is written but config-error.txt.
    ConfigError,
}

/// The whole state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    pub mode: Mode,
    pub stick: Stick,
    /// Eligible disks (or configured target directories).
    pub disks: usize,
    /// Runs on the SD card not yet copied to a stick.
    pub pending: usize,
    /// Start a run as soon as there are disks (autostart, until the first run starts).
    pub autostart_armed: bool,
    /// Disks had time to appear since boot: autostart now runs even with none (to leave a note
    /// saying why no disk could be used).
    pub settled: bool,
}

impl Default for State {
    fn default() -> Self {
        State {
            mode: Mode::Booting,
            stick: Stick::Absent,
            disks: 0,
            pending: 0,
            autostart_armed: false,
            settled: false,
        }
    }
}

/// Something that happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The first scan is done.
    Booted {
        disks: usize,
        pending: usize,
        autostart: bool,
    },
    /// The number of eligible disks changed.
    DisksChanged {
        disks: usize,
    },
    /// A results stick appeared; `config_ok` is false when its spindle.toml is invalid.
    StickInserted {
        config_ok: bool,
    },
    StickRemoved,
    ButtonShort,
    ButtonLong,
    /// `spindle start` on the control socket.
    StartRequested,
    /// `spindle abort` on the control socket.
    AbortRequested,
    PhaseStarted {
        phase: Phase,
    },
    PhaseFinished {
        ok: bool,
    },
    RunFinished {
        outcome: RunOutcome,
    },
    /// A copy to the stick ended: `remaining` runs still not on a stick; `problem` if it stopped.
    CopyFinished {
        remaining: usize,
        problem: Option<StickProblem>,
    },
    /// Long enough after boot for USB disks to have appeared.
    Settled,
    /// SIGTERM/SIGINT.
    Signal,
}

/// Something the daemon must do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Show this pattern on the indicator.
    Show(Pattern),
    /// Create a run directory and start the suite.
    StartRun,
    /// Set the running suite's stop flag.
    AbortRun,
    /// Copy every pending run to the stick, then unmount it.
    CopyToStick,
    /// Answer a control request that was refused, with the reason.
    Refuse(String),
    /// Leave the loop (after the run thread ended).
    Exit,
}

/// What the LEDs show in `state`. Priority: copying, running, stick problems, run errors,
/// safe-to-remove, done, ready. Shutting down shows what the finished run showed.
pub fn pattern(s: &State) -> Pattern {
    use Activity::{Booting, Finished, Idle, Running};
    match (s.mode.activity(), s.stick) {
        (Booting, _) => Pattern::Booting,
        (_, Stick::Copying) => Pattern::Copying,
        (Running { phase }, _) => Pattern::Running { phase },
        (_, Stick::ConfigError) => Pattern::Error,
        (_, Stick::Problem(problem)) => Pattern::StickProblem { problem },
        (
            Finished {
                outcome: RunOutcome::Failed,
            },
            _,
        ) => Pattern::Error,
        (
            Finished {
                outcome: RunOutcome::NothingToDo,
            },
            _,
        ) => Pattern::NoDisks,
        (Finished { outcome }, Stick::Copied) if failures(outcome) => {
            Pattern::SafeToRemoveWithFailures
        }
        (Finished { outcome }, Stick::Copied) if red_figures(outcome) => {
            Pattern::SafeToRemoveWithRedFigures
        }
        (_, Stick::Copied) => Pattern::SafeToRemove,
        (Finished { outcome }, _) if failures(outcome) => Pattern::DoneWithFailures,
        (Finished { outcome }, _) if red_figures(outcome) => Pattern::DoneWithRedFigures,
        (Finished { .. }, _) => Pattern::Done,
        (Idle, _) if s.disks == 0 => Pattern::NoDisks,
        (Idle, _) => Pattern::Ready { disks: s.disks },
    }
}

fn failures(outcome: RunOutcome) -> bool {
    matches!(outcome, RunOutcome::Completed { failed_phases, .. } if failed_phases > 0)
}

/// Red figures show when no test failed (a failure says more; summary.txt lists both).
fn red_figures(outcome: RunOutcome) -> bool {
    matches!(outcome, RunOutcome::Completed { red_figures, .. } if red_figures > 0)
}

fn can_copy(s: &State) -> bool {
    !matches!(
        s.mode,
        Mode::Running { .. } | Mode::ShuttingDown { .. } | Mode::Booting
    ) && matches!(s.stick, Stick::Present | Stick::Copied)
        && s.pending > 0
}

/// Starts a run if possible, else says why not.
fn try_start(s: &mut State, acts: &mut Vec<Action>) {
    match s.mode {
        // With no disk a run still starts: it leaves a note saying why every disk was left out.
        Mode::Idle | Mode::Finished { .. } if s.stick != Stick::Copying => {
            s.mode = Mode::Running {
                phase: Phase::Prepare,
                aborting: false,
            };
            s.autostart_armed = false;
            if matches!(s.stick, Stick::Copied | Stick::Problem(_)) {
                s.stick = Stick::Present;
            }
            acts.push(Action::StartRun);
        }
        Mode::Running { .. } => acts.push(Action::Refuse("a run is already in progress".into())),
        Mode::Booting => acts.push(Action::Refuse("still scanning disks; try again".into())),
        Mode::ShuttingDown { .. } => acts.push(Action::Refuse("the daemon is stopping".into())),
        _ => acts.push(Action::Refuse(
            "results are being copied to the stick; try again when it is safe to remove".into(),
        )),
    }
}

fn try_abort(s: &mut State, acts: &mut Vec<Action>) {
    match s.mode {
        Mode::Running {
            phase,
            aborting: false,
        } => {
            s.mode = Mode::Running {
                phase,
                aborting: true,
            };
            acts.push(Action::AbortRun);
        }
        Mode::Running { aborting: true, .. } => {
            acts.push(Action::Refuse("the run is already stopping".into()))
        }
        _ => acts.push(Action::Refuse("no run is in progress".into())),
    }
}

/// The transition function.
pub fn step(state: State, event: Event) -> (State, Vec<Action>) {
    let mut s = state;
    let mut acts = Vec::new();
    match event {
        Event::Booted {
            disks,
            pending,
            autostart,
        } => {
            if s.mode == Mode::Booting {
                s.mode = Mode::Idle;
                s.disks = disks;
                s.pending = pending;
                s.autostart_armed = autostart;
            }
        }
        Event::DisksChanged { disks } => s.disks = disks,
        Event::Settled => s.settled = true,
        Event::StickInserted { config_ok } => {
            s.stick = if config_ok {
                Stick::Present
            } else {
                Stick::ConfigError
            };
        }
        Event::StickRemoved => {
            s.stick = match s.stick {
                Stick::Copying => Stick::Problem(StickProblem::NotFound),
                _ => Stick::Absent,
            };
        }
        Event::ButtonShort => button_short(&mut s, &mut acts),
        Event::StartRequested => try_start(&mut s, &mut acts),
        Event::ButtonLong => {
            if matches!(
                s.mode,
                Mode::Running {
                    aborting: false,
                    ..
                }
            ) {
                try_abort(&mut s, &mut acts);
            }
        }
        Event::AbortRequested => try_abort(&mut s, &mut acts),
        Event::PhaseStarted { phase } => {
            if let Mode::Running { aborting, .. } = s.mode {
                s.mode = Mode::Running { phase, aborting };
            }
        }
        Event::PhaseFinished { .. } => {}
        Event::RunFinished { outcome } => match s.mode {
            Mode::Running { .. } => {
                s.pending += 1;
                s.mode = Mode::Finished { outcome };
            }
            Mode::ShuttingDown { .. } => {
                s.pending += 1;
                s.mode = Mode::ShuttingDown {
                    was: Activity::Finished { outcome },
                };
            }
            _ => {}
        },
        Event::CopyFinished { remaining, problem } => {
            s.pending = remaining;
            if s.stick == Stick::Copying {
                s.stick = match problem {
                    Some(p) => Stick::Problem(p),
                    None => Stick::Copied,
                };
            }
        }
        Event::Signal => {
            if let Mode::Running {
                aborting: false, ..
            } = s.mode
            {
                acts.push(Action::AbortRun);
            }
            s.mode = Mode::ShuttingDown {
                was: s.mode.activity(),
            };
            acts.push(Action::Exit);
        }
    }
    finish_step(state, s, acts)
}

/// A short press: start when ready, acknowledge a finished run; ignored otherwise (during a
/// run only the long press counts, and while booting nothing does).
fn button_short(s: &mut State, acts: &mut Vec<Action>) {
    match s.mode {
        Mode::Idle => try_start(s, acts),
        Mode::Finished { .. } => {
            s.mode = Mode::Idle;
            if matches!(s.stick, Stick::Problem(_) | Stick::ConfigError) {
                // acknowledged: show ready; the problem is retried on the next insert
                s.stick = Stick::Absent;
            }
        }
        _ => {}
    }
}

/// What every step does after its event: copy when it can, autostart, show the new pattern.
fn finish_step(state: State, mut s: State, mut acts: Vec<Action>) -> (State, Vec<Action>) {
    if can_copy(&s) && state.stick != Stick::Copying {
        s.stick = Stick::Copying;
        acts.push(Action::CopyToStick);
    }
    if s.autostart_armed && s.mode == Mode::Idle && (s.disks > 0 || s.settled) {
        try_start(&mut s, &mut acts);
    }
    let before = pattern(&state);
    let after = pattern(&s);
    if before != after || state.mode == Mode::Booting && s.mode.activity() != Activity::Booting {
        acts.insert(0, Action::Show(after));
    }
    (s, acts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idle(disks: usize) -> State {
        State {
            mode: Mode::Idle,
            disks,
            ..State::default()
        }
    }

    fn running() -> State {
        State {
            mode: Mode::Running {
                phase: Phase::Fileio,
                aborting: false,
            },
            disks: 1,
            ..State::default()
        }
    }

    /// `s` is told the boot is done, with `disks` disks and nothing pending.
    fn booted(s: State, disks: usize, autostart: bool) -> (State, Vec<Action>) {
        let booted = Event::Booted {
            disks,
            pending: 0,
            autostart,
        };
        step(s, booted)
    }

    /// Idle with one disk and `pending` runs not yet on a stick.
    fn idle_pending(pending: usize) -> State {
        State { pending, ..idle(1) }
    }

    /// The copy thread reports its end.
    fn copy_finished(
        s: State,
        remaining: usize,
        problem: Option<StickProblem>,
    ) -> (State, Vec<Action>) {
        step(s, Event::CopyFinished { remaining, problem })
    }

    fn has(acts: &[Action], a: &Action) -> bool {
        acts.contains(a)
    }

    fn refused(acts: &[Action]) -> bool {
        acts.iter().any(|a| matches!(a, Action::Refuse(_)))
    }

    #[test]
    fn boot_shows_ready_or_no_disks() {
        let (s, a) = booted(State::default(), 2, false);
        assert_eq!(s.mode, Mode::Idle);
        assert_eq!(a, vec![Action::Show(Pattern::Ready { disks: 2 })]);
        let (s, a) = booted(State::default(), 0, false);
        assert_eq!(a, vec![Action::Show(Pattern::NoDisks)]);
        // a second Booted changes nothing
        let (s2, a) = booted(s, 5, false);
        assert_eq!(s2, s);
        assert!(a.is_empty());
        // events before boot are recorded but the LEDs keep showing booting
        let (s, a) = step(State::default(), Event::DisksChanged { disks: 3 });
        assert_eq!(s.disks, 3);
        assert!(a.is_empty());
        assert_eq!(pattern(&s), Pattern::Booting);
    }

    #[test]
    fn autostart_starts_at_boot_or_when_disks_appear() {
        let (s, a) = booted(State::default(), 1, true);
        assert!(has(&a, &Action::StartRun));
        assert!(matches!(s.mode, Mode::Running { .. }));
        assert!(!s.autostart_armed);
        let (s, a) = booted(State::default(), 0, true);
        assert!(!has(&a, &Action::StartRun));
        assert!(s.autostart_armed);
        let (s, a) = step(s, Event::DisksChanged { disks: 1 });
        assert!(has(&a, &Action::StartRun));
        // only once: after the run, disks changing again does not start another
        let (s, _) = step(
            s,
            Event::RunFinished {
                outcome: RunOutcome::Completed {
                    failed_phases: 0,
                    red_figures: 0,
                },
            },
        );
        let (s, _) = step(s, Event::ButtonShort);
        let (_, a) = step(s, Event::DisksChanged { disks: 2 });
        assert!(!has(&a, &Action::StartRun));
    }

    #[test]
    fn short_press_starts_when_idle() {
        let (s, a) = step(idle(1), Event::ButtonShort);
        assert!(has(&a, &Action::StartRun));
        assert_eq!(
            a[0],
            Action::Show(Pattern::Running {
                phase: Phase::Prepare
            })
        );
        assert!(matches!(s.mode, Mode::Running { .. }));
        // with no disk the run starts too: it leaves a note saying why each disk was left out
        let (s, a) = step(idle(0), Event::ButtonShort);
        assert!(matches!(s.mode, Mode::Running { .. }));
        assert!(has(&a, &Action::StartRun));
        let (s, a) = step(running(), Event::ButtonShort);
        assert_eq!(s, running());
        assert!(a.is_empty(), "short presses during a run are ignored");
        let (s, a) = step(State::default(), Event::ButtonShort);
        assert_eq!(s.mode, Mode::Booting);
        assert!(a.is_empty());
    }

    #[test]
    fn start_request_is_refused_with_a_reason() {
        let (_, a) = step(running(), Event::StartRequested);
        assert_eq!(
            a,
            vec![Action::Refuse("a run is already in progress".into())]
        );
        let (_, a) = step(State::default(), Event::StartRequested);
        assert!(refused(&a));
        let copying = State {
            stick: Stick::Copying,
            pending: 1,
            ..idle(1)
        };
        let (s, a) = step(copying, Event::StartRequested);
        assert!(refused(&a));
        assert_eq!(s, copying);
        // from Finished a start request starts directly
        let fin = State {
            mode: Mode::Finished {
                outcome: RunOutcome::Aborted,
            },
            ..idle(1)
        };
        let (_, a) = step(fin, Event::StartRequested);
        assert!(has(&a, &Action::StartRun));
    }

    #[test]
    fn long_press_and_abort_request_abort_mid_phase() {
        let (s, a) = step(running(), Event::ButtonLong);
        assert_eq!(a, vec![Action::AbortRun]);
        assert_eq!(
            s.mode,
            Mode::Running {
                phase: Phase::Fileio,
                aborting: true
            }
        );
        // a second abort is not sent twice
        let (s2, a) = step(s, Event::AbortRequested);
        assert_eq!(s2, s);
        assert!(refused(&a) && !has(&a, &Action::AbortRun));
        let (_, a) = step(s, Event::ButtonLong);
        assert!(a.is_empty());
        // abort via socket
        let (_, a) = step(running(), Event::AbortRequested);
        assert_eq!(a, vec![Action::AbortRun]);
        // nothing to abort
        let (_, a) = step(idle(1), Event::AbortRequested);
        assert!(refused(&a));
        let (s, a) = step(idle(1), Event::ButtonLong);
        assert_eq!(s, idle(1));
        assert!(a.is_empty());
        // phase events still arrive while aborting
        let aborting = State {
            mode: Mode::Running {
                phase: Phase::Fileio,
                aborting: true,
            },
            ..running()
        };
        let (s, _) = step(aborting, Event::PhaseStarted { phase: Phase::Oltp });
        assert_eq!(
            s.mode,
            Mode::Running {
                phase: Phase::Oltp,
                aborting: true
            }
        );
        let (s, a) = step(
            s,
            Event::RunFinished {
                outcome: RunOutcome::Aborted,
            },
        );
        assert_eq!(
            s.mode,
            Mode::Finished {
                outcome: RunOutcome::Aborted
            }
        );
        assert_eq!(s.pending, 1);
        assert_eq!(a, vec![Action::Show(Pattern::Done)]);
    }

    #[test]
    fn phases_show_on_the_leds() {
        let (s, a) = step(running(), Event::PhaseStarted { phase: Phase::Tpcc });
        assert_eq!(
            a,
            vec![Action::Show(Pattern::Running { phase: Phase::Tpcc })]
        );
        let (s2, a) = step(s, Event::PhaseFinished { ok: false });
        assert_eq!(s2, s);
        assert!(a.is_empty());
        // phase events outside a run are ignored
        let (s, a) = step(idle(1), Event::PhaseStarted { phase: Phase::Tpcc });
        assert_eq!(s, idle(1));
        assert!(a.is_empty());
    }

    #[test]
    fn run_end_without_stick_shows_done_or_error() {
        let (s, a) = step(
            running(),
            Event::RunFinished {
                outcome: RunOutcome::Completed {
                    failed_phases: 0,
                    red_figures: 0,
                },
            },
        );
        assert_eq!(a, vec![Action::Show(Pattern::Done)]);
        assert_eq!(s.pending, 1);
        let (_, a) = step(
            running(),
            Event::RunFinished {
                outcome: RunOutcome::Completed {
                    failed_phases: 1,
                    red_figures: 0,
                },
            },
        );
        assert_eq!(a, vec![Action::Show(Pattern::DoneWithFailures)]);
        let (s, a) = step(
            running(),
            Event::RunFinished {
                outcome: RunOutcome::Failed,
            },
        );
        assert_eq!(a, vec![Action::Show(Pattern::Error)]);
        // acknowledge
        let (s, a) = step(s, Event::ButtonShort);
        assert_eq!(s.mode, Mode::Idle);
        assert_eq!(a, vec![Action::Show(Pattern::Ready { disks: 1 })]);
        assert!(
            !has(&a, &Action::StartRun),
            "the acknowledging press does not start a run"
        );
        // RunFinished outside a run is ignored
        let (s2, a) = step(
            s,
            Event::RunFinished {
                outcome: RunOutcome::Failed,
            },
        );
        assert_eq!(s2, s);
        assert!(a.is_empty());
    }

    #[test]
    fn run_end_with_stick_copies_then_safe_to_remove() {
        let (s, _) = step(running(), Event::StickInserted { config_ok: true });
        assert_eq!(s.stick, Stick::Present);
        let (s, a) = step(
            s,
            Event::RunFinished {
                outcome: RunOutcome::Completed {
                    failed_phases: 0,
                    red_figures: 0,
                },
            },
        );
        assert_eq!(a, vec![Action::Show(Pattern::Copying), Action::CopyToStick]);
        let (s, a) = copy_finished(s, 0, None);
        assert_eq!(s.stick, Stick::Copied);
        assert_eq!(s.pending, 0);
        assert_eq!(a, vec![Action::Show(Pattern::SafeToRemove)]);
        let (s, a) = step(s, Event::StickRemoved);
        assert_eq!(s.stick, Stick::Absent);
        assert_eq!(a, vec![Action::Show(Pattern::Done)]);
    }

    #[test]
    fn stick_inserted_when_idle_receives_pending_runs() {
        let st = idle_pending(2);
        let (s, a) = step(st, Event::StickInserted { config_ok: true });
        assert_eq!(a, vec![Action::Show(Pattern::Copying), Action::CopyToStick]);
        // nothing pending: no copy
        let (s2, a) = step(idle(1), Event::StickInserted { config_ok: true });
        assert_eq!(s2.stick, Stick::Present);
        assert!(a.is_empty());
        // a start request while copying is refused; a short press too (refused, not started)
        let (s3, a) = step(s, Event::ButtonShort);
        assert!(refused(&a) && !has(&a, &Action::StartRun));
        assert_eq!(s3, s);
    }

    #[test]
    fn stick_during_a_run_waits_for_the_end() {
        let st = State {
            pending: 3,
            ..running()
        };
        let (s, a) = step(st, Event::StickInserted { config_ok: true });
        assert!(
            !has(&a, &Action::CopyToStick),
            "no copying while benchmarking"
        );
        assert_eq!(
            pattern(&s),
            Pattern::Running {
                phase: Phase::Fileio
            }
        );
        let (s, _) = step(s, Event::StickRemoved);
        assert_eq!(s.stick, Stick::Absent);
        let (s, a) = step(
            s,
            Event::RunFinished {
                outcome: RunOutcome::Aborted,
            },
        );
        assert!(!has(&a, &Action::CopyToStick));
        assert_eq!(s.pending, 4);
    }

    #[test]
    fn stick_pulled_mid_copy_is_a_problem_and_retried_on_next_insert() {
        let st = State {
            pending: 1,
            stick: Stick::Copying,
            mode: Mode::Finished {
                outcome: RunOutcome::Aborted,
            },
            ..idle(1)
        };
        let (s, a) = step(st, Event::StickRemoved);
        assert_eq!(s.stick, Stick::Problem(StickProblem::NotFound));
        assert_eq!(
            a,
            vec![Action::Show(Pattern::StickProblem {
                problem: StickProblem::NotFound
            })]
        );
        // the copy thread then reports failure: the problem stays, pending unchanged
        let (s, a) = copy_finished(s, 1, Some(StickProblem::NotFound));
        assert_eq!(s.stick, Stick::Problem(StickProblem::NotFound));
        assert!(a.is_empty());
        let (s, a) = step(s, Event::StickInserted { config_ok: true });
        assert!(has(&a, &Action::CopyToStick));
        assert_eq!(s.stick, Stick::Copying);
    }

    #[test]
    fn full_or_read_only_stick_shows_the_problem() {
        for p in [StickProblem::Full, StickProblem::ReadOnly] {
            let st = State {
                pending: 2,
                stick: Stick::Copying,
                ..idle(1)
            };
            let (s, a) = copy_finished(st, 1, Some(p));
            assert_eq!(s.pending, 1);
            assert_eq!(a, vec![Action::Show(Pattern::StickProblem { problem: p })]);
            // no automatic retry on the same stick
            let (_, a) = step(s, Event::DisksChanged { disks: 2 });
            assert!(!has(&a, &Action::CopyToStick));
            // a run may still start; the problem pattern gives way to running
            let (s, a) = step(s, Event::ButtonShort);
            assert!(has(&a, &Action::StartRun));
            assert_eq!(s.stick, Stick::Present);
        }
    }

    #[test]
    fn bad_stick_config_shows_error_and_copies_nothing() {
        let st = idle_pending(2);
        let (s, a) = step(st, Event::StickInserted { config_ok: false });
        assert_eq!(s.stick, Stick::ConfigError);
        assert_eq!(a, vec![Action::Show(Pattern::Error)]);
        let (s, a) = step(s, Event::StickRemoved);
        assert_eq!(a, vec![Action::Show(Pattern::Ready { disks: 1 })]);
        assert_eq!(s.stick, Stick::Absent);
    }

    #[test]
    fn disks_changing_updates_ready() {
        let (s, a) = step(idle(1), Event::DisksChanged { disks: 0 });
        assert_eq!(a, vec![Action::Show(Pattern::NoDisks)]);
        let (_, a) = step(s, Event::DisksChanged { disks: 3 });
        assert_eq!(a, vec![Action::Show(Pattern::Ready { disks: 3 })]);
        let (_, a) = step(running(), Event::DisksChanged { disks: 0 });
        assert!(
            a.is_empty(),
            "the run goes on; the suite records a vanished disk"
        );
    }

    #[test]
    fn signal_aborts_and_exits() {
        let (s, a) = step(running(), Event::Signal);
        assert_eq!(
            s.mode,
            Mode::ShuttingDown {
                was: Activity::Running {
                    phase: Phase::Fileio
                }
            }
        );
        assert!(has(&a, &Action::AbortRun) && has(&a, &Action::Exit));
        // the run still ends and is counted as pending, never copied while shutting down
        let st = State {
            stick: Stick::Present,
            ..s
        };
        let (s, a) = step(
            st,
            Event::RunFinished {
                outcome: RunOutcome::Aborted,
            },
        );
        assert_eq!(s.pending, 1);
        assert!(!has(&a, &Action::CopyToStick));
        let (_, a) = step(idle(1), Event::Signal);
        assert!(!has(&a, &Action::AbortRun) && has(&a, &Action::Exit));
    }

    #[test]
    fn autostart_with_no_disk_waits_until_settled_then_leaves_a_note() {
        let (s, a) = booted(State::default(), 0, true);
        assert!(!has(&a, &Action::StartRun), "disks may still be appearing");
        let (s, a) = step(s, Event::Settled);
        assert!(has(&a, &Action::StartRun));
        // nothing to do: "no usable disks", also once the note is on the stick
        let (s, a) = step(
            s,
            Event::RunFinished {
                outcome: RunOutcome::NothingToDo,
            },
        );
        assert_eq!(a[0], Action::Show(Pattern::NoDisks));
        let (s, _) = step(s, Event::StickInserted { config_ok: true });
        let (_, a) = copy_finished(s, 0, None);
        assert!(!a.contains(&Action::Show(Pattern::SafeToRemove)), "{a:?}");
    }

    #[test]
    fn failures_show_until_the_stick_is_safe_to_remove() {
        let (s, a) = step(
            running(),
            Event::RunFinished {
                outcome: RunOutcome::Completed {
                    failed_phases: 2,
                    red_figures: 0,
                },
            },
        );
        assert_eq!(a[0], Action::Show(Pattern::DoneWithFailures));
        let (s, _) = step(s, Event::StickInserted { config_ok: true });
        let (_, a) = copy_finished(s, 0, None);
        assert_eq!(a[0], Action::Show(Pattern::SafeToRemoveWithFailures));
    }

    #[test]
    fn red_figures_show_until_the_stick_is_safe_to_remove_and_failures_say_more() {
        let red = |failed_phases| Event::RunFinished {
            outcome: RunOutcome::Completed {
                failed_phases,
                red_figures: 3,
            },
        };
        let (s, a) = step(running(), red(0));
        assert_eq!(a[0], Action::Show(Pattern::DoneWithRedFigures));
        let (s, _) = step(s, Event::StickInserted { config_ok: true });
        let (_, a) = copy_finished(s, 0, None);
        assert_eq!(a[0], Action::Show(Pattern::SafeToRemoveWithRedFigures));
        let (_, a) = step(running(), red(1));
        assert_eq!(a[0], Action::Show(Pattern::DoneWithFailures));
    }

    /// Steps through `events`; returns the final state and the pattern after each event
    /// (checked against what the Show actions said, so the daemon shows the same).
    fn walk(start: State, events: &[Event]) -> (State, Vec<Pattern>) {
        let mut s = start;
        let mut shown = pattern(&s);
        let mut seen = Vec::new();
        for e in events {
            let (n, acts) = step(s, e.clone());
            for a in &acts {
                if let Action::Show(p) = a {
                    shown = *p;
                }
            }
            assert_eq!(shown, pattern(&n), "after {e:?}: the LEDs lag the state");
            seen.push(shown);
            s = n;
        }
        (s, seen)
    }

    fn finished(failed_phases: usize) -> Event {
        Event::RunFinished {
            outcome: RunOutcome::Completed {
                failed_phases,
                red_figures: 0,
            },
        }
    }

    fn copied() -> Event {
        Event::CopyFinished {
            remaining: 0,
            problem: None,
        }
    }

    fn with_stick(s: State) -> State {
        State {
            stick: Stick::Present,
            ..s
        }
    }

    #[test]
    fn failures_stay_shown_through_the_copy_and_the_shutdown() {
        let (s, seen) = walk(
            with_stick(running()),
            &[finished(1), copied(), Event::Signal],
        );
        assert_eq!(
            seen,
            vec![
                Pattern::Copying,
                Pattern::SafeToRemoveWithFailures,
                Pattern::SafeToRemoveWithFailures,
            ]
        );
        // The stick taken out while the daemon stops: still "some tests failed".
        let (_, seen) = walk(s, &[Event::StickRemoved]);
        assert_eq!(seen, vec![Pattern::DoneWithFailures]);
        // No stick at all.
        let (_, seen) = walk(running(), &[finished(2), Event::Signal]);
        assert_eq!(seen, vec![Pattern::DoneWithFailures; 2]);
    }

    #[test]
    fn a_run_ending_while_shutting_down_shows_how_it_ended() {
        let (_, seen) = walk(running(), &[Event::Signal, finished(1)]);
        assert_eq!(seen.last(), Some(&Pattern::DoneWithFailures));
        let (s, seen) = walk(running(), &[Event::Signal, Event::Signal]);
        assert_eq!(s.mode.activity(), running().mode.activity());
        let fileio = Pattern::Running {
            phase: Phase::Fileio,
        };
        assert_eq!(
            seen,
            vec![fileio; 2],
            "the run being stopped still shows running"
        );
    }

    #[test]
    fn shutting_down_keeps_ready_no_disks_and_booting_shown() {
        // Measured on the emulated Pi 4: idle with no disks, then SIGTERM showed "done (results
        // wait for a stick)" for the last 100 ms: nothing had run.
        for (before, shown) in [
            (idle(0), Pattern::NoDisks),
            (idle(2), Pattern::Ready { disks: 2 }),
            (State::default(), Pattern::Booting),
        ] {
            let (s, a) = step(before, Event::Signal);
            assert!(
                !a.iter().any(|x| matches!(x, Action::Show(_))),
                "{before:?}: {a:?}"
            );
            assert_eq!(pattern(&s), shown);
        }
        // Safe to remove (copied, idle): still safe to remove.
        let st = State {
            stick: Stick::Copied,
            ..idle(2)
        };
        let (s, _) = step(st, Event::Signal);
        assert_eq!(pattern(&s), Pattern::SafeToRemove);
    }

    #[test]
    fn no_targets_and_failed_runs_stay_shown_through_the_shutdown() {
        let nothing = Event::RunFinished {
            outcome: RunOutcome::NothingToDo,
        };
        let (_, seen) = walk(
            with_stick(running()),
            &[nothing.clone(), copied(), Event::Signal],
        );
        assert_eq!(
            seen,
            vec![Pattern::Copying, Pattern::NoDisks, Pattern::NoDisks]
        );
        let (_, seen) = walk(running(), &[nothing, Event::Signal]);
        assert_eq!(seen, vec![Pattern::NoDisks; 2]);
        let failed = Event::RunFinished {
            outcome: RunOutcome::Failed,
        };
        let (_, seen) = walk(with_stick(running()), &[failed, copied(), Event::Signal]);
        assert_eq!(seen, vec![Pattern::Copying, Pattern::Error, Pattern::Error]);
    }

    #[test]
    fn a_stick_problem_stays_shown_through_the_shutdown() {
        let full = Event::CopyFinished {
            remaining: 1,
            problem: Some(StickProblem::Full),
        };
        let problem = Pattern::StickProblem {
            problem: StickProblem::Full,
        };
        let (_, seen) = walk(with_stick(running()), &[finished(0), full, Event::Signal]);
        assert_eq!(seen, vec![Pattern::Copying, problem, problem]);
    }

    #[test]
    fn a_new_run_or_a_new_stick_clears_the_last_result() {
        // Failures, copied; the next run starts and ends well: all good, also at shutdown.
        let (s, _) = walk(with_stick(running()), &[finished(1), copied()]);
        let (_, seen) = walk(
            s,
            &[Event::StartRequested, finished(0), copied(), Event::Signal],
        );
        assert_eq!(
            seen,
            vec![
                Pattern::Running {
                    phase: Phase::Prepare
                },
                Pattern::Copying,
                Pattern::SafeToRemove,
                Pattern::SafeToRemove,
            ]
        );
        // A full stick swapped for one with room: the copy is retried and the problem is gone;
        // the run's own result (failures) stays.
        let full = Event::CopyFinished {
            remaining: 1,
            problem: Some(StickProblem::Full),
        };
        let (s, _) = walk(with_stick(running()), &[finished(1), full]);
        let (_, seen) = walk(
            s,
            &[
                Event::StickRemoved,
                Event::StickInserted { config_ok: true },
                copied(),
                Event::Signal,
            ],
        );
        assert_eq!(
            seen,
            vec![
                Pattern::DoneWithFailures,
                Pattern::Copying,
                Pattern::SafeToRemoveWithFailures,
                Pattern::SafeToRemoveWithFailures,
            ]
        );
    }
}
