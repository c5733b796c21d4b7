//! `tracemux dump`: the command line of trace-cmd dump's view
//! ([`tracemux_tracedat::dump`]): its options, the file, and the damage
//! the walk or the container parse found, on stderr.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

use crate::out::{warn, Out, Outcome};
use tracemux_open::{map, sniff, Kind};
use tracemux_tracedat::dump::{
    data_past_end, dump, CLOCK, CMDLINES, EVENT_FORMAT, EVENT_SYSTEMS, FLYRECORD, FTRACE_FORMAT,
    HEAD_EVENT, HEAD_PAGE, KALLSYMS, OPTIONS, SECTIONS, STRINGS, SUMMARY, TRACE_PRINTK,
};
use tracemux_tracedat::TraceDat;

#[derive(Args, Debug)]
pub struct DumpArgs {
    /// The trace file (default: trace.dat, as trace-cmd).
    pub trace: Option<PathBuf>,
    /// Input file (trace-cmd's -i).
    #[arg(short = 'i', long = "input")]
    pub input: Option<PathBuf>,
    /// Everything.
    #[arg(short = 'a', long)]
    pub all: bool,
    /// The summary (the default when nothing else is asked for).
    #[arg(long)]
    pub summary: bool,
    /// The header_page format.
    #[arg(long)]
    pub head_page: bool,
    /// The header_event format.
    #[arg(long)]
    pub head_event: bool,
    /// The formats of the ftrace events.
    #[arg(long)]
    pub ftrace_events: bool,
    /// The event systems and their event counts.
    #[arg(long)]
    pub systems: bool,
    /// The formats of the events.
    #[arg(long)]
    pub events: bool,
    /// The kernel symbols (kallsyms).
    #[arg(long)]
    pub kallsyms: bool,
    /// The trace_printk formats.
    #[arg(long)]
    pub printk: bool,
    /// The saved command lines (pid to comm).
    #[arg(long)]
    pub cmd_lines: bool,
    /// Every option.
    #[arg(long)]
    pub options: bool,
    /// Where the per-CPU trace data is.
    #[arg(long)]
    pub flyrecord: bool,
    /// The trace clock.
    #[arg(long)]
    pub clock: bool,
    /// Every v7 section header.
    #[arg(long)]
    pub sections: bool,
    /// The v7 strings table.
    #[arg(long)]
    pub strings: bool,
    /// Check the file and say it is valid (alone: dump nothing else).
    #[arg(short = 'v', long)]
    pub validate: bool,
}

impl DumpArgs {
    fn mask(&self) -> u32 {
        if self.all {
            return u32::MAX;
        }
        let mut m = 0;
        for (on, bit) in [
            (self.summary, SUMMARY),
            (self.head_page, HEAD_PAGE),
            (self.head_event, HEAD_EVENT),
            (self.ftrace_events, FTRACE_FORMAT),
            (self.systems, EVENT_SYSTEMS),
            (self.events, EVENT_FORMAT),
            (self.kallsyms, KALLSYMS),
            (self.printk, TRACE_PRINTK),
            (self.cmd_lines, CMDLINES),
            (self.options, OPTIONS),
            (self.flyrecord, FLYRECORD),
            (self.clock, CLOCK),
            (self.sections, SECTIONS),
            (self.strings, STRINGS),
        ] {
            if on {
                m |= bit;
            }
        }
        if m == 0 && !self.validate {
            m = SUMMARY;
        }
        m
    }
}

pub fn run(a: &DumpArgs) -> Result<Outcome> {
    let path: PathBuf = match (&a.input, &a.trace) {
        (Some(_), Some(_)) => bail!("give the trace either with -i or as an argument, not both"),
        (Some(p), None) | (None, Some(p)) => p.clone(),
        (None, None) => PathBuf::from("trace.dat"),
    };
    match sniff(&path)? {
        Kind::TraceDat => {}
        k => bail!(
            "{}: {} traces are not supported yet",
            path.display(),
            k.name()
        ),
    }
    let data = map(&path)?;
    let mut out = Out::new();
    let stop = dump(&data, &path, a.mask(), &mut out)?;
    if stop.is_none() && a.validate {
        let o = out.buf();
        o.extend_from_slice(b"File ");
        o.extend_from_slice(path.as_os_str().as_encoded_bytes());
        o.extend_from_slice(b" is a valid trace-cmd file\n");
    }
    out.flush()?;
    // The container parse finds damage the walk above does not look at
    // (e.g. per-CPU data running past the end of the file).
    let mut damaged = false;
    match TraceDat::parse(&data, false) {
        Ok(t) => {
            for e in &t.damage {
                warn(&path, e);
                damaged = true;
            }
            for m in data_past_end(&t) {
                eprintln!("tracemux: {}: {}", path.display(), m);
                damaged = true;
            }
        }
        Err(e) => {
            if stop.is_none() {
                warn(&path, &e);
                damaged = true;
            }
        }
    }
    if let Some(m) = stop {
        eprintln!("tracemux: {}: {}", path.display(), m);
        damaged = true;
    }
    Ok(Outcome::damaged_if(damaged))
}
