//! Decode-only statistics (`tracemux stats`): every event record of every
//! data stream is decoded (no text is produced) and counted per event
//! class and per stream, with the discarded events and packets that the
//! packet counters tell.
//!
//! Streams are not merged by time (counts do not need it), so this runs at
//! the decoder's full speed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tracemux_core::{Error, ErrorKind};

use crate::decode::NullVisitor;
use crate::fs::{self, Loader, ReadLoader};
use crate::stream::{Step, StreamDecoder};

/// Counts of one event class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassCount {
    /// Trace name (babeltrace2's), event class name (or `<unknown>`).
    pub trace: String,
    pub name: String,
    pub stream_class_id: u64,
    pub id: u64,
    pub events: u64,
}

/// Counts of one data stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamCount {
    pub trace: String,
    /// Path of its first file.
    pub name: String,
    pub stream_class_id: u64,
    pub stream_id: u64,
    pub packets: u64,
    pub events: u64,
    /// Sum of the known discarded-event counts.
    pub discarded_events: u64,
    /// Notices with an unknown count ("may have discarded").
    pub discarded_events_unknown: u64,
    /// Packets lost according to sequence numbers.
    pub discarded_packets: u64,
    /// First and last event time, ns from the clock origin.
    pub first_ns: Option<i64>,
    pub last_ns: Option<i64>,
}

/// Result of [`count`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// All event records.
    pub events: u64,
    pub classes: Vec<ClassCount>,
    pub streams: Vec<StreamCount>,
    /// Damage (lenient mode): what could not be read.
    pub damage: Vec<String>,
    /// What was forgiven in the metadata (lenient mode; refused in strict
    /// mode): file, what, byte offset.
    pub warnings: Vec<String>,
}

/// What one part of a stream held.
#[derive(Default)]
struct Part {
    events: u64,
    packets: u64,
    discarded_events: u64,
    discarded_events_unknown: u64,
    discarded_packets: u64,
    first_clock: Option<u64>,
    last_clock: Option<u64>,
    per_class: Vec<u64>,
    error: Option<crate::stream::StreamError>,
}

fn count_part(dec: &mut StreamDecoder<'_>, rel: &mut fs::Releaser<'_>, nclasses: usize) -> Part {
    let mut r = Part {
        per_class: vec![0; nclasses],
        ..Part::default()
    };
    loop {
        match dec.advance(&mut NullVisitor) {
            Ok(Step::Event { clock, class }) => {
                r.events += 1;
                if let Some(n) = r.per_class.get_mut(class) {
                    *n += 1;
                }
                if r.first_clock.is_none() {
                    r.first_clock = Some(clock);
                }
                r.last_clock = Some(clock);
            }
            Ok(Step::PacketBegin { .. }) => {
                r.packets += 1;
                if let Some(pe) = dec.current_packet() {
                    rel.packet(pe.file, pe.offset);
                }
            }
            Ok(Step::Discarded(d)) => match (d.packets, d.count) {
                (true, Some(n)) => r.discarded_packets += n,
                (false, Some(n)) => r.discarded_events += n,
                (false, None) => r.discarded_events_unknown += 1,
                (true, None) => {}
            },
            Ok(Step::PacketEnd { .. }) => {}
            Ok(Step::End) => break,
            Err(e) => {
                r.error = Some(e);
                break;
            }
        }
    }
    if let Some(pe) = dec.current_packet() {
        rel.finish(pe.file, pe.offset.saturating_add(pe.total_bytes));
    }
    r
}

/// Count the event records of the CTF traces under `paths`. Lenient:
/// damaged packets are reported in [`Counts::damage`]; `strict` makes them
/// an error.
pub fn count(paths: &[PathBuf], strict: bool) -> Result<Counts, Error> {
    count_with_loader(paths, strict, &ReadLoader)
}

