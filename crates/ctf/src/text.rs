//! babeltrace2's text output (`babeltrace2 TRACE`, i.e. `sink.text.pretty`
//! after `filter.utils.muxer`), byte for byte.
//!
//! [`report`] opens the traces under some paths, merges their data streams
//! by time in babeltrace2's order and prints one line per event record on
//! `out`, and babeltrace2's discarded-events/packets warnings on `warn`.
//! Event records are printed while they are decoded: the decoder calls a
//! [`Visitor`] that writes the fields straight into the output buffer.

use std::io::Write;
use std::path::PathBuf;

use tracemux_core::digits::{self, put_padded};
use tracemux_core::{Error, ErrorKind};

use crate::decode::{IntValue, Kind, Node, Visitor};
use crate::fs::{self, Loader, ReadLoader, Trace};
pub use crate::ir::uuid_string;
use crate::ir::{DisplayBase, EnvValue, Scope, StringEncoding, TraceClass};
use crate::mux::{Head, MsgKind};
use crate::stream::{Discarded, Step, StreamDecoder, StreamError};
use tracemux_core::localtime::{gmtime, Tm, Zone};
use tracemux_render::notation::{self, radix as push_radix, Int};

mod clock;
mod fields;
mod live;
mod options;
mod plan;
mod printer;
mod workers;

use clock::*;
pub use fields::*;
pub use options::*;
use printer::*;
use workers::*;

pub(crate) use live::announce_stream;
pub use live::{report_live, LiveItem, LiveReportError, LiveTrace, PacketSource, StreamInfo};
pub use tracemux_render::notation::{fmt_g, push_g, quoted as push_escaped};

pub(crate) fn stream_error(trace: &Trace, group: usize, e: &StreamError) -> Error {
    let g = &trace.streams[group];
    let path = g
        .files
        .get(e.file)
        .map(|&f| trace.files[f].0.display().to_string())
        .unwrap_or_else(|| g.name.clone());
    Error::new(
        ErrorKind::Invalid(format!(
            "{path}: packet at offset {:#x}: {}",
            e.packet_offset, e.error
        )),
        "stream",
        e.byte_offset(),
    )
}

/// Print the CTF traces found under `paths` as `babeltrace2 PATHS...`
/// does: event lines on `out`, discarded-data warnings (and, in lenient
/// mode, damage reports) on `warn`. Files are read with
/// [`std::fs::read`]; see [`report_with_loader`] to map them instead.
///
/// Errors: no trace found, unreadable metadata, bad options; in strict
/// mode any damage (before printing anything when it is found while
/// indexing packets, as babeltrace2 does); decoding errors after some
/// events were printed (those lines stay printed).
pub fn report(
    paths: &[PathBuf],
    opts: &TextOptions,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> Result<Summary, Error> {
    report_with_loader(paths, opts, &ReadLoader, out, warn)
}

fn io(e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io(e.to_string()), "output", 0)
}

use tracemux_core::text::Copying;
pub use tracemux_core::text::TextOut;

