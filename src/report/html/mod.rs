//! `report.html`: the whole suite run in one self-contained page — inline CSS and inline SVG,
//! no script, no fonts, images or links outside the file — so it opens from the results stick
//! on a laptop with no network, and prints. The answer comes first (disks ranked for MySQL,
//! ratios, doubts), then every test with its charts and parameters, the temperature over the
//! run, and the environment. [`render_html`] is pure; sections live in the submodules.

mod answer;
mod cliff;
mod env;
pub(crate) mod page;
pub(crate) mod svg;
mod test_sections;

use super::rank;
use crate::model::SuiteResult;
use page::{esc, page_end, page_start};
use std::fmt::Write as _;

/// The HTML page of a suite run.
pub fn render_html(s: &SuiteResult) -> String {
    let views = rank::tests(s);
    let ranking = rank::rank(s, &views);
    let mut out = page_start(&format!("spindle {}", s.run_id));
    head(&mut out, s);
    answer::render(&mut out, s, &views, &ranking);
    test_sections::render(&mut out, s, &views);
    cliff::render(&mut out, s);
    env::render_timelines(&mut out, s);
    env::render_environment(&mut out, s);
    out.push_str(&page_end());
    out
}

fn head(out: &mut String, s: &SuiteResult) {
    let st = s.status.as_str();
    // A run that went to its end with failed or skipped phases says so beside its status.
    let trouble = s.phase_trouble().map_or(String::new(), |t| {
        format!(" <span class=\"status st-failed\">{}</span>", esc(&t))
    });
    let _ = writeln!(
        out,
        "<h1>Disk benchmark for MySQL — {}</h1><p class=\"meta\">Run <b>{}</b> <span class=\"status st-{st}\">{st}</span>{trouble} · started {} · finished {} · profile <b>{}</b>{} · spindle {}</p>",
        esc(s.host.board_model.as_deref().unwrap_or(&s.host.hostname)),
        esc(&s.run_id),
        esc(&s.started_at),
        esc(s.finished_at.as_deref().unwrap_or("—")),
        esc(&s.profile.name),
        match s.profile.description.as_str() {
            "" => String::new(),
            d => format!(" ({})", esc(d)),
        },
        esc(&s.tool.version)
    );
    if let Some(lines) = s.cut_short() {
        let _ = writeln!(out, "<p class=\"doubts\">{}</p>", esc(&lines.join(" ")));
    }
    out.push_str("<nav><a href=\"#answer\">Answer</a><a href=\"#tests\">Tests</a><a href=\"#temperature\">Temperature</a><a href=\"#environment\">Environment</a></nav>\n");
}

#[cfg(test)]
mod render_tests;
