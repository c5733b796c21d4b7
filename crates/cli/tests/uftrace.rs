//! `tracemux` on uftrace data directories: every uftrace 0.13 command
//! recorded beside a fixture (commands.txt / exit-codes.txt), run through
//! the tracemux command that stands for it, gives the same bytes.
//!
//! uftrace -> tracemux: `replay ARGS` -> `report ARGS DIR`, `info ARGS` ->
//! `info ARGS DIR`.

mod common;

use std::path::{Path, PathBuf};

/// (output name, uftrace subcommand, its arguments without `-d DIR`)
fn commands(dir: &Path) -> Vec<(String, String, Vec<String>)> {
    let text = std::fs::read_to_string(dir.join("commands.txt"))
        .or_else(|_| std::fs::read_to_string(dir.join("exit-codes.txt")))
        .unwrap_or_default();
    let mut v = Vec::new();
    for line in text.lines() {
        let Some((name, cmd)) = line.split_once(": ") else {
            continue;
        };
        let cmd = cmd.split(" -> ").next().unwrap_or(cmd);
        let mut words: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
        if words.first().map(String::as_str) != Some("uftrace") || words.len() < 2 {
            continue;
        }
        words.remove(0);
        let sub = words.remove(0);
        if let Some(i) = words.iter().position(|w| w == "-d") {
            words.drain(i..(i + 2).min(words.len()));
        }
        v.push((name.to_string(), sub, words));
    }
    v
}

fn fixture_dirs() -> Vec<PathBuf> {
    let root = common::repo_root().join("tests/fixtures/uftrace");
    let mut dirs = Vec::new();
    for set in ["corpus", "recorded"] {
        let Ok(rd) = std::fs::read_dir(root.join(set)) else {
            continue;
        };
        let mut v: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("uftrace.data").is_dir())
            .collect();
        v.sort();
        dirs.extend(v);
    }
    dirs
}

fn check(sub: &str, tm_sub: &str) {
    let mut checked = 0;
    let mut failures = Vec::new();
    for dir in fixture_dirs() {
        for (name, s, args) in commands(&dir) {
            if s != sub {
                continue;
            }
            let Some(want) = common::reference(&dir, &name) else {
                continue;
            };
            let data = dir.join("uftrace.data");
            let mut argv: Vec<&str> = vec![tm_sub];
            argv.extend(args.iter().map(String::as_str));
            argv.push(data.to_str().unwrap());
            let out = common::tracemux(&argv, &dir);
            checked += 1;
            if out.stdout != want {
                failures.push(format!(
                    "{}/{name}: {}",
                    dir.display(),
                    common::first_diff(&want, &out.stdout)
                ));
            }
        }
    }
    assert!(checked >= 8, "only {checked} {sub} outputs found");
    assert!(
        failures.is_empty(),
        "{} of {checked} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn replay_outputs() {
    check("replay", "report");
}

#[test]
fn info_outputs() {
    check("info", "info");
}
