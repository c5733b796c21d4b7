//! No import circles between the files of the CLI: every `crate::NAME`
//! path (in `use` lines and in code) is an edge from the file to module
//! NAME, or to `main.rs` when NAME is an item of the crate root, and
//! `main.rs` reaches the modules it declares. The graph has no cycle, so
//! each file can be read knowing only the files below it. A module
//! directory (`convert/`) counts as one node: a child using its parent's
//! trait is that module's own business.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The module name of each node and the text of its files.
fn sources() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut nodes = BTreeMap::new();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let p = e.path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        let mut text = String::new();
        if p.is_dir() {
            for f in std::fs::read_dir(&p).unwrap().flatten() {
                text.push_str(&std::fs::read_to_string(f.path()).unwrap());
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            text = std::fs::read_to_string(&p).unwrap();
        } else {
            continue;
        }
        nodes.insert(name, text);
    }
    nodes
}

/// The text without `//` comments (doc links are not imports).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

fn edges(nodes: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut g = BTreeMap::new();
    for (name, text) in nodes {
        let text = code(text);
        let mut to = BTreeSet::new();
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            let targets: Vec<&str> = match rest.strip_prefix('{') {
                Some(inner) => inner[..inner.find('}').unwrap_or(0)]
                    .split(',')
                    .map(|x| ident_at(x.trim()))
                    .collect(),
                None => vec![ident_at(rest)],
            };
            for t in targets.into_iter().filter(|t| !t.is_empty()) {
                let t = if nodes.contains_key(t) { t } else { "main" };
                to.insert(t.to_string());
            }
        }
        if name == "main" {
            for m in nodes.keys() {
                if text.contains(&format!("{m}::")) {
                    to.insert(m.clone());
                }
            }
        }
        to.remove(name);
        g.insert(name.clone(), to);
    }
    g
}

/// A cycle through `v`, if any (depth-first search).
fn cycle(
    g: &BTreeMap<String, BTreeSet<String>>,
    v: &str,
    path: &mut Vec<String>,
    done: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    if let Some(i) = path.iter().position(|p| p == v) {
        let mut c = path[i..].to_vec();
        c.push(v.to_string());
        return Some(c);
    }
    if done.contains(v) {
        return None;
    }
    path.push(v.to_string());
    for w in &g[v] {
        if let Some(c) = cycle(g, w, path, done) {
            return Some(c);
        }
    }
    path.pop();
    done.insert(v.to_string());
    None
}

#[test]
fn no_import_circles() {
    let nodes = sources();
    assert!(nodes.len() > 10 && nodes.contains_key("main"));
    let g = edges(&nodes);
    // the graph sees the imports it should
    assert!(g["report"].contains("select") && g["main"].contains("report"));
    let mut done = BTreeSet::new();
    for v in g.keys() {
        if let Some(c) = cycle(&g, v, &mut Vec::new(), &mut done) {
            panic!("import circle: {}", c.join(" -> "));
        }
    }
}
