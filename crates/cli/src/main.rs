//! The `tracemux` command.

mod convert;
mod ctf;
mod dump;
mod info;
mod ltt;
mod native;
mod open;
mod report;
mod select;
mod source;
mod uftrace;

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

const EXAMPLES: &str = "\
EXAMPLES:
  tracemux report trace.dat               the events, exactly as trace-cmd report prints them
  tracemux report -R trace.dat            every field as name=value, like trace-cmd report -R
  tracemux report -F 'sched_switch: prev_pid == 0' --cpu 1 trace.dat
                                          only some events (trace-cmd's filter language)
  tracemux report -i host.dat -i guest.dat
                                          several files merged by time
  tracemux report --json trace.dat        one JSON object per event
  tracemux info trace.dat                 everything the file says about itself
  tracemux dump --options trace.dat       the stored options, like trace-cmd dump --options
  tracemux report lttng-session/          a CTF trace, exactly as babeltrace2 prints it
  tracemux report --clock-seconds --names=all ctf-trace/
                                          babeltrace2's options apply to CTF traces
  tracemux report -f time,tid uftrace.data
                                          a uftrace recording, exactly as uftrace replay prints it
  tracemux stats -s call uftrace.data     uftrace report; --graph=FUNC for uftrace graph
  tracemux report TRACE --help            the options that apply to TRACE's format";

/// Read, print and convert Linux trace files.
///
/// tracemux reads trace-cmd's trace.dat (v6, v7), CTF 1.8 and CTF 2
/// traces, uftrace data directories and legacy LTT traces, recognised by
/// content, and prints each as its native tool does (trace-cmd report,
/// babeltrace2, uftrace). The options shown here are trace-cmd's; with a
/// CTF trace babeltrace2's apply, with a uftrace.data directory uftrace's.
#[derive(Parser, Debug)]
#[command(name = "tracemux", version, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Print the events of a trace, as the native tool does (options for other formats: `tracemux report TRACE --help`).
    Report(report::ReportArgs),
    /// Summarise a trace: format, version, buffers, options, sections, events.
    Info(InfoArgs),
    /// Print the metadata stored in a trace.
    Dump(dump::DumpArgs),
    /// Read every event and count: per event, per CPU/stream, lost data.
    Stats(StatsArgs),
    /// Convert a trace of any format: CTF 1.8, CTF 2, trace.dat, JSON lines.
    Convert(convert::ConvertArgs),
}

#[derive(Args, Debug)]
struct StatsArgs {
    /// The trace.
    trace: PathBuf,
    /// Stop at the first damage instead of reporting it.
    #[arg(long)]
    strict: bool,
}

#[derive(Args, Debug)]
struct InfoArgs {
    /// The trace file.
    trace: PathBuf,
    /// Stop at the first damage instead of reporting it.
    #[arg(long)]
    strict: bool,
}

/// Outcome of a command: success, or success with damage reported (exit 1).
pub enum Outcome {
    Ok,
    Damaged,
}

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let res = match native::detect(&argv) {
        native::Style::Uftrace => return uftrace::main(argv),
        native::Style::Babeltrace => match native::parse::<ctf::CtfCli>(argv) {
            Ok(c) => ctf::run(c),
            Err(code) => return code,
        },
        native::Style::Ltt => match native::parse::<ltt::LttCli>(argv) {
            Ok(c) => ltt::run(c),
            Err(code) => return code,
        },
        _ => {
            let cli = match native::parse::<Cli>(argv) {
                Ok(c) => c,
                Err(code) => return code,
            };
            match cli.cmd {
                Cmd::Report(a) => report::run(&a),
                Cmd::Info(a) => info::run(&a.trace, a.strict),
                Cmd::Dump(a) => dump::run(&a),
                Cmd::Stats(a) => stats(&a),
                Cmd::Convert(a) => convert::run(&a),
            }
        }
    };
    finish(res)
}

/// The exit code: 0 success, 1 damage reported or an error, 2 bad usage
/// (from clap). A closed pipe is not an error.
pub fn finish(res: anyhow::Result<Outcome>) -> ExitCode {
    match res {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Damaged) => ExitCode::from(1),
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            let _ = io::stdout().flush();
            eprintln!("tracemux: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn stats(a: &StatsArgs) -> anyhow::Result<Outcome> {
    match open::sniff(&a.trace)? {
        open::Kind::TraceDat => info::stats(&a.trace, a.strict),
        k => anyhow::bail!(
            "{}: {} traces are not supported yet",
            a.trace.display(),
            k.name()
        ),
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Large buffered stdout writes: sinks fill a Vec, which is handed to a
/// writer thread in blocks, so formatting and writing overlap (the machine
/// this runs on usually has a core to spare).
pub struct Out {
    buf: Vec<u8>,
    tx: Option<std::sync::mpsc::SyncSender<Vec<u8>>>,
    back: std::sync::mpsc::Receiver<Vec<u8>>,
    writer: Option<std::thread::JoinHandle<io::Result<()>>>,
}

const BLOCK: usize = 1 << 19;

type Writer = (
    std::sync::mpsc::SyncSender<Vec<u8>>,
    std::sync::mpsc::Receiver<Vec<u8>>,
    std::thread::JoinHandle<io::Result<()>>,
);

/// A thread that writes blocks to stdout and hands the emptied buffers back.
fn spawn_writer() -> Writer {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
    let (back_tx, back) = std::sync::mpsc::channel::<Vec<u8>>();
    let writer = std::thread::spawn(move || -> io::Result<()> {
        let stdout = io::stdout();
        for mut b in rx {
            let mut l = stdout.lock();
            l.write_all(&b)?;
            l.flush()?;
            b.clear();
            let _ = back_tx.send(b);
        }
        Ok(())
    });
    (tx, back, writer)
}

impl Default for Out {
    fn default() -> Self {
        Self::new()
    }
}

impl Out {
    pub fn new() -> Self {
        let (tx, back, writer) = spawn_writer();
        Out {
            buf: Vec::with_capacity(BLOCK + (64 << 10)),
            tx: Some(tx),
            back,
            writer: Some(writer),
        }
    }
    #[inline]
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }
    #[inline]
    pub fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= BLOCK {
            self.send()?;
        }
        Ok(())
    }
    fn send(&mut self) -> io::Result<()> {
        let next = self
            .back
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BLOCK + (64 << 10)));
        let full = std::mem::replace(&mut self.buf, next);
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(full).is_ok());
        if !sent {
            // the writer stopped: report why (a closed pipe, usually)
            return Err(self
                .finish_writer()
                .err()
                .unwrap_or_else(|| io::Error::from(io::ErrorKind::BrokenPipe)));
        }
        Ok(())
    }
    fn finish_writer(&mut self) -> io::Result<()> {
        self.tx = None;
        match self.writer.take() {
            Some(h) => h
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("writer thread panicked"))),
            None => Ok(()),
        }
    }
    /// Write out everything so far and wait until it is written (before
    /// anything goes to stderr, so that messages appear in order).
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.send()?;
        }
        // wait for the writer to drain, then start a new one
        self.finish_writer()?;
        let (tx, back, writer) = spawn_writer();
        self.back = back;
        self.tx = Some(tx);
        self.writer = Some(writer);
        Ok(())
    }
}

impl Write for Out {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        self.maybe_flush()?;
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Out::flush(self)
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        let _ = self.finish_writer();
    }
}

/// Report damage on stderr, one line each.
pub fn warn(path: &std::path::Path, e: &tracemux_core::Error) {
    eprintln!("tracemux: {}: {}", path.display(), e);
}
