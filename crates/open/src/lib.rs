//! Opening traces: recognise a path's format by its content, memory-map
//! its files, and hand any of them to a callback as a source of the common
//! event model ([`tracemux_core::model::RecordSource`]).
//!
//! This is what every consumer of the model shares: the `tracemux` binary's
//! `report --json`/`--style` and `convert`, the SQL engine and the Python
//! package. The format crates stay independent of one another; this crate
//! is the one place that knows all of them.
//!
//! ```no_run
//! use tracemux_open::{with_source, OpenOptions};
//! let paths = [std::path::PathBuf::from("trace.dat")];
//! let n = with_source(&paths, &OpenOptions::default(), |src| {
//!     let mut n = 0u64;
//!     while let Some(r) = src.next_record()? {
//!         if matches!(r, tracemux_core::model::Record::Event(_)) {
//!             n += 1;
//!         }
//!     }
//!     Ok(n)
//! })?;
//! # Ok::<(), anyhow::Error>(())
//! ```

mod kind;
mod loaders;
mod source;
pub mod timeline;

pub use kind::{map, sniff, Kind, Mapped, Releaser};
pub use loaders::{ltt_load, open_uftrace, CtfMapLoader, UftraceMapLoader};
pub use source::{with_source, OpenOptions};
