//! `trace-cmd report` 3.1.6 on trace.dat files: what it prints, from the
//! options it takes (tracemux's `report` is its front end; the command
//! line is parsed there, into a [`Plan`] and [`ReportOptions`]).
//!
//! - [`plan`]: what the options say before any file is opened (the order
//!   of `-i`, `-F`, `-v`, `--ts-offset`, `--ts2secs`);
//! - [`select`]: which events are shown and how their lines are decorated;
//! - [`parallel`]: one trace printed on several threads, the same bytes;
//! - here: the views (`--cpus`, `--first-event`, `--stat`, the listings of
//!   [`crate::listing`], the events in trace-cmd's, babeltrace2's or the
//!   JSON lines style) and the loop that merges the files by time.

pub mod parallel;
pub mod plan;
pub mod select;

use std::path::{Path, PathBuf};

use tracemux_core::merge::Merge;
use tracemux_core::model::{Lost, Record, RecordSource, TraceMeta};
use tracemux_core::text::{Release, Releaser, Text, TextOut};
use tracemux_render::tracecmd::{TimeFormat, TraceCmdPrinter};

use crate::reader::{ReadOptions, Reader};
use crate::tracecmd::{tracecmd_cpus, tracecmd_usecs};
use crate::{listing, DataKind, OptionId, TraceDat};
pub use plan::{ArgItem, InputPlan, Plan, PlanOptions};
pub use select::Selection;

/// Why `report` stopped.
#[derive(Debug)]
pub enum ReportError {
    /// The options cannot be followed (trace-cmd's message, or ours).
    Usage(String),
    /// Several traces as plain arguments: they are not trace.dat files to
    /// merge (the caller says what they are).
    SeveralTraces(usize),
    /// A trace cannot be read (or, strict, is damaged).
    Trace {
        path: PathBuf,
        source: tracemux_core::Error,
    },
    /// Writing the text failed (a closed pipe among others).
    Io(std::io::Error),
    /// A part of the report failed that should not (a printing thread
    /// stopped): a bug.
    Internal(String),
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportError::Usage(m) | ReportError::Internal(m) => f.write_str(m),
            ReportError::SeveralTraces(n) => write!(f, "{n} traces given as arguments"),
            ReportError::Trace { path, .. } => write!(f, "{}", path.display()),
            ReportError::Io(_) => f.write_str("writing the report"),
        }
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReportError::Trace { source, .. } => Some(source),
            ReportError::Io(e) => Some(e),
            ReportError::Usage(_) | ReportError::SeveralTraces(_) | ReportError::Internal(_) => {
                None
            }
        }
    }
}

impl From<std::io::Error> for ReportError {
    fn from(e: std::io::Error) -> Self {
        ReportError::Io(e)
    }
}

pub(crate) fn usage(m: impl Into<String>) -> ReportError {
    ReportError::Usage(m.into())
}

fn trace_error(path: &Path, source: tracemux_core::Error) -> ReportError {
    ReportError::Trace {
        path: path.to_path_buf(),
        source,
    }
}

/// The style the events are printed in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    #[default]
    TraceCmd,
    Babeltrace,
    Json,
}

/// The options of `report` beyond the [`Plan`] (trace-cmd's letters in
/// the comments).
#[derive(Clone, Debug, Default)]
pub struct ReportOptions {
    /// `-R`
    pub raw: bool,
    /// `-t`
    pub nsecs: bool,
    /// `-l`
    pub latency: bool,
    /// JSON lines (`--json`; also `style` Json).
    pub json: bool,
    pub style: Style,
    /// `--stat`, `--cpus`, `--first-event`, `--last-event`, `-V`
    /// (`--uname`), `--version` of the tracer
    pub stat: bool,
    pub cpus: bool,
    pub first_event: bool,
    pub last_event: bool,
    pub uname: bool,
    pub tracer_version: bool,
    /// `--nodate`, `--raw-ts`
    pub nodate: bool,
    pub raw_ts: bool,
    /// Damage is an error.
    pub strict: bool,
    /// The listings: `-E`, `--events`, `-P`, `-f`, `--check-events`.
    pub event_list: bool,
    pub events: bool,
    pub printk: bool,
    pub funcs: bool,
    pub check_events: bool,
    /// Threads to print on (1: the calling thread only) and events per
    /// batch handed to them.
    pub threads: usize,
    pub batch_events: usize,
}

