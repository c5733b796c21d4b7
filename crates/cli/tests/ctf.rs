//! `tracemux report` on CTF traces: every babeltrace2 2.0.4 text command
//! recorded beside a fixture (`exit-codes.txt`: `NAME: babeltrace2 ARGS
//! trace -> exit N`), run as `tracemux report ARGS trace`, prints the same
//! bytes as `NAME.txt`, and the same discarded-data warnings as
//! `NAME.stderr` (the stream paths there are those of the recording
//! machine, so lines are compared up to `within stream`).

mod common;

fn warnings(b: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(b)
        .lines()
        .map(|l| l.split(" within stream").next().unwrap_or(l).to_string())
        .collect()
}

#[test]
fn babeltrace2_text_commands() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for dir in common::ctf_dirs() {
        let codes = std::fs::read_to_string(dir.join("exit-codes.txt")).unwrap();
        for line in codes.lines() {
            let Some((name, cmd)) = line.split_once(": ") else {
                continue;
            };
            let cmd = cmd.split(" -> ").next().unwrap();
            let words: Vec<&str> = cmd.split_whitespace().collect();
            if words.first() != Some(&"babeltrace2")
                || words
                    .iter()
                    .any(|w| *w == "-c" || w.starts_with("--output-format"))
            {
                continue;
            }
            let Some(want) = common::reference(&dir, name) else {
                continue;
            };
            let mut argv = vec!["report"];
            argv.extend(&words[1..]);
            let out = common::tracemux(&argv, &dir);
            checked += 1;
            if out.stdout != want {
                failures.push(format!(
                    "{}/{name}: {}",
                    dir.display(),
                    common::first_diff(&want, &out.stdout)
                ));
            }
            let want_err = std::fs::read(dir.join(format!("{name}.stderr"))).unwrap_or_default();
            if warnings(&want_err) != warnings(&out.stderr) {
                failures.push(format!(
                    "{}/{name}: stderr\n{}",
                    dir.display(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    assert!(checked >= 50, "only {checked} commands found");
    common::assert_no_failures(&failures, &format!("of {checked} differ"));
}

#[test]
fn stats_counts_every_event() {
    for dir in common::ctf_dirs() {
        let want = common::event_count(&dir).unwrap();
        let out = common::tracemux(&["stats", "trace"], &dir);
        let text = String::from_utf8_lossy(&out.stdout);
        let got = common::stats_number(&text, "events ")
            .unwrap_or_else(|| panic!("{}: {text}", dir.display()));
        assert_eq!(got, want, "{}", dir.display());
    }
}

/// `--clock-date` and times of day in local time: the babeltrace2 2.0.4
/// commands of tests/fixtures/ctf-localtime/commands.txt (`NAME: TZ=VALUE
/// babeltrace2 ARGS trace`), each run with `TZ` set to a POSIX rule (no
/// zone file is needed), on the lttng-ust-pid trace moved by
/// `--clock-offset` across DST changes; the outputs are babeltrace2's
/// (recipe: that directory's gen.sh).
#[test]
fn babeltrace2_local_times() {
    let root = common::repo_root().join("tests/fixtures");
    let dir = root.join("ctf-localtime");
    let trace = root.join("ctf/lttng-ust-pid/trace");
    let commands = std::fs::read_to_string(dir.join("commands.txt")).unwrap();
    let mut checked = 0;
    for line in commands.lines() {
        let Some((name, cmd)) = line.split_once(": ") else {
            continue;
        };
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let tz = words[0].strip_prefix("TZ=").expect("TZ=VALUE first");
        assert_eq!(words[1], "babeltrace2");
        assert_eq!(words.last(), Some(&"trace"));
        let want = common::reference(&dir, name).expect("reference output");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tracemux"))
            .env("TZ", tz)
            .env_remove("TZDIR")
            .arg("report")
            .args(&words[2..words.len() - 1])
            .arg(&trace)
            .output()
            .expect("tracemux runs");
        assert!(out.status.success(), "{name}: {out:?}");
        assert!(
            out.stdout == want,
            "{name}: {}",
            common::first_diff(&want, &out.stdout)
        );
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} commands");
}
