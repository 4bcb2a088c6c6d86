//! `spindle report`: reads bundles back (through `report::load`), prints or writes what the
//! pure renderers make of them, and names the file in every error.

use crate::cli::{ReportAction, ReportArgs};
use crate::model::load;
use crate::report::{compare, html};
use crate::sys::fs::write_atomic;
use anyhow::Context;
use std::path::{Path, PathBuf};

fn write(path: &Path, what: &str, text: &str) -> anyhow::Result<()> {
    write_atomic(path, text.as_bytes())
        .with_context(|| format!("{what}: could not write '{}'", path.display()))?;
    crate::sys::log::say!("wrote {}", path.display());
    Ok(())
}

pub fn run(args: ReportArgs) -> anyhow::Result<i32> {
    match args.action {
        ReportAction::Show { path, markdown } => {
            let l = load::load(&path)?;
            if markdown {
                print!("{}", crate::report::markdown::render(&l.suite));
            } else {
                print!("{}", crate::report::summary::render_summary(&l.suite));
            }
        }
        ReportAction::Html { path, out } => {
            let l = load::load(&path)?;
            let dest = out.unwrap_or_else(|| {
                Path::new(&l.origin)
                    .parent()
                    .map_or_else(|| PathBuf::from("report.html"), |d| d.join("report.html"))
            });
            write(&dest, "-o", &html::render_html(&l.suite))?;
        }
        ReportAction::Compare {
            paths,
            baseline,
            out,
            csv,
        } => {
            let inputs = paths
                .iter()
                .map(|p| load::load(p))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let given: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            let c = compare::compare(&inputs, &given, baseline.as_deref())?;
            print!("{}", compare::text::render(&c));
            if let Some(o) = out {
                write(&o, "-o", &compare::html::render(&c))?;
            }
            if let Some(f) = csv {
                write(&f, "--csv", &compare::csv::render(&inputs, &c))?;
            }
        }
    }
    Ok(0)
}
