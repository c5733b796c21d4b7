//! The `tracemux` command.

mod dump;
mod info;
mod open;
mod report;

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

const EXAMPLES: &str = "\
EXAMPLES:
  tracemux report -R trace.dat            print every field as name=value, like trace-cmd report -R
  tracemux report --json trace.dat        one JSON object per event
  tracemux report --stat trace.dat        the kernel buffer statistics stored in the file
  tracemux info trace.dat                 everything the file says about itself
  tracemux dump --options trace.dat       the stored options, like trace-cmd dump --options";

/// Read, print and convert Linux trace files.
///
/// tracemux reads trace-cmd's trace.dat (v6 and v7) today; CTF, uftrace and
/// legacy LTT inputs are recognised and reported as not supported yet.
#[derive(Parser, Debug)]
#[command(name = "tracemux", version, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Print the events of a trace, as the native tool does.
    Report(report::ReportArgs),
    /// Summarise a trace: format, version, buffers, options, sections, events.
    Info(InfoArgs),
    /// Print the metadata stored in a trace.
    Dump(dump::DumpArgs),
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
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let res = match cli.cmd {
        Cmd::Report(a) => report::run(&a),
        Cmd::Info(a) => info::run(&a.trace, a.strict),
        Cmd::Dump(a) => dump::run(&a),
    };
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

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Large buffered stdout writes: sinks fill a Vec, which is flushed in blocks.
pub struct Out {
    buf: Vec<u8>,
    stdout: io::Stdout,
}

impl Default for Out {
    fn default() -> Self {
        Self::new()
    }
}

impl Out {
    pub fn new() -> Self {
        Out {
            buf: Vec::with_capacity(1 << 20),
            stdout: io::stdout(),
        }
    }
    #[inline]
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }
    #[inline]
    pub fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= 1 << 19 {
            self.flush()?;
        }
        Ok(())
    }
    pub fn flush(&mut self) -> io::Result<()> {
        let mut l = self.stdout.lock();
        l.write_all(&self.buf)?;
        l.flush()?;
        self.buf.clear();
        Ok(())
    }
}

/// Report damage on stderr, one line each.
pub fn warn(path: &std::path::Path, e: &tracemux_core::Error) {
    eprintln!("tracemux: {}: {}", path.display(), e);
}
