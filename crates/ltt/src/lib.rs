//! Legacy LTT (LTTng 0.x, 2008 trace format) reader and fixture writer.
//!
//! A trace is a directory of tracefiles (`cpu_N`, `control/facilities_N`,
//! ...), each a sequence of equal-size blocks of events; the `core`
//! facility's `marker_id` / `marker_format` events in the facilities
//! tracefiles name the events and give the layout of their fields. The
//! only description of the format is `ltt-trace-format-2008.txt` (LTTV's
//! `format.html` of 2008-06-02); no recorder or reader of it survives, so
//! this crate is verified against that text only: with its own writer
//! ([`writer`]) and a hand-built byte dump annotated against the text. See
//! the crate README for what the text leaves open and what was chosen.
//!
//! - [`header`]: block start/end header and trace header, byte order,
//!   the time formula;
//! - [`tracefile`]: blocks and event headers of one tracefile;
//! - [`format`](mod@format): marker format strings and field decoding;
//! - [`markers`]: the `core` facility and the event-type registry;
//! - [`trace`]: the trace directory and the merge by time;
//! - [`report`](mod@report): `report` (babeltrace2-style text, printed by
//!   the shared printer of `tracemux-render` over [`source`]) and `info`;
//! - [`source`]: the common event model ([`tracemux_core::model`]);
//! - [`writer`]: traces from a description, for tests and fixtures.
//!
//! ```
//! use tracemux_ltt::writer::{Arg, TraceDesc};
//! use tracemux_ltt::report::{report_trace, ReportOptions};
//!
//! let mut d = TraceDesc::default();
//! let fs = d.facility("fs");
//! let open = d.event(fs, "open", "fd %d name %s");
//! d.push(0, 1_000, open, vec![Arg::I(3), Arg::Str(b"/etc".to_vec())]);
//! let trace = d.build().unwrap().open(false).unwrap();
//! let mut out = Vec::new();
//! report_trace(&trace, &ReportOptions::default(), &mut out, &mut std::io::sink()).unwrap();
//! let text = String::from_utf8(out).unwrap();
//! assert!(text.lines().last().unwrap().ends_with("fs:open: { cpu_id = 0 }, { fd = 3, name = \"/etc\" }"));
//! ```
#![forbid(unsafe_code)]

pub mod format;
pub mod header;
pub mod markers;
pub mod report;
pub mod source;
pub mod trace;
pub mod tracefile;
pub mod writer;

pub use header::{sniff, LTT_MAGIC};
pub use report::{info, report, ReportOptions};
pub use trace::{OpenOptions, Trace};
