//! Several traces of any formats on one command line (`tracemux report
//! kernel.dat lttng/ uftrace.data`): one timeline, merged by time, each
//! input placed on the first input's clock (`tracemux_open::timeline`).
//! `report` prints it through the model's printers, `stats` counts it,
//! `info` says how each input was placed.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use tracemux_core::model::Record;
use tracemux_core::timeline::{describe, input_of_stream};

use crate::model::{print_model, ModelStyle};
use crate::out::{warn, Out, Outcome};

/// How the inputs are put on one clock, and examples: the end of each
/// timeline subcommand's `--help`.
const TIMELINE_HELP: &str = "\
Several traces on one command line (trace.dat, CTF, uftrace, LTT, perf.data, in any mix) are one
timeline on the first one's clock. Each other input is placed by the first rule that applies:
  1. same clock: both files say the same system clock (trace.dat `-C mono`, LTTng's and uftrace's
     CLOCK_MONOTONIC, perf `-k mono`...; mono_raw, boot, tai likewise): exact, the offsets the files
     state (a CTF clock's offset to the epoch) taken out;
  2. estimated from events both see, against a kernel trace with sched_switch: uftrace's own
     sched-out (then sched-in) records against the kernel's switches of the same threads, else the
     offset that puts the most of each thread's events inside the intervals where the kernel ran it;
     `info` prints the offset, the pairs it came from and their spread;
  3. --clock-offset INPUT=NS, which overrides both.
Otherwise the inputs are refused, naming --clock-offset: never a silent guess.

Examples:
  tracemux report kernel.dat lttng-trace/ uftrace.data/            JSON lines, each with its input
  tracemux info kernel.dat lttng-trace/ uftrace.data/              how each input was placed
  tracemux report --style babeltrace kernel.dat uftrace.data/
  tracemux report a.dat b.dat --clock-offset b.dat=-30580000        b.dat's events 30.58 ms earlier
  tracemux convert kernel.dat lttng-trace/ uftrace.data/ --to perfetto -o all.pftrace";

/// Several traces (of any formats) as one timeline.
#[derive(Parser, Debug)]
#[command(name = "tracemux")]
pub struct TimelineCli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Every event of every input, merged by time: JSON lines (each with
    /// its `input`) or another tool's style.
    #[command(after_help = TIMELINE_HELP)]
    Report(ReportArgs),
    /// How each input's clock was read and placed on the timeline, and
    /// its counts.
    #[command(after_help = TIMELINE_HELP)]
    Info(CommonArgs),
    /// Counts per input and event.
    #[command(after_help = TIMELINE_HELP)]
    Stats(CommonArgs),
}

#[derive(Args, Debug)]
struct CommonArgs {
    /// The traces (any formats); the first one's clock is the timeline's.
    #[arg(required = true, num_args = 1..)]
    inputs: Vec<PathBuf>,
    /// Put INPUT (its path as given here) on the first input's clock by
    /// adding NS nanoseconds (may be negative) to its timestamps, instead
    /// of what the clocks say or what is estimated; `info` prints each
    /// input's shift. Repeatable.
    #[arg(long = "clock-offset", value_name = "INPUT=NS", value_parser = crate::report_args::clock_offset)]
    clock_offsets: Vec<(String, i64)>,
    /// Stop at the first damage instead of reporting it.
    #[arg(long)]
    strict: bool,
}

#[derive(Args, Debug)]
struct ReportArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// JSON lines (the default for several inputs).
    #[arg(long)]
    json: bool,
    /// The style of the lines: json, babeltrace (babeltrace2's text) or
    /// trace-cmd (trace-cmd report's layout).
    #[arg(long, value_enum)]
    style: Option<crate::report_args::Style>,
}

pub fn run(c: TimelineCli) -> Result<Outcome> {
    match c.cmd {
        Cmd::Report(a) => report(&a),
        Cmd::Info(a) => info(&a),
        Cmd::Stats(a) => stats(&a),
    }
}

fn with_timeline(
    a: &CommonArgs,
    f: impl FnOnce(&mut dyn tracemux_core::model::RecordSource) -> Result<Outcome>,
) -> Result<Outcome> {
    let note = |m: &str| eprintln!("tracemux: warning: {m}");
    let opts = tracemux_open::OpenOptions {
        strict: a.strict,
        on_note: Some(&note),
        clock_offsets: &a.clock_offsets,
        ..Default::default()
    };
    tracemux_open::with_source(&a.inputs, &opts, f)
}

fn report(a: &ReportArgs) -> Result<Outcome> {
    use crate::report_args::Style;
    let style = match (a.json, a.style) {
        (_, Some(Style::Babeltrace)) => ModelStyle::Babeltrace,
        (_, Some(Style::TraceCmd)) => ModelStyle::TraceCmd,
        _ => ModelStyle::Json,
    };
    let first = a.common.inputs[0].clone();
    with_timeline(&a.common, |src| {
        print_model(src, style, &first, a.common.strict)
    })
}

