//! `spindle report`: read results bundles back — show one, (re)build its report.html, or
//! compare several.

use clap::Subcommand;
use std::path::PathBuf;

/// `spindle report show|html|compare`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  spindle report show spindle-results/20250101-120000-pi\n  spindle report html results.json -o /tmp/report.html\n  spindle report compare stick-a/spindle/run1 stick-b/spindle/run7 --baseline sda -o cmp.html --csv cmp.csv"
)]
pub struct ReportArgs {
    #[command(subcommand)]
    pub action: ReportAction,
}

#[derive(Debug, Subcommand)]
pub enum ReportAction {
    /// Print the text summary of a bundle directory or a results.json.
    Show {
        /// Bundle directory, its results.json, or a single test's JSON result document.
        #[arg(value_name = "PATH")]
        path: PathBuf,
        /// Markdown to paste into a forum post or an issue: every result's key figures and
        /// validity, CrystalDiskMark's rows, TPC-C's NOPM and efficiency.
        #[arg(long)]
        markdown: bool,
    },
    /// (Re)build report.html from a bundle directory or a results.json.
    Html {
        /// Bundle directory, its results.json, or a single test's JSON result document.
        #[arg(value_name = "PATH")]
        path: PathBuf,
        /// Where to write the page [default: report.html beside the results.json].
        #[arg(short = 'o', long = "out", value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Compare several runs (one appliance over time, or sticks from several appliances).
    Compare {
        /// Bundle directories or results.json files (two or more, or one with several disks).
        #[arg(value_name = "PATH", required = true, num_args = 1..)]
        paths: Vec<PathBuf>,
        /// Ratios relative to this disk (stable id, serial or target name) or this run (run id
        /// or the PATH given) [default: the first disk of the first run].
        #[arg(long, value_name = "DISK|RUN")]
        baseline: Option<String>,
        /// Also write the comparison as an offline HTML page.
        #[arg(short = 'o', long = "out", value_name = "FILE.html")]
        out: Option<PathBuf>,
        /// Also write every result as a long-format CSV (one row per run × disk × test × metric).
        #[arg(long, value_name = "FILE")]
        csv: Option<PathBuf>,
    },
}
