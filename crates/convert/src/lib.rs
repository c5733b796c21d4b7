//! Any trace, through the common event model, into another format: what
//! `tracemux convert` and Python's `tracemux.convert()` run. The source
//! streams into the sink event by event (memory stays flat); the output is
//! written under a temporary name and renamed when complete, so a failed
//! run never leaves an output that looks whole.
//!
//! Nothing here writes to the terminal: progress, damage and notes go to
//! the caller's [`Hooks`].

mod chrome;
mod copy;
mod ctf;
mod error;
mod files;
mod live;
mod options;
#[cfg(feature = "parquet")]
mod parquet;
mod perfetto;
mod pipeline;
mod sink;
mod tracedat;
mod uftrace_chrome;

use std::path::{Path, PathBuf};

use tracemux_core::model::{Event, Lost, Record, RecordSource, TraceMeta};

pub use copy::CopySummary;
pub use error::{Cause, Error, Result};
pub use live::{run_live, spool_live, spools};
pub use options::{Compression, DatasetLayout, Hooks, NoHooks, Options, SchemaKind, Summary, To};
pub use sink::Sink;

use files::{close, create, into_place, is_special, remove, temp_name};
use sink::Target;

/// Convert as `o` says. The output appears only when complete; an error
/// leaves none (and no temporary file).
pub fn run(o: &Options, hooks: &dyn Hooks) -> Result<Summary> {
    // a device or a pipe (`-o /dev/null`, `-o /dev/stdout`) is written
    // where it is: never replaced by a file renamed over it
    let in_place = is_special(&o.output);
    if o.output.exists() && !o.force && !in_place {
        return Err(files::exists(&o.output));
    }
    let tmp = if in_place {
        o.output.clone()
    } else {
        temp_name(&o.output)
    };
    remove(&tmp);
    let mut summary = Summary::default();
    if let Some(copied) = copy_ctf(o, &tmp)? {
        if !in_place {
            into_place(&tmp, &o.output)?;
        }
        summary.copied = Some(copied);
        return Ok(summary);
    }
    let res = if o.to == To::Tracedat {
        tracedat::run(o, &tmp, &mut summary, hooks)
    } else if o.to == To::Chrome && uftrace_chrome::applies(o) {
        uftrace_chrome::run(o, &tmp, &mut summary, hooks)
    } else if o.to == To::Parquet
        && (o.partition
            || o.layout == DatasetLayout::Shared
            || (o.inputs.len() > 1
                && o.clock_offsets.is_empty()
                && !tracemux_open::timeline::mixed_formats(&o.inputs)?))
    {
        partitions(o, &tmp, &mut summary, hooks)
    } else {
        with_source(o, &o.inputs, &o.clock_offsets, hooks, |src| {
            convert(o, src, &tmp, None, &mut summary, hooks)
        })
    };
    if let Err(e) = res {
        remove(&tmp);
        return Err(e);
    }
    if !in_place {
        into_place(&tmp, &o.output)?;
    }
    Ok(summary)
}

/// Open `paths` as one source of the model and hand it to `f`; what was
/// forgiven while opening goes to `hooks`.
fn with_source(
    o: &Options,
    paths: &[PathBuf],
    clock_offsets: &[(String, i64)],
    hooks: &dyn Hooks,
    f: impl FnOnce(&mut dyn RecordSource) -> Result<()>,
) -> Result<()> {
    let note = |m: &str| hooks.note(m);
    let opts = tracemux_open::OpenOptions {
        strict: o.strict,
        on_note: Some(&note),
        clock_offsets,
        // the tables hold addresses as numbers: no kernel symbol table
        no_symbols: o.to == To::Parquet,
    };
    tracemux_open::with_source(paths, &opts, f)
}

/// CTF to CTF with nothing selected: the packets copied as they are (see
/// [`copy::copy_traces`]); `None` when that does not apply.
fn copy_ctf(o: &Options, tmp: &Path) -> Result<Option<CopySummary>> {
    let selecting = o.begin.is_some() || o.end.is_some() || !o.events.is_empty();
    if o.reencode || selecting || !matches!(o.to, To::Ctf | To::Ctf2) {
        return Ok(None);
    }
    if !o
        .inputs
        .iter()
        .all(|p| matches!(tracemux_open::sniff(p), Ok(tracemux_open::Kind::Ctf { .. })))
    {
        return Ok(None);
    }
    match copy::copy_traces(&o.inputs, tmp, o.to == To::Ctf2) {
        Ok(Some(s)) => Ok(Some(s)),
        Ok(None) => {
            remove(tmp);
            Ok(None)
        }
        Err(e) => {
            remove(tmp);
            Err(e)
        }
    }
}

