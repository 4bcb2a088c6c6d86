//! The bundle of a suite run: `results.json` (the document itself) and its renderings
//! `results.csv`, `summary.txt` and `report.html`, written side by side.

use crate::model::SuiteResult;
use std::path::Path;

/// Writes results.json, results.csv, summary.txt and report.html into `dir`, each atomically;
/// every phase result judged afresh (`report::validity::judge`).
pub fn write_bundle(dir: &Path, s: &SuiteResult) -> anyhow::Result<()> {
    use crate::sys::fs::write_atomic;
    let mut judged = s.clone();
    super::validity::judge(&mut judged);
    let s = &judged;
    write_atomic(&dir.join("results.json"), s.to_json_pretty().as_bytes())?;
    write_atomic(
        &dir.join("results.csv"),
        super::csv::render_csv(s).as_bytes(),
    )?;
    write_atomic(
        &dir.join("summary.txt"),
        super::summary::render_summary(s).as_bytes(),
    )?;
    write_atomic(
        &dir.join("report.html"),
        super::html::render_html(s).as_bytes(),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_round_trips() {
        let d = tempfile::tempdir().unwrap();
        let s = crate::model::suite::tests_support::two_disk_suite();
        write_bundle(d.path(), &s).unwrap();
        let text = std::fs::read_to_string(d.path().join("results.json")).unwrap();
        let back = SuiteResult::from_json(&text, "results.json").unwrap();
        let mut judged = s.clone();
        crate::report::validity::judge(&mut judged);
        assert_eq!(back, judged);
        // Every phase with numbers carries its verdict.
        for p in back.targets.iter().flat_map(|t| &t.phases) {
            assert_eq!(p.validity.is_some(), p.result.is_some(), "{}", p.name);
        }
        for f in ["results.csv", "summary.txt", "report.html"] {
            assert!(d.path().join(f).is_file(), "{f}");
        }
    }
}