impl ReportOptions {
    /// JSON lines output (`--json` or the Json style).
    pub fn wants_json(&self) -> bool {
        self.json || self.style == Style::Json
    }
}

/// One trace.dat to report: its path (for messages), its bytes and where
/// the bytes read can be given back.
pub struct Input<'a> {
    pub path: &'a Path,
    pub data: &'a [u8],
    pub release: &'a dyn Release,
}

/// What a report found.
#[derive(Debug, Default)]
pub struct Summary {
    /// Damage was reported (lenient mode).
    pub damaged: bool,
    /// `--check-events` found a format it cannot read: the exit code
    /// trace-cmd ends with (22).
    pub exit_code: Option<i32>,
}

/// `trace-cmd report` of `inputs` (in `plan.inputs` order) into `out`.
/// `warn` gets each warning trace-cmd would print on stderr (damage as
/// "PATH: what"), after the text before it has been handed to `out`.
pub fn report(
    plan: &Plan,
    inputs: &[Input<'_>],
    a: &ReportOptions,
    out: &mut dyn TextOut,
    warn: &mut dyn FnMut(&str),
) -> Result<Summary, ReportError> {
    let mut tds = Vec::with_capacity(inputs.len());
    for x in inputs {
        let t = TraceDat::parse(x.data, a.strict).map_err(|e| trace_error(x.path, e))?;
        select::check_multi_latency(plan, &t, x.path)?;
        tds.push(t);
    }
    let Some(t) = tds.first() else {
        return Err(usage("no trace file given"));
    };
    let path = inputs[0].path;
    let mut out = Text::new(out);
    let damage_of = |t: &TraceDat<'_>, warn: &mut dyn FnMut(&str)| {
        for e in &t.damage {
            warn(&format!("{}: {}", path.display(), e));
        }
        Summary {
            damaged: !t.damage.is_empty(),
            exit_code: None,
        }
    };
    let cpus = tracecmd_cpus(t);
    if t.kind == DataKind::Latency && !(a.cpus || a.first_event || a.last_event || a.wants_json()) {
        // A latency trace is text: trace-cmd prints it whatever the mode.
        let o = out.buf();
        o.extend_from_slice(format!("cpus={cpus}\n").as_bytes());
        let text: &[u8] = t.latency_text.as_deref().unwrap_or(&[]);
        // trace-cmd 3.1.6 reads a v6 latency file with a TRACECLOCK option
        // as if a clock trailer (u64 size + text) came first, and so loses
        // the first 8 bytes of the text; we print what it prints.
        let quirk = t.version == 6 && t.options_with(OptionId::TRACECLOCK).next().is_some();
        o.extend_from_slice(if quirk {
            text.get(8..).unwrap_or(&[])
        } else {
            text
        });
        o.push(b'\n');
        out.flush()?;
        return Ok(damage_of(t, warn));
    }
    if a.tracer_version || a.uname || a.stat {
        let o = out.buf();
        o.extend_from_slice(format!("cpus={cpus}\n").as_bytes());
        let option = |o: &mut Vec<u8>, id: OptionId, what: &str| match t.option_text(id) {
            Some(v) => o.extend_from_slice(format!("{v}\n").as_bytes()),
            None => {
                o.extend_from_slice(format!(" {what} was not recorded in this file\n").as_bytes())
            }
        };
        if a.tracer_version {
            option(o, OptionId::VERSION, "version");
        } else if a.uname {
            option(o, OptionId::UNAME, "uname");
            option(o, OptionId::VERSION, "version");
        } else {
            listing::write_stat(o, t);
        }
        out.flush()?;
        return Ok(damage_of(t, warn));
    }
    // listings of stored metadata (first file), in trace-cmd's priority
    if a.events {
        listing::write_event_formats(out.buf(), t);
        out.flush()?;
        return Ok(Summary::default());
    }
    if a.check_events {
        out.flush()?;
        let code = listing::check_events(t);
        return Ok(Summary {
            damaged: false,
            exit_code: (code != 0).then_some(code as i32),
        });
    }
    let opts = ReadOptions {
        strict: a.strict,
        raw_ts: a.raw_ts,
        no_date: a.nodate,
        ts_offset: 0,
        no_symbols: false,
    };
    let mut readers = Vec::with_capacity(tds.len());
    for (i, td) in tds.iter().enumerate() {
        let r = Reader::with_time_calc(
            td,
            &plan.read_options(i, &opts),
            plan.time_calc(i, td, &opts),
        )
        .map_err(|e| trace_error(&plan.inputs[i].path, e))?;
        readers.push(r);
    }
    let metas: Vec<TraceMeta> = readers.iter().map(|r| r.meta().clone()).collect();
    if a.funcs || a.printk || a.event_list {
        let o = out.buf();
        if a.funcs {
            listing::write_funcs(o, &metas[0]);
        } else if a.printk {
            listing::write_printk(o, t);
        } else {
            listing::write_event_list(o, t);
        }
        out.flush()?;
        return Ok(Summary::default());
    }
    let time_of = |td: &TraceDat<'_>| {
        if a.raw_ts || !tracecmd_usecs(td) {
            TimeFormat::Raw
        } else if a.nsecs {
            TimeFormat::Nsecs
        } else {
            TimeFormat::Usecs
        }
    };
    if a.cpus || a.first_event || a.last_event {
        let mut reader = readers.swap_remove(0);
        return report_cpus(path, &mut reader, &mut out, time_of(t), a, warn);
    }
    // Invalid filters are reported before anything is printed.
    let pairs: Vec<(&TraceDat<'_>, &TraceMeta)> = tds.iter().zip(metas.iter()).collect();
    let (mut sel, warnings) = Selection::new(plan, &pairs)?;
    for w in warnings {
        warn(&w);
    }
    // With several files the selection prints the per-file/instance prefix;
    // the printers then print none of their own.
    let own_prefix = !sel.has_prefix();
    let plain: Option<Vec<TraceMeta>> = (!own_prefix).then(|| {
        metas
            .iter()
            .map(|m| {
                let mut m = m.clone();
                m.buffers.iter_mut().for_each(|b| b.name.clear());
                m
            })
            .collect()
    });
    let plain: &[TraceMeta] = plain.as_deref().unwrap_or(&metas);
    let mut printers: Vec<TraceCmdPrinter> = tds
        .iter()
        .zip(plain.iter())
        .map(|(td, m)| {
            let mut p = TraceCmdPrinter::new(m, time_of(td));
            if a.latency {
                p.set_latency(m, true);
            }
            p
        })
        .collect();
    let trace_cmd_style = !a.wants_json() && a.style == Style::TraceCmd;
    if trace_cmd_style {
        for (i, td) in tds.iter().enumerate() {
            sel.cpus_line(out.buf(), i, tracecmd_cpus(td));
        }
    }
    // classes whose printer looks at the next record (function graph)
    let lookahead: Vec<Vec<bool>> = metas.iter().map(looks_ahead).collect();
    // one file in a trace-cmd view whose lines depend on the lines before
    // only through the comm column: printed on several threads
    if a.threads > 1 && tds.len() == 1 && own_prefix && !plan.ts_diff && trace_cmd_style {
        let view = parallel::View {
            time: time_of(t),
            raw: a.raw,
            latency: a.latency,
            endian: t.endian,
        };
        // classes printed in order: those that look ahead or carry state
        let serial: Vec<bool> = (0..lookahead[0].len().max(1 << 16))
            .map(|id| {
                metas[0]
                    .classes
                    .get(id as u32)
                    .and_then(|c| c.printer.as_ref())
                    .is_some_and(|p| p.wants_next() || p.stateful())
            })
            .collect();
        let mut reader = readers.swap_remove(0);
        let damaged = parallel::report(
            &parallel::Job {
                path,
                release: inputs[0].release,
                meta: &metas[0],
                view,
                serial: &serial,
                threads: a.threads,
                batch_events: a.batch_events,
            },
            &mut reader,
            &mut out,
            &mut |m, ev| sel.keep(0, m, ev),
            warn,
        )?;
        return Ok(Summary {
            damaged,
            exit_code: None,
        });
    }
    let mut jsons: Vec<tracemux_render::jsonl::JsonWriter> =
        metas.iter().map(|_| Default::default()).collect();
    let mut babeltrace =
        (a.style == Style::Babeltrace).then(tracemux_render::babeltrace::BabeltracePrinter::new);
    let mut damaged = false;
    let mut releasers: Vec<Releaser> = (0..tds.len()).map(|_| Releaser::default()).collect();
    let mut merge = Merge::new(readers);
    let mut n: u64 = 0;
    let mut pending: Option<Lost> = None;
    // an event whose printer looks at the next record, copied out of the reader
    let mut held: Vec<u8> = Vec::new();
    let mut diff: Vec<u8> = Vec::new();
    loop {
        n += 1;
        if n % 65536 == 0 {
            for (i, r) in merge.sources().iter().enumerate() {
                releasers[i].release(inputs[i].release, &r.consumed());
            }
        }
        let (i, rec) = match merge.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                out.flush()?;
                return Err(trace_error(path, e));
            }
        };
        let meta = &plain[i];
        match rec {
            Record::Event(ev) => {
                // trace-cmd prints a loss marker only with the event after it
                let lost = pending.take();
                if !sel.keep(i, &metas[i], &ev) {
                    continue;
                }
                if let Some(bt) = babeltrace.as_mut() {
                    if let Some(l) = lost {
                        bt.write_lost(out.buf(), &l);
                    }
                    bt.write_event(out.buf(), &metas[i], &ev);
                    out.maybe_flush()?;
                    continue;
                }
                if a.wants_json() {
                    if let Some(l) = lost {
                        tracemux_render::jsonl::write_lost(out.buf(), &metas[i], &l);
                    }
                    jsons[i].event(out.buf(), &metas[i], &ev);
                    out.maybe_flush()?;
                    continue;
                }
                sel.prefix(out.buf(), i, &metas[i], ev.stream);
                if let Some(l) = lost {
                    printers[i].write_lost(out.buf(), meta, &l);
                }
                let (ts, stream, type_id) = (ev.ts, ev.stream, ev.type_id);
                if a.raw {
                    printers[i].write_raw(out.buf(), meta, &ev, ev.ext);
                } else if !lookahead[i].get(type_id as usize).copied().unwrap_or(false) {
                    printers[i].write_pretty(out.buf(), meta, &ev, None);
                } else {
                    // (function graph entries: trace-cmd looks at the next
                    // record of the buffer to print leaf functions on one line)
                    held.clear();
                    let keep = ev.ext.len().min(ev.data.len() + 256);
                    held.extend_from_slice(&ev.ext[..keep]);
                    let len = ev.data.len();
                    let copy = tracemux_core::model::Event {
                        class: metas[i].classes.get(type_id),
                        data: &held[..len],
                        ext: &held,
                        tape: None,
                        raw_ts: None,
                        ..ev
                    };
                    let src = &mut merge.sources_mut()[i];
                    let next = src.peek_same_buffer(stream);
                    if printers[i].write_pretty(out.buf(), meta, &copy, next) {
                        src.consume_peeked();
                    }
                }
                if plan.ts_diff {
                    diff.clear();
                    sel.write_ts_diff(&mut diff, i, ts);
                    let at = printers[i].time_end.min(out.buf().len());
                    out.buf().splice(at..at, diff.iter().copied());
                }
            }
            Record::Lost(l) => {
                pending = Some(l);
            }
            Record::Damage(e) => {
                out.flush()?;
                warn(&format!("{}: {}", plan.inputs[i].path.display(), e));
                damaged = true;
            }
        }
        out.maybe_flush()?;
    }
    out.flush()?;
    Ok(Summary {
        damaged,
        exit_code: None,
    })
}

