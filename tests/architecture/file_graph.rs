//! The import graph between the files of `src/`: which file names an item of which other file
//! (`use` trees, `crate::`/`super::`/`self::` paths and child modules in expressions), in
//! non-test code, with re-exports (`pub use child::Item` in a `mod.rs`) followed to the file
//! that defines the item. Strongly connected components of it are the file-level circles.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A file's module path: `report/html/mod.rs` → `["report", "html"]`, `lib.rs` → `[]`.
pub fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem.to_string());
    }
    parts
}

/// `text` with comments removed and string and char literals emptied, so that only code is
/// left to scan for paths.
pub fn code_only(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == '*' && b[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&b, i) {
            // raw string r"…" / r#"…"#
            let mut j = i + 1;
            let mut hashes = 0;
            while j < b.len() && b[j] == '#' {
                hashes += 1;
                j += 1;
            }
            if j < b.len() && b[j] == '"' {
                j += 1;
                loop {
                    if j >= b.len() {
                        break;
                    }
                    if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    j += 1;
                }
                out.push_str("\"\"");
                i = j;
            } else {
                out.push(c);
                i += 1;
            }
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && (next == Some('\\') || b.get(i + 2) == Some(&'\'')) {
            // a char literal ('x', '\n', '\''); a lifetime has no closing quote two places on
            i += 2;
            while i < b.len() && b[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The code before the file's unit tests (`#[cfg(test)]` then a `mod`).
pub fn before_tests(code: &str) -> &str {
    let mut at = 0;
    while let Some(i) = code[at..].find("#[cfg(test)]") {
        let start = at + i;
        let rest = code[start + 12..].trim_start();
        if ["mod ", "pub mod ", "pub(crate) mod "]
            .iter()
            .any(|p| rest.starts_with(p))
        {
            return &code[..start];
        }
        at = start + 12;
    }
    code
}

/// Every path a `use` tree names: `a::{b, c::{d, e as f}, self}` → `a::b`, `a::c::d`,
/// `a::c::e`, `a`.
pub fn expand_use(tree: &str) -> Vec<String> {
    // drop renames (`x as y`, `_ as _`), then all white space
    let words: Vec<&str> = tree.split_whitespace().collect();
    let mut kept = Vec::new();
    let mut k = 0;
    while k < words.len() {
        if words[k] == "as" && k + 1 < words.len() {
            let renamed = words[k + 1];
            let tail: String = renamed.chars().skip_while(|c| is_ident(*c)).collect();
            kept.push(tail);
            k += 2;
        } else {
            kept.push(words[k].to_string());
            k += 1;
        }
    }
    let tree: String = kept.concat();
    let mut out = Vec::new();
    expand_into("", &tree, &mut out);
    out
}

fn expand_into(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let join = |p: &str, s: &str| {
        if p.is_empty() {
            s.to_string()
        } else if s == "self" {
            p.to_string()
        } else {
            format!("{p}::{s}")
        }
    };
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim_end_matches("::");
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let base = join(prefix, head);
        for part in split_top(inner) {
            if !part.is_empty() {
                expand_into(&base, part, out);
            }
        }
    } else {
        let p = join(prefix, tree.trim_end_matches("::*"));
        if !p.is_empty() {
            out.push(p);
        }
    }
}

/// `a, b::{c, d}, e` split on the commas at depth 0.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// One file's code: the paths it names (`use` trees expanded, then every `a::b::c` run of path
/// segments in the rest), its child modules and what it re-exports (`pub use` name → path;
/// not counted as a use of the file itself).
#[derive(Default)]
pub struct FileCode {
    pub paths: Vec<(String, usize)>,
    pub children: BTreeSet<String>,
    pub reexports: BTreeMap<String, String>,
}

pub fn scan(code: &str) -> FileCode {
    let mut fc = FileCode::default();
    let line_of = |pos: usize| code[..pos].matches('\n').count() + 1;
    let mut rest_code = String::with_capacity(code.len());
    let mut at = 0;
    // `use` statements, including `pub use` and multi-line trees
    let bytes = code.as_bytes();
    let mut i = 0;
    while let Some(k) = code[i..].find("use ") {
        let start = i + k;
        let word_start = start == 0 || !is_ident(bytes[start - 1] as char);
        if !word_start {
            i = start + 4;
            continue;
        }
        let Some(end) = code[start..].find(';').map(|e| start + e) else {
            break;
        };
        let public = code[..start].trim_end().ends_with("pub")
            || code[..start].trim_end().ends_with("pub(crate)")
            || code[..start].trim_end().ends_with("pub(super)");
        let tree = &code[start + 4..end];
        for p in expand_use(tree) {
            if public {
                // a re-export is a name the parent lends, not a use of its own: paths through
                // it are followed to the defining file instead
                let last = p.rsplit("::").next().unwrap_or(&p).to_string();
                fc.reexports.insert(last, p);
            } else {
                fc.paths.push((p, line_of(start)));
            }
        }
        rest_code.push_str(&code[at..start]);
        rest_code.push_str(&"\n".repeat(code[start..end].matches('\n').count()));
        at = end;
        i = end;
    }
    rest_code.push_str(&code[at..]);
    // child modules: `mod x;` / `pub mod x;`
    for l in code.lines() {
        let t = l.trim();
        let t = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        if let Some(m) = t.strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) {
            fc.children.insert(m.trim().to_string());
        }
    }
    // every other `a::b::c` path in expressions and types
    let chars: Vec<char> = rest_code.chars().collect();
    let mut line = 1;
    let mut j = 0;
    while j < chars.len() {
        if chars[j] == '\n' {
            line += 1;
            j += 1;
            continue;
        }
        if is_ident(chars[j]) && (j == 0 || !(is_ident(chars[j - 1]) || chars[j - 1] == ':')) {
            let mut k = j;
            let mut segs = 0;
            loop {
                while k < chars.len() && is_ident(chars[k]) {
                    k += 1;
                }
                segs += 1;
                if k + 2 < chars.len()
                    && chars[k] == ':'
                    && chars[k + 1] == ':'
                    && is_ident(chars[k + 2])
                {
                    k += 2;
                } else {
                    break;
                }
            }
            if segs > 1 {
                fc.paths.push((chars[j..k].iter().collect(), line));
            }
            j = k;
        } else {
            j += 1;
        }
    }
    // a name the file re-exports and also uses itself, bare (`pub use child::X;` … `X::new()`),
    // not as a field (`x: T`, `.x`)
    for (name, path) in &fc.reexports {
        // (a re-exported name that is also a child module, `mod run; pub use run::run;`, is
        // not told apart from the module's own name: left out)
        if fc.children.contains(name) {
            continue;
        }
        if let Some(line) = rest_code.lines().position(|l| bare_use(l, name)) {
            fc.paths.push((path.clone(), line + 1));
        }
    }
    fc
}

/// Whether `line` names `name` as a word that is not a field (`name: T`, `.name`).
fn bare_use(line: &str, name: &str) -> bool {
    let mut from = 0;
    while let Some(i) = line[from..].find(name) {
        let at = from + i;
        let end = at + name.len();
        from = end;
        let before = line[..at].chars().next_back();
        let after = line[end..].trim_start();
        if before.is_some_and(|c| is_ident(c) || c == '.')
            || line[end..].chars().next().is_some_and(is_ident)
        {
            continue;
        }
        if after.starts_with(':') && !after.starts_with("::") {
            continue;
        }
        return true;
    }
    false
}

/// The import graph: file (relative to the tree) → file → lines where it is named.
pub type Graph = BTreeMap<String, BTreeMap<String, Vec<usize>>>;

pub fn graph(root: &Path) -> Graph {
    let mut files = Vec::new();
    collect(root, &mut files);
    let mut modules: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut scanned: BTreeMap<String, (Vec<String>, FileCode)> = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap();
        let name = rel.display().to_string();
        if name == "main.rs" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        let code = code_only(&text);
        let fc = scan(before_tests(&code));
        let m = module_path(rel);
        modules.insert(m.clone(), name.clone());
        scanned.insert(name, (m, fc));
    }
    let mut g = Graph::new();
    for (name, (m, fc)) in &scanned {
        for (path, line) in &fc.paths {
            let Some(abs) = absolute(path, m, &fc.children) else {
                continue;
            };
            if let Some(to) = resolve(&abs, &modules, &scanned, 0) {
                if &to != name {
                    g.entry(name.clone())
                        .or_default()
                        .entry(to)
                        .or_default()
                        .push(*line);
                }
            }
        }
    }
    g
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A path as written in a file of module `m` → segments from the crate root; `None` for paths
/// that do not start in this crate (`std::…`, `Self::…`, an enum's variant).
fn absolute(path: &str, m: &[String], children: &BTreeSet<String>) -> Option<Vec<String>> {
    let segs: Vec<&str> = path.split("::").collect();
    let mut base: Vec<String> = match segs[0] {
        "crate" => Vec::new(),
        "self" => m.to_vec(),
        "super" => m[..m.len().saturating_sub(1)].to_vec(),
        first if children.contains(first) => {
            let mut b = m.to_vec();
            b.push(first.to_string());
            b
        }
        _ => return None,
    };
    let mut rest = &segs[1..];
    while rest.first() == Some(&"super") {
        base.pop();
        rest = &rest[1..];
    }
    base.extend(rest.iter().map(|s| s.to_string()));
    Some(base)
}

/// The file that defines what `abs` names: its longest module prefix, then through that
/// file's `pub use` re-exports to the defining file.
fn resolve(
    abs: &[String],
    modules: &BTreeMap<Vec<String>, String>,
    scanned: &BTreeMap<String, (Vec<String>, FileCode)>,
    depth: usize,
) -> Option<String> {
    let n = (0..=abs.len())
        .rev()
        .find(|n| modules.contains_key(&abs[..*n]))?;
    let file = modules[&abs[..n]].clone();
    if depth > 8 || n == abs.len() {
        return Some(file);
    }
    let (m, fc) = &scanned[&file];
    // a re-export of another crate's item or of one defined in this file (`pub(crate) use
    // say;` after `macro_rules! say`) ends here
    match fc
        .reexports
        .get(&abs[n])
        .and_then(|t| absolute(t, m, &fc.children))
    {
        Some(mut to) => {
            to.extend(abs[n + 1..].iter().cloned());
            resolve(&to, modules, scanned, depth + 1).or(Some(file))
        }
        None => Some(file),
    }
}

/// Strongly connected components with more than one file (Tarjan), each sorted.
pub fn circles(g: &Graph) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        if let Some(next) = t.g.get(v) {
            for w in next.keys() {
                let w = w.as_str();
                if !t.index.contains_key(w) {
                    visit(t, w);
                    let lw = t.low[w];
                    let lv = t.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if t.on.contains(w) {
                    let iw = t.index[w];
                    let lv = t.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
        }
        if t.low[v] == t.index[v] {
            let mut c = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                c.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if c.len() > 1 {
                c.sort();
                t.out.push(c);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out.sort();
    t.out
}

/// The edges inside one circle, with a line for each, for the failure message.
pub fn describe(g: &Graph, circle: &[String]) -> String {
    let mut edges = Vec::new();
    for a in circle {
        for (b, lines) in g.get(a).into_iter().flatten() {
            if circle.contains(b) {
                edges.push(format!("{a}:{} -> {b}", lines[0]));
            }
        }
    }
    edges.join(", ")
}
