//! The layering rules of docs/ARCHITECTURE.md, checked from the source: which top-level module
//! may name which (`crate::X` in `use` lines and paths, outside unit tests), no import cycle
//! between top-level modules, and the size limits (files ≤ 700 lines of non-test code,
//! functions ≤ 100 lines except the byte-exact sysbench report formatters).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules, from the top of the dependency order down.
const LAYERS: &[&str] = &[
    "cmd",
    "cli",
    "appliance",
    "run",
    "config",
    "status",
    "sink",
    "report",
    "model",
    "tpcc",
    "oltp",
    "fileio",
    "provision",
    "db",
    "engine",
    "stats",
    "disk",
    "sys",
    "rng",
    "units",
    "version",
];

/// (module, modules it must not name, why).
const FORBIDDEN: &[(&str, &[&str], &str)] = &[
    (
        "cli",
        &["cmd", "appliance", "run"],
        "cli holds clap types only",
    ),
    (
        "status",
        &["config"],
        "LED/button settings live beside status/",
    ),
    ("sink", &["config"], "stick settings live beside sink/"),
    (
        "report",
        &["config", "run", "appliance", "cmd", "cli"],
        "renderers take the result model",
    ),
    (
        "model",
        &[
            "report",
            "config",
            "run",
            "appliance",
            "cmd",
            "cli",
            "sink",
            "status",
        ],
        "the results schema is below its renderers and whoever writes it",
    ),
    (
        "fileio",
        &["config", "report", "run", "appliance", "cmd", "cli"],
        "engines are below the run layer",
    ),
    (
        "oltp",
        &["config", "report", "run", "appliance", "cmd", "cli"],
        "engines are below the run layer",
    ),
    (
        "tpcc",
        &["config", "report", "run", "appliance", "cmd", "cli"],
        "engines are below the run layer",
    ),
    (
        "run",
        &["appliance", "cmd", "cli"],
        "the run layer serves the CLI and the daemon",
    ),
    ("appliance", &["cmd", "cli"], "the daemon is called by cmd"),
];

/// Functions allowed over 100 lines: byte-exact reproductions of sysbench's report text.
const LONG_FUNCTION_OK: &[(&str, &str)] = &[
    ("report/sysbench_text.rs", "fileio_header"),
    ("report/sysbench_text.rs", "fileio_report"),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The file's lines before its unit tests (`#[cfg(test)]` followed by `mod …`).
fn non_test_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| {
            let next = w[1].trim_start();
            w[0].trim() == "#[cfg(test)]"
                && ["mod ", "pub mod ", "pub(crate) mod "]
                    .iter()
                    .any(|p| next.starts_with(p))
        })
        .unwrap_or(lines.len());
    lines[..end].to_vec()
}

/// The top-level module a file belongs to (`src/run/suite.rs` → `run`).
fn module_of(rel: &Path) -> Option<String> {
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    let m = first.trim_end_matches(".rs").to_string();
    (m != "main" && m != "lib").then_some(m)
}

/// Every top-level module a line names as `crate::X`.
fn named_modules(line: &str) -> Vec<String> {
    let code = line.split("//").next().unwrap_or("");
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + 7..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.push(name);
        }
        rest = after;
    }
    // `use crate::{a, b::c}` names several
    if let Some(i) = code.find("crate::{") {
        for part in code[i + 8..].split([',', '}']) {
            let name: String = part
                .trim()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut g: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src()).unwrap().to_path_buf();
        let Some(from) = module_of(&rel) else {
            continue;
        };
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in non_test_lines(&text).iter().enumerate() {
            for to in named_modules(line) {
                if to != from && LAYERS.contains(&to.as_str()) {
                    g.entry(from.clone())
                        .or_default()
                        .entry(to)
                        .or_default()
                        .push(format!("{}:{}", rel.display(), n + 1));
                }
            }
        }
    }
    g
}

#[test]
fn every_module_is_in_the_layer_list() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    for f in files {
        let rel = f.strip_prefix(src()).unwrap().to_path_buf();
        if let Some(m) = module_of(&rel) {
            assert!(
                LAYERS.contains(&m.as_str()),
                "src/{} belongs to module '{m}', which is not in LAYERS: add it (and to docs/ARCHITECTURE.md)",
                rel.display()
            );
        }
    }
}

