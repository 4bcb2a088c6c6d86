//! The values options take, shared by the engines' option files: output format, step, on/off,
//! sizes and word-valued settings.

/// Output format of a benchmark command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// sysbench's report text.
    Text,
    /// The versioned JSON result document.
    Json,
}

/// Life-cycle step of a benchmark (sysbench's command word).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Step {
    Prepare,
    Run,
    Cleanup,
}

/// A word-valued option (`--file-test-mode=rndrw`): the engine's own names, listed in `--help`
/// and in the error for a wrong one, read into its type as settings files are
/// ([`crate::units::from_word`]).
pub(crate) fn word<T>(
    names: &'static [&'static str],
) -> impl clap::builder::TypedValueParser<Value = T>
where
    T: serde::de::DeserializeOwned + Clone + Send + Sync + 'static,
{
    word_or(names, &[])
}

/// [`word`] that also takes the type's other spellings (its serde aliases), unlisted.
pub(crate) fn word_or<T>(
    names: &'static [&'static str],
    aliases: &'static [&'static str],
) -> impl clap::builder::TypedValueParser<Value = T>
where
    T: serde::de::DeserializeOwned + Clone + Send + Sync + 'static,
{
    use clap::builder::{PossibleValue, TypedValueParser as _};
    let hidden = aliases.iter().map(|a| PossibleValue::new(*a).hide(true));
    clap::builder::PossibleValuesParser::new(names.iter().map(PossibleValue::new).chain(hidden))
        .try_map(|w| crate::units::from_word::<T>(&w).ok_or("not one of the possible values"))
}

/// clap parser for sysbench booleans (`on|off`, `true|false`, `1|0`).
pub(crate) fn onoff(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{s}' is not a boolean: use on or off")),
    }
}

/// clap parser for sizes (`16K`, `2G`).
pub(crate) fn size(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s)
}

/// clap parser for sizes whose spelling messages repeat (`--file-total-size=81900M`).
pub(crate) fn typed_size(s: &str) -> Result<crate::units::TypedSize, String> {
    crate::units::TypedSize::parse(s)
}

/// fio's steady-state options, the same on every engine's run (`engine::steady`). Judged on
/// the `--report-interval` samples; with any of them the run prints a line after its report.
#[derive(Clone, Copy, Debug, Default, clap::Args)]
pub struct SteadyArgs {
    /// Steady state as fio's ss= judges it: iops, iops_slope, bw, bw_slope, lat or lat_slope,
    /// a colon and a limit, absolute or in % of the mean (iops: fileio's reads + writes, OLTP's
    /// and TPC-C's transactions per second; bw: MiB/s, qps, tpmC; lat: the interval's
    /// percentile) [default: iops_slope:10%, recorded in the result document].
    #[arg(long, value_name = "CRITERION", value_parser = steady)]
    pub ss: Option<crate::engine::SteadyCriterion>,
    /// fio's ss_dur: the rolling window the criterion must hold over, seconds [default: a
    /// third of the run, 10 to 60 s].
    #[arg(long, value_name = "SECONDS")]
    pub ss_dur: Option<u64>,
    /// fio's ss_ramp: seconds before the first window may begin [default: a sixth of the
    /// run, 2 to 30 s].
    #[arg(long, value_name = "SECONDS")]
    pub ss_ramp: Option<u64>,
}

/// clap parser for a steady-state criterion in fio's words (`iops_slope:10%`).
pub(crate) fn steady(s: &str) -> Result<crate::engine::SteadyCriterion, String> {
    crate::engine::SteadyCriterion::parse(s)
}