/// Per type id: whether the class's printer looks at the next record.
fn looks_ahead(meta: &TraceMeta) -> Vec<bool> {
    let mut v: Vec<bool> = Vec::new();
    for c in meta.classes.iter() {
        let id = c.id as usize;
        let wants = meta
            .classes
            .get(c.id)
            .and_then(|c| c.printer.as_ref())
            .is_some_and(|p| p.wants_next());
        if wants && id < 1 << 20 {
            if v.len() <= id {
                v.resize(id + 1, false);
            }
            v[id] = true;
        }
    }
    v
}

/// `--cpus`, `--first-event`, `--last-event`: the CPUs of the top buffer
/// with events, and their first and last times.
fn report_cpus(
    path: &Path,
    reader: &mut Reader<'_>,
    out: &mut Text<'_>,
    time: TimeFormat,
    a: &ReportOptions,
    warn: &mut dyn FnMut(&str),
) -> Result<Summary, ReportError> {
    let meta = reader.meta().clone();
    let ncpu = meta
        .cpus
        .max(meta.streams.iter().map(|s| s.cpu + 1).max().unwrap_or(0)) as usize;
    let mut first: Vec<Option<u64>> = vec![None; ncpu];
    let mut last: Vec<Option<u64>> = vec![None; ncpu];
    let mut damaged = false;
    loop {
        match reader.next_record() {
            Ok(Some(Record::Event(ev))) => {
                // top buffer only
                let top = meta
                    .streams
                    .get(ev.stream as usize)
                    .and_then(|s| meta.buffers.get(s.buffer as usize))
                    .is_some_and(|b| b.name.is_empty());
                if top && (ev.cpu as usize) < ncpu {
                    let c = ev.cpu as usize;
                    first[c].get_or_insert(ev.ts);
                    last[c] = Some(ev.ts);
                }
            }
            Ok(Some(Record::Lost(_))) => {}
            Ok(Some(Record::Damage(e))) => {
                warn(&format!("{}: {}", path.display(), e));
                damaged = true;
            }
            Ok(None) => break,
            Err(e) => return Err(trace_error(path, e)),
        }
    }
    let p = TraceCmdPrinter::new(&meta, time);
    let o = out.buf();
    o.extend_from_slice(format!("List of CPUs in {} with data:\n", path.display()).as_bytes());
    for c in 0..ncpu {
        let Some(f) = first[c] else { continue };
        o.extend_from_slice(format!("  {c}").as_bytes());
        let ts = |o: &mut Vec<u8>, label: &[u8], v: u64| {
            o.extend_from_slice(label);
            let mut tmp = Vec::new();
            p.write_time(&mut tmp, v);
            // no colon; a time in seconds without the leading space of
            // the event lines, a raw clock count (counter, x86-tsc, ...)
            // padded to 12 columns as there
            let s = if time != TimeFormat::Raw && tmp.first() == Some(&b' ') {
                &tmp[1..]
            } else {
                &tmp[..]
            };
            o.extend_from_slice(&s[..s.len() - 1]);
        };
        if a.first_event {
            ts(o, b"\tFirst event:", f);
        }
        if a.last_event {
            ts(o, b"\tLast event:", last[c].unwrap_or(f));
        }
        o.push(b'\n');
    }
    out.flush()?;
    Ok(Summary {
        damaged,
        exit_code: None,
    })
}
