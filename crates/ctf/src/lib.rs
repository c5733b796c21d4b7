//! CTF 1.8 (TSDL metadata) and CTF 2 (JSON metadata) reader, and
//! babeltrace2 2.0's text output of CTF traces, byte for byte.
//!
//! Both metadata languages lower into one IR ([`ir`]): [`tsdl`] for CTF 1.8
//! (plain or packetized), [`ctf2`] for CTF 2. The binary decoder
//! ([`decode`], [`stream`]) and everything above it work on the IR only.
//!
//! Entry points:
//!
//! * [`text::report`] / [`text::report_with_loader`]: what
//!   `babeltrace2 TRACE...` prints (options in [`text::TextOptions`]).
//! * [`stats::count`] / [`stats::count_with_loader`]: decode-only counts per
//!   event class and data stream (`tracemux stats`).
//! * [`source::open`] + [`source::CtfSource`]: the events of one or several
//!   traces as a source of the common event model, in the text output's
//!   order (`tracemux report --json`, converters).
//! * [`fs::is_ctf`], [`fs::metadata_version`]: recognise a CTF trace by
//!   content; [`fs::discover`] / [`fs::open_traces`]: trace directories,
//!   stream grouping and packet indexes.
//! * [`stream::StreamDecoder`] with a [`decode::Visitor`]: decode the event
//!   records of one data stream, field by field, without building values;
//!   [`listing::Listing`] writes yactfr's element listing with it.
//!
//! ```
//! use std::path::PathBuf;
//! use tracemux_ctf::text::{report, TextOptions};
//! let trace = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
//!     .join("../../tests/fixtures/ctf/lttng-ust-uid/trace");
//! let opts = TextOptions { timezone: Some("UTC".into()), ..TextOptions::default() };
//! let (mut out, mut warn) = (Vec::new(), Vec::new());
//! let summary = report(&[trace], &opts, &mut out, &mut warn).unwrap();
//! assert_eq!(summary.events, 1800);
//! assert!(out.starts_with(b"[12:39:42.403425209] (+?.?????????) vm corpus:ints: "));
//! ```
//!
//! # Where this reader and babeltrace2 2.0.4 differ
//!
//! babeltrace2's output is reproduced, including its quirks (a `_` removed
//! from names once more for each copy of a named type, empty strings that
//! show the value of the pooled field object's last non-empty string,
//! discarded-data warnings at the points its muxer emits them). It fails on
//! some valid CTF 1.8 that this reader decodes as the format says (and as
//! yactfr does): variant tags given by an absolute `stream.`/`trace.` path,
//! TSDL keywords as member names, clocks without `freq` (it crashes),
//! a trace without a stream class, special fields (`id`, `packet_size`,
//! `stream_id`, `uuid`) that are strings, several stream classes in one
//! stream file. Damaged data is reported and every intact packet printed
//! unless [`text::TextOptions::strict`] asks for babeltrace2's behaviour
//! (an error; nothing printed when the damage is found while indexing).
#![forbid(unsafe_code)]

pub mod ctf2;
pub mod decode;
pub mod follow;
pub mod fs;
pub mod header;
pub mod ir;
pub mod listing;
pub mod live;
mod mux;
pub mod source;
pub mod stats;
pub mod stream;
pub mod text;
pub mod tsdl;
pub mod writer;
