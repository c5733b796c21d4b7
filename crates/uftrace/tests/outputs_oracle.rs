//! The outputs with option variants (filters, depth, time filter, task
//! selection, sort keys, fields, other graph functions) against the real
//! `uftrace` run on the same fixture recordings. Runs only when
//! `UFTRACE_ORACLE=1` and `uftrace` (0.13) is installed; the fixed
//! reference outputs of `outputs.rs` are what `cargo test` checks by
//! default.
//!
//! ```sh
//! UFTRACE_ORACLE=1 cargo test -p tracemux-uftrace --test outputs_oracle -- --nocapture
//! ```
//!
//! `UFTRACE_ORACLE_SETS=recorded,corpus,kernel` limits the fixture sets.

use std::path::{Path, PathBuf};
use std::process::Command;

use tracemux_uftrace::chrome::ChromeOptions;
use tracemux_uftrace::dump::{dump, DumpOptions};
use tracemux_uftrace::flame::FlameOptions;
use tracemux_uftrace::graph::graphviz::GraphvizOptions;
use tracemux_uftrace::graph::{graph, GraphOptions};
use tracemux_uftrace::replay::{replay_data, ReplayOptions};
use tracemux_uftrace::report::walk::{WalkOptions, WalkView};
use tracemux_uftrace::report::{report, ReportOptions};
use tracemux_uftrace::{Demangle, OpenOptions, UftraceData};

fn recordings() -> Vec<PathBuf> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/uftrace");
    let mut v = Vec::new();
    // UFTRACE_ORACLE_SETS=kernel (comma-separated) picks fixture sets
    let only = std::env::var("UFTRACE_ORACLE_SETS").ok();
    for set in ["recorded", "corpus", "kernel"] {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|x| x == set))
        {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(base.join(set)) else {
            continue;
        };
        let mut d: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("uftrace.data"))
            .filter(|p| p.join("info").is_file())
            .collect();
        d.sort();
        v.extend(d);
    }
    v
}

/// The options a test case sets, as uftrace arguments and as ours.
#[derive(Clone, Default)]
struct Case {
    args: Vec<String>,
    walk: WalkOptions,
    sort: Option<String>,
    fields: Option<String>,
    avg_total: bool,
    avg_self: bool,
    task: bool,
    func: Option<String>,
    sample_time: Option<u64>,
    no_args: bool,
    demangle: Option<Demangle>,
}

fn case(args: &str, f: impl FnOnce(&mut Case)) -> Case {
    let mut c = Case {
        args: args.split_whitespace().map(String::from).collect(),
        ..Case::default()
    };
    f(&mut c);
    c
}

/// uftrace's stdout and whether it exited 0 (`None` inside: it crashed,
/// as its dump does on long double arguments; its output is then a prefix
/// of ours).
fn uftrace(dir: &Path, cmd: &str, c: &Case) -> Option<(Vec<u8>, Option<bool>)> {
    let out = Command::new("uftrace")
        .arg(cmd)
        .arg("-d")
        .arg(dir)
        .args(&c.args)
        .output()
        .ok()?;
    let crashed = matches!(out.status.code(), None | Some(134));
    Some((out.stdout, (!crashed).then_some(out.status.success())))
}

/// Our output and whether it succeeded.
fn ours(dir: &Path, cmd: &str, c: &Case) -> (Vec<u8>, bool) {
    let o = OpenOptions {
        demangle: c.demangle.unwrap_or(Demangle::Simple),
        strict: false,
    };
    let mut data = UftraceData::open(dir, o).expect("open");
    let mut out = Vec::new();
    let mut warn = Vec::new();
    let walk = c.walk.clone();
    let r = match cmd {
        "dump" if c.args.iter().any(|a| a == "--chrome") => {
            let opts = ChromeOptions {
                walk,
                show_args: !c.no_args,
                ..ChromeOptions::default()
            };
            opts.write_view(&mut data, &mut out, &mut warn)
        }
        "dump" if c.args.iter().any(|a| a == "--graphviz") => {
            let opts = GraphvizOptions {
                walk,
                ..GraphvizOptions::default()
            };
            opts.write_view(&mut data, &mut out, &mut warn)
        }
        "dump" if c.args.iter().any(|a| a == "--flame-graph") => {
            let opts = FlameOptions {
                walk,
                sample_time: c.sample_time,
            };
            opts.write_view(&mut data, &mut out, &mut warn)
        }
        "dump" => {
            let opts = DumpOptions {
                walk,
                show_args: !c.no_args,
            };
            dump(&mut data, &opts, &mut out, &mut warn)
        }
        "replay" => {
            let opts = ReplayOptions {
                walk,
                show_args: !c.no_args,
                ..ReplayOptions::default()
            };
            replay_data(&mut data, &opts, &mut out, &mut warn)
        }
        "report" => {
            let opts = ReportOptions {
                walk,
                sort: c.sort.clone(),
                fields: c.fields.clone(),
                avg_total: c.avg_total,
                avg_self: c.avg_self,
                task: c.task,
                threads: false,
            };
            report(&mut data, &opts, &mut out, &mut warn)
        }
        _ => {
            let opts = GraphOptions {
                walk,
                func: c.func.clone(),
                fields: c.fields.clone(),
            };
            graph(&mut data, &opts, &mut out, &mut warn)
        }
    };
    (out, r.is_ok())
}