/// Per input: events, lost markers, damage, first and last time; per
/// class: events.
#[derive(Default)]
struct Counts {
    events: u64,
    lost: u64,
    first: Option<u64>,
    last: Option<u64>,
    classes: BTreeMap<String, u64>,
}

fn count(
    a: &CommonArgs,
    f: impl FnOnce(&tracemux_core::model::TraceMeta, &[Counts], u64) -> Result<()>,
) -> Result<Outcome> {
    let first = a.inputs[0].clone();
    with_timeline(a, |src| {
        let meta = src.meta().clone();
        let n = meta.inputs.len().max(1);
        let mut counts: Vec<Counts> = (0..n).map(|_| Counts::default()).collect();
        let mut damage = 0u64;
        let mut outcome = Outcome::Ok;
        while let Some(r) = src.next_record()? {
            match r {
                Record::Event(ev) => {
                    let i = input_of_stream(&meta, ev.stream).unwrap_or(0);
                    let c = &mut counts[i];
                    c.events += 1;
                    c.first.get_or_insert(ev.ts);
                    c.last = Some(ev.ts);
                    let name = ev.class.map_or_else(
                        || format!("type {}", ev.type_id),
                        |c| format!("{}:{}", c.system, c.name),
                    );
                    *c.classes.entry(name).or_default() += 1;
                }
                Record::Lost(l) => {
                    let i = input_of_stream(&meta, l.stream).unwrap_or(0);
                    counts[i].lost += l.count.unwrap_or(1);
                }
                Record::Damage(e) => {
                    if a.strict {
                        anyhow::bail!("{}: {}", first.display(), e);
                    }
                    warn(&first, &e);
                    damage += 1;
                    outcome = Outcome::Damaged;
                }
            }
        }
        f(&meta, &counts, damage)?;
        Ok(outcome)
    })
}

fn stats(a: &CommonArgs) -> Result<Outcome> {
    count(a, |meta, counts, damage| {
        let mut out = Out::new();
        for (i, c) in counts.iter().enumerate() {
            let name = meta.inputs.get(i).map_or("", |x| x.name.as_str());
            out.buf().extend_from_slice(
                format!(
                    "Input {name}\n  events {}\n  lost events {}\n",
                    c.events, c.lost
                )
                .as_bytes(),
            );
            out.buf().extend_from_slice(b"        events  event\n");
            for (k, v) in &c.classes {
                out.buf()
                    .extend_from_slice(format!("  {v:>12}  {k}\n").as_bytes());
            }
        }
        if damage > 0 {
            out.buf()
                .extend_from_slice(format!("damaged regions {damage}\n").as_bytes());
        }
        out.flush()?;
        Ok(())
    })
}

/// ns as seconds with nine digits, signed.
fn secs(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

fn info(a: &CommonArgs) -> Result<Outcome> {
    count(a, |meta, counts, damage| {
        let mut s = String::new();
        s.push_str(&format!(
            "Timeline of {} inputs, on the clock of {}\n",
            meta.inputs.len(),
            meta.inputs.first().map_or("", |i| i.name.as_str())
        ));
        for (i, inp) in meta.inputs.iter().enumerate() {
            let c = &counts[i];
            s.push_str(&format!("\nInput {i}: {}\n", inp.name));
            s.push_str(&format!(
                "  format                {}\n",
                inp.format
                    .map_or("unknown".to_string(), |f| f.describe(None))
            ));
            s.push_str(&format!(
                "  clock                 {} ({}{})\n",
                inp.clock.clock,
                inp.clock.source,
                inp.clock
                    .host
                    .as_deref()
                    .map_or(String::new(), |h| format!(", host {h}"))
            ));
            s.push_str(&format!(
                "  shift                 {} ns ({} s)\n",
                inp.shift_ns,
                secs(inp.shift_ns)
            ));
            let how = describe(&meta.inputs, i);
            s.push_str(&format!("  placed                {how}\n"));
            s.push_str(&format!("  events                {}\n", c.events));
            s.push_str(&format!("  lost events           {}\n", c.lost));
            if let (Some(f), Some(l)) = (c.first, c.last) {
                s.push_str(&format!(
                    "  first, last           {} {}\n",
                    secs(f as i64),
                    secs(l as i64)
                ));
            }
        }
        if damage > 0 {
            s.push_str(&format!("\ndamaged regions {damage}\n"));
        }
        let mut out = Out::new();
        out.buf().extend_from_slice(s.as_bytes());
        out.flush()?;
        Ok(())
    })
}