/// A trace's place in a dataset of several: its name, and in the shared
/// layout the dataset it is written into.
struct Part {
    name: String,
    #[cfg(feature = "parquet")]
    shared: Option<parquet::Slot>,
}

/// Several traces (or one with `partition`) as one Parquet dataset: each
/// converted on its own into its partition (Hive) or, in turn, into the
/// shared files.
fn partitions(o: &Options, tmp: &Path, summary: &mut Summary, hooks: &dyn Hooks) -> Result<()> {
    #[cfg(feature = "parquet")]
    let shared = match o.layout {
        DatasetLayout::Shared => Some(parquet::shared(o, tmp)?),
        DatasetLayout::Hive => None,
    };
    let mut names = std::collections::HashSet::new();
    for input in &o.inputs {
        #[cfg(feature = "parquet")]
        let base = parquet::trace_name(input);
        #[cfg(not(feature = "parquet"))]
        let base = String::new();
        let mut name = base.clone();
        let mut k = 1;
        while !names.insert(name.clone()) {
            k += 1;
            name = format!("{base}-{k}");
        }
        let one = Options {
            inputs: vec![input.clone()],
            ..o.clone()
        };
        let part = Part {
            name,
            #[cfg(feature = "parquet")]
            shared: shared.clone(),
        };
        with_source(o, &one.inputs, &[], hooks, |src| {
            convert(&one, src, tmp, Some(&part), summary, hooks)
        })?;
    }
    #[cfg(feature = "parquet")]
    if let Some(slot) = &shared {
        parquet::finish_shared(slot)?;
    }
    Ok(())
}

fn make_sink(
    o: &Options,
    meta: &TraceMeta,
    tmp: &Path,
    partition: Option<&Part>,
) -> Result<Box<dyn Sink + Send>> {
    match o.to {
        #[cfg(feature = "parquet")]
        To::Parquet => {
            let inputs: Vec<&Path> = o.inputs.iter().map(|p| p.as_path()).collect();
            match partition {
                Some(Part {
                    name,
                    shared: Some(slot),
                }) => parquet::shared_sink(o, meta, slot, name, &inputs),
                _ => parquet::sink(o, meta, tmp, partition.map(|p| p.name.as_str()), &inputs),
            }
        }
        #[cfg(not(feature = "parquet"))]
        To::Parquet => {
            let _ = partition;
            Err(Error::Refused(
                "this tracemux was built without Parquet (cargo build --features parquet)".into(),
            ))
        }
        To::Jsonl => Ok(Box::new(Jsonl::create(tmp)?)),
        To::Ctf => ctf::sink(meta, tmp, false),
        To::Ctf2 => ctf::sink(meta, tmp, true),
        To::Perfetto => perfetto::sink(
            meta,
            tmp,
            tracemux_export::perfetto::PerfettoOptions {
                compact_sched: !o.full_sched,
                compress: o.compress,
                describe_generic: !o.named_generic,
            },
        ),
        To::Chrome => chrome::sink(meta, tmp),
        To::Tracedat => Err(Error::Refused(
            "--to tracedat is written by convert::tracedat".into(),
        )),
    }
}

/// Whether `ev` passes `begin`, `end` and `events`.
fn selected(o: &Options, ev: &Event<'_>) -> bool {
    if o.begin.is_some_and(|b| ev.ts < b) || o.end.is_some_and(|e| ev.ts > e) {
        return false;
    }
    if o.events.is_empty() {
        return true;
    }
    let Some(c) = ev.class else { return false };
    o.events.iter().any(|want| match want.split_once(':') {
        Some((sys, name)) => sys == c.system && name == c.name,
        None => *want == c.name,
    })
}

fn convert(
    o: &Options,
    src: &mut dyn RecordSource,
    tmp: &Path,
    partition: Option<&Part>,
    summary: &mut Summary,
    hooks: &dyn Hooks,
) -> Result<()> {
    let meta = src.meta().clone();
    let threads = tracemux_core::threads::resolve(o.threads);
    if o.to == To::Jsonl && threads > 1 {
        let file = create(tmp)?;
        hooks.started();
        let swap = src.swaps_tapes();
        return pipeline::with_line_workers(
            &meta,
            swap,
            o.batch_events,
            threads,
            tracemux_render::jsonl::JsonWriter::new,
            file,
            |feed| read(o, src, &meta, feed, summary, hooks),
        );
    }
    let mut sink = make_sink(o, &meta, tmp, partition)?;
    hooks.started();
    if pipeline::wanted(&meta, o.to, threads) {
        let swap = src.swaps_tapes();
        return pipeline::with_sink_thread(&meta, swap, o.batch_events, sink, |feed| {
            read(o, src, &meta, feed, summary, hooks)
        });
    }
    read(o, src, &meta, &mut sink, summary, hooks)?;
    sink.finish(&meta)
}

