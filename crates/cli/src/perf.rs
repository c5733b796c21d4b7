//! The command line for perf.data files: perf's own flags, with the meaning
//! and output of perf 6.1 (`report` = `perf script`, `info` = `perf report
//! --header-only`, `stats` = `perf report --stats`).

use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use clap::{Args, Parser, Subcommand};
use tracemux_perf::script::{ScriptError, ScriptOptions};
use tracemux_perf::PerfData;

use crate::model::{print_model, ModelStyle};
use crate::out::{Out, Outcome};

/// Read perf.data files (perf record), printed as perf 6.1 prints them.
#[derive(Parser, Debug)]
#[command(name = "tracemux", version)]
pub struct PerfCli {
    #[command(subcommand)]
    pub cmd: PerfCmd,
}

#[derive(Subcommand, Debug)]
pub enum PerfCmd {
    /// The samples and records, as `perf script` prints them.
    Report(ReportArgs),
    /// What the file says about itself, as `perf report --header-only` prints it.
    Info(FileArgs),
    /// Records by type and samples per event, as `perf report --stats` prints them.
    Stats(FileArgs),
    /// Stored metadata: --header (the default), --evlist (`perf evlist -v`),
    /// --features (every feature section), --formats (tracepoint formats),
    /// --records (one line per record, in file order).
    Dump(DumpArgs),
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The perf.data file (also -i).
    pub trace: Option<PathBuf>,
    /// The perf.data file.
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Fields to print: [TYPE:]FIELD,... (comm, tid, pid, time, cpu, event,
    /// trace, ip, sym, dso, addr, symoff, period, phys_addr); +FIELD/-FIELD
    /// change the defaults; TYPE is hw, sw, trace, raw, break.
    #[arg(
        short = 'F',
        long = "fields",
        value_name = "FIELDS",
        allow_hyphen_values = true
    )]
    pub fields: Vec<String>,
    /// Times in nanoseconds.
    #[arg(long)]
    pub ns: bool,
    /// Also print COMM, FORK and EXIT records.
    #[arg(long)]
    pub show_task_events: bool,
    /// Also print MMAP and MMAP2 records.
    #[arg(long)]
    pub show_mmap_events: bool,
    /// Look for the binaries under DIR.
    #[arg(long, value_name = "DIR")]
    pub symfs: Option<PathBuf>,
    /// The kernel's symbols from FILE (default /proc/kallsyms).
    #[arg(long, value_name = "FILE")]
    pub kallsyms: Option<PathBuf>,
    /// Stop at the first damage instead of reporting it.
    #[arg(long)]
    pub strict: bool,
    /// One JSON object per event (the schema of `report --json`).
    #[arg(long)]
    pub json: bool,
    /// Output style: perf (the default), json (as --json), babeltrace or
    /// trace-cmd (the common model's printers).
    #[arg(long, value_enum)]
    pub style: Option<PerfStyle>,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfStyle {
    Perf,
    Json,
    Babeltrace,
    #[value(name = "trace-cmd")]
    TraceCmd,
}

#[derive(Args, Debug)]
pub struct FileArgs {
    /// The perf.data file (also -i).
    pub trace: Option<PathBuf>,
    /// The perf.data file.
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Stop at the first damage instead of reporting it.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Args, Debug)]
pub struct DumpArgs {
    #[command(flatten)]
    pub file: FileArgs,
    /// The header, as `perf report --header-only` (the default).
    #[arg(long)]
    pub header: bool,
    /// The events' attributes, as `perf evlist -v`.
    #[arg(long)]
    pub evlist: bool,
    /// Every feature section: id, name, offset, size.
    #[arg(long)]
    pub features: bool,
    /// The tracepoint formats of the tracing data.
    #[arg(long)]
    pub formats: bool,
    /// One line per record in file order: offset, size, type, time.
    #[arg(long)]
    pub records: bool,
}

fn path(trace: &Option<PathBuf>, input: &Option<PathBuf>) -> Result<PathBuf> {
    match (trace, input) {
        (Some(p), _) | (None, Some(p)) => Ok(p.clone()),
        (None, None) => bail!("no perf.data given"),
    }
}

fn open<'a>(p: &std::path::Path, data: &'a [u8], strict: bool) -> Result<PerfData<'a>> {
    let d = PerfData::open(data, strict).map_err(|e| anyhow!("{}: {}", p.display(), e))?;
    for e in &d.damage {
        eprintln!("tracemux: warning: {}: {e}", p.display());
    }
    Ok(d)
}

