//! `tracemux` on legacy LTT traces: a trace made by the fixture writer
//! (big-endian, 32-bit, heartbeat) is recognised by content and printed by
//! `report` exactly as the LTT library prints it, with its events in time
//! order; `info` and `stats` summarise it. (The format itself is checked in
//! crates/ltt against the specification.)

use tracemux_ltt::report::{report_trace, ReportOptions};
use tracemux_ltt::writer::{Arg, TraceDesc};

fn trace_dir(name: &str) -> (std::path::PathBuf, tracemux_ltt::writer::Built) {
    let mut d = TraceDesc::default();
    d.endian = tracemux_core::Endian::Big;
    d.arch_size = 4;
    d.heartbeat = true;
    let fs = d.facility("fs");
    let open = d.event(fs, "open", "fd %d name %s");
    let kernel = d.facility("kernel");
    let irq = d.event(kernel, "irq_entry", "irq_id %u");
    for i in 0..50u64 {
        d.push(
            (i % 3) as u32,
            1_000 + i * 7_919,
            open,
            vec![Arg::I(i as i64), Arg::Str(format!("/f{i}").into_bytes())],
        );
        d.push((i % 2) as u32, 2_000 + i * 5_003, irq, vec![Arg::U(i)]);
    }
    let built = d.build().unwrap();
    let dir = std::env::temp_dir().join(format!("tracemux-cli-ltt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    built.write_dir(&dir).unwrap();
    (dir, built)
}

fn tracemux(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tracemux"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn report_info_stats() {
    let (dir, built) = trace_dir("report");
    let d = dir.to_str().unwrap();
    let t = built.open(true).unwrap();
    for flags in [&[][..], &["--clock-seconds", "--no-delta"][..]] {
        let mut want = Vec::new();
        let opts = ReportOptions {
            clock_seconds: !flags.is_empty(),
            no_delta: !flags.is_empty(),
            ..Default::default()
        };
        report_trace(&t, &opts, &mut want, &mut std::io::sink()).unwrap();
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
