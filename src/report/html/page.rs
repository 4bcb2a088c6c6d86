//! The markup every HTML page of spindle shares (`report.html`, `report compare`'s page): the
//! page's start with its inline style sheet and its end, escaping, tables and number cells.

use std::fmt::Write as _;

/// Escapes text for HTML and SVG (element content and attribute values).
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

const CSS: &str = "\
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,Arial,sans-serif;color:#1d1d1f;margin:0;background:#fff}
main{max-width:980px;margin:0 auto;padding:12px 20px 40px}
h1{font-size:1.55em;margin:.4em 0 .2em}h2{font-size:1.25em;border-bottom:2px solid #d0d7de;margin:1.8em 0 .6em;padding-bottom:.2em}
h3{font-size:1.05em;margin:1.4em 0 .3em}h4{font-size:.95em;margin:1em 0 .2em;color:#444}
table{border-collapse:collapse;margin:.4em 0}th,td{padding:3px 9px;border-bottom:1px solid #e5e7eb;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
figure{margin:.6em 0 1em}figcaption{font-size:12px;color:#57606a}svg{width:100%;max-width:720px;height:auto;display:block}
.meta{color:#57606a}.small{font-size:12px}
.status{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;font-size:12px}
.st-complete,.st-ok{background:#dafbe1;color:#116329}.st-running{background:#ddf4ff;color:#0550ae}
.st-aborted,.st-interrupted,.st-failed{background:#ffebe9;color:#a40e26}.st-skipped{background:#f6f8fa;color:#57606a}
.answer{border:1px solid #d0d7de;border-radius:6px;padding:8px 16px;background:#fbfcfd}
.ratios li{font-size:1.05em;margin:.2em 0}
.doubts{border-left:4px solid #d4a72c;background:#fff8c5;padding:6px 14px;margin:.8em 0}
.doubts li{margin:.2em 0}
.v-green{color:#1a7f37}.v-amber{color:#9a6700}.v-red{color:#cf222e}
ul.legend{list-style:none;padding:0;margin:2px 0 0;display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px}
.sw{display:inline-block;width:20px;height:0;vertical-align:middle;margin-right:5px}
nav{font-size:13px}nav a{margin-right:10px}
details{margin:.3em 0}summary{cursor:pointer;color:#57606a;font-size:12px}
pre{white-space:pre-wrap;font-size:12px;background:#f6f8fa;padding:6px}
@media print{main{max-width:none;padding:0}nav,summary{display:none}section.test,figure,table{break-inside:avoid}a{color:inherit;text-decoration:none}}
";

/// The start of a page: doctype, head with the inline style sheet, `<main>`.
pub(crate) fn page_start(title: &str) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let _ = writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{}</title><style>{CSS}</style></head><body><main>",
        esc(title)
    );
    out
}

/// The end of a page from [`page_start`].
pub(crate) fn page_end() -> String {
    "</main></body></html>\n".into()
}

/// A table from a header and rows of cells already escaped; cells starting with `\u{1}` are
/// numbers (right-aligned).
pub(crate) fn table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    out.push_str("<table><tr>");
    for h in header {
        let class = if h.starts_with('\u{1}') {
            " class=\"n\""
        } else {
            ""
        };
        let _ = write!(out, "<th{class}>{}</th>", h.trim_start_matches('\u{1}'));
    }
    out.push_str("</tr>");
    for r in rows {
        out.push_str("<tr>");
        for c in r {
            match c.strip_prefix('\u{1}') {
                Some(n) => {
                    let _ = write!(out, "<td class=\"n\">{n}</td>");
                }
                None => {
                    let _ = write!(out, "<td>{c}</td>");
                }
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>\n");
}

/// A number cell for [`table`].
pub(crate) fn num(v: impl std::fmt::Display) -> String {
    format!("\u{1}{v}")
}

/// "not recorded" for missing facts.
pub(crate) fn or_unrecorded(v: Option<String>) -> String {
    v.map(|x| esc(&x))
        .unwrap_or_else(|| "<span class=\"meta\">not recorded</span>".into())
}
