//! The layering rules of docs/ARCHITECTURE.md, checked from the source through one import graph
//! between files (`architecture/file_graph.rs`, non-test code), folded by module where a rule is
//! about modules: the layer order, forbidden pairs, no cycle between top-level modules and none
//! between files, where crates may be named, and the size limits (files ≤ 650 lines of non-test
//! code, functions ≤ 100 lines except the byte-exact sysbench report formatters).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[path = "architecture/file_graph.rs"]
mod file_graph;

/// The rows of docs/ARCHITECTURE.md's "Layers" table, from the top down: the modules each row
/// names in its first cell (`cmd/` → `cmd`, `engine.rs` → `engine`; the binary's `main.rs` and
/// `lib.rs` are left out). A module may use the rows below its own, never its own row's
/// neighbours or the rows above.
fn layers() -> Vec<Vec<String>> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md"))
            .unwrap();
    layers_in(&doc)
}

fn layers_in(doc: &str) -> Vec<Vec<String>> {
    let section = doc
        .split("\n## Layers")
        .nth(1)
        .expect("docs/ARCHITECTURE.md has a '## Layers' section");
    let mut rows = Vec::new();
    for line in section.lines().take_while(|l| !l.starts_with("## ")) {
        let Some(cell) = line.strip_prefix('|').and_then(|l| l.split('|').next()) else {
            continue;
        };
        let names: Vec<String> = cell
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|n| n.trim_end_matches('/').trim_end_matches(".rs").to_string())
            .filter(|n| n != "main" && n != "lib")
            .collect();
        if !names.is_empty() {
            rows.push(names);
        }
    }
    rows
}

fn layer_of(rows: &[Vec<String>], m: &str) -> Option<usize> {
    rows.iter().position(|r| r.iter().any(|n| n == m))
}

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

/// The arrows between top-level modules: every file-level edge of [`file_graph::graph`] whose
/// ends lie in different modules, with the line that makes it (`from file:line`).
fn graph() -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let layers = layers();
    let mut g: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (from_file, tos) in file_graph::graph(&src()) {
        let Some(from) = module_of(Path::new(&from_file)) else {
            continue;
        };
        for (to_file, lines) in tos {
            let Some(to) = module_of(Path::new(&to_file)) else {
                continue;
            };
            if to != from && layer_of(&layers, &to).is_some() {
                let sites = g.entry(from.clone()).or_default().entry(to).or_default();
                sites.extend(lines.iter().map(|l| format!("{from_file}:{l}")));
            }
        }
    }
    g
}

