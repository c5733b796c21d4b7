//! `tracemux` on legacy LTT traces: a trace made by the fixture writer
//! (big-endian, 32-bit, heartbeat) is recognised by content and printed by
//! `report` exactly as the LTT library prints it, with its events in time
//! order; `info` and `stats` summarise it. (The format itself is checked in
//! crates/ltt against the specification.)

mod common;

use tracemux_ltt::report::ReportOptions;

/// `tracemux` in the environment of the test (its time zone: the library
/// report it is compared with runs here).
fn tracemux(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tracemux"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn report_info_stats() {
    let dir = common::ltt_trace("cli");
    let d = dir.to_str().unwrap();
    for flags in [&[][..], &["--clock-seconds", "--no-delta"][..]] {
        let mut want = Vec::new();
        let opts = ReportOptions {
            clock_seconds: !flags.is_empty(),
            no_delta: !flags.is_empty(),
            ..Default::default()
        };
        tracemux_ltt::report(&dir, &opts, &mut want, &mut std::io::sink()).unwrap();
        let mut args = vec!["report"];
        args.extend_from_slice(flags);
        args.push(d);
        let out = tracemux(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&want)
        );
        // 100 events + the core facility's marker events, in time order
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.lines().filter(|l| l.contains(" fs:open: ")).count() == 50);
        let times: Vec<&str> = text.lines().map(|l| &l[1..l.find(']').unwrap()]).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "not in time order");
    }
    for sub in ["info", "stats"] {
        let out = tracemux(&[sub, d]);
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("byte order: big-endian"), "{text}");
        assert!(text.contains("fs:open"), "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
