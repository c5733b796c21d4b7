//! `convert net://...`: a fixture served by the test relayd
//! (`crates/ctf/tests/relay`) converts to what the fixture on disk
//! converts to.

#[path = "../../ctf/tests/relay/mod.rs"]
mod relay;

use std::process::Command;

fn convert(input: &str, to: &str, out: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tracemux"))
        .args(["convert", "-q", "--force", "--to", to, "-o"])
        .arg(out)
        .arg(input)
        .env("TZ", "UTC")
        .output()
        .unwrap()
}

#[test]
fn a_live_session_converts_as_its_trace() {
    let fixture = tracemux_testkit::fixtures().join("ctf/lttng-ust-uid/trace");
    let tmp = std::env::temp_dir().join(format!("tracemux-live-convert-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for to in ["jsonl", "perfetto"] {
        let script = relay::Script {
            beacons: true,
            metadata_pieces: 3,
            ..relay::Script::default()
        };
        let port = relay::serve(&fixture, script);
        let live = tmp.join(format!("live.{to}"));
        let disk = tmp.join(format!("disk.{to}"));
        let o = convert(
            &format!("net://127.0.0.1:{port}/host/testhost/s"),
            to,
            &live,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let o = convert(fixture.to_str().unwrap(), to, &disk);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let (a, b) = (std::fs::read(&live).unwrap(), std::fs::read(&disk).unwrap());
        assert!(!b.is_empty());
        assert!(a == b, "{to}: {}", tracemux_testkit::first_diff(&b, &a));
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