pub fn run(cli: PerfCli) -> Result<Outcome> {
    match cli.cmd {
        PerfCmd::Report(a) => report(a),
        PerfCmd::Info(a) => {
            let p = path(&a.trace, &a.input)?;
            let data = tracemux_open::map(&p)?;
            let d = open(&p, &data, a.strict)?;
            let mut out = Out::new();
            tracemux_perf::info::header_only(&d, &mut out)?;
            out.flush()?;
            Ok(Outcome::damaged_if(!d.damage.is_empty()))
        }
        PerfCmd::Stats(a) => {
            let p = path(&a.trace, &a.input)?;
            let data = tracemux_open::map(&p)?;
            let d = open(&p, &data, a.strict)?;
            let mut done = 0u64;
            let c = d.count_with(&mut |to| {
                if to > done + (8 << 20) {
                    data.release(done, to);
                    done = to;
                }
            });
            if a.strict {
                if let Some(e) = c.damage.first() {
                    bail!("{}: {e}", p.display());
                }
            }
            let mut out = Out::new();
            tracemux_perf::info::stats(&d, &c.records, &c.samples, &mut out)?;
            out.flush()?;
            for e in &c.damage {
                eprintln!("tracemux: warning: {}: {e}", p.display());
            }
            Ok(Outcome::damaged_if(
                !d.damage.is_empty() || !c.damage.is_empty(),
            ))
        }
        PerfCmd::Dump(a) => dump(a),
    }
}

fn report(a: ReportArgs) -> Result<Outcome> {
    let p = path(&a.trace, &a.input)?;
    let style = match (a.json, a.style) {
        (true, _) | (_, Some(PerfStyle::Json)) => Some(ModelStyle::Json),
        (_, Some(PerfStyle::Babeltrace)) => Some(ModelStyle::Babeltrace),
        (_, Some(PerfStyle::TraceCmd)) => Some(ModelStyle::TraceCmd),
        _ => None,
    };
    if let Some(style) = style {
        return crate::model::with_source(std::slice::from_ref(&p), a.strict, |src| {
            print_model(src, style, &p, a.strict)
        });
    }
    let data = tracemux_open::map(&p)?;
    let d = open(&p, &data, a.strict)?;
    let opts = ScriptOptions {
        fields: a.fields,
        ns: a.ns,
        show_task_events: a.show_task_events,
        show_mmap_events: a.show_mmap_events,
        symfs: a.symfs,
        kallsyms: a.kallsyms,
        strict: a.strict,
    };
    let mut out = Out::new();
    let mut done = 0u64;
    let r = tracemux_perf::script::script_with(&d, &opts, &mut out, &mut |to| {
        if to > done + (8 << 20) {
            data.release(done, to);
            done = to;
        }
    });
    out.flush()?;
    let r = match r {
        Ok(r) => r,
        Err(ScriptError::Io(e)) => return Err(e.into()),
        Err(e) => bail!("{}: {e}", p.display()),
    };
    for w in &r.warnings {
        eprintln!("{w}");
    }
    for e in &r.damage {
        eprintln!("tracemux: warning: {}: {e}", p.display());
    }
    Ok(Outcome::damaged_if(!r.damage.is_empty()))
}

fn dump(a: DumpArgs) -> Result<Outcome> {
    use std::io::Write;
    let p = path(&a.file.trace, &a.file.input)?;
    let data = tracemux_open::map(&p)?;
    let d = open(&p, &data, a.file.strict)?;
    let mut out = Out::new();
    let none = !(a.header || a.evlist || a.features || a.formats || a.records);
    if a.header || none {
        tracemux_perf::info::header_only(&d, &mut out)?;
    }
    if a.evlist {
        tracemux_perf::info::evlist(&d, &mut out)?;
    }
    if a.features {
        for (id, off, bytes) in &d.features.raw {
            let name = tracemux_perf::consts::feat::name(*id).unwrap_or("unknown");
            writeln!(
                out,
                "feature {id:2} {name:<16} at {off:#x}, {} bytes",
                bytes.len()
            )?;
        }
        if let Some(t) = &d.tracing {
            writeln!(
                out,
                "tracing data: version {}, long size {}, page size {}, {} formats ({} ftrace), {} bytes",
                t.version,
                t.long_size,
                t.page_size,
                t.formats.len(),
                t.ftrace_formats,
                t.size
            )?;
        }
    }
    if a.formats {
        if let Some(t) = &d.tracing {
            for f in &t.formats {
                writeln!(out, "{}:{} (id {})", f.system, f.name, f.id)?;
                out.write_all(f.text.as_bytes())?;
                if !f.text.ends_with('\n') {
                    writeln!(out)?;
                }
            }
        }
    }
    let mut damaged = !d.damage.is_empty();
    if a.records {
        let mut r = d.records().unordered();
        while let Some(x) = r.next_record() {
            let name = tracemux_perf::consts::record_name(x.type_).unwrap_or("UNKNOWN");
            writeln!(
                out,
                "{:#x}{} [{:#x}]: PERF_RECORD_{name}",
                x.offset,
                if x.compressed { " (compressed)" } else { "" },
                x.body.len() + 8
            )?;
        }
        for e in &r.damage {
            eprintln!("tracemux: warning: {}: {e}", p.display());
        }
        damaged |= !r.damage.is_empty();
    }
    out.flush()?;
    Ok(Outcome::damaged_if(damaged))
}