/// The second task of a recording (the first when there is one only).
fn second_tid(dir: &Path) -> i32 {
    let o = OpenOptions::default();
    let d = UftraceData::open(dir, o).expect("open");
    d.tasks.get(1).or(d.tasks.first()).map_or(0, |t| t.tid)
}

/// Sets the walk options of a case.
type SetWalk = fn(&mut WalkOptions);

fn cases(tid: i32) -> Vec<(&'static str, Case)> {
    let w = |f: fn(&mut WalkOptions)| {
        let mut o = WalkOptions::default();
        f(&mut o);
        o
    };
    let mut v = Vec::new();
    for cmd in [
        "dump",
        "dump --chrome",
        "dump --flame-graph",
        "report",
        "graph",
    ] {
        let (c, extra) = cmd.split_once(' ').unwrap_or((cmd, ""));
        let x = |a: &str| format!("{extra} {a}");
        v.push((c, case(&x("--no-libcall"), |c| c.walk.no_libcall = true)));
        v.push((
            c,
            case(&x("-F main"), |c| c.walk.filter = Some("main".into())),
        ));
        v.push((
            c,
            case(&x("-N ^str"), |c| c.walk.filter = Some("!^str".into())),
        ));
        v.push((c, case(&x("-D 2"), |c| c.walk.depth = 2)));
        v.push((
            c,
            case(&x(&format!("--tid {tid}")), |c| {
                c.walk = WalkOptions {
                    tids: Some(vec![tid]),
                    ..w(|_| {})
                }
            }),
        ));
        v.push((c, case(&x("--no-event"), |c| c.walk.no_event = true)));
        if c != "dump" || !extra.is_empty() {
            v.push((c, case(&x("-t 2us"), |c| c.walk.time_filter = 2000)));
        }
    }
    v.push(("dump", case("--no-args", |c| c.no_args = true)));
    for (cmd, d) in [
        ("dump", "no"),
        ("dump --chrome", "full"),
        ("dump --flame-graph", "full"),
        ("report", "no"),
        ("report", "full"),
        ("graph", "no"),
        ("graph", "full"),
    ] {
        let (c, extra) = cmd.split_once(' ').unwrap_or((cmd, ""));
        v.push((
            c,
            case(&format!("{extra} --demangle={d}"), |c| {
                c.demangle = Demangle::parse(d)
            }),
        ));
    }
    v.push(("dump", case("--chrome --no-args", |c| c.no_args = true)));
    v.push((
        "dump",
        case("--flame-graph --sample-time 10us", |c| {
            c.sample_time = Some(10_000)
        }),
    ));
    for s in [
        "self",
        "func",
        "total,call",
        "self-avg",
        "total-max",
        "size",
    ] {
        v.push((
            "report",
            case(&format!("-s {s}"), |c| c.sort = Some(s.into())),
        ));
    }
    v.push(("report", case("--avg-total", |c| c.avg_total = true)));
    v.push((
        "report",
        case("--avg-self -s min", |c| {
            c.avg_self = true;
            c.sort = Some("min".into())
        }),
    ));
    for f in ["all", "total,size", "+self-max", "none"] {
        v.push((
            "report",
            case(&format!("-f {f}"), |c| c.fields = Some(f.into())),
        ));
    }
    for s in ["name", "tid", "func", "self"] {
        v.push((
            "report",
            case(&format!("--task -s {s}"), |c| {
                c.task = true;
                c.sort = Some(s.into())
            }),
        ));
    }
    v.push((
        "report",
        case("--task -f tid,func", |c| {
            c.task = true;
            c.fields = Some("tid,func".into())
        }),
    ));
    for f in [
        "worker",
        "fact",
        "leaf",
        "child",
        "qsort",
        "nosuchfunc",
        "by_value",
    ] {
        v.push(("graph", case(f, |c| c.func = Some(f.into()))));
    }
    for f in ["self", "addr,total", "+self,addr", "none"] {
        v.push((
            "graph",
            case(&format!("-f {f} main"), |c| {
                c.func = Some("main".into());
                c.fields = Some(f.into())
            }),
        ));
        v.push((
            "graph",
            case(&format!("-f {f}"), |c| c.fields = Some(f.into())),
        ));
    }
    // usage errors and filters that match nothing
    v.push(("report", case("-s foo", |c| c.sort = Some("foo".into()))));
    v.push(("report", case("-f foo", |c| c.fields = Some("foo".into()))));
    v.push((
        "report",
        case("--avg-total --avg-self", |c| {
            c.avg_total = true;
            c.avg_self = true
        }),
    ));
    v.push((
        "graph",
        case("-f foo main", |c| {
            c.func = Some("main".into());
            c.fields = Some("foo".into())
        }),
    ));
    for cmd in ["report", "graph", "dump"] {
        v.push((
            cmd,
            case("-F nosuchfunc", |c| {
                c.walk.filter = Some("nosuchfunc".into())
            }),
        ));
        v.push((
            cmd,
            case("-T nosuchfunc@depth=1", |c| {
                c.walk.trigger = Some("nosuchfunc@depth=1".into())
            }),
        ));
    }
    // filters and triggers together: uftrace installs no trigger after
    // filters that set nothing, and fails on triggers only when the
    // tables stay empty
    for cmd in ["replay", "report", "graph", "dump", "dump --chrome"] {
        let (c, extra) = cmd.split_once(' ').unwrap_or((cmd, ""));
        for (f, t) in [
            ("nosuchfunc", "main@depth=1"),
            ("main", "nosuchfunc@depth=1"),
            ("main", "main@depth=2"),
        ] {
            v.push((
                c,
                case(&format!("{extra} -F {f} -T {t}"), |c| {
                    c.walk.filter = Some(f.into());
                    c.walk.trigger = Some(t.into());
                }),
            ));
        }
    }
    // kernel data (`-k`): what shows kernel functions outside user
    // functions or only kernel records, alone and with other filters
    for cmd in [
        "replay",
        "report",
        "graph",
        "dump",
        "dump --chrome",
        "dump --flame-graph",
        "dump --graphviz",
    ] {
        let (c, extra) = cmd.split_once(' ').unwrap_or((cmd, ""));
        let kcases: [(&str, SetWalk); 7] = [
            ("--kernel-full", |w| w.kernel_full = true),
            ("--kernel-only", |w| w.kernel_only = true),
            ("--kernel-full --kernel-only", |w| {
                w.kernel_full = true;
                w.kernel_only = true
            }),
            ("--kernel-full -t 1us", |w| {
                w.kernel_full = true;
                w.time_filter = 1000
            }),
            ("--kernel-only -D 2", |w| {
                w.kernel_only = true;
                w.depth = 2
            }),
            ("--kernel-full -D 1", |w| {
                w.kernel_full = true;
                w.depth = 1
            }),
            ("-F dlclose", |w| w.filter = Some("dlclose".into())),
        ];
        for (a, f) in kcases {
            v.push((c, case(&format!("{extra} {a}"), |c| f(&mut c.walk))));
        }
    }
    v.push((
        "graph",
        // uftrace ignores the options after FUNC: they go first
        case("-D 3 main", |c| {
            c.func = Some("main".into());
            c.walk.depth = 3
        }),
    ));
    v
}

