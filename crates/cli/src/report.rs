//! `tracemux report`.

use std::path::Path;

use anyhow::{bail, Result};

use crate::out::{warn, warn_all, Out, Outcome};
use crate::report_args::{ReportArgs, Style};
use tracemux_core::merge::Merge;
use tracemux_core::model::{Record, RecordSource, TraceMeta};
use tracemux_open::{map, sniff, Kind, Releaser};
use tracemux_render::tracecmd::{TimeFormat, TraceCmdPrinter};
use tracemux_tracedat::reader::{ReadOptions, Reader};
use tracemux_tracedat::tracecmd::{tracecmd_cpus, tracecmd_usecs};
use tracemux_tracedat::{DataKind, OptionId, TraceDat};

pub fn run(a: &ReportArgs) -> Result<Outcome> {
    // the order of -i, -F, -v, --ts-offset and --ts2secs matters (as in
    // trace-cmd): the plan replays it
    let plan = crate::select::Plan::from_env(a)?;
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
    report_tracedat(&plan, a)
}

fn report_tracedat(plan: &crate::select::Plan, a: &ReportArgs) -> Result<Outcome> {
    let maps = plan
        .inputs
        .iter()
        .map(|x| map(&x.path))
        .collect::<Result<Vec<_>>>()?;
    let mut tds = Vec::with_capacity(maps.len());
    for (m, x) in maps.iter().zip(&plan.inputs) {
        let t = TraceDat::parse(m, a.strict)
            .map_err(|e| anyhow::anyhow!("{}: {}", x.path.display(), e))?;
        crate::select::check_multi_latency(plan, &t, &x.path)?;
        tds.push(t);
    }
    let path = plan.inputs[0].path.as_path();
    let t = &tds[0];
    let mut out = Out::new();
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
        return Ok(warn_all(path, &t.damage));
    }
    if a.tracer_version || a.uname || a.stat {
        let o = out.buf();
        o.extend_from_slice(format!("cpus={cpus}\n").as_bytes());
        if a.tracer_version {
            match t.option_text(OptionId::VERSION) {
                Some(v) => o.extend_from_slice(format!("{v}\n").as_bytes()),
                None => o.extend_from_slice(b" version was not recorded in this file\n"),
            }
        } else if a.uname {
            match t.option_text(OptionId::UNAME) {
                Some(v) => o.extend_from_slice(format!("{v}\n").as_bytes()),
                None => o.extend_from_slice(b" uname was not recorded in this file\n"),
            }
            match t.option_text(OptionId::VERSION) {
                Some(v) => o.extend_from_slice(format!("{v}\n").as_bytes()),
                None => o.extend_from_slice(b" version was not recorded in this file\n"),
            }
        } else {
            tracemux_tracedat::listing::write_stat(o, t);
        }
        out.flush()?;
        return Ok(warn_all(path, &t.damage));
    }
    // listings of stored metadata (first file), in trace-cmd's priority
    if a.events {
        tracemux_tracedat::listing::write_event_formats(out.buf(), t);
        out.flush()?;
        return Ok(Outcome::Ok);
    }
    if a.check_events {
        out.flush()?;
        let code = tracemux_tracedat::listing::check_events(t);
        if code != 0 {
            std::process::exit(code as i32);
        }
        return Ok(Outcome::Ok);
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
        .map_err(|e| anyhow::anyhow!("{}: {}", plan.inputs[i].path.display(), e))?;
        readers.push(r);
    }
    let metas: Vec<TraceMeta> = readers.iter().map(|r| r.meta().clone()).collect();
    if a.funcs {
        tracemux_tracedat::listing::write_funcs(out.buf(), &metas[0]);
        out.flush()?;
        return Ok(Outcome::Ok);
    }
    if a.printk {
        tracemux_tracedat::listing::write_printk(out.buf(), t);
        out.flush()?;
        return Ok(Outcome::Ok);
    }
    if a.event_list {
        tracemux_tracedat::listing::write_event_list(out.buf(), t);
        out.flush()?;
        return Ok(Outcome::Ok);
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
        return report_cpus(path, &mut reader, &mut out, time_of(t), a);
    }
    // Invalid filters are reported before anything is printed.
    let pairs: Vec<(&TraceDat<'_>, &TraceMeta)> = tds.iter().zip(metas.iter()).collect();
    let (mut sel, warnings) = crate::select::Selection::new(plan, &pairs)?;
    for w in warnings {
        eprintln!("tracemux: {w}");
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
    if !a.wants_json() && a.style.is_none_or(|s| s == Style::TraceCmd) {
        for (i, td) in tds.iter().enumerate() {
            sel.cpus_line(out.buf(), i, tracecmd_cpus(td));
        }
    }
    // classes whose printer looks at the next record (function graph)
    let lookahead: Vec<Vec<bool>> = metas
        .iter()
        .map(|meta| {
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
        })
        .collect();
    // one file in a trace-cmd view whose lines depend on the lines before
    // only through the comm column: printed on several threads
    let threads = crate::parallel::threads();
    if threads > 1
        && tds.len() == 1
        && own_prefix
        && !plan.ts_diff
        && !a.wants_json()
        && a.style.is_none_or(|s| s == Style::TraceCmd)
    {
        let view = crate::parallel::View {
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
        let damaged = crate::parallel::report(
            path,
            &maps[0],
            &mut reader,
            &metas[0],
            view,
            &serial,
            threads,
            &mut out,
            &mut |m, ev| sel.keep(0, m, ev),
        )?;
        return Ok(Outcome::damaged_if(damaged));
    }
    let mut jsons: Vec<tracemux_render::jsonl::JsonWriter> =
        metas.iter().map(|_| Default::default()).collect();
    let mut babeltrace = (a.style == Some(Style::Babeltrace))
        .then(tracemux_render::babeltrace::BabeltracePrinter::new);
    let mut damaged = false;
    let mut releasers: Vec<Releaser> = (0..tds.len()).map(|_| Releaser::default()).collect();
    let mut merge = Merge::new(readers);
    let mut n: u64 = 0;
    let mut pending: Option<tracemux_core::model::Lost> = None;
    // an event whose printer looks at the next record, copied out of the reader
    let mut held: Vec<u8> = Vec::new();
    let mut diff: Vec<u8> = Vec::new();
    loop {
        n += 1;
        if n % 65536 == 0 {
            for (i, r) in merge.sources().iter().enumerate() {
                releasers[i].release(&maps[i], &r.consumed());
            }
        }
        let (i, rec) = match merge.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                out.flush()?;
                bail!("{}: {}", path.display(), e);
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
                warn(&plan.inputs[i].path, &e);
                damaged = true;
            }
        }
        out.maybe_flush()?;
    }
    out.flush()?;
    Ok(Outcome::damaged_if(damaged))
}

fn report_cpus(
    path: &Path,
    reader: &mut Reader<'_>,
    out: &mut Out,
    time: TimeFormat,
    a: &ReportArgs,
) -> Result<Outcome> {
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
                warn(path, &e);
                damaged = true;
            }
            Ok(None) => break,
            Err(e) => bail!("{}: {}", path.display(), e),
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
    Ok(Outcome::damaged_if(damaged))
}
