//! `report --style babeltrace` on a trace.dat: no tool prints trace.dat
//! that way, so the lines are checked against trace-cmd's own report of
//! the same file: same events, same order, same times (trace-cmd rounds to
//! microseconds) and names, and field values as `report -R` decodes them.

mod common;

/// `HH:MM:SS.nnnnnnnnn` -> ns
fn tod_ns(s: &str) -> u64 {
    let (hms, frac) = s.split_once('.').unwrap();
    let p: Vec<u64> = hms.split(':').map(|x| x.parse().unwrap()).collect();
    (p[0] * 3600 + p[1] * 60 + p[2]) * 1_000_000_000 + frac.parse::<u64>().unwrap()
}

#[test]
fn babeltrace_style_agrees_with_trace_cmd() {
    let dir = common::repo_root().join("tests/fixtures/tracedat/v7-syscalls");
    let want = common::reference(&dir, "report-R").unwrap();
    let want = String::from_utf8_lossy(&want);
    let out = common::tracemux(&["report", "--style", "babeltrace", "trace.dat"], &dir);
    assert!(out.status.success());
    let got = String::from_utf8(out.stdout).unwrap();
    let want: Vec<&str> = want.lines().skip(1).collect();
    let got: Vec<&str> = got.lines().collect();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        // trace-cmd: `comm-pid [cpu] secs.usecs: name: fields`
        let (head, rest) = w.split_once("]").unwrap();
        let cpu: u32 = head.rsplit('[').next().unwrap().parse().unwrap();
        let (ts, rest) = rest.trim_start().split_once(": ").unwrap();
        let (s, us) = ts.split_once('.').unwrap();
        let us: u64 = s.parse::<u64>().unwrap() * 1_000_000 + us.parse::<u64>().unwrap();
        let (name, fields) = rest.split_once(':').unwrap();
        // babeltrace style: `[tod] (+d) system:name: { cpu_id = N }, { ... }`
        let tod = &g[1..g.find(']').unwrap()];
        assert_eq!(
            (tod_ns(tod) + 500) / 1000 % 86_400_000_000,
            us % 86_400_000_000,
            "{g}\n{w}"
        );
        let ev = g.split(") ").nth(1).unwrap();
        let (gname, grest) = ev.split_once(": ").unwrap();
        assert_eq!(gname.rsplit(':').next().unwrap(), name.trim(), "{g}\n{w}");
        assert!(grest.starts_with(&format!("{{ cpu_id = {cpu} }}")), "{g}");
        // decimal fields of -R (`name=123`) appear with the same value
        for f in fields.split_whitespace() {
            if let Some((k, v)) = f.split_once('=') {
                if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
                    assert!(grest.contains(&format!(" {k} = {v}")), "{k}={v}\n{g}\n{w}");
                }
            }
        }
    }
}
