//! LTT events in the common event model ([`tracemux_core::model`]), so
//! that every sink can consume them.
//!
//! How LTT maps onto the model:
//!
//! | model | LTT |
//! |---|---|
//! | `TraceMeta::endian`, `long_size` | trace header byte order, `arch_size` |
//! | `BufferInfo` (one, `""`) | the trace; `page_size` = block size, clock `tsc` |
//! | `StreamInfo` / `Event::stream` | one per tracefile, in [`Trace::files`] order; `cpu` = its N |
//! | `EventClass::id` / `Event::type_id` | `facility_id << 8 \| event_id` |
//! | `EventClass::system` / `name` | facility name / event name |
//! | `EventClass::print_fmt` | the marker format string |
//! | `EventClass::fields` | the fields at a fixed offset (those before the first string) |
//! | `EventClass::printer` | decodes every field (`write_raw_fields`: ` name=value`) |
//! | `Event::ts` | ns since the epoch (the spec's formula) |
//! | `Event::data` / `ext` | the payload (`event_size` bytes) |
//! | `Event::pid` | -1 (LTT event headers carry no task) |
//! | `Record::Lost` | a flight-recorder tracefile whose first block starts after the trace start (count unknown) |
//! | `Record::Damage` | damage and event types no `marker_id` names |
//!
//! Events whose type is unknown have `class: None` and their raw payload.

use std::sync::Arc;

use tracemux_core::error::Result;
use tracemux_core::merge::PeekSource;
use tracemux_core::model::{
    Base as ModelBase, BufferInfo, ClassPrinter, ClassTable, ClockInfo, Event, EventClass,
    FieldDef, FieldFlags, FieldVisitor, Format, Lost, PrintCtx, Record, RecordSource, StreamInfo,
    TraceMeta, Value,
};
use tracemux_core::typed::{ClassSchema, FieldSchema, FieldType, IntType, Scope};
use tracemux_core::Endian;

use crate::format::{Base, FieldIter, FieldKind, FieldSpec};
use crate::markers::type_key;
use crate::trace::{Events, Merged, Trace};

/// Decodes an LTT payload for printers that work on the model.
#[derive(Debug)]
struct LttClassPrinter {
    fields: Vec<FieldSpec>,
    alignment: u8,
}

impl ClassPrinter for LttClassPrinter {
    fn write_raw_fields(&self, out: &mut Vec<u8>, data: &[u8], size: usize, ctx: &PrintCtx<'_>) {
        use std::io::Write;
        let data = data.get(..size).unwrap_or(data);
        for r in FieldIter::new(&self.fields, data, ctx.endian, self.alignment) {
            let Ok((f, v)) = r else {
                out.extend_from_slice(b" [truncated]");
                return;
            };
            let _ = match (v, f.base) {
                (Value::Str(s), _) => {
                    let _ = write!(out, " {}=", f.name);
                    out.extend_from_slice(s);
                    Ok(())
                }
                (Value::Unsigned(u), Base::Hex) => write!(out, " {}=0x{u:x}", f.name),
                (Value::Unsigned(u), Base::Octal) => write!(out, " {}=0{u:o}", f.name),
                (Value::Unsigned(u), _) => write!(out, " {}={u}", f.name),
                (Value::Signed(i), _) => write!(out, " {}={i}", f.name),
                _ => Ok(()),
            };
        }
    }

    fn visit_fields(
        &self,
        data: &[u8],
        size: usize,
        ctx: &PrintCtx<'_>,
        layout: &tracemux_core::layout::ClassLayout,
        v: &mut dyn FieldVisitor,
    ) -> bool {
        let data = data.get(..size).unwrap_or(data);
        // the fields come in the order of the schema's payload
        for (i, r) in FieldIter::new(&self.fields, data, ctx.endian, self.alignment).enumerate() {
            let Ok((f, val)) = r else { break };
            let id = layout.member(tracemux_core::typed::Scope::Payload, i);
            v.field(layout.get(id), model_base(f.base), val);
        }
        true
    }
}

fn model_base(b: Base) -> ModelBase {
    match b {
        Base::Decimal => ModelBase::Dec,
        Base::Hex => ModelBase::Hex,
        Base::Octal => ModelBase::Oct,
    }
}

/// The typed schema of a marker format: every field in the payload.
fn schema(specs: &[FieldSpec]) -> ClassSchema {
    let fields = specs
        .iter()
        .map(|f| {
            let ty = match f.kind {
                FieldKind::String => FieldType::Str,
                k => FieldType::Int(IntType {
                    base: model_base(f.base),
                    ..IntType::new(f.size.saturating_mul(8), k == FieldKind::Signed)
                }),
            };
            FieldSchema::new(f.name.clone(), ty)
        })
        .collect();
    let mut s = ClassSchema::default();
    s.push(Scope::Payload, fields);
    s
}

/// The fields with a fixed offset: every integer before the first string.
fn fixed_fields(specs: &[FieldSpec], alignment: u8) -> Vec<FieldDef> {
    let mut defs = Vec::new();
    let mut off = 0usize;
    for f in specs {
        if f.kind == FieldKind::String {
            break;
        }
        let size = f.size as usize;
        if alignment != 0 {
            off += crate::header::pad_to(off, size.min(alignment as usize));
        }
        let mut flags = 0;
        if f.kind == FieldKind::Signed {
            flags |= FieldFlags::SIGNED;
        }
        defs.push(FieldDef::scalar(
            f.name.clone(),
            format!("{}{}", if flags != 0 { "s" } else { "u" }, size * 8),
            off as u32,
            size as u32,
            FieldFlags(flags),
        ));
        off += size;
    }
    defs
}

