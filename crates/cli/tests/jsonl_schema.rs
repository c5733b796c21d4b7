//! `tracemux report --json` on every fixture of every format: each line is
//! JSON that validates against the schema in `schema/jsonl.schema.json`,
//! and each trace gives at least one event.

mod common;

use std::path::{Path, PathBuf};

use common::{fixture_dirs, repo_root, tracemux};

/// Every fixture trace of the four formats, with a label.
fn traces() -> Vec<(String, PathBuf)> {
    let mut v = Vec::new();
    for kind in ["tracedat", "synthetic"] {
        for d in fixture_dirs(kind) {
            v.push((format!("{kind}/{}", name(&d)), d.join("trace.dat")));
        }
    }
    let root = repo_root().join("tests/fixtures");
    for d in sorted_dirs(&root.join("ctf")) {
        if d.join("trace").is_dir() {
            v.push((format!("ctf/{}", name(&d)), d.join("trace")));
        }
    }
    for set in ["recorded", "newer", "corpus", "kernel"] {
        for d in sorted_dirs(&root.join("uftrace").join(set)) {
            if d.join("uftrace.data").is_dir() {
                v.push((format!("uftrace/{}", name(&d)), d.join("uftrace.data")));
            }
        }
    }
    v
}

fn name(d: &Path) -> String {
    d.file_name().unwrap().to_string_lossy().into_owned()
}

fn sorted_dirs(p: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(p)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn every_format_validates() {
    let schema_text = std::fs::read(repo_root().join("schema/jsonl.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_slice(&schema_text).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema is valid JSON Schema");
    let mut all = traces();
    let ltt = common::ltt_trace("jsonl");
    all.push(("ltt/written".into(), ltt.clone()));
    let mut fails = Vec::new();
    let mut checked = 0;
    for (label, path) in &all {
        let out = tracemux(&["report", "--json", path.to_str().unwrap()], &repo_root());
        if label.contains("/latency-") {
            // a latency file holds trace-cmd's text, no event records
            if !out.status.success() || !out.stdout.is_empty() {
                fails.push(format!("{label}: latency file: {:?}", out.status.code()));
            }
            checked += 1;
            continue;
        }
        if out.stdout.is_empty() {
            fails.push(format!(
                "{label}: no output (exit {:?}): {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
            ));
            continue;
        }
        let mut events = 0;
        for (n, line) in out.stdout.split(|&b| b == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            let v: serde_json::Value = match serde_json::from_slice(line) {
                Ok(v) => v,
                Err(e) => {
                    fails.push(format!("{label}: line {}: not JSON: {e}", n + 1));
                    break;
                }
            };
            if let Some(err) = validator.iter_errors(&v).next() {
                fails.push(format!(
                    "{label}: line {}: {err} at {}",
                    n + 1,
                    err.instance_path()
                ));
                break;
            }
            if v["type"] == "event" {
                events += 1;
            }
        }
        if events == 0 {
            fails.push(format!("{label}: no event"));
        }
        checked += 1;
    }
    let _ = std::fs::remove_dir_all(&ltt);
    tracemux_testkit::assert_all_passed(&fails, all.len(), "traces fail");
    // one of each format at least
    for kind in ["tracedat/", "ctf/", "uftrace/", "ltt/"] {
        assert!(
            all.iter().any(|(l, _)| l.starts_with(kind)),
            "no {kind} fixture"
        );
    }
    assert_eq!(checked, all.len());
}
