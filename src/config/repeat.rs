//! A profile's `[repeat]`: how many times each measurement (fileio, OLTP and TPC-C runs) is
//! repeated, and optionally extended until its 95 % interval is narrow enough, as the Phoronix
//! Test Suite extends runs while their deviation is high. `spindle suite --repeat N` sets
//! `count`. Every error names its key and the fix.

use serde::Deserialize;

/// `[repeat]` as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepeatProfile {
    /// Runs of each measurement (at least 1; 3 or more give an interval worth reading).
    pub count: u32,
    /// Keep repeating past `count` until the interval's half-width is at most this % of the mean.
    #[serde(default)]
    pub until_ci_pct: Option<f64>,
    /// With `until_ci_pct`: the most runs of one measurement [10].
    #[serde(default)]
    pub max: Option<u32>,
}

/// How each measurement is repeated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RepeatPlan {
    pub count: u32,
    pub until_ci_pct: Option<f64>,
    /// At least `count`.
    pub max: u32,
}

impl Default for RepeatPlan {
    /// Each measurement once.
    fn default() -> Self {
        RepeatPlan {
            count: 1,
            until_ci_pct: None,
            max: 1,
        }
    }
}

impl RepeatPlan {
    /// `count` runs of each measurement, extended as the profile says (`--repeat N`).
    pub fn with_count(self, count: u32) -> Result<RepeatPlan, String> {
        if count == 0 {
            return Err("--repeat 0: give how many runs of each measurement, at least 1".into());
        }
        Ok(RepeatPlan {
            count,
            max: if self.until_ci_pct.is_some() {
                self.max.max(count)
            } else {
                count
            },
            ..self
        })
    }

    /// At least `n` runs of each measurement (a fileio set's own `repeat`), else as it is.
    pub fn at_least(self, n: u32) -> RepeatPlan {
        if n <= self.count {
            return self;
        }
        RepeatPlan {
            count: n,
            max: self.max.max(n),
            ..self
        }
    }

    /// Another run is due after `done` runs whose interval half-width is `half_width_pct`.
    pub fn wants_more(&self, done: u32, half_width_pct: Option<f64>) -> bool {
        if done >= self.max {
            return false;
        }
        if done < self.count {
            return true;
        }
        match (self.until_ci_pct, half_width_pct) {
            (Some(goal), Some(h)) => h > goal,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

/// Resolves `[repeat]`; an error is `(key, why and the fix)`.
pub fn resolve(r: &RepeatProfile) -> Result<RepeatPlan, (&'static str, String)> {
    if r.count == 0 {
        return Err(("count", "is 0: run each measurement at least once".into()));
    }
    if let Some(p) = r.until_ci_pct {
        if !(p > 0.0 && p < 100.0) {
            return Err((
                "until_ci_pct",
                format!("{p} is not a percentage of the mean between 0 and 100: use e.g. 5"),
            ));
        }
    }
    let max = match (r.max, r.until_ci_pct) {
        (Some(m), _) if m < r.count => {
            return Err((
                "max",
                format!("{m} is below count = {}: give at least count", r.count),
            ))
        }
        (Some(_), None) => {
            return Err((
                "max",
                "needs until_ci_pct: without it every measurement runs count times".into(),
            ))
        }
        (Some(m), Some(_)) => m,
        (None, Some(_)) => r.count.max(10),
        (None, None) => r.count,
    };
    Ok(RepeatPlan {
        count: r.count,
        until_ci_pct: r.until_ci_pct,
        max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(t: &str) -> Result<RepeatPlan, (&'static str, String)> {
        resolve(&toml::from_str::<RepeatProfile>(t).unwrap())
    }

    #[test]
    fn count_alone_runs_that_many_and_until_extends_to_max() {
        let p = parse("count = 3").unwrap();
        assert_eq!((p.count, p.max), (3, 3));
        assert!(p.wants_more(2, Some(50.0)) && !p.wants_more(3, Some(50.0)));
        let p = parse("count = 3\nuntil_ci_pct = 2.0\nmax = 6").unwrap();
        assert!(p.wants_more(3, Some(2.5)) && !p.wants_more(3, Some(1.5)));
        assert!(!p.wants_more(6, Some(9.0)));
        assert_eq!(parse("count = 3\nuntil_ci_pct = 2.0").unwrap().max, 10);
        let cli = RepeatPlan::default().with_count(4).unwrap();
        assert_eq!((cli.count, cli.max), (4, 4));
        assert!(RepeatPlan::default()
            .with_count(0)
            .unwrap_err()
            .contains("--repeat 0"));
    }

    #[test]
    fn bad_values_name_their_key() {
        assert_eq!(parse("count = 0").unwrap_err().0, "count");
        assert_eq!(
            parse("count = 2\nuntil_ci_pct = 0.0").unwrap_err().0,
            "until_ci_pct"
        );
        assert_eq!(
            parse("count = 4\nuntil_ci_pct = 5.0\nmax = 3")
                .unwrap_err()
                .0,
            "max"
        );
        assert_eq!(parse("count = 4\nmax = 8").unwrap_err().0, "max");
    }
}
