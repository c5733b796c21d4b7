//! `convert net://...`: a fixture served by the test relayd
//! (`crates/ctf/tests/relay`) converts, streamed as it arrives, to what
//! the fixture on disk converts to, into every output format, whatever
//! the relayd's pacing (metadata in pieces, beacons, late streams, RETRY).

#[path = "../../ctf/tests/relay/mod.rs"]
mod relay;

use std::path::{Path, PathBuf};
use std::process::Command;

fn tracemux(args: &[&str], input: &str, out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tracemux"))
        .args(args)
        .arg(out)
        .arg(input)
        .env("TZ", "UTC")
        .output()
        .unwrap()
}

fn convert(input: &str, to: &str, out: &Path) -> std::process::Output {
    tracemux(&["convert", "-q", "--force", "--to", to, "-o"], input, out)
}

/// Every file under `dir`, by relative path, with its bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let b = std::fs::read(&p).unwrap();
                out.push((p.strip_prefix(dir).unwrap().to_path_buf(), b));
            }
        }
    }
    out.sort();
    out
}

/// babeltrace2's text of a CTF directory, as tracemux prints it.
fn text(dir: &Path) -> Vec<u8> {
    let o = Command::new(env!("CARGO_BIN_EXE_tracemux"))
        .arg("report")
        .arg(dir)
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

/// `meta.json` without its `source` (the URL or the directory).
fn sourceless(j: &[u8]) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_slice(j).unwrap();
    v.as_object_mut().unwrap().remove("source").unwrap();
    v.to_string().into_bytes()
}

fn scripts() -> Vec<(&'static str, relay::Script)> {
    let d = relay::Script::default;
    vec![
        (
            "beacons, metadata in 3 pieces",
            relay::Script {
                beacons: true,
                metadata_pieces: 3,
                ..d()
            },
        ),
        (
            "late streams, RETRY, metadata in 9 pieces, protocol 2.4",
            relay::Script {
                late_streams: true,
                retries: 2,
                metadata_pieces: 9,
                minor: 4,
                ..d()
            },
        ),
        ("protocol 2.15", relay::Script { minor: 15, ..d() }),
    ]
}