/// [`report`] with a [`Loader`] for the trace files.
pub fn report_with_loader(
    paths: &[PathBuf],
    opts: &TextOptions,
    loader: &dyn Loader,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> Result<Summary, Error> {
    report_to(paths, opts, loader, &mut Copying(out), warn)
}

/// [`report_with_loader`] into a [`TextOut`].
pub fn report_to(
    paths: &[PathBuf],
    opts: &TextOptions,
    loader: &dyn Loader,
    out: &mut dyn TextOut,
    warn: &mut dyn Write,
) -> Result<Summary, Error> {
    let found = fs::discover_some(paths)?;
    let parse = |v: &Option<String>, what: &str| -> Result<Option<TimeSpec>, Error> {
        v.as_deref()
            .map(|s| {
                parse_time(s).ok_or_else(|| {
                    Error::invalid(format!("invalid {what} time `{s}`"), "options", 0)
                })
            })
            .transpose()
    };
    let begin = parse(&opts.begin, "--begin")?;
    let end = parse(&opts.end, "--end")?;
    let traces = fs::open_traces(
        &found,
        paths,
        loader,
        (opts.clock_offset_s, opts.clock_offset_ns),
    )?;
    let mut summary = Summary::default();
    // What was forgiven in the metadata, then damage found while indexing.
    for t in &traces {
        for n in &t.notes {
            if opts.strict {
                return Err(n.to_error());
            }
            // what the specification forbids is damage: exit status 1
            summary.damaged += 1;
            writeln!(warn, "tracemux: warning: {}", n.message()).map_err(io)?;
        }
        for d in &t.damage {
            if opts.strict {
                return Err(d.to_error());
            }
            let msg = d.message();
            summary.damaged += 1;
            writeln!(
                warn,
                "tracemux: warning: {msg} (packets before it are kept)"
            )
            .map_err(io)?;
        }
    }
    let mut p = Printer::new(opts, &traces);
    p.begin = begin;
    p.end = end;
    p.run(&traces, loader, out, warn, &mut summary)?;
    Ok(summary)
}

/// The trace class of a trace directory (for `dump`-style use).
pub fn trace_class(dir: &std::path::Path) -> Result<TraceClass, Error> {
    fs::read_metadata(dir, &ReadLoader)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The usual line head written at once is the head written piece by
    /// piece: within a second, across seconds, deltas up to and past ten
    /// seconds, a first event, in UTC and in a zone of its own, with and
    /// without the date.
    #[test]
    fn usual_head_is_the_general_one() {
        const S: i64 = 1_000_000_000;
        let times = [
            0,
            1,
            S - 1,
            S,
            S + 123_456_789,
            5 * S,
            15 * S - 1,
            15 * S,
            25 * S + 7,
            1_700_000_000 * S + 999_999_999,
            1_700_000_000 * S + 999_999_999,
            1_700_000_001 * S,
            1_700_000_009 * S + 999_999_999,
            1_700_000_019 * S + 999_999_999,
            1_700_000_123 * S,
        ];
        for (zone, date) in [(None, false), (Some("Asia/Kolkata"), false), (None, true)] {
            let o = TextOptions {
                clock_gmt: zone.is_none(),
                clock_date: date,
                timezone: zone.map(str::to_string),
                ..TextOptions::default()
            };
            let mut fast = Printer::new(&o, &[]);
            let mut slow = Printer::new(&o, &[]);
            assert!(fast.usual_head);
            slow.usual_head = false;
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for ns in times {
                assert!(fast.head(&mut a, true, 0, ns));
                assert!(slow.head(&mut b, true, 0, ns));
                a.push(b'\n');
                b.push(b'\n');
            }
            assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
            assert!(a.starts_with(b"["), "{}", String::from_utf8_lossy(&a));
        }
    }

    /// The display bases and signedness reach the shared notation
    /// (`tracemux_render::notation`, where the formats are tested).
    #[test]
    fn ints_in_every_display_base() {
        let mut o = Vec::new();
        for (v, base) in [
            (IntValue::U(5), DisplayBase::Binary),
            (IntValue::S(-1), DisplayBase::Octal),
            (IntValue::S(-5), DisplayBase::Decimal),
            (IntValue::U(255), DisplayBase::Hexadecimal),
        ] {
            push_int(&mut o, v, 8, base);
            o.push(b' ');
        }
        assert_eq!(o, b"0b00000101 0777 -5 0xFF ");
    }

    #[test]
    fn time_syntax() {
        assert_eq!(parse_time("1.5"), Some(TimeSpec::Abs(1_500_000_000)));
        assert_eq!(parse_time("-2"), Some(TimeSpec::Abs(-2_000_000_000)));
        assert_eq!(
            parse_time("12:39:42.4"),
            Some(TimeSpec::OfDay(
                (12 * 3600 + 39 * 60 + 42) * 1_000_000_000 + 400_000_000
            ))
        );
        assert_eq!(
            parse_time("1970-01-02 00:00"),
            Some(TimeSpec::Abs(86_400_000_000_000))
        );
        assert_eq!(parse_time("nope"), None);
    }
}