/// [`count`] with a [`Loader`] for the trace files.
pub fn count_with_loader(
    paths: &[PathBuf],
    strict: bool,
    loader: &dyn Loader,
) -> Result<Counts, Error> {
    let found = fs::discover_some(paths)?;
    let traces = fs::open_traces(&found, paths, loader, (0, 0))?;
    let mut out = Counts::default();
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(16);
    for t in &traces {
        for n in &t.notes {
            if strict {
                return Err(n.to_error());
            }
            out.warnings.push(n.message());
        }
        for d in &t.damage {
            if strict {
                return Err(d.to_error());
            }
            out.damage.push(d.message());
        }
        // Event counts per (stream class, class position).
        let mut per_class: Vec<Vec<u64>> =
            t.tc.stream_classes
                .iter()
                .map(|s| vec![0; s.event_classes.len()])
                .collect();
        for g in &t.streams {
            let files: Vec<&[u8]> = g.files.iter().map(|&f| (*t.files[f].1).as_ref()).collect();
            let clock = t
                .prog
                .streams
                .get(g.class)
                .and_then(|s| s.default_clock)
                .and_then(|c| t.tc.clocks.get(c));
            let sc_pos = t
                .prog
                .streams
                .get(g.class)
                .and_then(|s| t.tc.stream_classes.iter().position(|x| x.id == s.id));
            let mut sc = StreamCount {
                trace: t.name.clone(),
                name: g.name.clone(),
                stream_class_id: g.class_id,
                stream_id: g.id,
                packets: 0,
                events: 0,
                discarded_events: 0,
                discarded_events_unknown: 0,
                discarded_packets: 0,
                first_ns: None,
                last_ns: None,
            };
            // Packets that set the whole clock are independent: decode the
            // stream in parts, one per core.
            let independent = t
                .prog
                .streams
                .get(g.class)
                .is_some_and(|s| s.packets_independent(&t.prog));
            let parts = if independent {
                cores.min(g.packets.len().max(1))
            } else {
                1
            };
            let per = g.packets.len().div_ceil(parts.max(1)).max(1);
            let ranges: Vec<(usize, usize)> = (0..g.packets.len().max(1))
                .step_by(per)
                .map(|a| (a, (a + per).min(g.packets.len())))
                .collect();
            let results: Vec<Part> = std::thread::scope(|sc_| {
                let handles: Vec<_> = ranges
                    .iter()
                    .map(|&(a, b)| {
                        let files = files.clone();
                        let t = &t;
                        let g = &g;
                        let nclasses = sc_pos
                            .map(|p| t.tc.stream_classes[p].event_classes.len())
                            .unwrap_or(0);
                        sc_.spawn(move || {
                            let mut dec = StreamDecoder::new(
                                &t.prog,
                                t.tc.uuid,
                                files,
                                g.packets[a..b].to_vec(),
                            );
                            dec.set_quirks(t.quirks.lttng_crash, t.quirks.lttng_event_after_packet);
                            if a > 0 {
                                dec.set_previous(Some(g.packets[a - 1].info));
                            }
                            let mut rel = fs::Releaser::new(loader, t, g);
                            count_part(&mut dec, &mut rel, nclasses)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_default())
                    .collect()
            });
            let mut last_clock = None;
            for r in results {
                sc.events += r.events;
                sc.packets += r.packets;
                sc.discarded_events += r.discarded_events;
                sc.discarded_events_unknown += r.discarded_events_unknown;
                sc.discarded_packets += r.discarded_packets;
                if sc.first_ns.is_none() {
                    sc.first_ns = r
                        .first_clock
                        .and_then(|c| clock.and_then(|k| fs::ns_from_origin(k, c)));
                }
                if r.last_clock.is_some() {
                    last_clock = r.last_clock;
                }
                if let Some(p) = sc_pos {
                    for (i, n) in r.per_class.iter().enumerate() {
                        if let Some(x) = per_class[p].get_mut(i) {
                            *x += n;
                        }
                    }
                }
                if let Some(e) = r.error {
                    let path = g
                        .files
                        .get(e.file)
                        .map(|&f| t.files[f].0.display().to_string())
                        .unwrap_or_default();
                    let msg = format!(
                        "{path}: packet at offset {:#x}: {}",
                        e.packet_offset, e.error
                    );
                    if strict {
                        return Err(Error::new(
                            ErrorKind::Invalid(msg),
                            "stream",
                            e.byte_offset(),
                        ));
                    }
                    out.damage.push(msg);
                    // Parts after a damaged one are not counted (the
                    // stream stops there, as when decoding it in order).
                    break;
                }
            }
            sc.last_ns = last_clock.and_then(|c| clock.and_then(|k| fs::ns_from_origin(k, c)));
            out.events += sc.events;
            out.streams.push(sc);
        }
        for (si, s) in t.tc.stream_classes.iter().enumerate() {
            for (ei, e) in s.event_classes.iter().enumerate() {
                let n = per_class[si][ei];
                if n > 0 {
                    out.classes.push(ClassCount {
                        trace: t.name.clone(),
                        name: e.name.clone().unwrap_or_else(|| "<unknown>".into()),
                        stream_class_id: s.id,
                        id: e.id,
                        events: n,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// `tracemux stats`'s text of the counts (a layout of our own): events,
/// discarded events and packets, then per stream and per event class.
pub fn write_counts(s: &mut String, c: &Counts) {
    let _ = writeln!(s, "Events\n  events                {}", c.events);
    let disc: u64 = c.streams.iter().map(|s| s.discarded_events).sum();
    let unknown: u64 = c.streams.iter().map(|s| s.discarded_events_unknown).sum();
    let pk: u64 = c.streams.iter().map(|s| s.discarded_packets).sum();
    let _ = writeln!(
        s,
        "  discarded events      {disc}{}",
        if unknown > 0 {
            format!(" (+{unknown} notices without a count)")
        } else {
            String::new()
        }
    );
    let _ = writeln!(s, "  discarded packets     {pk}");
    let _ = writeln!(
        s,
        "\n  per stream\n    {:>8} {:>10} {:>10} {:>9}  stream",
        "packets", "events", "discarded", "disc.pkts"
    );
    for st in &c.streams {
        let _ = writeln!(
            s,
            "    {:>8} {:>10} {:>10} {:>9}  {} (class {}, id {})",
            st.packets,
            st.events,
            st.discarded_events,
            st.discarded_packets,
            st.name,
            st.stream_class_id,
            st.stream_id
        );
    }
    let mut classes = c.classes.clone();
    classes.sort_by(|x, y| y.events.cmp(&x.events).then_with(|| x.name.cmp(&y.name)));
    let _ = writeln!(
        s,
        "\n  per event class ({} classes)\n    {:>10}  event",
        classes.len(),
        "events"
    );
    for cl in &classes {
        let _ = writeln!(s, "    {:>10}  {}", cl.events, cl.name);
    }
}

/// `tracemux info`'s text of one trace (a layout of our own): format,
/// uuid, name, byte order, environment, clocks and stream classes.
pub fn describe(s: &mut String, dir: &Path, tc: &crate::ir::TraceClass) {
    let _ = writeln!(s, "Trace {}", dir.display());
    let version = match tc.version {
        crate::ir::CtfVersion::Ctf1 => "1.8",
        crate::ir::CtfVersion::Ctf2 => "2",
    };
    let format = tracemux_core::model::Format::Ctf.describe(Some(version));
    let _ = writeln!(s, "  format                {format}");
    if let Some(u) = &tc.uuid {
        let _ = writeln!(s, "  uuid                  {}", crate::ir::uuid_string(u));
    }
    if let Some(n) = &tc.name {
        let _ = writeln!(s, "  name                  {n}");
    }
    let order = match tc.native_byte_order {
        crate::ir::ByteOrder::Little => "little-endian",
        crate::ir::ByteOrder::Big => "big-endian",
    };
    let _ = writeln!(s, "  byte order            {order}");
    if !tc.environment.is_empty() {
        let _ = writeln!(s, "  environment");
        for (k, v) in &tc.environment {
            match v {
                crate::ir::EnvValue::Int(i) => {
                    let _ = writeln!(s, "    {k} = {i}");
                }
                crate::ir::EnvValue::Str(t) => {
                    let _ = writeln!(s, "    {k} = {t:?}");
                }
            }
        }
    }
    for c in &tc.clocks {
        let _ = writeln!(
            s,
            "  clock {}: {} Hz, offset {} s + {} cycles{}",
            c.name,
            c.frequency,
            c.offset_seconds,
            c.offset_cycles,
            if c.origin_is_unix_epoch {
                ", origin Unix epoch"
            } else {
                ""
            }
        );
    }
    for sc in &tc.stream_classes {
        let _ = writeln!(
            s,
            "  stream class {}: {} event classes",
            sc.id,
            sc.event_classes.len()
        );
    }
    s.push('\n');
}