#[test]
fn every_module_is_in_the_layer_list() {
    let layers = layers();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    for f in files {
        let rel = f.strip_prefix(src()).unwrap().to_path_buf();
        if let Some(m) = module_of(&rel) {
            assert!(
                layer_of(&layers, &m).is_some(),
                "src/{} belongs to module '{m}', which is not in docs/ARCHITECTURE.md's Layers table: add a row",
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

/// The doc's order holds: every arrow between top-level modules points to a lower row of the
/// Layers table (it would have caught `sink → status`).
#[test]
fn modules_use_only_the_layers_below_them() {
    let rows = layers();
    let mut problems = Vec::new();
    for (from, tos) in graph() {
        let Some(f) = layer_of(&rows, &from) else {
            continue;
        };
        for (to, sites) in tos {
            let t = layer_of(&rows, &to).unwrap();
            if t <= f {
                problems.push(format!(
                    "{from} (row {}) uses {to} (row {}), which is not below it in docs/ARCHITECTURE.md's Layers table: {}",
                    f + 1,
                    t + 1,
                    sites.join(", ")
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// (crate, the top-level modules and files that may name it, why).
const CRATE_HOMES: &[(&str, &[&str], &str)] = &[
    (
        "clap",
        &["cli", "cmd", "main.rs"],
        "argument parsing is the CLI's; engines and settings parse their own words",
    ),
    (
        "mysql_async",
        &["db", "oltp", "tpcc", "provision"],
        "the MySQL client is for the engines that talk to a server and the private server",
    ),
    ("hdrhistogram", &["stats"], "latency recording has one home"),
];

#[test]
fn crates_live_where_the_doc_says() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut problems = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src()).unwrap().to_path_buf();
        let shown = rel.display().to_string();
        let module = module_of(&rel).unwrap_or_else(|| shown.clone());
        let code = file_graph::code_only(&std::fs::read_to_string(&f).unwrap());
        let fc = file_graph::scan(file_graph::before_tests(&code));
        for (krate, homes, why) in CRATE_HOMES {
            if homes.contains(&module.as_str()) || homes.contains(&shown.as_str()) {
                continue;
            }
            let prefix = format!("{krate}::");
            for (path, line) in &fc.paths {
                if path == krate || path.starts_with(&prefix) {
                    problems.push(format!("src/{shown}:{line} names {path} ({why})"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// No circle between files: a file that names another file's items (directly or through
/// others) is never named back. A circle means two files are one concern split in two, or a
/// shared piece that belongs in a file of its own below both.
#[test]
fn no_import_circle_between_files() {
    let g = file_graph::graph(&src());
    let found: Vec<String> = file_graph::circles(&g)
        .iter()
        .map(|c| format!("{}: {}", c.join(" "), file_graph::describe(&g, c)))
        .collect();
    assert!(
        found.is_empty(),
        "file-level import circles:\n{}",
        found.join("\n")
    );
}

/// What spindle reports as it goes is written by one facility (`sys/log.rs`, `say!`: the
/// prefix, a timestamp when stderr is neither a terminal nor the journal, no panic on a closed
/// stderr), not by hand-prefixed `eprintln!("spindle: …")` lines.
#[test]
fn progress_lines_go_through_say() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let code = non_test_lines(&text).join("\n");
        for (i, _) in code.match_indices("eprintln!(") {
            let args = code[i + "eprintln!(".len()..].trim_start();
            if args.starts_with("\"spindle:") {
                found.push(format!("{}: {}", f.display(), &args[..args.len().min(60)]));
            }
        }
    }
    assert!(found.is_empty(), "use say!:\n{}", found.join("\n"));
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
        if lines.len() > 650 {
            problems.push(format!(
                "src/{rel}: {} lines of non-test code (max 650)",
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
    // The module graph is the file graph folded by module: it sees the arrows that are there.
    let g = graph();
    assert!(
        g["run"].contains_key("provision") && g["cmd"].contains_key("run"),
        "{g:?}"
    );
    assert!(
        !g.contains_key("units"),
        "units names no other module: {:?}",
        g.get("units")
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

fn plant(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

#[test]
fn the_file_graph_sees_circles_through_reexports_and_not_through_tests_or_text() {
    let lib = "pub mod a;\npub mod b;\n";
    let with_circle = plant(&[
        ("lib.rs", lib),
        ("a/mod.rs", "mod x;\nmod y;\npub use x::Thing;\n"),
        (
            "a/x.rs",
            "use super::{y::Other as O, self};\npub struct Thing(O);\n",
        ),
        (
            "a/y.rs",
            "pub struct Other;\nfn f() -> crate::a::Thing { todo!() }\n",
        ),
        ("b.rs", "pub struct Z;\n"),
    ]);
    let g = file_graph::graph(with_circle.path());
    assert_eq!(
        file_graph::circles(&g),
        vec![vec!["a/x.rs".to_string(), "a/y.rs".to_string()]],
        "{g:?}"
    );
    let without = plant(&[
        ("lib.rs", lib),
        ("a/mod.rs", "mod x;\nmod y;\npub use x::Thing;\n"),
        (
            "a/x.rs",
            "use super::y::Other;\npub struct Thing(Other);\n",
        ),
        (
            "a/y.rs",
            "// crate::a::Thing in a comment\nconst S: &str = \"crate::a::Thing\";\npub struct Other(crate::b::Z);\n#[cfg(test)]\nmod tests {\n    use crate::a::Thing;\n}\n",
        ),
        ("b.rs", "pub struct Z;\n"),
    ]);
    let g = file_graph::graph(without.path());
    assert!(file_graph::circles(&g).is_empty(), "{g:?}");
    assert!(g["a/y.rs"].contains_key("b.rs"), "{g:?}");
    assert!(g["a/x.rs"].contains_key("a/y.rs"), "{g:?}");
}

#[test]
fn use_trees_and_the_layers_table_are_read_as_written() {
    assert_eq!(
        file_graph::expand_use("crate::report::{\n    suite::{A, B as C},\n    html, self,\n}"),
        [
            "crate::report::suite::A",
            "crate::report::suite::B",
            "crate::report::html",
            "crate::report"
        ]
    );
    assert_eq!(
        file_graph::code_only("let c = '\"'; // x::y"),
        "let c = ' '; "
    );
    let doc = "# A\n## Layers\n| module | owns |\n|---|---|\n| `main.rs`, `lib.rs` | bin |\n| `cmd/` | x |\n| `rng.rs`, `units.rs` | y |\n## Next\n| `no/` | z |\n";
    assert_eq!(
        layers_in(doc),
        vec![vec!["cmd".to_string()], vec!["rng".into(), "units".into()]]
    );
}