/// Build the model's description of `trace`.
pub fn trace_meta(trace: &Trace) -> TraceMeta {
    let h = trace.header();
    let mut classes = ClassTable::new();
    for t in trace.registry().types() {
        let (fields, printer, typed) = match &t.fields {
            Ok(f) => (
                fixed_fields(f, t.sizes.alignment),
                Some(Arc::new(LttClassPrinter {
                    fields: f.clone(),
                    alignment: t.sizes.alignment,
                }) as Arc<dyn ClassPrinter>),
                Some(Arc::new(schema(f))),
            ),
            Err(_) => (Vec::new(), None, None),
        };
        classes.push(EventClass {
            index: tracemux_core::layout::ClassId::UNLISTED,
            id: type_key(t.facility_id, t.event_id) as u32,
            system: t.facility.clone(),
            name: t.name.clone(),
            common_fields: Vec::new(),
            fields,
            print_fmt: t.format.clone().unwrap_or_default(),
            printer,
            schema: typed,
            compiled: Default::default(),
        });
    }
    let cpus = trace.files().iter().map(|f| f.cpu + 1).max().unwrap_or(0);
    TraceMeta {
        endian: h.map(|h| h.endian),
        long_size: h.map_or(8, |h| h.arch_size as u32),
        cpus,
        buffers: vec![BufferInfo {
            name: String::new(),
            clock: "tsc".into(),
            page_size: trace
                .files()
                .iter()
                .find_map(|f| f.layout.as_ref().map(|l| l.block_size as u32))
                .unwrap_or(0),
            cpus,
        }],
        streams: trace
            .files()
            .iter()
            .map(|f| StreamInfo {
                buffer: 0,
                cpu: f.cpu,
            })
            .collect(),
        classes,
        format: Some(Format::Ltt),
        clocks: vec![ClockInfo {
            name: "tsc".into(),
            freq: 1_000_000_000,
            origin_unix_epoch: true,
            description: Some("LTT cycle counter, converted to ns since the epoch".into()),
            ..ClockInfo::default()
        }],
        ..TraceMeta::default()
    }
}

/// The events of an LTT trace as [`Record`]s in time order.
pub struct LttSource<'t> {
    trace: &'t Trace,
    events: Events<'t>,
    meta: TraceMeta,
    pending: Option<Merged<'t>>,
    last: Option<EventPlace>,
}

/// Where the last event [`LttSource`] gave is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventPlace {
    /// Index into [`Trace::files`].
    pub file: u32,
    /// Block number in that tracefile.
    pub block: u32,
    /// File offset of the event header.
    pub offset: u64,
    /// The payload size of the event header.
    pub size: u16,
}

impl<'t> LttSource<'t> {
    pub fn new(trace: &'t Trace) -> Self {
        LttSource {
            trace,
            events: trace.events(),
            meta: trace_meta(trace),
            pending: None,
            last: None,
        }
    }

    /// Where the last event given by [`RecordSource::next_record`] is
    /// stored (for messages that name it).
    pub fn last_event_place(&self) -> Option<EventPlace> {
        self.last
    }

    fn fill(&mut self) -> Result<()> {
        if self.pending.is_none() {
            self.pending = self.events.next_merged()?;
        }
        Ok(())
    }
}

impl RecordSource for LttSource<'_> {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>> {
        self.fill()?;
        let Some(m) = self.pending.take() else {
            return Ok(None);
        };
        Ok(Some(match m {
            Merged::Event(ev) => {
                let f = &self.trace.files()[ev.file as usize];
                let endian = f
                    .layout
                    .as_ref()
                    .map_or(Endian::Little, |l| l.header.endian);
                let id = type_key(ev.raw.facility, ev.raw.event) as u32;
                self.last = Some(EventPlace {
                    file: ev.file,
                    block: ev.raw.block,
                    offset: ev.raw.offset,
                    size: ev.raw.size,
                });
                Record::Event(Event {
                    ts: ev.ns,
                    stream: ev.file,
                    cpu: f.cpu,
                    type_id: id,
                    class: self.meta.classes.get(id),
                    pid: -1,
                    data: ev.raw.payload,
                    ext: ev.raw.payload,
                    endian,
                    file_pos: ev.raw.end,
                    tape: None,
                    raw_ts: Some(ev.raw.tsc),
                })
            }
            Merged::Lost(l) => Record::Lost(Lost {
                stream: l.file,
                cpu: self.trace.files()[l.file as usize].cpu,
                ts: l.to_ns,
                count: None,
            }),
            Merged::Damage(e) => Record::Damage(e),
        }))
    }
}

impl PeekSource for LttSource<'_> {
    fn peek_ts(&mut self) -> Result<Option<u64>> {
        self.fill()?;
        Ok(self.pending.as_ref().map(|m| match m {
            Merged::Event(e) => e.ns,
            Merged::Lost(l) => l.to_ns,
            Merged::Damage(_) => 0,
        }))
    }
}