fn check(fixture: &str, to: &str, k: usize, tmp: &Path) {
    let dir = tracemux_testkit::fixtures()
        .join("ctf")
        .join(fixture)
        .join("trace");
    // (discarded data after a beacon begins at the beacon, as in
    // babeltrace2's live reader: see `lost_after_beacons`)
    let skip = usize::from(fixture.contains("discard") && k % 3 == 0);
    let (what, script) = scripts().swap_remove(k % 3 + skip);
    let port = relay::serve(&dir, script);
    let live = tmp.join(format!("{fixture}-live.{to}"));
    let disk = tmp.join(format!("{fixture}-disk.{to}"));
    let url = format!("net://127.0.0.1:{port}/host/testhost/s");
    let o = convert(&url, to, &live);
    let case = format!("{fixture} --to {to} ({what})");
    assert!(
        o.status.success(),
        "{case}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = convert(dir.to_str().unwrap(), to, &disk);
    assert!(
        o.status.success(),
        "{case}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    match to {
        "jsonl" | "perfetto" | "chrome" => {
            let (a, b) = (std::fs::read(&live).unwrap(), std::fs::read(&disk).unwrap());
            assert!(b.len() > 100, "{case}");
            assert!(a == b, "{case}: {}", tracemux_testkit::first_diff(&b, &a));
        }
        "parquet" => {
            let (a, b) = (files(&live), files(&disk));
            let names =
                |v: &[(PathBuf, Vec<u8>)]| v.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
            assert_eq!(names(&a), names(&b), "{case}");
            for ((p, x), (_, y)) in a.iter().zip(&b) {
                let (x, y) = if p.ends_with("meta.json") {
                    (sourceless(x), sourceless(y))
                } else {
                    (x.clone(), y.clone())
                };
                assert!(x == y, "{case}: {} differs", p.display());
            }
        }
        _ => {
            // the packets as they are (their files named by the relayd):
            // the same text, the same metadata
            let (a, b) = (text(&live), text(&disk));
            assert!(b.len() > 100, "{case}");
            assert!(a == b, "{case}: {}", tracemux_testkit::first_diff(&b, &a));
            let meta = |v: Vec<(PathBuf, Vec<u8>)>| {
                v.into_iter()
                    .filter(|x| x.0.ends_with("metadata"))
                    .map(|x| x.1)
                    .collect::<Vec<_>>()
            };
            assert_eq!(meta(files(&live)), meta(files(&disk)), "{case}: metadata");
        }
    }
}

#[test]
fn a_live_session_converts_as_its_trace() {
    let tmp = std::env::temp_dir().join(format!("tracemux-live-convert-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut k = 0;
    for fixture in ["lttng-ust-uid", "lttng-ust-pid", "lttng-ust-discard-small"] {
        for to in ["jsonl", "perfetto", "chrome", "parquet", "ctf", "ctf2"] {
            check(fixture, to, k, &tmp);
            k += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// JSON lines without their `ts` and their `lost` lines, and the `lost`
/// lines without their `ts`, sorted.
fn split_lost(j: &[u8]) -> (Vec<String>, Vec<String>) {
    let (mut ev, mut lost) = (Vec::new(), Vec::new());
    for l in String::from_utf8_lossy(j).lines() {
        let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
        if v["type"] == "lost" {
            v.as_object_mut().unwrap().remove("ts");
            lost.push(v.to_string());
        } else {
            ev.push(l.to_string());
        }
    }
    lost.sort();
    (ev, lost)
}

/// With a beacon before every packet, discarded data that begins before
/// the beacon begins at it (babeltrace2's lttng-live does the same): the
/// events are those of the trace on disk, in the same order, and so are
/// the losses, but for their time.
#[test]
fn lost_after_beacons() {
    let tmp = std::env::temp_dir().join(format!("tracemux-live-lost-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let dir = tracemux_testkit::fixtures().join("ctf/lttng-ust-discard-small/trace");
    let script = relay::Script {
        beacons: true,
        ..relay::Script::default()
    };
    let port = relay::serve(&dir, script);
    let (live, disk) = (tmp.join("live.jsonl"), tmp.join("disk.jsonl"));
    let o = convert(
        &format!("net://127.0.0.1:{port}/host/testhost/s"),
        "jsonl",
        &live,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = convert(dir.to_str().unwrap(), "jsonl", &disk);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (a, b) = (std::fs::read(&live).unwrap(), std::fs::read(&disk).unwrap());
    let ((ea, la), (eb, lb)) = (split_lost(&a), split_lost(&b));
    assert!(!lb.is_empty() && eb.len() > 100);
    assert_eq!(ea, eb);
    assert_eq!(la, lb);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Ctrl-C (SIGINT) while a session goes on ends the conversion cleanly:
/// exit 0 and a complete output of everything received (here every
/// packet of the fixture: the relayd says when it sent the last one, then
/// keeps the session open with beacons).
#[test]
fn ctrl_c_ends_with_a_complete_output() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let tmp = std::env::temp_dir().join(format!("tracemux-live-int-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let dir = tracemux_testkit::fixtures().join("ctf/lttng-ust-uid/trace");
    for to in ["jsonl", "parquet", "ctf"] {
        let drained = Arc::new(AtomicBool::new(false));
        let script = relay::Script {
            endless: Some(drained.clone()),
            ..relay::Script::default()
        };
        let port = relay::serve(&dir, script);
        let (live, disk) = (
            tmp.join(format!("live.{to}")),
            tmp.join(format!("disk.{to}")),
        );
        let mut child = Command::new(env!("CARGO_BIN_EXE_tracemux"))
            .args(["convert", "-q", "--force", "--to", to, "-o"])
            .arg(&live)
            .arg(format!("net://127.0.0.1:{port}/host/testhost/s"))
            .env("TZ", "UTC")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while !drained.load(Ordering::SeqCst) && t0.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            drained.load(Ordering::SeqCst),
            "--to {to}: the relayd was not drained"
        );
        // still running: the session has not ended
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            child.try_wait().unwrap().is_none(),
            "--to {to}: ended by itself"
        );
        assert!(!live.exists(), "--to {to}: output in place before the end");
        interrupt(&child);
        let t1 = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t1.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                panic!("--to {to}: still running 10 s after SIGINT");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert!(status.success(), "--to {to}: {status}: {err}");
        let o = convert(dir.to_str().unwrap(), to, &disk);
        assert!(o.status.success());
        match to {
            "jsonl" => assert_eq!(std::fs::read(&live).unwrap(), std::fs::read(&disk).unwrap()),
            "ctf" => assert_eq!(text(&live), text(&disk)),
            _ => {
                let (a, b) = (files(&live), files(&disk));
                assert_eq!(a.len(), b.len());
                for ((p, x), (_, y)) in a.iter().zip(&b) {
                    if !p.ends_with("meta.json") {
                        assert!(x == y, "{}", p.display());
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// SIGINT to `child` (a process this test started), by its pid.
#[allow(unsafe_code)]
fn interrupt(child: &std::process::Child) {
    // SAFETY: kill(2) with a pid and a signal number; no memory is shared
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
}
