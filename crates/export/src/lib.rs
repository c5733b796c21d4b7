//! Writers of the tracemux event model for trace viewers: Perfetto's
//! protobuf trace format ([`perfetto`]) and the Chrome Trace Event JSON
//! format ([`chrome`]). Both are sinks of `tracemux-core`'s model only: they
//! know no input format, and stream their output as events come.
//!
//! ```no_run
//! # fn demo(meta: &tracemux_core::model::TraceMeta, ev: &tracemux_core::model::Event<'_>) -> std::io::Result<()> {
//! let file = std::io::BufWriter::new(std::fs::File::create("trace.pftrace")?);
//! let mut w = tracemux_export::perfetto::PerfettoWriter::new(meta, file)?;
//! w.event(meta, ev)?;
//! let (_file, stats) = w.finish()?;
//! eprintln!("{} packets", stats.packets);
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]

/// The protobuf library of [`proto`] (to decode what the writer wrote).
pub use prost;

pub mod chrome;
mod packets;
pub mod perf_samples;
pub mod perfetto;
pub mod proto;
pub mod tree;
mod typed_events;
