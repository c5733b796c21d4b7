//! `tracemux report` of trace.dat files: trace-cmd report, which
//! `tracemux_tracedat::report` prints; here the files are mapped and the
//! text goes to stdout.

use anyhow::{bail, Result};

use crate::out::{Out, Outcome};
use crate::report_args::{ReportArgs, Style};
use tracemux_open::{map, sniff, Kind};
use tracemux_tracedat::report::{self, Input, ReportError, ReportOptions};

pub fn run(a: &ReportArgs) -> Result<Outcome> {
    // the order of -i, -F, -v, --ts-offset and --ts2secs matters (as in
    // trace-cmd): the plan replays it
    let plan = crate::select::plan_from_env(a)?;
    if plan.inputs.is_empty() {
        bail!("no trace file given");
    }
    for inp in &plan.inputs {
        match sniff(&inp.path)? {
            Kind::TraceDat => {}
            k => bail!(
                "{}: {} traces are not supported yet",
                inp.path.display(),
                k.name()
            ),
        }
    }
    let maps = plan
        .inputs
        .iter()
        .map(|x| map(&x.path))
        .collect::<Result<Vec<_>, _>>()?;
    let inputs: Vec<Input<'_>> = maps
        .iter()
        .zip(&plan.inputs)
        .map(|(m, x)| Input {
            path: &x.path,
            data: m,
            release: m,
        })
        .collect();
    let mut out = Out::new();
    let res = report::report(&plan, &inputs, &options(a), &mut out, &mut |w| {
        eprintln!("tracemux: {w}")
    });
    match res {
        Ok(s) => {
            if let Some(code) = s.exit_code {
                std::process::exit(code);
            }
            Ok(Outcome::damaged_if(s.damaged))
        }
        // a write error as it is (a closed pipe ends quietly, see out::finish)
        Err(ReportError::Io(e)) => Err(e.into()),
        Err(e) => Err(e.into()),
    }
}

fn options(a: &ReportArgs) -> ReportOptions {
    ReportOptions {
        raw: a.raw,
        nsecs: a.nsecs,
        latency: a.latency,
        json: a.json,
        style: match a.style {
            None | Some(Style::TraceCmd) => report::Style::TraceCmd,
            Some(Style::Babeltrace) => report::Style::Babeltrace,
            Some(Style::Json) => report::Style::Json,
        },
        stat: a.stat,
        cpus: a.cpus,
        first_event: a.first_event,
        last_event: a.last_event,
        uname: a.uname,
        tracer_version: a.tracer_version,
        nodate: a.nodate,
        raw_ts: a.raw_ts,
        strict: a.strict,
        event_list: a.event_list,
        events: a.events,
        printk: a.printk,
        funcs: a.funcs,
        check_events: a.check_events,
        threads: crate::knobs::threads(),
        batch_events: crate::knobs::batch_events(),
    }
}
