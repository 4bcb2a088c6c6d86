//! `spindle report show --markdown`: the run as Markdown to paste into a forum post or an
//! issue — every result's key figures with its validity colour, CrystalDiskMark's rows and
//! TPC-C as HammerDB prints it (NOPM, efficiency) — from the same document as summary.txt.

use super::figures::figures;
use crate::engine::Counters;
use crate::model::SuiteResult;
use std::fmt::Write as _;

/// A table cell: pipes and line breaks would end the cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The Markdown of run `s`.
pub fn render(s: &SuiteResult) -> String {
    let mut w = String::new();
    let board = s.host.board_model.as_deref().unwrap_or(&s.host.hostname);
    let _ = writeln!(w, "### spindle {} on {}\n", s.run_id, cell(board));
    let _ = writeln!(
        w,
        "profile `{}`, {}, {} CPUs, {} MiB RAM, kernel {}, spindle {}; status: {}\n",
        s.profile.name,
        cell(&s.host.cpu_model),
        s.host.cpus,
        s.host.ram_bytes >> 20,
        s.host.kernel,
        s.tool.version,
        cell(&s.status_line())
    );
    w.push_str("| target | test | figure | second | p95 ms | p99 ms | validity |\n");
    w.push_str("|---|---|--:|--:|--:|--:|---|\n");
    for t in &s.targets {
        for p in &t.phases {
            let Some(r) = &p.result else { continue };
            let f = figures(r);
            let v = super::validity::of_phase(s, t, p)
                .map_or("-".to_string(), |v| v.verdict.word().to_string());
            let _ = writeln!(
                w,
                "| {} | {} | {:.2} {} | {:.2} {} | {:.2} | {:.2} | {v} |",
                cell(&t.name),
                cell(&p.name),
                f.primary,
                f.primary_label,
                f.secondary,
                f.secondary_label,
                f.p95_ms,
                f.p99_ms
            );
            if let Some(rp) = &p.repeats {
                let _ = writeln!(w, "| | | {} | | | | |", cell(&super::repeat::line(rp)));
            }
        }
    }
    w.push_str(&super::together::markdown(s, cell));
    cdm(&mut w, s);
    for t in &s.targets {
        if let Some(c) = super::appclass::of_target(t) {
            let _ = writeln!(w, "\nA1/A2 on {}: {}", cell(&t.name), c.describe());
        }
    }
    tpcc(&mut w, s);
    w.push_str("\nValidity: green = every rule judged and passed; amber or red: `spindle report show` gives the reasons.\n");
    w
}

fn cdm(w: &mut String, s: &SuiteResult) {
    use super::cdm::{cell_text, of_target};
    let mut head = false;
    for t in &s.targets {
        let Some(rows) = of_target(t) else { continue };
        if !head {
            w.push_str("\nCrystalDiskMark's rows (MB/s = 10^6 B/s, async O_DIRECT, p99 beside; repeated: the best run):\n\n| target | test | read MB/s | write MB/s |\n|---|---|--:|--:|\n");
            head = true;
        }
        for m in rows {
            let _ = writeln!(
                w,
                "| {} | {} | {} | {} |",
                cell(&t.name),
                m.row.label,
                cell_text(&m.read),
                cell_text(&m.write)
            );
        }
    }
}

fn tpcc(w: &mut String, s: &SuiteResult) {
    let mut head = false;
    for t in &s.targets {
        for p in &t.phases {
            let Some(Counters::Tpcc(c)) = p.result.as_ref().map(|r| &r.counters) else {
                continue;
            };
            if !head {
                w.push_str("\nTPC-C (NOPM: committed New-Orders per minute; efficiency: TpmC over 12.86 × warehouses):\n\n| target | test | warehouses | TpmC | NOPM | efficiency |\n|---|---|--:|--:|--:|--:|\n");
                head = true;
            }
            let e = c
                .efficiency_pct()
                .map_or("-".to_string(), |e| format!("{e:.1} %"));
            let _ = writeln!(
                w,
                "| {} | {} | {} | {:.1} | {:.1} | {e} |",
                cell(&t.name),
                cell(&p.name),
                c.warehouses,
                c.tpmc,
                c.nopm()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_result_is_a_row_with_its_validity_and_cells_stay_cells() {
        let mut s = crate::model::suite::tests_support::two_disk_suite();
        s.targets[0].name = "sd|a".into();
        let md = render(&s);
        let rows: Vec<&str> = md.lines().filter(|l| l.contains(" | fileio-")).collect();
        assert_eq!(rows.len(), 2, "{md}");
        assert!(rows[0].starts_with("| sd\\|a | fileio-rndrw-t1 | "), "{md}");
        assert!(
            rows.iter().all(|r| r.ends_with(" amber |")
                || r.ends_with(" red |")
                || r.ends_with(" green |")),
            "{md}"
        );
        // Every row has the header's columns.
        let cols = |l: &str| l.replace("\\|", "").matches('|').count();
        let header = md
            .lines()
            .find(|l| l.starts_with("| target | test | figure"))
            .unwrap();
        assert!(rows.iter().all(|r| cols(r) == cols(header)), "{md}");
    }
}
