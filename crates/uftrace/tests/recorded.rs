//! Golden tests on the recordings of tests/fixtures/uftrace/recorded and
//! corpus: every `replay*` and `info*` line of each `commands.txt` /
//! `exit-codes.txt` is run and compared byte for byte with uftrace 0.13's
//! output.

use std::path::Path;

use tracemux_uftrace::replay::{replay, ReplayOptions};

fn expected(dir: &Path, name: &str) -> Option<Vec<u8>> {
    let p = dir.join(format!("{name}.txt"));
    if p.exists() {
        return std::fs::read(p).ok();
    }
    let z = dir.join(format!("{name}.txt.zst"));
    zstd::decode_all(std::fs::File::open(z).ok()?).ok()
}

/// (output name, uftrace arguments) of each reference command.
fn commands(dir: &Path) -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(dir.join("exit-codes.txt")).unwrap_or_default();
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((name, cmd)) = line.split_once(": uftrace ") else {
            continue;
        };
        let cmd = cmd.split(" -> exit").next().unwrap_or(cmd);
        out.push((
            name.to_string(),
            cmd.split_whitespace().map(String::from).collect(),
        ));
    }
    out
}

fn first_diff(got: &[u8], want: &[u8]) -> String {
    let g = String::from_utf8_lossy(got);
    let w = String::from_utf8_lossy(want);
    for (i, (a, b)) in g.lines().zip(w.lines()).enumerate() {
        if a != b {
            return format!("line {}:\n  got: {a:?}\n want: {b:?}", i + 1);
        }
    }
    format!("{} lines, want {}", g.lines().count(), w.lines().count())
}

fn run_dir(dir: &Path, failures: &mut Vec<String>, ran: &mut usize) {
    let data = dir.join("uftrace.data");
    for (name, args) in commands(dir) {
        let Some(want) = expected(dir, &name) else {
            continue;
        };
        let mut out = Vec::new();
        let mut err = Vec::new();
        let sub = args[0].as_str();
        let rest: Vec<&str> = args[1..].iter().map(|s| s.as_str()).collect();
        match sub {
            "replay" => {
                let opts = match ReplayOptions::from_args(&rest) {
                    Ok(o) => o,
                    Err(e) => {
                        failures.push(format!("{}/{name}: {e}", dir.display()));
                        continue;
                    }
                };
                if let Err(e) = replay(&data, &opts, &mut out, &mut err) {
                    failures.push(format!("{}/{name}: {e}", dir.display()));
                    continue;
                }
            }
            "info" => {
                let r = if rest.contains(&"--task") {
                    tracemux_uftrace::info::info_task(&data, &mut out, &mut err)
                } else {
                    tracemux_uftrace::info::info(&data, &mut out, &mut err)
                };
                r.unwrap();
            }
            _ => continue,
        }
        *ran += 1;
        if out != want {
            failures.push(format!(
                "{}/{name}: {}",
                dir.display(),
                first_diff(&out, &want)
            ));
        }
    }
}

#[test]
fn every_replay_and_info_reference() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for d in tracemux_testkit::uftrace_recordings() {
        run_dir(&d, &mut failures, &mut ran);
    }
    assert!(ran > 0);
    tracemux_testkit::assert_all_passed(&failures, ran, "differ");
}
