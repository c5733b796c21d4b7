//! `tracemux report`'s command line as `trace-cmd report` reads it: the
//! order of `-i`, `-F`, `-v`, `--ts-offset` and `--ts2secs` (read back from
//! clap) made into a [`Plan`] (`tracemux_tracedat::report::plan` says what
//! trace-cmd makes of that order).

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use clap::{ArgMatches, Args, Command};

use tracemux_tracedat::report::{ArgItem, Plan, PlanOptions, ReportError};

use crate::report_args::ReportArgs;

/// The plan for `tracemux report`, from the arguments the command was run
/// with (`std::env::args_os()`): clap's values and the order of the
/// options.
pub fn plan_from_env(a: &ReportArgs) -> Result<Plan> {
    let argv: Vec<OsString> = std::env::args_os().skip(1).collect();
    plan_from_args(a, argv)
}

/// Like [`plan_from_env`] with `argv` starting at the subcommand name
/// (`report ...`).
pub fn plan_from_args(a: &ReportArgs, argv: Vec<OsString>) -> Result<Plan> {
    let cmd = ReportArgs::augment_args(Command::new("report"));
    let m = cmd
        .try_get_matches_from(argv)
        .map_err(|e| anyhow!("{}", e.to_string().trim_end()))?;
    let o = PlanOptions {
        no_irqs: a.no_irqs,
        no_softirqs: a.no_softirqs,
        ts_diff: a.ts_diff,
        nsecs: a.nsecs,
        pid: a.pid.clone(),
        comm: a.comm.clone(),
        cpu: a.cpu.clone(),
    };
    match Plan::new(arg_items(&m), &a.traces, &o) {
        Ok(p) => Ok(p),
        // several traces as arguments are one timeline when each is a
        // trace (see native.rs): one that is not is said, not dropped
        Err(ReportError::SeveralTraces(n)) => {
            for x in &a.traces[1..] {
                tracemux_open::sniff(x)?;
            }
            bail!(
                "{n} traces as arguments could not be read as one timeline (give trace-cmd's -i for each trace.dat to merge them as trace-cmd does)"
            );
        }
        Err(e) => Err(e.into()),
    }
}

/// The order-sensitive items of a parsed `report` command line.
pub fn arg_items(m: &ArgMatches) -> Vec<ArgItem> {
    let mut v: Vec<(usize, ArgItem)> = Vec::new();
    let mut take = |id: &str, f: &dyn Fn(String) -> ArgItem| {
        if let (Some(idx), Ok(Some(vals))) = (m.indices_of(id), m.try_get_raw(id)) {
            for (i, val) in idx.zip(vals) {
                v.push((i, f(val.to_string_lossy().into_owned())));
            }
        }
    };
    take("input", &|s| ArgItem::Input(PathBuf::from(s)));
    take("filter", &|s| ArgItem::Filter(s));
    take("ts_offset", &|s| ArgItem::TsOffset(s));
    take("ts2secs", &|s| ArgItem::Ts2secs(s));
    if m.get_flag("invert") {
        if let Some(i) = m.index_of("invert") {
            v.push((i, ArgItem::Invert));
        }
    }
    v.sort_by_key(|x| x.0);
    v.into_iter().map(|x| x.1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        a: ReportArgs,
    }

    fn plan(args: &[&str]) -> Result<Plan> {
        let mut argv: Vec<OsString> = vec!["report".into()];
        argv.extend(args.iter().map(OsString::from));
        let w = Wrap::try_parse_from(argv.clone())?;
        plan_from_args(&w.a, argv)
    }

    fn items(v: &[ArgItem], traces: &[&str]) -> Plan {
        let traces: Vec<PathBuf> = traces.iter().map(PathBuf::from).collect();
        Plan::new(v.to_vec(), &traces, &PlanOptions::default()).unwrap()
    }

    fn inp(s: &str) -> ArgItem {
        ArgItem::Input(s.into())
    }
    fn flt(s: &str) -> ArgItem {
        ArgItem::Filter(s.into())
    }

    #[test]
    fn filters_follow_trace_cmd_lists() {
        // a plain trace argument gets every -F
        let p = plan(&["-R", "-F", "a", "-v", "-F", "b", "t.dat"]).unwrap();
        assert_eq!(p.filters(0), vec![("a".into(), false), ("b".into(), true)]);
        // -i FILE -F: ignored
        let p = plan(&["-i", "t.dat", "-F", "a"]).unwrap();
        assert!(p.filters(0).is_empty());
        // -F -i FILE -F: both
        let p = plan(&["-F", "a", "-i", "t.dat", "-F", "b"]).unwrap();
        assert_eq!(p.filters(0).len(), 2);
        // several files: before the second -i for the first, after for the second
        let p = items(&[flt("a"), inp("x"), flt("b"), inp("y"), flt("c")], &[]);
        assert!(p.multi);
        assert_eq!(p.filters(0), vec![("a".into(), false), ("b".into(), false)]);
        assert_eq!(p.filters(1), vec![("c".into(), false)]);
        let p = items(&[inp("x"), inp("y"), flt("c")], &[]);
        assert!(p.filters(0).is_empty());
        assert_eq!(p.filters(1).len(), 1);
    }

    #[test]
    fn ts_options_follow_trace_cmd() {
        let ts = |s: &str| ArgItem::TsOffset(s.into());
        let hz = |s: &str| ArgItem::Ts2secs(s.into());
        let p = items(&[inp("x"), ts("5")], &[]);
        assert_eq!(p.inputs[0].ts_offset, 0);
        let p = items(&[inp("x"), ts("5"), inp("y"), ts("-7")], &[]);
        assert_eq!((p.inputs[0].ts_offset, p.inputs[1].ts_offset), (0, -7));
        let p = items(&[inp("x"), hz("100"), inp("y")], &[]);
        assert_eq!((p.ts2secs_of(0), p.ts2secs_of(1)), (100, 100));
        let p = items(&[inp("x"), inp("y"), hz("100")], &[]);
        assert_eq!((p.ts2secs_of(0), p.ts2secs_of(1)), (0, 100));
        let none = PlanOptions::default();
        assert!(Plan::new(vec![ts("5")], &[PathBuf::from("t")], &none).is_err());
        assert!(plan(&["--ts-offset", "-5", "-i", "t.dat"]).is_err());
        assert_eq!(
            plan(&["-i", "t.dat", "--ts-offset", "-5"]).unwrap().inputs[0].ts_offset,
            0
        );
    }

    #[test]
    fn pids_are_listed_like_trace_cmd() {
        let p = plan(&["--pid", "1,2", "--pid", "3", "t.dat"]).unwrap();
        assert_eq!(p.pids, vec!["3", "2", "1"]);
    }
}
