//! tracemux-render: text sinks over the common event model.
//!
//! - [`tracecmd`]: `trace-cmd report` style lines (raw `-R` view for now);
//! - [`babeltrace`]: babeltrace2 text style for events of any format;
//! - [`jsonl`]: one JSON object per event, the machine-readable form every
//!   format shares;
//! - [`notation`]: babeltrace2's notation of single values (integers in a
//!   display base, `%g`, quoted strings), shared with the CTF reader's own
//!   babeltrace2 printer.
//! - [`style`]: the three behind one switch ([`style::ModelPrinter`]).
//!
//! Sinks write into a `Vec<u8>` that the caller flushes in large blocks;
//! integers are formatted without allocation.
#![forbid(unsafe_code)]

pub mod babeltrace;
pub mod fmt;
pub mod jsonl;
pub mod notation;
pub mod style;
pub mod tracecmd;
