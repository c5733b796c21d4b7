//! Reader for uftrace data directories (`uftrace.data`), and the
//! `uftrace replay` / `uftrace info` outputs on top of it.
//!
//! # Reading a recording
//!
//! ```no_run
//! use tracemux_uftrace::{UftraceData, OpenOptions, TaskReader, Merger, MergeOptions};
//! let data = UftraceData::open("uftrace.data".as_ref(), OpenOptions::default()).unwrap();
//! // every record of the first task, in file order
//! let mut r = TaskReader::new(&data, 0);
//! while let Some(rec) = r.next_record() {
//!     let name = data.symbol(r.tid, rec.time, rec.addr).map(|s| &*s.name);
//!     println!("{} {:?} {:?}", rec.time, rec.kind, name);
//! }
//! // all tasks and perf events merged by time, in uftrace's order
//! let mut m = Merger::new(&data, &MergeOptions::default());
//! while let Some(item) = m.next_item() {
//!     let _tid = data.tasks[item.task].tid;
//! }
//! ```
//!
//! # What the modules hold
//! - [`header`]: the `info` file: [`FileHeader`] (40 bytes: magic, version,
//!   byte order, ELF class, feature and info masks, max stack) and
//!   [`InfoSections`] (exename, build id, cmdline, cpu/mem/os info, task
//!   list, usage, load, arg/ret specs, record date, pattern type, version).
//! - [`task`]: `task.txt` sessions and tasks ([`Sessions`]); which session
//!   applies to a task at a time ([`Sessions::task_session`]).
//! - [`symbols`]: `sid-*.map` maps, `*.sym` symbol tables, `*.dbg` debug
//!   info ([`Module`], [`Symbol`]).
//! - [`argspec`]: argument/return specs, auto-args, enums and the
//!   per-session filter table ([`argspec::FilterTable`]) that decides both
//!   the argument blob layout and `-F/-N/-T` triggers.
//! - [`record`]: the 16-byte record ([`Record`], [`Kind`]) and blob sizes.
//! - [`reader`]: [`TaskReader`], records of one `<tid>.dat` (in place, no
//!   allocation per record; damage collected as [`Damage`]).
//! - [`perf`]: `perf-cpu*.dat` ([`PerfReader`], [`PerfEvent`]).
//! - [`kernel`]: `-k` recordings' `kernel_header`, `kernel-cpu*.dat` and
//!   `kallsyms` ([`kernel::KernelData`], decoded when opened).
//! - [`merge`]: [`Merger`], all tasks plus perf events ordered as uftrace
//!   orders them (smallest time; ties to the earlier task in the `info`
//!   task list, user records before perf events), with optional `-t`
//!   time-filter buffering and `--tid` selection.
//! - [`events`]: event ids and names.
//! - [`demangle`]: `--demangle full|simple|no`.
//! - [`args`]: formatting argument and return values as uftrace prints them.
//! - [`report::walk`]: the function-stack walk (uftrace's `fstack.c`: filters,
//!   depth, triggers, exec/fork/setjmp fixups) every output below goes
//!   through; [`field`]: the `-f` columns.
//! - [`source`]: [`source::UftraceSource`], the recording as a source of
//!   the common event model (typed schemas, merged in replay's order).
//! - [`replay`] and [`info`]: the `uftrace replay` and `uftrace info` text;
//!   [`dump`], [`chrome`], [`flame`], [`graph`] and [`report`]: `uftrace dump`
//!   (raw, `--chrome`, `--flame-graph`, `--graphviz`), `graph` and `report`.
//!
//! Symbol names are demangled when the tables are loaded
//! ([`OpenOptions::demangle`]), as uftrace does.
//!
//! Data files are loaded through a [`Loader`]; [`ReadLoader`] reads them into
//! memory, the CLI passes one that memory-maps them (this crate has no
//! `unsafe`).
#![forbid(unsafe_code)]

pub mod args;
pub mod argspec;
pub mod chrome;
pub mod data;
pub mod demangle;
pub mod dump;
pub mod enums;
pub mod events;
pub mod field;
pub mod flame;
pub mod flavor;
pub mod graph;
pub mod header;
pub mod info;
pub mod kernel;
pub mod merge;
pub mod pattern;
pub mod perf;
pub mod reader;
pub mod record;
pub mod replay;
pub mod report;
pub mod source;
pub mod symbols;
pub mod task;

pub use data::{Bytes, DataBytes, Loader, OpenOptions, ReadLoader, UftraceData};
pub use demangle::Demangle;
pub use flavor::Flavor;
pub use header::{FileHeader, InfoSections, PatternType};
pub use merge::{Item, MergeOptions, Merger, Source};
pub use perf::{PerfEvent, PerfKind, PerfReader};
pub use reader::TaskReader;
pub use record::{Damage, Kind, Record};
pub use symbols::{Map, Module, Symbol};
pub use task::{Session, Sessions, Task};
