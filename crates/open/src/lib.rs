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
//!     Ok::<_, tracemux_open::Error>(n)
//! })?;
//! # Ok::<(), tracemux_open::Error>(())
//! ```

mod error;
mod kind;
mod loaders;
mod source;
pub mod timeline;

pub use error::{Error, Result};
pub use kind::{map, sniff, Kind, Mapped, Releaser};
pub use loaders::{ltt_load, open_uftrace, CtfMapLoader, UftraceMapLoader};
pub use source::OpenOptions;

use std::path::PathBuf;

use tracemux_core::model::RecordSource;

/// Open `paths` and hand the source to `f`; its result is returned. One
/// trace, or several CTF traces (merged as babeltrace2 merges them), is
/// read as it is; several traces of other formats, or of several formats,
/// are one timeline ([`crate::timeline`]): each input placed on the first
/// input's clock, merged by time.
///
/// `f`'s error type is the caller's, as long as it takes this crate's
/// [`Error`] (`anyhow::Error` does, and any type with a `From<Error>`).
pub fn with_source<T, E: From<Error>>(
    paths: &[PathBuf],
    opts: &OpenOptions<'_>,
    f: impl FnOnce(&mut dyn RecordSource) -> Result<T, E>,
) -> Result<T, E> {
    if paths.is_empty() {
        return Err(Error::Refused("no trace given".into()).into());
    }
    if timeline::is_timeline(paths)? || !opts.clock_offsets.is_empty() {
        return timeline::with_timeline(paths, opts, f);
    }
    source::one(paths, opts, f)
}
