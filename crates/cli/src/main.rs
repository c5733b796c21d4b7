//! The `tracemux` command.

mod convert;
mod ctf;
mod dump;
mod info;
mod knobs;
mod live;
mod ltt;
mod manual;
mod model;
mod native;
mod out;
mod perf;
mod report;
mod report_args;
mod select;
mod sql;
mod timeline;
mod uftrace;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};

use out::{finish, Outcome};

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
  tracemux report perf.data               a perf.data, exactly as perf script prints it
  tracemux report -F comm,tid,time,ip,sym --symfs DIR perf.data
                                          perf script's field lists and symbol options
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
    Report(report_args::ReportArgs),
    /// Summarise a trace: format, version, buffers, options, sections, events.
    Info(InfoArgs),
    /// Print the metadata stored in a trace.
    Dump(dump::DumpArgs),
    /// Read every event and count: per event, per CPU/stream, lost data.
    Stats(StatsArgs),
    /// Convert a trace of any format into CTF 1.8, CTF 2, trace.dat, JSON lines, Perfetto, Chrome JSON or Parquet.
    Convert(convert::ConvertArgs),
    /// Query a trace (or a Parquet dataset) with SQL: `tracemux sql TRACE -e 'SELECT ...'` (needs the `sql` feature).
    Sql(sql::SqlArgs),
    /// Every option of every format, in one place (also `tracemux help formats`).
    Formats,
    /// A shell completion script on stdout: `tracemux completions bash > /etc/bash_completion.d/tracemux`.
    Completions(manual::CompletionsArgs),
    /// The manual page (roff) on stdout: `tracemux man | man -l -`.
    Man,
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

/// jemalloc, not glibc's malloc: the Parquet writer takes and gives back
/// blocks of a few hundred kB all the time, and glibc's heaps fragment
/// under that, so a conversion's resident set grew with the trace (+12 % from
/// 1 to 15 GB of trace.dat while heaptrack showed the live heap flat).
/// jemalloc's size classes keep it flat (+4 %), and the Parquet run is
/// 11–16 % faster (README, Converting: memory).
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's settings, read once at its start: two arenas (the reader,
/// the encoder and a few helpers share them; one per core by default keeps
/// more memory aside per thread), freed pages returned after a second and
/// at once when only lazily freed, small thread caches. The environment's
/// `_RJEM_MALLOC_CONF` is applied after these and overrides them.
#[allow(unsafe_code)]
#[export_name = "_rjem_malloc_conf"]
pub static MALLOC_CONF: &[u8; 63] =
    b"narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0,tcache_max:4096\0";

fn main() -> ExitCode {
    let argv = manual::help_topic(std::env::args_os().collect());
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
        native::Style::Perf => match native::parse::<perf::PerfCli>(argv) {
            Ok(c) => perf::run(c),
            Err(code) => return code,
        },
        native::Style::Timeline => match native::parse::<timeline::TimelineCli>(argv) {
            Ok(c) => timeline::run(c),
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
                Cmd::Sql(a) => sql::run(&a),
                Cmd::Formats => manual::formats(Cli::command()),
                Cmd::Completions(a) => manual::completions(&a, Cli::command()),
                Cmd::Man => manual::man(Cli::command()),
            }
        }
    };
    finish(res)
}

fn stats(a: &StatsArgs) -> anyhow::Result<Outcome> {
    match tracemux_open::sniff(&a.trace)? {
        tracemux_open::Kind::TraceDat => info::stats(&a.trace, a.strict),
        k => anyhow::bail!(
            "{}: {} traces are not supported yet",
            a.trace.display(),
            k.name()
        ),
    }
}
