//! fio's steady-state settings (every engine's `run`: `--ss`, `--ss-dur`, `--ss-ramp`; a
//! profile's `ss`, `ss_dur`, `ss_ramp`) → [`SteadySettings`], checked against the run's report
//! interval: the criterion is judged on the interval samples, so there must be some, and at
//! least two in a window.

use crate::cli::SteadyArgs;
use crate::engine::{SteadyCriterion, SteadySettings};

/// How the settings and the report interval are spelled where they were given.
struct Names {
    ss: &'static str,
    dur: &'static str,
    ramp: &'static str,
    interval: &'static str,
    /// `=` on a command line, ` = ` in TOML.
    eq: &'static str,
}

const FLAGS: Names = Names {
    ss: "--ss",
    dur: "--ss-dur",
    ramp: "--ss-ramp",
    interval: "--report-interval",
    eq: "=",
};

const KEYS: Names = Names {
    ss: "ss",
    dur: "ss_dur",
    ramp: "ss_ramp",
    interval: "report_interval",
    eq: " = ",
};

/// Refuses settings the samples (one every `interval_s`, 0 = none) cannot judge; the error is
/// (the setting's name, why and what to do).
fn check(s: &SteadySettings, interval_s: u64, n: &Names) -> Result<(), (&'static str, String)> {
    if !s.given() {
        return Ok(());
    }
    let named = match (s.criterion, s.dur_s) {
        (Some(_), _) => n.ss,
        (None, Some(_)) => n.dur,
        (None, None) => n.ramp,
    };
    let i = n.interval;
    if interval_s == 0 {
        return Err((
            named,
            format!(
                "steady state is judged on the interval samples, and {i} is off: set {i}{}1",
                n.eq
            ),
        ));
    }
    if let Some(d) = s.dur_s.filter(|&d| d < 2 * interval_s) {
        return Err((
            n.dur,
            format!(
                "a {d} s window holds fewer than 2 samples of {i}{}{interval_s}: give {}{}{} or more, or a shorter {i}",
                n.eq, n.dur, n.eq, 2 * interval_s
            ),
        ));
    }
    Ok(())
}

/// The settings given on the command line of a run with `--report-interval=interval_s`.
pub fn from_args(a: &SteadyArgs, interval_s: u64) -> anyhow::Result<SteadySettings> {
    let s = SteadySettings {
        criterion: a.ss,
        dur_s: a.ss_dur,
        ramp_s: a.ss_ramp,
    };
    check(&s, interval_s, &FLAGS).map_err(|(flag, why)| anyhow::anyhow!("{flag}: {why}"))?;
    Ok(s)
}

/// A profile table's `ss`, `ss_dur`, `ss_ramp` for runs with `report_interval = interval_s`;
/// the error names the key.
pub fn from_keys(
    ss: Option<&str>,
    dur_s: Option<u64>,
    ramp_s: Option<u64>,
    interval_s: u64,
) -> Result<SteadySettings, (&'static str, String)> {
    let criterion = ss
        .map(|t| SteadyCriterion::parse(t).map_err(|e| ("ss", e)))
        .transpose()?;
    let s = SteadySettings {
        criterion,
        dur_s,
        ramp_s,
    };
    check(&s, interval_s, &KEYS)?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(ss: Option<&str>, dur: Option<u64>, ramp: Option<u64>) -> SteadyArgs {
        SteadyArgs {
            ss: ss.map(|t| SteadyCriterion::parse(t).unwrap()),
            ss_dur: dur,
            ss_ramp: ramp,
        }
    }

    #[test]
    fn steady_state_options_need_interval_samples_and_two_in_a_window() {
        assert!(!from_args(&args(None, None, None), 0).unwrap().given());
        let s = from_args(&args(Some("iops:5"), Some(2), Some(1)), 1).unwrap();
        assert_eq!((s.dur_s, s.ramp_s), (Some(2), Some(1)));
        let e = from_args(&args(Some("iops:5"), None, None), 0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--ss: steady state is judged on the interval samples, and --report-interval is off: set --report-interval=1"
        );
        let e = from_args(&args(None, Some(10), None), 10).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--ss-dur: a 10 s window holds fewer than 2 samples of --report-interval=10: give --ss-dur=20 or more, or a shorter --report-interval"
        );
    }

    #[test]
    fn profile_keys_are_read_and_refused_by_their_names() {
        let s = from_keys(Some("bw_slope:2%"), Some(30), None, 10).unwrap();
        assert_eq!(s.criterion.unwrap().to_string(), "bw_slope:2%");
        let (key, why) = from_keys(Some("foo:1"), None, None, 1).unwrap_err();
        assert_eq!(key, "ss");
        assert!(
            why.starts_with("'foo' is not a steady-state criterion"),
            "{why}"
        );
        let (key, why) = from_keys(None, Some(10), None, 10).unwrap_err();
        assert_eq!(key, "ss_dur");
        assert!(why.contains("give ss_dur = 20 or more"), "{why}");
        let (key, why) = from_keys(None, None, Some(5), 0).unwrap_err();
        assert_eq!(key, "ss_ramp");
        assert!(why.ends_with("set report_interval = 1"), "{why}");
    }
}