#[test]
fn forbidden_imports_are_absent() {
    let g = graph();
    let mut problems = Vec::new();
    for (from, banned, why) in FORBIDDEN {
        for to in *banned {
            if let Some(sites) = g.get(*from).and_then(|m| m.get(*to)) {
                problems.push(format!("{from} names {to} ({why}): {}", sites.join(", ")));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let g = graph();
    // Depth-first search for a cycle; report one with the lines that make it.
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeMap<String, Vec<String>>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == n) {
            let mut c = stack[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_string());
        for to in g
            .get(n)
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            if let Some(c) = visit(&to, g, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for n in g.keys() {
        if let Some(cycle) = visit(n, &g, &mut Vec::new(), &mut done) {
            let edges: Vec<String> = cycle
                .windows(2)
                .map(|w| format!("{} -> {} at {}", w[0], w[1], g[&w[0]][&w[1]][0]))
                .collect();
            panic!("import cycle: {}", edges.join("; "));
        }
    }
}

/// GPIO goes through the kernel's character device, by hand-written uAPI v2 ioctls in
/// `status/cdev.rs` only (type 0xB4 is GPIO's ioctl letter); rppal, which maps /dev/gpiomem or
/// /dev/mem and cannot start on the image's kernel, is not a dependency.
#[test]
fn gpio_ioctls_live_in_status_cdev_only() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let cdev = src().join("status/cdev.rs");
    assert!(
        std::fs::read_to_string(&cdev)
            .unwrap()
            .contains("(0xB4 << 8)"),
        "status/cdev.rs builds the GPIO ioctl numbers"
    );
    for f in files.iter().filter(|f| **f != cdev) {
        let text = std::fs::read_to_string(f).unwrap();
        for l in non_test_lines(&text) {
            let code = l.split("//").next().unwrap_or("");
            assert!(
                !code.contains("0xB4") && !code.contains("0xb4") && !code.contains("rppal"),
                "{}: GPIO ioctls belong in status/cdev.rs: {l}",
                f.display()
            );
        }
    }
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    assert!(
        !manifest
            .lines()
            .any(|l| l.trim_start().starts_with("rppal")),
        "rppal cannot open GPIO on the image's kernel (STRICT_DEVMEM, no gpiomem)"
    );
}

#[test]
fn files_and_functions_stay_small() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut problems = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&f).unwrap();
        let lines = non_test_lines(&text);
        if lines.len() > 700 {
            problems.push(format!(
                "src/{rel}: {} lines of non-test code (max 700)",
                lines.len()
            ));
        }
        for (name, len, at) in functions(&lines) {
            if len > 100 && !LONG_FUNCTION_OK.contains(&(rel.as_str(), name.as_str())) {
                problems.push(format!(
                    "src/{rel}:{at}: fn {name} is {len} lines (max 100)"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// (name, length in lines, first line) of every `fn` in `lines`, by brace matching from its
/// signature (string and char literals and comments are skipped).
fn functions(lines: &[&str]) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let sig = [
            "fn ",
            "pub fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "async fn ",
            "pub async fn ",
            "pub(crate) async fn ",
            "const fn ",
            "pub const fn ",
            "unsafe fn ",
        ];
        let Some(rest) = sig.iter().find_map(|p| t.strip_prefix(p)) else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let mut depth = 0i64;
        let mut opened = false;
        'outer: for (j, line) in lines.iter().enumerate().skip(i) {
            let mut chars = line.chars().peekable();
            let mut in_str = false;
            while let Some(c) = chars.next() {
                match c {
                    '\\' if in_str => {
                        chars.next();
                    }
                    '"' => in_str = !in_str,
                    '/' if !in_str && chars.peek() == Some(&'/') => break,
                    '\'' if !in_str => {
                        // a char literal like '{' or '\'' (lifetimes have no closing quote soon)
                        let mut look = chars.clone();
                        let a = look.next();
                        let b = look.next();
                        if a == Some('\\') || b == Some('\'') {
                            for x in chars.by_ref() {
                                if x == '\'' {
                                    break;
                                }
                            }
                        }
                    }
                    '{' if !in_str => {
                        depth += 1;
                        opened = true;
                    }
                    '}' if !in_str => {
                        depth -= 1;
                        if opened && depth == 0 {
                            out.push((name.clone(), j - i + 1, i + 1));
                            break 'outer;
                        }
                    }
                    ';' if !in_str && !opened => break 'outer, // a declaration without body
                    _ => {}
                }
            }
        }
    }
    out
}

#[test]
fn the_checker_sees_what_it_checks() {
    // A cycle and a long function are caught, not silently passed.
    assert_eq!(
        named_modules("use crate::{config::x, run};"),
        ["config", "run"]
    );
    assert_eq!(
        named_modules("let x = crate::units::parse_size(s); // crate::cli"),
        ["units"]
    );
    let long: Vec<String> = std::iter::once("fn big() {".to_string())
        .chain((0..120).map(|_| "    let s = \"}\"; // }".to_string()))
        .chain(std::iter::once("}".to_string()))
        .collect();
    let refs: Vec<&str> = long.iter().map(String::as_str).collect();
    assert_eq!(functions(&refs), vec![("big".to_string(), 122, 1)]);
    assert_eq!(module_of(Path::new("run/suite.rs")).as_deref(), Some("run"));
    assert_eq!(module_of(Path::new("units.rs")).as_deref(), Some("units"));
}
