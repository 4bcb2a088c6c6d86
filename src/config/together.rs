//! A profile's `[together]`: after every target's solo phases, the chosen fileio sets run on
//! every disk at the same time (`run::together`), to show what the shared USB bus costs each
//! disk and which disk of a same-model group is the bad one (`report::together`). Resolved
//! against the profile's `[[fileio]]` sets; every error names its key.

use serde::Deserialize;
use std::time::Duration;

/// `[together]` as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TogetherProfile {
    /// The `[[fileio]]` tables to run on every disk at once, by their place in the profile
    /// counted from 1, as the phase names count them (`fileio6-…` is the sixth) [every set].
    #[serde(default)]
    pub sets: Option<Vec<usize>>,
    /// Seconds per run, instead of each set's own `time` [the set's].
    #[serde(default)]
    pub time: Option<u64>,
}

/// `[together]` resolved: which sets, and the run time if it is set here.
#[derive(Clone, Debug, PartialEq)]
pub struct TogetherPlan {
    /// Indices into the profile's fileio sets, in the order they run.
    pub sets: Vec<usize>,
    pub time_limit: Option<Duration>,
}

/// Resolves `[together]` for a profile with `fileio_sets` sets; an error is `(key, why and
/// the fix)`.
pub fn resolve(
    t: &TogetherProfile,
    fileio_sets: usize,
) -> Result<TogetherPlan, (&'static str, String)> {
    if fileio_sets == 0 {
        return Err((
            "sets",
            "the profile has no [[fileio]] set to run on every disk at once: add one, or remove [together]".into(),
        ));
    }
    let sets = match &t.sets {
        None => (0..fileio_sets).collect(),
        Some(s) if s.is_empty() => {
            return Err((
                "sets",
                "is empty: name at least one [[fileio]] table, e.g. [1] for the first, or leave the key out for every set".into(),
            ))
        }
        Some(s) => {
            for (i, &n) in s.iter().enumerate() {
                if n == 0 || n > fileio_sets {
                    return Err((
                        "sets",
                        format!(
                            "there is no fileio set {n}: the profile has {fileio_sets} [[fileio]] tables, counted from 1 as the phase names count them (1 to {fileio_sets})"
                        ),
                    ));
                }
                if s[..i].contains(&n) {
                    return Err(("sets", format!("names fileio set {n} twice: name it once")));
                }
            }
            s.iter().map(|n| n - 1).collect()
        }
    };
    if t.time == Some(0) {
        return Err((
            "time",
            "is 0: give the seconds per run, e.g. 20, or leave the key out for each set's own time"
                .into(),
        ));
    }
    Ok(TogetherPlan {
        sets,
        time_limit: t.time.map(Duration::from_secs),
    })
}

/// [`resolve`] for a profile's `[together]` if it has one.
pub fn of(
    t: Option<&TogetherProfile>,
    fileio_sets: usize,
) -> Result<Option<TogetherPlan>, (&'static str, String)> {
    t.map(|t| resolve(t, fileio_sets)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(sets: Option<Vec<usize>>, time: Option<u64>) -> TogetherProfile {
        TogetherProfile { sets, time }
    }

    #[test]
    fn every_set_by_default_or_the_ones_named_in_their_order() {
        let p = resolve(&profile(None, None), 3).unwrap();
        assert_eq!((p.sets, p.time_limit), (vec![0, 1, 2], None));
        let p = resolve(&profile(Some(vec![3, 1]), Some(20)), 3).unwrap();
        assert_eq!(p.sets, vec![2, 0]);
        assert_eq!(p.time_limit, Some(Duration::from_secs(20)));
    }

    #[test]
    fn bad_values_name_their_key_and_the_fix() {
        let e = resolve(&profile(Some(vec![4]), None), 3).unwrap_err();
        assert_eq!(e.0, "sets");
        assert!(
            e.1.contains("there is no fileio set 4") && e.1.contains("(1 to 3)"),
            "{}",
            e.1
        );
        assert_eq!(
            resolve(&profile(Some(vec![0]), None), 3).unwrap_err().0,
            "sets"
        );
        assert_eq!(
            resolve(&profile(Some(vec![]), None), 3).unwrap_err().0,
            "sets"
        );
        assert!(resolve(&profile(Some(vec![1, 1]), None), 3)
            .unwrap_err()
            .1
            .contains("twice"));
        assert_eq!(resolve(&profile(None, Some(0)), 3).unwrap_err().0, "time");
        assert!(resolve(&profile(None, None), 0)
            .unwrap_err()
            .1
            .contains("no [[fileio]]"));
    }

    #[test]
    fn a_profile_names_the_together_key_at_fault_and_standard_and_reference_have_it() {
        use crate::config::profile::SuiteProfile;
        let parse = |t: &str| SuiteProfile::parse(t, "t", "t.toml");
        let e = parse("[together]\ntime = 5\n").unwrap_err();
        assert!(
            format!("{e}")
                .contains("profile file 't.toml': together.sets: the profile has no [[fileio]]"),
            "{e}"
        );
        let e = parse("[together]\nset = [0]\n").unwrap_err();
        assert!(format!("{e:#}").contains("set"), "{e:#}");
        for name in ["standard", "reference"] {
            let p = SuiteProfile::load(name).unwrap();
            let t = p
                .together
                .expect("standard and reference run all disks at once");
            assert!(!t.sets.is_empty() && t.time_limit.is_some(), "{name}");
        }
        for name in ["quick", "check"] {
            assert_eq!(SuiteProfile::load(name).unwrap().together, None, "{name}");
        }
    }
}