#[test]
fn against_uftrace() {
    if std::env::var_os("UFTRACE_ORACLE").is_none() {
        eprintln!("UFTRACE_ORACLE not set: skipped");
        return;
    }
    if Command::new("uftrace").arg("--version").output().is_err() {
        eprintln!("uftrace not installed: skipped");
        return;
    }
    let mut fails = Vec::new();
    let mut passes = 0;
    for dir in recordings() {
        let name = dir
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (cmd, c) in cases(second_tid(&dir)) {
            let Some((want, want_ok)) = uftrace(&dir, cmd, &c) else {
                continue;
            };
            let (got, got_ok) = ours(&dir, cmd, &c);
            let same = match want_ok {
                Some(ok) => got == want && got_ok == ok,
                None => got.starts_with(&want),
            };
            if same {
                passes += 1;
            } else {
                let g = String::from_utf8_lossy(&got);
                let w = String::from_utf8_lossy(&want);
                let line = g
                    .lines()
                    .zip(w.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(g.lines().count().min(w.lines().count()));
                fails.push(format!(
                    "{name}: uftrace {cmd} {} (ok {got_ok}/{want_ok:?}): line {}:\n  got:  {}\n  want: {}",
                    c.args.join(" "),
                    line + 1,
                    g.lines().nth(line).unwrap_or("<EOF>"),
                    w.lines().nth(line).unwrap_or("<EOF>")
                ));
            }
        }
    }
    eprintln!("oracle: {passes} passed, {} failed", fails.len());
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}
