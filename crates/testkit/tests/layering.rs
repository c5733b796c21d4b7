//! No import circles between the modules of any crate: in each crate under
//! `crates/`, every `crate::NAME` path (in `use` lines and in code) is an
//! edge from the top-level module that holds it to module NAME (to the
//! module an item re-exported by the crate root comes from, or to the root
//! itself for the root's own items), and the graph has no cycle, so each
//! module can be read knowing only the modules below it. A module
//! directory (`printfmt/`) counts as one node with its file: a child using
//! its parent's items is that module's own business. The binary crate's
//! `main.rs` is its root, as `lib.rs` is a library's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = "(root)";

/// The code ([`code`]) of each top-level module of the crate whose `src`
/// is `src`, the root file's under [`ROOT`]; files that are test modules
/// (`#[cfg(test)] mod NAME;`) are left out.
fn sources(src: &Path) -> BTreeMap<String, String> {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    let mut tests = BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let mut lines = text.lines();
        while let Some(l) = lines.next() {
            if l.trim() == "#[cfg(test)]" {
                if let Some(m) = lines.next().and_then(|n| n.trim().strip_prefix("mod ")) {
                    if let Some(name) = m.strip_suffix(';') {
                        tests.insert(name.to_string());
                    }
                }
            }
        }
    }
    let mut nodes: BTreeMap<String, String> = BTreeMap::new();
    for f in &files {
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        if tests.contains(&stem) {
            continue;
        }
        let top = f.strip_prefix(src).unwrap().components().next().unwrap();
        let top = Path::new(top.as_os_str())
            .file_stem()
            .unwrap()
            .to_string_lossy();
        let name = match &*top {
            "lib" | "main" => ROOT.to_string(),
            t => t.to_string(),
        };
        let text = code(&std::fs::read_to_string(f).unwrap());
        nodes.entry(name).or_default().push_str(&text);
    }
    nodes
}

/// Every `.rs` file under `dir`, in name order.
fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of one file: without `//` comments (doc links are not
/// imports) and without its test module (`#[cfg(test)] mod tests {` to the
/// end of the file: tests may use anything).
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if l == "#[cfg(test)]" && lines.peek().is_some_and(|n| n.starts_with("mod tests {")) {
            break;
        }
        out.push_str(l.find("//").map_or(l, |i| &l[..i]));
        out.push('\n');
    }
    out
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The items the root re-exports (`pub use MODULE::{A, B}` /
/// `pub use MODULE::A`), by name: the module they come from.
fn reexports(root: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for l in root.lines() {
        let Some(rest) = l.trim().strip_prefix("pub use ") else {
            continue;
        };
        let module = ident_at(rest).to_string();
        let Some(after) = rest[module.len()..].strip_prefix("::") else {
            continue;
        };
        let names: Vec<&str> = match after.strip_prefix('{') {
            Some(inner) => inner[..inner.find('}').unwrap_or(inner.len())]
                .split(',')
                .map(|x| ident_at(x.trim()))
                .collect(),
            None => vec![ident_at(after)],
        };
        for n in names.into_iter().filter(|n| !n.is_empty()) {
            m.insert(n.to_string(), module.clone());
        }
    }
    m
}

fn edges(nodes: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let re = nodes.get(ROOT).map(|r| reexports(r)).unwrap_or_default();
    let mut g = BTreeMap::new();
    for (name, text) in nodes {
        let mut to = BTreeSet::new();
        for (i, _) in text.match_indices("crate::") {
            // `$crate::` in macros and `tracemux_crate::` are not paths of this crate
            let before = text[..i].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let rest = &text[i + "crate::".len()..];
            let targets: Vec<&str> = match rest.strip_prefix('{') {
                Some(inner) => inner[..inner.find('}').unwrap_or(0)]
                    .split(',')
                    .map(|x| ident_at(x.trim()))
                    .collect(),
                None => vec![ident_at(rest)],
            };
            for t in targets.into_iter().filter(|t| !t.is_empty()) {
                let t = if nodes.contains_key(t) {
                    t.to_string()
                } else if let Some(m) = re.get(t) {
                    m.clone()
                } else {
                    ROOT.to_string()
                };
                to.insert(t);
            }
        }
        if name == ROOT {
            // the root reaches the modules whose items it names (not the
            // ones it only declares or re-exports)
            for m in nodes.keys() {
                let used = text.lines().any(|l| {
                    let l = l.trim();
                    !l.starts_with("pub use ")
                        && !l.starts_with("use ")
                        && l.contains(&format!("{m}::"))
                });
                if used {
                    to.insert(m.clone());
                }
            }
        }
        to.remove(name);
        g.insert(name.clone(), to);
    }
    g
}

/// The modules reachable from `v` (`v` itself when on a cycle).
fn reach(g: &BTreeMap<String, BTreeSet<String>>, v: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<&str> = g.get(v).into_iter().flatten().map(|s| s.as_str()).collect();
    while let Some(w) = todo.pop() {
        if seen.insert(w.to_string()) {
            todo.extend(g.get(w).into_iter().flatten().map(|s| s.as_str()));
        }
    }
    seen
}

/// The groups of modules that reach each other (strongly connected, more
/// than one module), each with the edges inside it.
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let reach: BTreeMap<&str, BTreeSet<String>> =
        g.keys().map(|v| (v.as_str(), reach(g, v))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for v in g.keys() {
        if done.contains(v) || !reach[v.as_str()].contains(v) {
            continue;
        }
        let group: BTreeSet<&str> = reach[v.as_str()]
            .iter()
            .filter(|u| reach[u.as_str()].contains(v))
            .map(|u| u.as_str())
            .collect();
        let mut edges = Vec::new();
        for &u in &group {
            done.insert(u.to_string());
            for w in &g[u] {
                if group.contains(w.as_str()) {
                    edges.push(format!("{u} -> {w}"));
                }
            }
        }
        out.push(edges.join(", "));
    }
    out
}

fn crates() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

#[test]
fn no_import_circles_in_any_crate() {
    let all = crates();
    assert!(all.len() >= 10, "{all:?}");
    let mut found = Vec::new();
    for src in &all {
        let nodes = sources(src);
        let g = edges(&nodes);
        for c in circles(&g) {
            found.push(format!("{}: {c}", src.display()));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn the_graph_sees_the_imports_it_should() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/src");
    let g = edges(&sources(&src));
    assert!(g["report"].contains("select") && g[ROOT].contains("report"));
    // an item the root re-exports counts as its module's
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tracedat/src");
    let g = edges(&sources(&src));
    assert!(g["reader"].contains("file"), "{:?}", g["reader"]);
    // a circle is found
    let mut fake = BTreeMap::new();
    fake.insert("a".to_string(), "use crate::b::X;".to_string());
    fake.insert("b".to_string(), "fn f() { crate::a::g() }".to_string());
    let g = edges(&fake);
    assert_eq!(circles(&g), vec!["a -> b, b -> a".to_string()]);
}