/// Events between two calls of [`Hooks::progress`].
pub(crate) const PROGRESS_EVERY: u64 = 65536;

/// Every record of `src` that `o` selects into `to`.
fn read(
    o: &Options,
    src: &mut dyn RecordSource,
    meta: &TraceMeta,
    to: &mut dyn Target,
    summary: &mut Summary,
    hooks: &dyn Hooks,
) -> Result<()> {
    let input = o.inputs[0].display().to_string();
    loop {
        let rec = src.next_record().map_err(|e| Error::input(&input, e))?;
        let Some(rec) = rec else { break };
        if feed(o, rec, meta, to, summary, hooks, &o.inputs[0])? {
            to.settle(src);
            if summary.events % PROGRESS_EVERY == 0 {
                hooks.progress(summary.events, src.progress())?;
            }
        }
    }
    hooks.finished();
    Ok(())
}

/// One record into `to`, counted in `summary`: an event `o` selects, a
/// loss, or damage (with `--strict` an error naming `input`). Whether an
/// event was handed over.
pub(crate) fn feed(
    o: &Options,
    rec: Record<'_>,
    meta: &TraceMeta,
    to: &mut dyn Target,
    summary: &mut Summary,
    hooks: &dyn Hooks,
    input: &Path,
) -> Result<bool> {
    match rec {
        Record::Event(ev) => {
            if !selected(o, &ev) {
                summary.skipped += 1;
                return Ok(false);
            }
            to.event(meta, &ev)?;
            summary.events += 1;
            Ok(true)
        }
        Record::Lost(l) => {
            summary.lost_markers += 1;
            summary.lost_events += l.count.unwrap_or(0);
            to.lost(meta, &l)?;
            Ok(false)
        }
        Record::Damage(e) => {
            if o.strict {
                return Err(Error::input(input.display(), e));
            }
            summary.damage += 1;
            to.damage(&e.to_string());
            hooks.damage(input, &e);
            Ok(false)
        }
    }
}

/// JSON lines into a file.
struct Jsonl {
    file: std::io::BufWriter<std::fs::File>,
    buf: Vec<u8>,
    json: tracemux_render::jsonl::JsonWriter,
}

impl Jsonl {
    fn create(p: &Path) -> Result<Self> {
        Ok(Jsonl {
            file: create(p)?,
            buf: Vec::with_capacity(1 << 16),
            json: Default::default(),
        })
    }
    fn drain(&mut self) -> Result<()> {
        use std::io::Write;
        if self.buf.len() >= 1 << 16 {
            self.file.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

impl pipeline::Lines for tracemux_render::jsonl::JsonWriter {
    fn event(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, ev: &Event<'_>) {
        tracemux_render::jsonl::JsonWriter::event(self, out, meta, ev)
    }
    fn lost(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, l: &Lost) {
        tracemux_render::jsonl::write_lost(out, meta, l)
    }
}

impl Sink for Jsonl {
    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()> {
        self.json.event(&mut self.buf, meta, ev);
        self.drain()
    }
    fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> Result<()> {
        tracemux_render::jsonl::write_lost(&mut self.buf, meta, l);
        self.drain()
    }
    fn finish(mut self: Box<Self>, _meta: &TraceMeta) -> Result<()> {
        use std::io::Write;
        self.file.write_all(&self.buf)?;
        self.file.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_unknown_ones_are_listed() {
        assert_eq!("ctf2".parse::<To>(), Ok(To::Ctf2));
        assert_eq!("zlib".parse::<Compression>(), Ok(Compression::Zlib));
        assert_eq!(
            "pcap".parse::<To>(),
            Err("\"pcap\": not an output format (ctf, ctf2, tracedat, jsonl, perfetto, chrome, parquet)".into())
        );
        assert_eq!(
            "lz4".parse::<Compression>(),
            Err("\"lz4\": not a compression (none, zstd, zlib)".into())
        );
    }
}
