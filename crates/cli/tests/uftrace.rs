//! `tracemux` on uftrace data directories: every uftrace 0.13 command
//! recorded beside a fixture (commands.txt / exit-codes.txt), run through
//! the tracemux command that stands for it, gives the same bytes.
//!
//! uftrace -> tracemux: `replay ARGS` -> `report ARGS DIR`, `info ARGS` ->
//! `info ARGS DIR`, `dump ARGS` -> `dump ARGS DIR`, `report ARGS` -> `stats
//! ARGS DIR`, `graph [FUNC] ARGS` -> `stats --graph[=FUNC] ARGS DIR`.
//! `dump --chrome` writes the modification time of `uftrace.data/info` as
//! its `recorded_time`, which a checkout changes: that line is compared
//! apart (same key, rest of the text identical).

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
    ["corpus", "recorded", "newer", "kernel"]
        .iter()
        .flat_map(|set| tracemux_testkit::sorted_entries(&root.join(set)))
        .filter(|p| p.join("uftrace.data").is_dir())
        .collect()
}

/// The chrome `recorded_time` line replaced by its key.
fn mask_recorded_time(b: &[u8]) -> Vec<u8> {
    let t = String::from_utf8_lossy(b);
    let mut o = String::new();
    for l in t.split_inclusive('\n') {
        match l.find("\"recorded_time\":") {
            Some(i) => {
                o.push_str(&l[..i]);
                o.push_str("\"recorded_time\":MASKED\n");
            }
            None => o.push_str(l),
        }
    }
    o.into_bytes()
}

/// Whether uftrace died of a signal on this command (exit >= 128, e.g.
/// glibc's abort on long double in `dump`): its output is then a prefix
/// of the full one.
fn crashed(dir: &Path, name: &str) -> bool {
    let codes = std::fs::read_to_string(dir.join("exit-codes.txt")).unwrap_or_default();
    codes.lines().any(|l| {
        l.split_once(": ").is_some_and(|(n, rest)| {
            n == name
                && rest
                    .rsplit("-> exit ")
                    .next()
                    .and_then(|c| c.trim().parse::<u32>().ok())
                    .is_some_and(|c| c >= 128)
        })
    })
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
            let mut argv: Vec<String> = vec![tm_sub.to_string()];
            if sub == "graph" {
                // `graph [FUNC] OPTIONS`: FUNC is the first word not an option
                let func = args.first().filter(|a| !a.starts_with('-'));
                argv.push(match func {
                    Some(f) => format!("--graph={f}"),
                    None => "--graph".to_string(),
                });
                argv.extend(args.iter().skip(func.is_some() as usize).cloned());
            } else {
                argv.extend(args.iter().cloned());
            }
            argv.push(data.to_str().unwrap().to_string());
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            let out = common::tracemux(&argv, &dir);
            checked += 1;
            let (want, got) = if name.contains("chrome") {
                (mask_recorded_time(&want), mask_recorded_time(&out.stdout))
            } else {
                (want, out.stdout.clone())
            };
            let same = if crashed(&dir, &name) {
                got.starts_with(&want)
            } else {
                got == want
            };
            if !same {
                failures.push(format!(
                    "{}/{name}: {}",
                    dir.display(),
                    common::first_diff(&want, &got)
                ));
            }
        }
    }
    assert!(checked >= 8, "only {checked} {sub} outputs found");
    common::assert_no_failures(&failures, &format!("of {checked} differ"));
}

#[test]
fn replay_outputs() {
    check("replay", "report");
}

#[test]
fn info_outputs() {
    check("info", "info");
}

#[test]
fn dump_outputs() {
    check("dump", "dump");
}

#[test]
fn report_outputs() {
    check("report", "stats");
}

#[test]
fn graph_outputs() {
    check("graph", "stats");
}
