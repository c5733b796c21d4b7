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

mod live;
mod plan;

pub(crate) use live::announce_stream;
pub use live::{report_live, LiveItem, LiveReportError, LiveTrace, PacketSource, StreamInfo};
pub use tracemux_render::notation::{fmt_g, push_g, quoted as push_escaped};

// ---------------------------------------------------------------------
// Options

/// Which field names are printed (`--names`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Names {
    pub payload: bool,
    pub context: bool,
    pub scope: bool,
    pub header: bool,
}

impl Default for Names {
    fn default() -> Self {
        Names {
            payload: true,
            context: true,
            scope: false,
            header: false,
        }
    }
}

/// Which optional header fields are printed (`--fields`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    pub trace: bool,
    pub hostname: bool,
    pub domain: bool,
    pub procname: bool,
    pub vpid: bool,
    pub loglevel: bool,
    pub emf: bool,
    pub callsite: bool,
}

impl Default for Fields {
    fn default() -> Self {
        Fields {
            trace: false,
            hostname: true,
            domain: false,
            procname: true,
            vpid: true,
            loglevel: false,
            emf: false,
            callsite: false,
        }
    }
}

impl Fields {
    fn all(v: bool) -> Fields {
        Fields {
            trace: v,
            hostname: v,
            domain: v,
            procname: v,
            vpid: v,
            loglevel: v,
            emf: v,
            callsite: v,
        }
    }

    /// The flag a `--fields` name sets.
    fn flag(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "trace" => &mut self.trace,
            "trace:hostname" => &mut self.hostname,
            "trace:domain" => &mut self.domain,
            "trace:procname" => &mut self.procname,
            "trace:vpid" => &mut self.vpid,
            "loglevel" => &mut self.loglevel,
            "emf" => &mut self.emf,
            "callsite" => &mut self.callsite,
            _ => return None,
        })
    }
}

/// Options of the babeltrace2 text output, with babeltrace2's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextOptions {
    /// `--clock-cycles`: timestamps in cycles.
    pub clock_cycles: bool,
    /// `--clock-seconds`: `SECONDS.NANOSECONDS`.
    pub clock_seconds: bool,
    /// `--clock-date`: print the date.
    pub clock_date: bool,
    /// `--clock-gmt`: UTC instead of local time.
    pub clock_gmt: bool,
    /// `--no-delta`.
    pub no_delta: bool,
    pub names: Names,
    pub fields: Fields,
    /// `--begin` / `--end`, in babeltrace2's time syntax.
    pub begin: Option<String>,
    pub end: Option<String>,
    /// `--clock-offset` (seconds) and `--clock-offset-ns`.
    pub clock_offset_s: i64,
    pub clock_offset_ns: i64,
    /// Damage (a packet that cannot be read) is an error, as in
    /// babeltrace2; by default it is reported on `warn` and every intact
    /// packet is printed.
    pub strict: bool,
    /// Time zone for local times, as a `TZ` value (`UTC`,
    /// `Europe/Paris`...); `None`: the process's (`TZ`, `/etc/localtime`).
    pub timezone: Option<String>,
    /// Rendering threads: `None` picks by the number of cores; `Some(1)`
    /// renders on the printing thread; `Some(n)` uses `n` workers for each
    /// stream whose packets can be decoded independently. The output is
    /// the same in every case.
    pub threads: Option<usize>,
    /// Bytes of packets per work unit when a stream is rendered by several
    /// workers (default 512 KiB; small values exercise the machinery in
    /// tests).
    pub segment_bytes: Option<u64>,
    /// Print every event record's body by walking its fields, without the
    /// per-class plans (the output is the same; for tests and comparisons).
    pub no_body_plans: bool,
}

impl TextOptions {
    /// Set the babeltrace2 option `flag` (`--clock-cycles`,
    /// `--clock-seconds`, `--clock-date`, `--clock-gmt`, `--no-delta`);
    /// false when `flag` is not one of them.
    pub fn set_flag(&mut self, flag: &str) -> bool {
        let on = match flag {
            "--clock-cycles" => &mut self.clock_cycles,
            "--clock-seconds" => &mut self.clock_seconds,
            "--clock-date" => &mut self.clock_date,
            "--clock-gmt" => &mut self.clock_gmt,
            "--no-delta" => &mut self.no_delta,
            _ => return false,
        };
        *on = true;
        true
    }

    /// Apply a `--names` list (`all`, `none`, `payload`/`args`/`arg`,
    /// `context`/`ctx`, `scope`, `header`), as babeltrace2 does: naming
    /// items starts from none.
    pub fn set_names(&mut self, list: &str) -> Result<(), String> {
        let mut all = false;
        let mut none = false;
        let mut items = Vec::new();
        for it in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match it {
                "payload" | "args" | "arg" => items.push("payload"),
                "context" | "ctx" => items.push("context"),
                "scope" | "header" => items.push(it),
                "all" => all = true,
                "none" => none = true,
                _ => return Err(format!("unknown field name: `{it}`")),
            }
        }
        if all && none {
            return Err("`all` and `none` together".into());
        }
        if all || none {
            let v = all;
            self.names = Names {
                payload: v,
                context: v,
                scope: v,
                header: v,
            };
        } else if !items.is_empty() {
            self.names = Names {
                payload: false,
                context: false,
                scope: false,
                header: false,
            };
        }
        for it in items {
            match it {
                "payload" => self.names.payload = true,
                "context" => self.names.context = true,
                "scope" => self.names.scope = true,
                _ => self.names.header = true,
            }
        }
        Ok(())
    }

    /// Apply a `--fields` list (`all`, `trace`, `trace:hostname`,
    /// `trace:domain`, `trace:procname`, `trace:vpid`, `loglevel`, `emf`,
    /// `callsite`).
    pub fn set_fields(&mut self, list: &str) -> Result<(), String> {
        // the named fields only, or all of them
        let mut chosen = Fields::all(false);
        let mut named = false;
        let mut all = false;
        for it in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if it == "all" {
                all = true;
            } else {
                let flag = chosen.flag(it).ok_or(format!("unknown field: `{it}`"))?;
                *flag = true;
                named = true;
            }
        }
        if all {
            self.fields = Fields::all(true);
        } else if named {
            self.fields = chosen;
        }
        Ok(())
    }
}

/// What a report printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Event lines printed.
    pub events: u64,
    /// Discarded-events / discarded-packets warnings.
    pub discarded_notices: u64,
    /// Damage reported on `warn` (lenient mode).
    pub damaged: u64,
}

// ---------------------------------------------------------------------
// Number and text formatting

/// Append `v` in babeltrace2's integer format for `base` (`len` bits).
#[inline]
pub fn push_int(out: &mut Vec<u8>, v: IntValue, len: u32, base: DisplayBase) {
    let v = match v {
        IntValue::U(x) => Int::U(x),
        IntValue::S(x) => Int::S(x),
    };
    notation::int(out, base.into(), v, len);
}

/// The text of a string field: its bytes up to the first null code unit,
/// as UTF-8.
pub(crate) fn string_text<'a>(
    raw: &'a [u8],
    enc: StringEncoding,
    tmp: &'a mut Vec<u8>,
) -> &'a [u8] {
    match enc {
        StringEncoding::Utf8 => {
            let n = memchr::memchr(0, raw).unwrap_or(raw.len());
            &raw[..n]
        }
        _ => {
            tmp.clear();
            let unit = enc.unit();
            let mut units = Vec::new();
            for ch in raw.chunks_exact(unit) {
                let v = match enc {
                    StringEncoding::Utf16Le => u16::from_le_bytes([ch[0], ch[1]]) as u32,
                    StringEncoding::Utf16Be => u16::from_be_bytes([ch[0], ch[1]]) as u32,
                    StringEncoding::Utf32Le => u32::from_le_bytes([ch[0], ch[1], ch[2], ch[3]]),
                    _ => u32::from_be_bytes([ch[0], ch[1], ch[2], ch[3]]),
                };
                if v == 0 {
                    break;
                }
                units.push(v);
            }
            let s: String = if unit == 2 {
                let u16s: Vec<u16> = units.iter().map(|&u| u as u16).collect();
                String::from_utf16_lossy(&u16s)
            } else {
                units
                    .iter()
                    .map(|&u| char::from_u32(u).unwrap_or('\u{fffd}'))
                    .collect()
            };
            tmp.extend_from_slice(s.as_bytes());
            tmp
        }
    }
}

// ---------------------------------------------------------------------
// Field printer (the visitor)

#[derive(Debug, Clone, Copy)]
enum Frame {
    Struct(u64),
    Array(u64),
    Wrap,
    Optional(bool),
}

/// Writes the fields of the printed scopes in babeltrace2's format.
pub struct FieldPrinter {
    /// Output of the current line.
    pub out: Vec<u8>,
    /// babeltrace2's `start_line`: no `, ` before the next scope.
    pub start_line: bool,
    names: Names,
    /// Print the packet context (capture mode) instead of the event scopes.
    capture_pc: bool,
    /// The packet context was printed (capture mode).
    pub pc_visible: bool,
    /// A packet was opened (capture mode).
    opened: bool,
    active: bool,
    pending_scope: Option<Scope>,
    field_names: bool,
    skip: u32,
    frames: Vec<Frame>,
    tmp: Vec<u8>,
    /// Visible string fields written so far (for babeltrace2's stale
    /// strings, applied later), with their texts in `raw`.
    marks: Vec<Mark>,
    raw: Vec<u8>,
}

impl FieldPrinter {
    fn new(names: Names, capture_pc: bool) -> Self {
        FieldPrinter {
            out: Vec::with_capacity(1024),
            start_line: true,
            names,
            capture_pc,
            pc_visible: false,
            opened: false,
            active: false,
            pending_scope: None,
            field_names: true,
            skip: 0,
            frames: Vec::with_capacity(16),
            tmp: Vec::new(),
            marks: Vec::new(),
            raw: Vec::new(),
        }
    }

    /// Whether a field is printed; writes its separator and name if so.
    #[inline]
    fn enter(&mut self, node: &Node) -> bool {
        if !self.active || self.skip > 0 || !node.visible {
            return false;
        }
        match self.frames.last_mut() {
            Some(Frame::Struct(n)) => {
                if self.field_names && !node.label.is_empty() {
                    // ", NAME = " (" NAME = " first).
                    let skip = (*n == 0) as usize;
                    match &node.label32 {
                        Some(p) => {
                            // (two copies of constant size, 31 and 32)
                            let l = self.out.len();
                            if skip == 1 {
                                self.out.extend_from_slice(&p[1..32]);
                            } else {
                                self.out.extend_from_slice(&p[..]);
                            }
                            self.out.truncate(l + node.label.len() - skip);
                        }
                        None => self.out.extend_from_slice(&node.label[skip..]),
                    }
                } else {
                    self.out
                        .extend_from_slice(if *n == 0 { b" " } else { b", " });
                }
                *n += 1;
            }
            Some(Frame::Array(n)) => {
                self.out
                    .extend_from_slice(if *n == 0 { b" " } else { b", " });
                if self.field_names {
                    self.out.push(b'[');
                    tracemux_core::digits::put_u64(&mut self.out, *n);
                    self.out.extend_from_slice(b"] = ");
                }
                *n += 1;
            }
            _ => {
                // A scope's root structure.
                if let Some(scope) = self.pending_scope.take() {
                    if self.capture_pc {
                        self.pc_visible = true;
                    } else {
                        self.scope_head(scope);
                    }
                }
            }
        }
        true
    }

    fn compound_begin(&mut self, node: &Node, f: Frame, open: &[u8]) {
        if !self.enter(node) {
            if self.active {
                self.skip += 1;
            }
            return;
        }
        self.out.extend_from_slice(open);
        self.frames.push(f);
    }

    fn compound_end(&mut self, close: &[u8]) {
        if !self.active {
            return;
        }
        if self.skip > 0 {
            self.skip -= 1;
            return;
        }
        if let Some(f) = self.frames.pop() {
            match f {
                Frame::Optional(false) => {}
                _ => self.out.extend_from_slice(close),
            }
        }
    }

    fn enum_labels(&mut self, node: &Node, v: IntValue) {
        let Kind::Int { mappings, .. } = &node.kind else {
            return;
        };
        enum_labels(&mut self.out, mappings, v.as_i128());
    }
}

/// What babeltrace2 prints before an enumeration's value `x`: its labels
/// (`( "A", "B" : container = `).
pub(crate) fn enum_labels(out: &mut Vec<u8>, mappings: &[crate::ir::Mapping], x: i128) {
    out.extend_from_slice(b"( ");
    let mut n = 0;
    for m in mappings.iter() {
        if m.ranges.iter().any(|r| r.contains(x)) {
            if n > 0 {
                out.extend_from_slice(b", ");
            }
            push_escaped(out, m.name.as_bytes());
            n += 1;
        }
    }
    if n == 0 {
        out.extend_from_slice(b"<unknown>");
    }
    out.extend_from_slice(b" : container = ");
}

impl Visitor for FieldPrinter {
    // (nothing of the event header is printed)
    const EVENT_HEADER: bool = false;

    fn packet_begin(&mut self, _file_offset: u64) {
        if self.capture_pc {
            self.out.clear();
            self.pc_visible = false;
            self.opened = true;
        }
    }

    fn scope_begin(&mut self, scope: Scope, _at: u64) {
        self.active = if self.capture_pc {
            scope == Scope::PacketContext
        } else {
            matches!(
                scope,
                Scope::EventCommonContext | Scope::EventSpecificContext | Scope::EventPayload
            )
        };
        self.field_names = if scope == Scope::EventPayload {
            self.names.payload
        } else {
            self.names.context
        };
        self.pending_scope = Some(scope);
        self.skip = 0;
        self.frames.clear();
    }

    fn scope_end(&mut self, _scope: Scope, _at: u64) {
        self.active = false;
        self.pending_scope = None;
    }

    fn struct_begin(&mut self, node: &Node, _at: u64) {
        self.compound_begin(node, Frame::Struct(0), b"{");
    }

    fn struct_end(&mut self, _node: &Node, _end: u64) {
        self.compound_end(b" }");
    }

    fn array_begin(&mut self, node: &Node, _len: u64, _at: u64) {
        self.compound_begin(node, Frame::Array(0), b"[");
    }

    fn array_end(&mut self, _node: &Node, _end: u64) {
        self.compound_end(b" ]");
    }

    fn variant_begin(&mut self, node: &Node, _sel: i128, _option: usize, _at: u64) {
        self.compound_begin(node, Frame::Wrap, b"{ ");
    }

    fn variant_end(&mut self, _node: &Node, _end: u64) {
        self.compound_end(b" }");
    }

    fn optional_begin(&mut self, node: &Node, enabled: bool, _sel: i128, _at: u64) {
        if enabled {
            self.compound_begin(node, Frame::Optional(true), b"{ ");
        } else {
            self.compound_begin(node, Frame::Optional(false), b"<none>");
        }
    }

    fn optional_end(&mut self, _node: &Node, _end: u64) {
        self.compound_end(b" }");
    }

    fn int(&mut self, node: &Node, v: IntValue, _at: u64) {
        if !self.enter(node) {
            return;
        }
        let (len, base, is_enum) = match &node.kind {
            Kind::Int {
                len,
                base,
                mappings,
                ..
            } => (*len as u32, *base, !mappings.is_empty()),
            Kind::VarInt { base, mappings, .. } => (64, *base, !mappings.is_empty()),
            _ => (64, DisplayBase::Decimal, false),
        };
        if is_enum {
            self.enum_labels(node, v);
            push_int(&mut self.out, v, len, base);
            self.out.extend_from_slice(b" )");
        } else {
            push_int(&mut self.out, v, len, base);
        }
    }

    fn float(&mut self, node: &Node, v: f64, _at: u64) {
        if !self.enter(node) {
            return;
        }
        push_g(&mut self.out, v);
    }

    fn boolean(&mut self, node: &Node, v: bool, _at: u64) {
        if !self.enter(node) {
            return;
        }
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
    }

    fn bit_array(&mut self, node: &Node, v: u64, _at: u64) {
        if !self.enter(node) {
            return;
        }
        self.out.extend_from_slice(b"0x");
        push_radix(&mut self.out, v, 4);
    }

    fn string(&mut self, node: &Node, raw: &[u8], _at: u64, _end: u64) {
        if !self.enter(node) {
            return;
        }
        // Which element of the arrays around it the string is.
        let mut elem: u64 = 0;
        for f in &self.frames {
            if let Frame::Array(n) = f {
                elem = elem.wrapping_mul(1_000_003).wrapping_add(*n);
            }
        }
        self.string_value(node, raw, elem);
    }

    fn blob(&mut self, node: &Node, bytes: &[u8], _at: u64, _end: u64) {
        if !self.enter(node) {
            return;
        }
        // babeltrace2 2.0 has no BLOBs: print the bytes like an array of
        // hexadecimal integers.
        self.out.push(b'[');
        for (i, b) in bytes.iter().enumerate() {
            self.out
                .extend_from_slice(if i == 0 { b" " } else { b", " });
            self.out.extend_from_slice(b"0x");
            push_radix(&mut self.out, *b as u64, 4);
        }
        self.out.extend_from_slice(b" ]");
    }
}

impl FieldPrinter {
    /// What comes before a shown scope: `, ` unless the line starts here,
    /// and the scope's name with `--names scope`.
    #[inline]
    fn scope_head(&mut self, scope: Scope) {
        if !self.start_line {
            self.out.extend_from_slice(b", ");
        }
        self.start_line = false;
        if self.names.scope {
            self.out.extend_from_slice(scope.tsdl_name().as_bytes());
            self.out.extend_from_slice(b" = ");
        }
    }

    /// Print the string `node` (every byte of the field in `raw`), element
    /// `elem` of the arrays around it (0 outside arrays).
    fn string_value(&mut self, node: &Node, raw: &[u8], elem: u64) {
        let enc = match node.kind {
            Kind::String { encoding, .. } => encoding,
            _ => StringEncoding::Utf8,
        };
        let mut tmp = std::mem::take(&mut self.tmp);
        let text = string_text(raw, enc, &mut tmp);
        self.text_value(node, text, elem);
        self.tmp = tmp;
    }

    /// [`FieldPrinter::string_value`] of a string whose text is `text`.
    pub(crate) fn text_value(&mut self, node: &Node, text: &[u8], elem: u64) {
        // Where the string went, and its text: babeltrace2 2.0 shows the
        // last non-empty value of a (pooled) string field object for an
        // empty string; the printer patches that in later.
        let off = self.out.len();
        push_escaped(&mut self.out, text);
        let r0 = self.raw.len();
        self.raw.extend_from_slice(text);
        self.marks.push(Mark {
            off: off as u32,
            len: (self.out.len() - off) as u32,
            node: node as *const Node as usize,
            elem,
            raw: (r0 as u32, self.raw.len() as u32),
        });
    }
}

// ---------------------------------------------------------------------
// Time formatting

/// Formats timestamps as babeltrace2's `print_timestamp_wall` does.
struct Clock {
    zone: Zone,
    gmt: bool,
    date: bool,
    seconds: bool,
    cache_sec: i64,
    cache: Vec<u8>,
    /// `cache` in a block of constant size (it is at most 32 bytes long).
    cache_block: [u8; 32],
    negative_warned: bool,
}

impl Clock {
    fn new(o: &TextOptions) -> Clock {
        Clock {
            zone: if o.clock_gmt {
                Zone::utc()
            } else {
                o.timezone
                    .as_deref()
                    .map_or_else(Zone::local, |tz| Zone::from_tz(Some(tz), None))
            },
            gmt: o.clock_gmt,
            date: o.clock_date,
            seconds: o.clock_seconds,
            cache_sec: i64::MIN,
            cache: Vec::new(),
            cache_block: [0; 32],
            negative_warned: false,
        }
    }

    /// The broken-down time of `secs` (within the years 0 to 2262 here:
    /// `secs` comes from nanoseconds in an `i64`).
    fn tm(&self, secs: i64) -> Option<Tm> {
        if self.gmt {
            gmtime(secs)
        } else {
            self.zone.localtime(secs)
        }
    }

    /// The time of day of `ns` when it is within the second of the time
    /// before and printed as the time of day (what [`Clock::push`] then
    /// writes before the `.`): at most 32 bytes in a block of 32, and its
    /// length.
    #[inline(always)]
    fn cached(&self, ns: i64) -> Option<(&[u8; 32], usize)> {
        (ns >= 0 && !self.seconds && ns / 1_000_000_000 == self.cache_sec && self.cache.len() <= 32)
            .then_some((&self.cache_block, self.cache.len()))
    }

    /// Append the wall-clock form of `ns` (nanoseconds from origin).
    #[inline(always)]
    fn push(&mut self, out: &mut Vec<u8>, ns: i64, warn: &mut Vec<u8>) {
        // (most times: within the second of the one before, printed as
        // the time of day)
        if let Some((day, k)) = self.cached(ns) {
            let l = out.len();
            out.extend_from_slice(day);
            out.truncate(l + k);
            out.push(b'.');
            put_padded(out, (ns % 1_000_000_000) as u64, 9);
            return;
        }
        self.push_slow(out, ns, warn)
    }

    #[inline(never)]
    fn push_slow(&mut self, out: &mut Vec<u8>, ns: i64, warn: &mut Vec<u8>) {
        let s = ns / 1_000_000_000;
        let n = ns % 1_000_000_000;
        let (neg, sa, na) = if s >= 0 && n >= 0 {
            (false, s as u64, n as u64)
        } else if s > 0 && n < 0 {
            (false, (s - 1) as u64, (1_000_000_000 + n) as u64)
        } else if s == 0 && n < 0 {
            (true, 0, (-n) as u64)
        } else if s < 0 && n > 0 {
            (true, (-(s + 1)) as u64, (1_000_000_000 - n) as u64)
        } else if s < 0 && n == 0 {
            (true, s.unsigned_abs(), 0)
        } else {
            (true, s.unsigned_abs(), n.unsigned_abs())
        };
        let mut seconds = self.seconds;
        if !seconds && neg {
            if !self.negative_warned {
                warn.extend_from_slice(
                    b"[warning] Fallback to [sec.ns] to print negative time value. Use --clock-seconds.\n",
                );
                self.negative_warned = true;
            }
            seconds = true;
        }
        let mut b = itoa::Buffer::new();
        if seconds {
            if neg {
                out.push(b'-');
            }
            out.extend_from_slice(b.format(sa).as_bytes());
        } else {
            let sa = sa as i64;
            if sa != self.cache_sec {
                self.cache.clear();
                if let Some(t) = self.tm(sa) {
                    if self.date {
                        let y = t.year;
                        if (0..10000).contains(&y) {
                            put_padded(&mut self.cache, y as u64, 4);
                        } else {
                            self.cache.extend_from_slice(b.format(y).as_bytes());
                        }
                        self.cache.push(b'-');
                        put_padded(&mut self.cache, t.month as u64, 2);
                        self.cache.push(b'-');
                        put_padded(&mut self.cache, t.day as u64, 2);
                        self.cache.push(b' ');
                    }
                    put_padded(&mut self.cache, t.hour as u64, 2);
                    self.cache.push(b':');
                    put_padded(&mut self.cache, t.min as u64, 2);
                    self.cache.push(b':');
                    put_padded(&mut self.cache, t.sec as u64, 2);
                } else {
                    // No date can be had (no `i64` of nanoseconds is that
                    // far): the seconds as they are.
                    self.cache.extend_from_slice(b.format(sa).as_bytes());
                }
                self.cache_sec = sa;
                let n = self.cache.len().min(32);
                self.cache_block = [0; 32];
                self.cache_block[..n].copy_from_slice(&self.cache[..n]);
            }
            // (a copy of constant size, cut back: no call)
            let l = out.len();
            if self.cache.len() <= 32 {
                out.extend_from_slice(&self.cache_block);
                out.truncate(l + self.cache.len());
            } else {
                out.extend_from_slice(&self.cache);
            }
        }
        out.push(b'.');
        put_padded(out, na, 9);
    }
}

// ---------------------------------------------------------------------
// babeltrace2 time syntax (--begin/--end)

/// A `--begin`/`--end` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeSpec {
    /// Nanoseconds from origin.
    Abs(i64),
    /// A time of day (ns since midnight): the date comes from the first
    /// event.
    OfDay(i64),
}

/// Parse babeltrace2's trimmer time syntax: `[YYYY-MM-DD [T]]HH:MM[:SS[.N]]`
/// or `[-]SECONDS[.N]`.
fn parse_time(s: &str) -> Option<TimeSpec> {
    let s = s.trim();
    let frac = |f: &str| -> Option<i64> {
        if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut v: i64 = f.parse().ok()?;
        for _ in f.len()..9 {
            v *= 10;
        }
        Some(v)
    };
    // Seconds since the origin.
    if !s.contains(':') {
        let (neg, body) = match s.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, s),
        };
        let (sec, ns) = match body.split_once('.') {
            Some((a, b)) => (a, frac(b)?),
            None => (body, 0),
        };
        if sec.is_empty() || !sec.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let sec: i64 = sec.parse().ok()?;
        let v = sec.checked_mul(1_000_000_000)?.checked_add(ns)?;
        return Some(TimeSpec::Abs(if neg { -v } else { v }));
    }
    let (date, time) = match s.split_once([' ', 'T']) {
        Some((d, t)) if d.contains('-') => (Some(d), t.trim()),
        _ => (None, s),
    };
    let mut parts = time.split(':');
    let h: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let (sec, ns) = match parts.next() {
        Some(x) => match x.split_once('.') {
            Some((a, b)) => (a.parse().ok()?, frac(b)?),
            None => (x.parse().ok()?, 0),
        },
        None => (0, 0),
    };
    if parts.next().is_some() || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    let tod = (h * 3600 + m * 60 + sec) * 1_000_000_000 + ns;
    match date {
        None => Some(TimeSpec::OfDay(tod)),
        Some(d) => {
            let mut p = d.split('-');
            let y: i64 = p.next()?.parse().ok()?;
            let mo: i64 = p.next()?.parse().ok()?;
            let da: i64 = p.next()?.parse().ok()?;
            if !(1..=12).contains(&mo) || !(1..=31).contains(&da) {
                return None;
            }
            let days = days_from_civil(y, mo as u32, da as u32);
            Some(TimeSpec::Abs(days * 86_400 * 1_000_000_000 + tod))
        }
    }
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

// ---------------------------------------------------------------------
// The report

/// Kinds of babeltrace2 messages, in the muxer's order for equal times
/// (stream beginning first ... stream end last).
/// One message as babeltrace2's source would produce it, with what the
/// sink needs to print it.
struct Msg {
    kind: MsgKind,
    /// Time (ns from origin); `None`: no clock snapshot.
    ts: Option<i64>,
    /// Event: class position and clock value.
    class: u32,
    cycles: u64,
    /// Event: pooled event object (for babeltrace2's stale strings).
    obj: u32,
    /// The stream's chunk being read when it was made ([`Rt::seq`]).
    seq: u64,
    /// Event: the rendered scopes after the event name; discarded: the
    /// notice.
    body: Body,
}

impl Msg {
    /// A message of no use, for the slots of a [`Ring`].
    const EMPTY: Msg = Msg {
        kind: MsgKind::StreamEnd,
        ts: None,
        class: 0,
        cycles: 0,
        obj: 0,
        seq: 0,
        body: Body::None,
    };
}

/// A stream's message queue: a ring whose slots are written in place.
/// (A message made elsewhere and moved into a `VecDeque` was read back
/// while its stores were still in flight: a stall on every event.)
struct Ring {
    slots: Vec<Msg>,
    head: usize,
    len: usize,
}

impl Ring {
    fn with_capacity(n: usize) -> Ring {
        Ring {
            slots: std::iter::repeat_with(|| Msg::EMPTY)
                .take(n.max(1))
                .collect(),
            head: 0,
            len: 0,
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.len
    }

    /// The position of the `i`-th message (`i` at most the length).
    #[inline]
    fn at(&self, i: usize) -> usize {
        let k = self.head + i;
        if k >= self.slots.len() {
            k - self.slots.len()
        } else {
            k
        }
    }

    /// The `i`-th message (there is one).
    #[inline]
    fn get(&self, i: usize) -> &Msg {
        &self.slots[self.at(i)]
    }

    /// The `i`-th message, to change (there is one).
    fn get_mut(&mut self, i: usize) -> &mut Msg {
        let k = self.at(i);
        &mut self.slots[k]
    }

    /// A new message at the back, to be written in place (it holds what
    /// an earlier message left: every field is to be set).
    #[inline]
    fn push(&mut self) -> &mut Msg {
        if self.len == self.slots.len() {
            let n = self.slots.len();
            self.slots.rotate_left(self.head);
            self.head = 0;
            self.slots
                .extend(std::iter::repeat_with(|| Msg::EMPTY).take(n));
        }
        let i = self.at(self.len);
        self.len += 1;
        &mut self.slots[i]
    }

    /// The message at the front, in its slot.
    #[inline]
    fn front_mut(&mut self) -> Option<&mut Msg> {
        if self.len == 0 {
            return None;
        }
        Some(&mut self.slots[self.head])
    }

    /// Drop the message at the front (its slot keeps what is left of it
    /// until it is written again).
    #[inline]
    fn pop_front(&mut self) {
        if self.len > 0 {
            self.head = self.at(1);
            self.len -= 1;
        }
    }
}

/// The rendered scopes of an event: in its stream's chunk (`bytes[a..b]`
/// of the chunk of the message's `seq`), or its own text when
/// babeltrace2's stale strings changed it.
enum Body {
    None,
    InChunk(u32, u32),
    Own(Vec<u8>),
    Notice(Box<Discarded>),
}

/// The text of message `m` of a stream whose chunk `seq` is `cur`, the
/// older ones still in `held`.
fn body_of<'a>(cur: &'a Chunk, seq: u64, held: &'a Held, m: &'a Msg) -> &'a [u8] {
    match &m.body {
        Body::InChunk(a, b) => {
            let c = if m.seq == seq {
                Some(cur)
            } else {
                held.iter().find(|h| h.0 == m.seq).map(|h| &h.1)
            };
            // ([`Rt::release`] keeps every chunk a queued message names)
            debug_assert!(c.is_some(), "the chunk of a queued message was given back");
            c.and_then(|c| c.bytes.get(*a as usize..*b as usize))
                .unwrap_or(&[])
        }
        Body::Own(v) => v,
        Body::None | Body::Notice(_) => &[],
    }
}

/// A stream's chunks read before the current one that queued messages
/// may point into, with their numbers.
type Held = std::collections::VecDeque<(u64, Chunk)>;

/// Make `c` a stream's current chunk (`cur`, number `seq`): the one
/// before is held under its number, and the new one takes the next.
fn hand_over(cur: &mut Chunk, held: &mut Held, seq: &mut u64, c: Chunk) {
    let old = std::mem::replace(cur, c);
    held.push_back((*seq, old));
    *seq += 1;
}

/// What a stream's renderer hands the printer, in stream order (kept
/// small: there is one per event).
#[derive(Debug, Clone)]
enum RawKind {
    PacketBegin(Option<u64>),
    PacketEnd(Option<u64>),
    Discarded(Box<Discarded>),
    Event {
        clock: u64,
        class: u32,
    },
    /// A live stream is quiet up to this clock value.
    Inactivity(u64),
    End,
}

/// One rendered item: for events, the range of its scopes' text in
/// `Chunk::bytes` and of its string marks in `Chunk::marks`.
#[derive(Debug, Clone)]
struct Raw {
    kind: RawKind,
    body: (u32, u32),
    marks: (u32, u32),
}

/// Rendered items of one stream.
#[derive(Default)]
struct Chunk {
    items: Vec<Raw>,
    bytes: Vec<u8>,
    marks: Vec<Mark>,
    raw: Vec<u8>,
    /// The error that stopped the stream, after the items.
    error: Option<StreamError>,
    /// The last chunk of a segment (see [`Feed::Segments`]).
    seg_end: bool,
}

impl Chunk {
    /// An empty chunk with room for `sizes` (a worker's chunks are alike:
    /// this spares the buffers' growth, copy by copy).
    fn with_room(sizes: [usize; 3]) -> Chunk {
        let [bytes, marks, raw] = sizes;
        Chunk {
            items: Vec::with_capacity(CHUNK),
            bytes: Vec::with_capacity(bytes + bytes / 8),
            marks: Vec::with_capacity(marks),
            raw: Vec::with_capacity(raw + raw / 8),
            error: None,
            seg_end: false,
        }
    }

    /// What [`Chunk::with_room`] needs to hold this chunk's contents.
    fn sizes(&self) -> [usize; 3] {
        [self.bytes.len(), self.marks.len(), self.raw.len()]
    }
}

/// Chunks the printer is done with, for the workers to fill again: their
/// buffers keep their room, so no chunk costs an allocation and fresh pages.
#[derive(Default)]
struct ChunkPool(std::sync::Mutex<Vec<Chunk>>);

impl ChunkPool {
    /// Chunks kept at most (the rest are freed).
    const MAX: usize = 16;

    /// An empty chunk: a used one, else a new one with room for `room`.
    fn take(&self, room: [usize; 3]) -> Chunk {
        let used = self.0.lock().ok().and_then(|mut v| v.pop());
        match used {
            Some(mut c) => {
                c.items.clear();
                c.bytes.clear();
                c.marks.clear();
                c.raw.clear();
                c.error = None;
                c.seg_end = false;
                c
            }
            None => Chunk::with_room(room),
        }
    }

    /// Keep `c` for the workers (up to [`ChunkPool::MAX`]).
    fn give(&self, c: Chunk) {
        if let Ok(mut v) = self.0.lock() {
            if v.len() < Self::MAX {
                v.push(c);
            }
        }
    }
}

/// Items per chunk.
const CHUNK: usize = 512;

/// Decodes one stream and renders the scopes of its event records (on a
/// worker thread, or on the printer's).
struct Renderer<'d> {
    dec: StreamDecoder<'d>,
    pcp: FieldPrinter,
    fp: FieldPrinter,
    pc: Vec<u8>,
    pc_visible: bool,
    scope_names: bool,
    done: bool,
    /// Gives the consumed bytes back to the loader (none for packets held
    /// in memory).
    rel: Option<fs::Releaser<'d>>,
    prog: &'d crate::decode::Program,
    /// Body plans by stream class and event position (made when the class
    /// first occurs; `Some(None)`: the class has none).
    plans: Vec<Vec<Option<Option<plan::BodyPlan>>>>,
    use_plans: bool,
}

impl<'d> Renderer<'d> {
    /// A renderer of the packets `range` of stream `g`.
    fn new(
        t: &'d Trace,
        g: &fs::StreamGroup,
        names: Names,
        range: std::ops::Range<usize>,
        loader: &'d dyn Loader,
        plans: bool,
    ) -> Self {
        let files: Vec<&[u8]> = g.files.iter().map(|&f| (*t.files[f].1).as_ref()).collect();
        let start = range.start;
        let mut dec = StreamDecoder::new(&t.prog, t.tc.uuid, files, g.packets[range].to_vec());
        dec.set_quirks(t.quirks.lttng_crash, t.quirks.lttng_event_after_packet);
        if start > 0 {
            dec.set_previous(Some(g.packets[start - 1].info));
        }
        let mut r = Renderer::with_decoder(dec, &t.prog, names, plans);
        r.rel = Some(fs::Releaser::new(loader, t, g));
        r
    }

    /// A renderer of what `dec` decodes (no loader).
    fn with_decoder(
        dec: StreamDecoder<'d>,
        prog: &'d crate::decode::Program,
        names: Names,
        plans: bool,
    ) -> Self {
        Renderer {
            dec,
            pcp: FieldPrinter::new(names, true),
            fp: FieldPrinter::new(names, false),
            pc: Vec::new(),
            pc_visible: false,
            scope_names: names.scope,
            done: false,
            rel: None,
            prog,
            plans: Vec::new(),
            use_plans: plans,
        }
    }

    /// The body plan of event position `pos` of stream class `sc`.
    fn plan<'a>(
        plans: &'a mut Vec<Vec<Option<Option<plan::BodyPlan>>>>,
        p: &crate::decode::Program,
        names: Names,
        (sc, pos): (usize, usize),
    ) -> Option<&'a plan::BodyPlan> {
        if plans.len() <= sc {
            plans.resize_with(sc + 1, Vec::new);
        }
        let row = &mut plans[sc];
        if row.len() <= pos {
            row.resize_with(pos + 1, || None);
        }
        row[pos]
            .get_or_insert_with(|| {
                let s = p.streams.get(sc)?;
                let e = s.events.get(pos)?;
                plan::BodyPlan::new(
                    p,
                    names,
                    [
                        (Scope::EventCommonContext, s.common_context),
                        (Scope::EventSpecificContext, e.specific_context),
                        (Scope::EventPayload, e.payload),
                    ],
                )
            })
            .as_ref()
    }

    /// The decoder stopped: release the bytes of its last packet.
    fn stop(&mut self) {
        self.done = true;
        if let Some(pe) = self.dec.current_packet() {
            let end = pe.offset.saturating_add(pe.total_bytes);
            if let Some(rel) = &mut self.rel {
                rel.finish(pe.file, end);
            }
        }
    }

    /// Append up to `max` items to `c`.
    fn fill(&mut self, c: &mut Chunk, max: usize) {
        std::mem::swap(&mut self.fp.out, &mut c.bytes);
        std::mem::swap(&mut self.fp.marks, &mut c.marks);
        std::mem::swap(&mut self.fp.raw, &mut c.raw);
        let none = (0, 0);
        while c.items.len() < max && !self.done {
            let step = self.dec.advance(&mut self.pcp);
            if std::mem::take(&mut self.pcp.opened) {
                self.pc.clear();
                self.pc.extend_from_slice(&self.pcp.out);
                self.pc_visible = self.pcp.pc_visible;
            }
            let kind = match step {
                Err(e) => {
                    c.error = Some(e);
                    self.stop();
                    break;
                }
                Ok(Step::PacketBegin { clock }) => {
                    if let (Some(pe), Some(rel)) = (self.dec.current_packet(), &mut self.rel) {
                        rel.packet(pe.file, pe.offset);
                    }
                    RawKind::PacketBegin(clock)
                }
                Ok(Step::PacketEnd { clock }) => RawKind::PacketEnd(clock),
                Ok(Step::Discarded(d)) => RawKind::Discarded(Box::new(d)),
                Ok(Step::End) => {
                    self.stop();
                    RawKind::End
                }
                Ok(Step::Event { clock, class }) => {
                    let fp = &mut self.fp;
                    let (b0, m0, r0) = (fp.out.len(), fp.marks.len(), fp.raw.len());
                    fp.start_line = true;
                    if self.pc_visible {
                        fp.start_line = false;
                        if self.scope_names {
                            fp.out.extend_from_slice(b"stream.packet.context = ");
                        }
                        fp.out.extend_from_slice(&self.pc);
                    }
                    // The class's plan when it has one; the decoder with
                    // the printer when not, or when the plan fails (the
                    // error is then the decoder's).
                    let planned = match self.dec.pending_body().filter(|_| self.use_plans) {
                        Some(at) => match Self::plan(&mut self.plans, self.prog, fp.names, at) {
                            Some(plan) => {
                                let (l, start_line) = (fp.out.len(), fp.start_line);
                                let ok = self.dec.body_by(|p, c| plan.run(p, c, fp));
                                if !ok {
                                    fp.out.truncate(l);
                                    fp.marks.truncate(m0);
                                    fp.raw.truncate(r0);
                                    fp.start_line = start_line;
                                }
                                ok
                            }
                            None => false,
                        },
                        None => false,
                    };
                    if let Err(e) = if planned { Ok(()) } else { self.dec.body(fp) } {
                        fp.out.truncate(b0);
                        fp.marks.truncate(m0);
                        fp.raw.truncate(r0);
                        c.error = Some(e);
                        self.stop();
                        break;
                    }
                    c.items.push(Raw {
                        kind: RawKind::Event {
                            clock,
                            class: class as u32,
                        },
                        body: (b0 as u32, fp.out.len() as u32),
                        marks: (m0 as u32, fp.marks.len() as u32),
                    });
                    continue;
                }
            };
            c.items.push(Raw {
                kind,
                body: none,
                marks: none,
            });
        }
        // (a packet may be large: what is read of it is released as it goes)
        if let (Some((file, at)), Some(rel)) = (self.dec.position(), &mut self.rel) {
            rel.packet(file, at);
        }
        std::mem::swap(&mut self.fp.out, &mut c.bytes);
        std::mem::swap(&mut self.fp.marks, &mut c.marks);
        std::mem::swap(&mut self.fp.raw, &mut c.raw);
    }
}

/// Where a stream's rendered items come from.
enum Feed<'d> {
    Local(Box<Renderer<'d>>),
    Remote(std::sync::mpsc::Receiver<Chunk>),
    /// Packets that arrive while the printer runs (a live session).
    Live(Box<live::LiveFeed<'d>>),
    /// Segments of consecutive packets rendered by several workers:
    /// segment `i` comes from `workers[i % workers.len()]`.
    Segments {
        workers: Vec<std::sync::mpsc::Receiver<Chunk>>,
        cur: usize,
        count: usize,
    },
}

/// One data stream: its rendered items and babeltrace2's message queue.
struct Rt<'d> {
    feed: Feed<'d>,
    /// The chunk being read, its number, and the chunks read before it
    /// that queued messages may point into.
    chunk: Chunk,
    seq: u64,
    held: Held,
    next: usize,
    trace: usize,
    group: usize,
    /// Clock class of the stream class (frequency, offsets).
    clock: Option<(u64, i64, u64)>,
    /// The clock's frequency and base offset in ns (`None`: no clock, or
    /// one whose offset overflows).
    base: Option<(u64, i64)>,
    /// First pool index of the stream class's event classes.
    pool_base: usize,
    queue: Ring,
    /// Messages at the queue's front that the muxer has handed out (in
    /// the batch being made; the sink pops them).
    taken: usize,
    started: bool,
    ended: bool,
    /// A live stream said it is quiet: the refill stops there.
    pause: bool,
    /// The clock value of its last inactivity message (live streams).
    inactive_until: Option<u64>,
    /// An error hit while producing; returned when the queue is refilled.
    error: Option<StreamError>,
    /// Where chunks go once read (for the workers).
    pool: Option<&'d ChunkPool>,
}

/// What the sink needs of a stream besides its messages.
#[derive(Clone, Copy)]
struct Src {
    trace: usize,
    group: usize,
    clock: Option<(u64, i64, u64)>,
    pool_base: usize,
}

impl Rt<'_> {
    fn src(&self) -> Src {
        Src {
            trace: self.trace,
            group: self.group,
            clock: self.clock,
            pool_base: self.pool_base,
        }
    }

    /// The first message not handed out yet (there is one).
    #[inline]
    fn head(&self) -> &Msg {
        self.queue.get(self.taken)
    }

    /// The time of an event's clock value `v` (`clock_ns`, quicker).
    #[inline]
    fn event_ns(&self, v: u64) -> Option<i64> {
        let (freq, base) = self.base?;
        fs::ns_from_base(freq, base, v)
    }

    /// Read `c` next; the chunk read so far is held until no queued
    /// message points into it.
    fn replace_chunk(&mut self, c: Chunk) {
        hand_over(&mut self.chunk, &mut self.held, &mut self.seq, c);
        self.release();
    }

    /// Give back the held chunks that no queued message points into.
    #[inline]
    fn release(&mut self) {
        let oldest = match self.queue.len() {
            0 => self.seq,
            _ => self.queue.get(0).seq,
        };
        while self.held.front().is_some_and(|h| h.0 < oldest) {
            if let (Some((_, c)), Some(p)) = (self.held.pop_front(), self.pool) {
                p.give(c);
            }
        }
    }

    /// Make `chunk.items[next]` the next rendered item (`false`: there
    /// is none left).
    #[inline]
    fn next_raw(&mut self) -> Result<bool, StreamError> {
        if self.next < self.chunk.items.len() {
            return Ok(true);
        }
        self.next_chunk()
    }

    /// [`Rt::next_raw`] once the chunk is read.
    fn next_chunk(&mut self) -> Result<bool, StreamError> {
        loop {
            if self.next < self.chunk.items.len() {
                return Ok(true);
            }
            if let Some(e) = self.chunk.error.clone() {
                // (messages may still hold the chunk: it is read no more)
                let seg_end = self.chunk.seg_end;
                self.replace_chunk(Chunk {
                    seg_end,
                    ..Chunk::default()
                });
                return Err(e);
            }
            match &mut self.feed {
                Feed::Local(r) => {
                    if r.done {
                        return Ok(false);
                    }
                    // (the chunk is reused when no queued message may point
                    // into it)
                    if self.queue.len() > 0 {
                        let room = self.chunk.sizes();
                        let c = match self.pool {
                            Some(p) => p.take(room),
                            None => Chunk::with_room(room),
                        };
                        hand_over(&mut self.chunk, &mut self.held, &mut self.seq, c);
                    }
                    let c = &mut self.chunk;
                    c.items.clear();
                    c.bytes.clear();
                    c.marks.clear();
                    c.raw.clear();
                    r.fill(c, CHUNK);
                }
                Feed::Remote(rx) => match rx.recv() {
                    Ok(c) => self.replace_chunk(c),
                    Err(_) => return Ok(false),
                },
                Feed::Live(f) => {
                    if f.ended {
                        return Ok(false);
                    }
                    if self.queue.len() > 0 {
                        let room = self.chunk.sizes();
                        hand_over(
                            &mut self.chunk,
                            &mut self.held,
                            &mut self.seq,
                            Chunk::with_room(room),
                        );
                    }
                    let c = &mut self.chunk;
                    c.items.clear();
                    c.bytes.clear();
                    c.marks.clear();
                    c.raw.clear();
                    f.fill(c);
                    if let Some(b) = f.pool_base {
                        self.pool_base = b;
                    }
                }
                Feed::Segments {
                    workers,
                    cur,
                    count,
                } => {
                    if self.chunk.seg_end {
                        *cur += 1;
                        self.chunk.seg_end = false;
                    }
                    if *cur >= *count {
                        return Ok(false);
                    }
                    let k = workers.len();
                    match workers[*cur % k].recv() {
                        Ok(c) => self.replace_chunk(c),
                        Err(_) => return Ok(false),
                    }
                }
            }
            self.next = 0;
            self.release();
        }
    }
}

/// A worker: render a stream chunk by chunk until the printer stops
/// listening or the stream ends.
fn render_worker(mut r: Renderer<'_>, tx: std::sync::mpsc::SyncSender<Chunk>, pool: &ChunkPool) {
    let mut room = [0; 3];
    while !r.done {
        let mut c = pool.take(room);
        r.fill(&mut c, CHUNK);
        room = c.sizes();
        if tx.send(c).is_err() {
            break;
        }
    }
}

/// A segment worker: render segments `w`, `w + k`, ... of a stream (their
/// packet ranges in `segs`), each ending with a `seg_end` chunk; only the
/// last segment keeps the stream's end.
#[allow(clippy::too_many_arguments)]
fn segment_worker<'d>(
    t: &'d Trace,
    loader: &'d dyn Loader,
    g: &'d fs::StreamGroup,
    names: Names,
    plans: bool,
    segs: Vec<std::ops::Range<usize>>,
    w: usize,
    k: usize,
    tx: std::sync::mpsc::SyncSender<Chunk>,
    pool: &ChunkPool,
) {
    let n = segs.len();
    let mut i = w;
    let mut room = [0; 3];
    while i < n {
        let mut r = Renderer::new(t, g, names, segs[i].clone(), loader, plans);
        loop {
            let mut c = pool.take(room);
            r.fill(&mut c, CHUNK);
            room = c.sizes();
            let stop = r.done;
            if stop {
                if i + 1 < n {
                    c.items.retain(|it| !matches!(it.kind, RawKind::End));
                }
                c.seg_end = true;
            }
            let failed = c.error.is_some();
            if tx.send(c).is_err() || failed {
                return;
            }
            if stop {
                break;
            }
        }
        i += k;
    }
}

/// Cut a stream's packets into segments of about `bytes` bytes.
fn segments(packets: &[crate::stream::PacketEntry], bytes: u64) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut acc = 0u64;
    for (i, p) in packets.iter().enumerate() {
        acc += p.total_bytes;
        if acc >= bytes {
            out.push(start..i + 1);
            start = i + 1;
            acc = 0;
        }
    }
    if start < packets.len() || out.is_empty() {
        out.push(start..packets.len());
    }
    out
}

/// babeltrace2's message batch size (`MSG_BATCH_SIZE`).
const BATCH: usize = 15;

fn clock_ns(c: Option<(u64, i64, u64)>, v: u64) -> Option<i64> {
    let (f, s, o) = c?;
    fs::clock_ns(f, s, o, v)
}

/// babeltrace2's `bt_common_clock_value_from_ns_from_origin`.
fn raw_from_ns(c: (u64, i64, u64), ns: i64) -> Option<u64> {
    let (freq, off_s, off_c) = c;
    let off_ns = off_s.checked_mul(1_000_000_000)?;
    let add = if freq == 1_000_000_000 {
        off_c as i64
    } else {
        (off_c as i64).checked_mul(1_000_000_000)? / freq as i64
    };
    let off = off_ns.checked_add(add)?;
    if ns < off {
        return None;
    }
    let v = (ns - off) as u64;
    let periods = v / 1_000_000_000;
    let rem = v - periods * 1_000_000_000;
    let pc = periods.checked_mul(freq)?;
    freq.checked_mul(rem)?
        .checked_div(1_000_000_000)?
        .checked_add(pc)
}

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

/// A string field in a rendered body: byte offset and length of its
/// quoted text, its field (node address and array element), and its text
/// (range in the raw text buffer).
#[derive(Debug, Clone, Copy)]
struct Mark {
    off: u32,
    len: u32,
    node: usize,
    elem: u64,
    raw: (u32, u32),
}

/// babeltrace2's "stale string" behaviour: an empty string field shows the
/// last non-empty value held by the same (pooled) field object.
#[derive(Default)]
struct Stale {
    /// By event object: its string fields' last non-empty values.
    objs: Vec<ObjStrings>,
}

/// The last non-empty values of one event object's string fields, keyed
/// by field (node address, array element). An object always holds events
/// of one class, whose strings come in the same order event after event:
/// the position of a string among its event's marks finds its slot first.
#[derive(Default)]
struct ObjStrings {
    keys: Vec<(usize, u64)>,
    values: Vec<Vec<u8>>,
    /// An index once the object has many string fields.
    index: Option<std::collections::HashMap<(usize, u64), usize, FxBuild>>,
}

impl ObjStrings {
    /// The slot of field `key`, the string at position `hint` of its event.
    fn find(&self, hint: usize, key: (usize, u64)) -> Option<usize> {
        if self.keys.get(hint) == Some(&key) {
            return Some(hint);
        }
        match &self.index {
            Some(ix) => ix.get(&key).copied(),
            None => self.keys.iter().position(|k| *k == key),
        }
    }

    /// The slot of field `key`, made when it has none.
    fn slot(&mut self, hint: usize, key: (usize, u64)) -> &mut Vec<u8> {
        let i = match self.find(hint, key) {
            Some(i) => i,
            None => {
                let i = self.keys.len();
                self.keys.push(key);
                self.values.push(Vec::new());
                if let Some(ix) = &mut self.index {
                    ix.insert(key, i);
                } else if self.keys.len() > 16 {
                    let ix = self.keys.iter().enumerate().map(|(i, k)| (*k, i));
                    self.index = Some(ix.collect());
                }
                i
            }
        };
        &mut self.values[i]
    }
}

/// A small multiplicative hasher for integer keys (no DoS concern: keys
/// are our own object and node numbers).
#[derive(Default, Clone, Copy)]
struct Fx(u64);

impl std::hash::Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

type FxBuild = std::hash::BuildHasherDefault<Fx>;

struct Printer<'t> {
    opts: &'t TextOptions,
    clock: Clock,
    last_ns: Option<i64>,
    last_cycles: Option<u64>,
    warnbuf: Vec<u8>,
    trace_rank: Vec<u32>,
    begin: Option<TimeSpec>,
    end: Option<TimeSpec>,
    begin_ns: Option<i64>,
    end_ns: Option<i64>,
    /// babeltrace2's per-event-class event object pools (LIFO).
    pools: Vec<Vec<u32>>,
    next_obj: u32,
    /// Recycled body buffers.
    spare: Vec<Vec<u8>>,
    last_returned: i64,
    /// `last_returned` before the last message (the live printer's check).
    prev_returned: i64,
    /// A message after `--end` was seen: nothing more is printed.
    reached_end: bool,
    stale: Stale,
    /// The fixed part of each event class's line head, by pool and by
    /// whether it starts the line (see [`static_head`]).
    heads: Vec<Option<Vec<u8>>>,
    /// The clock options are the defaults: bracketed time of day and
    /// delta, no field names (see [`Printer::usual_head_at`]).
    usual_head: bool,
}

impl<'t> Printer<'t> {
    fn new(opts: &'t TextOptions, traces: &[Trace]) -> Self {
        let trace_rank = crate::mux::trace_ranks(traces);
        Printer {
            opts,
            clock: Clock::new(opts),
            last_ns: None,
            last_cycles: None,
            warnbuf: Vec::new(),
            trace_rank,
            begin: None,
            end: None,
            begin_ns: None,
            end_ns: None,
            pools: Vec::new(),
            next_obj: 0,
            spare: Vec::new(),
            last_returned: i64::MIN,
            prev_returned: i64::MIN,
            reached_end: false,
            stale: Stale::default(),
            heads: Vec::new(),
            usual_head: !opts.names.header && !opts.clock_cycles && !opts.no_delta,
        }
    }

    /// Produce the next message of a stream (babeltrace2's source
    /// iterator) onto its queue. `false` at the end.
    fn produce(&mut self, rt: &mut Rt<'_>) -> Result<bool, StreamError> {
        let mk = |kind, ts| Msg {
            kind,
            ts,
            class: 0,
            cycles: 0,
            obj: 0,
            seq: 0,
            body: Body::None,
        };
        if rt.ended {
            return Ok(false);
        }
        if !rt.started {
            rt.started = true;
            let mut m = mk(MsgKind::StreamBegin, None);
            m.seq = rt.seq;
            *rt.queue.push() = m;
            return Ok(true);
        }
        if !rt.next_raw()? {
            rt.ended = true;
            return Ok(false);
        }
        let raw = &rt.chunk.items[rt.next];
        rt.next += 1;
        let m = match &raw.kind {
            &RawKind::Event { clock, class } => {
                let (body, marks) = (raw.body, raw.marks);
                let obj = self.obj(rt.pool_base + class as usize);
                let body = self.event_body(&rt.chunk, obj, body, marks);
                let ts = rt.event_ns(clock).or(Some(i64::MIN));
                // (in place, field by field)
                let seq = rt.seq;
                let m = rt.queue.push();
                m.kind = MsgKind::Event;
                m.seq = seq;
                m.ts = ts;
                m.class = class;
                m.cycles = clock;
                m.obj = obj;
                m.body = body;
                return Ok(true);
            }
            &RawKind::PacketBegin(clock) => mk(
                MsgKind::PacketBegin,
                clock.and_then(|c| clock_ns(rt.clock, c)),
            ),
            &RawKind::PacketEnd(clock) => mk(
                MsgKind::PacketEnd,
                clock.and_then(|c| clock_ns(rt.clock, c)),
            ),
            RawKind::Discarded(d) => {
                let mut m = mk(
                    if d.packets {
                        MsgKind::DiscardedPackets
                    } else {
                        MsgKind::Discarded
                    },
                    d.begin.and_then(|b| clock_ns(rt.clock, b)),
                );
                m.body = Body::Notice(d.clone());
                m
            }
            &RawKind::Inactivity(clock) => {
                rt.pause = true;
                rt.inactive_until = Some(clock);
                mk(MsgKind::Inactivity, clock_ns(rt.clock, clock))
            }
            RawKind::End => {
                rt.ended = true;
                mk(MsgKind::StreamEnd, None)
            }
        };
        let mut m = m;
        m.seq = rt.seq;
        *rt.queue.push() = m;
        Ok(true)
    }

    /// An event object from the pool of event class `pool` (babeltrace2's
    /// per-class object pools, LIFO).
    #[inline]
    fn obj(&mut self, pool: usize) -> u32 {
        if self.pools.len() <= pool {
            self.pools.resize(pool + 1, Vec::new());
        }
        match self.pools[pool].pop() {
            Some(o) => o,
            None => {
                self.next_obj += 1;
                self.next_obj - 1
            }
        }
    }

    /// The body of an event whose text is `c.bytes[body]` and whose string
    /// marks are `c.marks[marks]`, printed by event object `obj`.
    ///
    /// babeltrace2's stale strings: an empty string shows the last
    /// non-empty value of the same field object (whose earlier uses are
    /// all printed: it was back in its pool).
    #[inline]
    fn event_body(&mut self, c: &Chunk, obj: u32, (b0, b1): (u32, u32), marks: (u32, u32)) -> Body {
        let (b0, b1) = (b0 as usize, b1 as usize);
        let mut own: Option<Vec<u8>> = None;
        let mut last = b0;
        let marks = &c.marks[marks.0 as usize..marks.1 as usize];
        if !marks.is_empty() {
            let objs = &mut self.stale.objs;
            if objs.len() <= obj as usize {
                objs.resize_with(obj as usize + 1, ObjStrings::default);
            }
            let strings = &mut objs[obj as usize];
            for (i, mk) in marks.iter().enumerate() {
                let text = &c.raw[mk.raw.0 as usize..mk.raw.1 as usize];
                let key = (mk.node, mk.elem);
                if text.is_empty() {
                    if let Some(k) = strings.find(i, key) {
                        let v = &strings.values[k];
                        if !v.is_empty() {
                            let body =
                                own.get_or_insert_with(|| self.spare.pop().unwrap_or_default());
                            body.extend_from_slice(&c.bytes[last..mk.off as usize]);
                            push_escaped(body, v);
                            last = (mk.off + mk.len) as usize;
                        }
                    }
                } else {
                    let v = strings.slot(i, key);
                    v.clear();
                    v.extend_from_slice(text);
                }
            }
        }
        match own {
            Some(mut body) => {
                body.extend_from_slice(&c.bytes[last..b1]);
                Body::Own(body)
            }
            None => Body::InChunk(b0 as u32, b1 as u32),
        }
    }

    /// Refill a stream's queue with up to one batch.
    fn refill(&mut self, rt: &mut Rt<'_>) {
        if rt.error.is_some() {
            return;
        }
        for _ in 0..BATCH {
            match self.produce(rt) {
                Ok(true) if std::mem::take(&mut rt.pause) => break,
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    rt.error = Some(e);
                    break;
                }
            }
        }
    }

    /// babeltrace2's `common_muxing_compare_messages` for two queue heads
    /// with the same time (negative: `a` first).
    fn compare(&self, traces: &[Trace], a: (&Rt<'_>, &Msg), b: (&Rt<'_>, &Msg)) -> i64 {
        let head = |(rt, m): (&Rt<'_>, &Msg)| Head {
            trace: rt.trace,
            group: rt.group,
            kind: m.kind,
            class: m.class as usize,
        };
        crate::mux::compare(traces, &self.trace_rank, head(a), head(b))
    }

    /// One message from the muxer (`muxer_msg_iter_do_next_one`) onto
    /// `batch` (`false`: none is left), or the error of a stream that
    /// failed. The batch holds the message's stream: the message stays at
    /// the front of the stream's queue (counted in [`Rt::taken`]) until
    /// the sink pops it.
    fn mux_next<'d>(
        &mut self,
        traces: &'d [Trace],
        rts: &mut [Rt<'d>],
        active: &mut Vec<usize>,
        batch: &mut Vec<usize>,
    ) -> Result<bool, (usize, StreamError)> {
        self.fill_heads(rts, active)?;
        Ok(self.pick(traces, rts, active, batch))
    }

    /// Give every active stream a head message, refilling the empty
    /// queues; streams that have none left leave `active`.
    fn fill_heads(
        &mut self,
        rts: &mut [Rt<'_>],
        active: &mut Vec<usize>,
    ) -> Result<(), (usize, StreamError)> {
        let mut i = 0;
        while i < active.len() {
            let s = active[i];
            let rt = &mut rts[s];
            if rt.queue.len() == rt.taken {
                if let Some(e) = rt.error.take() {
                    return Err((s, e));
                }
                self.refill(rt);
                if rt.queue.len() == rt.taken {
                    if let Some(e) = rt.error.take() {
                        return Err((s, e));
                    }
                    active.swap_remove(i);
                    continue;
                }
            }
            i += 1;
        }
        Ok(())
    }

    /// Of the active streams' heads, hand the first out onto `batch`
    /// (`false`: no stream is active).
    fn pick(
        &mut self,
        traces: &[Trace],
        rts: &mut [Rt<'_>],
        active: &[usize],
        batch: &mut Vec<usize>,
    ) -> bool {
        let heads = active
            .iter()
            .map(|&s| (s, rts[s].head().ts.unwrap_or(self.last_returned)));
        let best = crate::mux::earliest(heads, |a, b| {
            self.compare(traces, (&rts[a], rts[a].head()), (&rts[b], rts[b].head()))
        });
        let Some((s, ts)) = best else {
            return false;
        };
        self.last_returned = ts;
        rts[s].taken += 1;
        batch.push(s);
        true
    }

    fn run(
        &mut self,
        traces: &[Trace],
        loader: &dyn Loader,
        out: &mut dyn TextOut,
        warn: &mut dyn Write,
        summary: &mut Summary,
    ) -> Result<(), Error> {
        let nstreams: usize = traces.iter().map(|t| t.streams.len()).sum();
        // Streams are rendered on worker threads when there is a core to
        // spare (the printer thread keeps babeltrace2's order and state).
        let parallel = nstreams <= 256
            && self.opts.threads != Some(1)
            && (self.opts.threads.is_some()
                || std::thread::available_parallelism()
                    .map(|n| n.get() > 1)
                    .unwrap_or(false));
        let names = self.opts.names;
        let plans = !self.opts.no_body_plans;
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(16);
        let total_bytes: u64 = traces
            .iter()
            .flat_map(|t| t.streams.iter())
            .flat_map(|g| g.packets.iter())
            .map(|p| p.total_bytes)
            .sum();
        let forced = self.opts.threads.filter(|&n| n > 1).map(|n| n.min(16));
        let seg_bytes = self.opts.segment_bytes.unwrap_or(512 << 10).max(1);
        // Workers: one per core, shared among the streams by their bytes.
        // (Two per core left a core idle a fifth of the time on 2 cores:
        // the printer reads the segments in order, and the worker of the
        // next one shared its core with workers already far ahead; one per
        // core, 13%, and 0.93 times the wall time, in 10 alternating runs.)
        let budget = cores.max(2);
        let independent = |t: &Trace, g: &fs::StreamGroup| {
            t.prog
                .streams
                .get(g.class)
                .is_some_and(|s| s.packets_independent(&t.prog))
        };
        let workers_of = |t: &Trace, g: &fs::StreamGroup| -> usize {
            if !parallel {
                return 0;
            }
            if !independent(t, g) {
                return 1;
            }
            let share = g.packets.iter().map(|p| p.total_bytes).sum::<u64>();
            forced.unwrap_or_else(|| {
                ((budget as u64 * share).div_ceil(total_bytes.max(1)) as usize).clamp(1, budget)
            })
        };
        let all_workers: usize = traces
            .iter()
            .flat_map(|t| t.streams.iter().map(move |g| workers_of(t, g)))
            .sum();
        // Rendered chunks waiting in the channels: about 16 MB in all (a
        // chunk holds 512 lines), so that workers run ahead of the printer
        // without holding the trace's text.
        let depth = (128 / all_workers.max(1)).clamp(2, 64);
        let chunk_pool = ChunkPool::default();
        let pool = &chunk_pool;
        std::thread::scope(|sc| {
            let mut rts: Vec<Rt<'_>> = Vec::new();
            let mut pool_base = 0;
            for (ti, t) in traces.iter().enumerate() {
                for (gi, g) in t.streams.iter().enumerate() {
                    let clock = t
                        .prog
                        .streams
                        .get(g.class)
                        .and_then(|s| s.default_clock)
                        .and_then(|c| t.tc.clocks.get(c))
                        .map(|c| (c.frequency, c.offset_seconds, c.offset_cycles));
                    // One pool per event class: stream groups of the same
                    // class share it.
                    let base = pool_base
                        + t.prog.streams[..g.class.min(t.prog.streams.len())]
                            .iter()
                            .map(|s| s.events.len())
                            .sum::<usize>();
                    // Workers for this stream: by its share of the data,
                    // when its packets can be decoded independently.
                    let k = workers_of(t, g).max(1);
                    let segs = segments(&g.packets, seg_bytes);
                    let feed = if parallel && k > 1 && segs.len() > 1 {
                        let mut workers = Vec::with_capacity(k);
                        for w in 0..k {
                            let (tx, rx) = std::sync::mpsc::sync_channel(depth);
                            let segs = segs.clone();
                            sc.spawn(move || {
                                segment_worker(t, loader, g, names, plans, segs, w, k, tx, pool)
                            });
                            workers.push(rx);
                        }
                        Feed::Segments {
                            workers,
                            cur: 0,
                            count: segs.len(),
                        }
                    } else if parallel {
                        let renderer =
                            Renderer::new(t, g, names, 0..g.packets.len(), loader, plans);
                        let (tx, rx) = std::sync::mpsc::sync_channel(depth);
                        sc.spawn(move || render_worker(renderer, tx, pool));
                        Feed::Remote(rx)
                    } else {
                        Feed::Local(Box::new(Renderer::new(
                            t,
                            g,
                            names,
                            0..g.packets.len(),
                            loader,
                            plans,
                        )))
                    };
                    rts.push(Rt {
                        feed,
                        chunk: Chunk::default(),
                        seq: 0,
                        held: Held::new(),
                        next: 0,
                        trace: ti,
                        group: gi,
                        clock,
                        base: clock.and_then(|(f, s, o)| Some((f, fs::clock_base_ns(f, s, o)?))),
                        pool_base: base,
                        queue: Ring::with_capacity(2 * BATCH),
                        taken: 0,
                        started: false,
                        ended: false,
                        pause: false,
                        inactive_until: None,
                        error: None,
                        pool: Some(pool),
                    });
                }
                pool_base += t.prog.streams.iter().map(|s| s.events.len()).sum::<usize>();
            }
            // Dropping `rts` (its receivers) at the end stops the workers.
            self.main_loop(traces, &mut rts, out, warn, summary)
        })
    }

    fn main_loop<'d>(
        &mut self,
        traces: &'d [Trace],
        rts: &mut [Rt<'d>],
        out: &mut dyn TextOut,
        warn: &mut dyn Write,
        summary: &mut Summary,
    ) -> Result<(), Error> {
        let mut active: Vec<usize> = (0..rts.len()).collect();
        let block = out.block_size().max(1 << 12);
        let mut obuf: Vec<u8> = Vec::with_capacity(block + (block >> 2));
        let mut batch: Vec<usize> = Vec::with_capacity(BATCH);
        let mut failed: Option<Error> = None;
        'outer: loop {
            // The sink asks the muxer for a batch...
            batch.clear();
            let mut err = None;
            while batch.len() < BATCH {
                match self.mux_next(traces, rts, &mut active, &mut batch) {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(e) => {
                        err = Some(e);
                        break;
                    }
                }
            }
            if batch.is_empty() && err.is_none() {
                break;
            }
            // ... and prints it, releasing each message after printing.
            for &s in &batch {
                if self.reached_end {
                    break;
                }
                let rt = &mut rts[s];
                let src = rt.src();
                let chunks = (&rt.chunk, rt.seq, &rt.held);
                let Some(m) = rt.queue.front_mut() else {
                    continue;
                };
                self.sink(traces, src, chunks, m, &mut obuf, summary);
                rt.queue.pop_front();
                rt.taken -= 1;
                if !rt.held.is_empty() {
                    rt.release();
                }
                if !self.warnbuf.is_empty() {
                    out.block(&mut obuf).map_err(io)?;
                    warn.write_all(&self.warnbuf).map_err(io)?;
                    self.warnbuf.clear();
                }
            }
            if obuf.len() >= block {
                out.block(&mut obuf).map_err(io)?;
            }
            if self.reached_end {
                break;
            }
            if let Some((s, e)) = err {
                let rt = &mut rts[s];
                let error = stream_error(&traces[rt.trace], rt.group, &e);
                if self.opts.strict {
                    failed = Some(error);
                    break 'outer;
                }
                summary.damaged += 1;
                out.block(&mut obuf).map_err(io)?;
                writeln!(
                    warn,
                    "tracemux: warning: {error} (rest of this stream skipped)"
                )
                .map_err(io)?;
                rt.ended = true;
                rt.error = None;
            }
        }
        out.block(&mut obuf).map_err(io)?;
        warn.write_all(&self.warnbuf).map_err(io)?;
        self.warnbuf.clear();
        out.flush().map_err(io)?;
        match failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn in_range(&mut self, ns: i64) -> (bool, bool) {
        // Resolve time-of-day bounds with the date of the first message.
        if self.begin_ns.is_none() {
            if let Some(b) = self.begin {
                self.begin_ns = Some(resolve_tod(b, ns, &self.clock));
            }
        }
        if self.end_ns.is_none() {
            if let Some(e) = self.end {
                self.end_ns = Some(resolve_tod(e, ns, &self.clock));
            }
        }
        let before = self.begin_ns.is_some_and(|b| ns < b);
        let after = self.end_ns.is_some_and(|e| ns > e);
        (before, after)
    }

    /// Handle one message as the pretty sink does, then release it.
    fn sink(
        &mut self,
        traces: &[Trace],
        rt: Src,
        (chunk, seq, held): (&Chunk, u64, &Held),
        m: &mut Msg,
        obuf: &mut Vec<u8>,
        summary: &mut Summary,
    ) {
        let t = &traces[rt.trace];
        // babeltrace2's trimmer: drop what comes before --begin; stop
        // everything at the first message after --end; a discarded-data
        // range that passes --end is cut there (and loses its count).
        let mut notice = match &m.body {
            Body::Notice(d) => Some(**d),
            _ => None,
        };
        let mut trimmed = false;
        if self.begin.is_some() || self.end.is_some() {
            if let Some(ns) = m.ts {
                let (before, after) = self.in_range(ns);
                if after {
                    self.reached_end = true;
                }
                trimmed = before || after;
                if let (Some(end), Some(d)) = (self.end_ns, notice.as_mut()) {
                    let e = d.end.and_then(|e| clock_ns(rt.clock, e));
                    if !trimmed && e.is_some_and(|e| e > end) {
                        d.end = rt.clock.and_then(|c| raw_from_ns(c, end));
                        d.count = None;
                    }
                }
            }
        }
        match m.kind {
            MsgKind::Discarded | MsgKind::DiscardedPackets if !trimmed => {
                if let Some(d) = notice {
                    self.discarded(t, rt, d);
                    summary.discarded_notices += 1;
                }
            }
            MsgKind::Event => {
                let class = m.class as usize;
                let pool = rt.pool_base + class;
                if !trimmed {
                    let has_clock = rt.clock.is_some();
                    let ns = m.ts.unwrap_or(i64::MIN);
                    let start_line = self.head(obuf, has_clock, m.cycles, ns);
                    self.fixed_head(obuf, t, rt.group, class, pool, start_line);
                    obuf.extend_from_slice(body_of(chunk, seq, held, m));
                    obuf.push(b'\n');
                    summary.events += 1;
                }
                self.pools[pool].push(m.obj);
                if let Body::Own(b) = &mut m.body {
                    let mut b = std::mem::take(b);
                    b.clear();
                    self.spare.push(b);
                }
            }
            _ => {}
        }
    }

    /// The time part of the line head (babeltrace2's
    /// `print_event_header`) onto `out`; whether what follows starts the
    /// line (no `, ` before it).
    fn head(&mut self, out: &mut Vec<u8>, has_clock: bool, cycles: u64, ns: i64) -> bool {
        let o = self.opts;
        let names = o.names.header;
        if has_clock && self.usual_head && self.usual_head_at(out, ns) {
            return true;
        }
        if has_clock {
            if names {
                out.extend_from_slice(b"timestamp = ");
            } else {
                out.push(b'[');
            }
            if o.clock_cycles {
                put_padded(out, cycles, 20);
            } else {
                self.clock.push(out, ns, &mut self.warnbuf);
            }
            if !names {
                out.extend_from_slice(b"] ");
            }
            if !o.no_delta {
                if names {
                    out.extend_from_slice(b", delta = ");
                } else {
                    out.push(b'(');
                }
                if o.clock_cycles {
                    match self.last_cycles {
                        Some(l) => {
                            out.push(b'+');
                            put_padded(out, cycles.wrapping_sub(l), 12);
                        }
                        None => out.extend_from_slice(b"+????????????"),
                    }
                } else {
                    match self.last_ns {
                        Some(l) => {
                            let d = (ns as u64).wrapping_sub(l as u64);
                            out.push(b'+');
                            tracemux_core::digits::put_u64(out, d / 1_000_000_000);
                            out.push(b'.');
                            put_padded(out, d % 1_000_000_000, 9);
                        }
                        None => out.extend_from_slice(b"+?.?????????"),
                    }
                }
                if !names {
                    out.extend_from_slice(b") ");
                }
            }
            if o.clock_cycles {
                self.last_cycles = Some(cycles);
            } else {
                self.last_ns = Some(ns);
            }
            return !names;
        }
        true
    }

    /// The usual time part of a line head, `[HH:MM:SS.NNNNNNNNN]
    /// (+S.NNNNNNNNN) `, written at once when `ns` is within the second
    /// of the time before and less than ten seconds after it (`false`:
    /// nothing written, [`Printer::head`] writes it). Only with the
    /// default clock options ([`Printer::usual_head`]).
    #[inline(always)]
    fn usual_head_at(&mut self, out: &mut Vec<u8>, ns: i64) -> bool {
        const E9: u64 = 1_000_000_000;
        const E8: u64 = 100_000_000;
        let Some(last) = self.last_ns else {
            return false;
        };
        let d = (ns as u64).wrapping_sub(last as u64);
        let Some((day, k)) = self.clock.cached(ns).filter(|_| d < 10 * E9) else {
            return false;
        };
        // The room for the longest head, written in place (fixed places
        // after the time of day), then cut back to what was written.
        const ROOM: usize = 64;
        const TAIL: usize = 27;
        let l = out.len();
        out.extend_from_slice(&[0; ROOM]);
        let Ok(at) = <&mut [u8; ROOM]>::try_from(&mut out[l..l + ROOM]) else {
            // (cannot be: the slice is ROOM long)
            out.truncate(l);
            return false;
        };
        at[0] = b'[';
        at[1..33].copy_from_slice(day);
        let Ok(t) = <&mut [u8; TAIL]>::try_from(&mut at[1 + k..1 + k + TAIL]) else {
            out.truncate(l);
            return false;
        };
        let n = ns as u64 % E9;
        t[0] = b'.';
        t[1] = b'0' + (n / E8) as u8;
        t[2..10].copy_from_slice(&digits::eight_digits(n % E8));
        t[10..14].copy_from_slice(b"] (+");
        t[14] = b'0' + (d / E9) as u8;
        t[15] = b'.';
        let dn = d % E9;
        t[16] = b'0' + (dn / E8) as u8;
        t[17..25].copy_from_slice(&digits::eight_digits(dn % E8));
        t[25..27].copy_from_slice(b") ");
        out.truncate(l + 1 + k + TAIL);
        self.last_ns = Some(ns);
        true
    }

    /// The rest of the line head, after the time (see [`static_head`]).
    fn fixed_head(
        &mut self,
        out: &mut Vec<u8>,
        t: &Trace,
        group: usize,
        class: usize,
        pool: usize,
        start_line: bool,
    ) {
        let o = self.opts;
        let slot = pool * 2 + start_line as usize;
        if self.heads.len() <= slot {
            self.heads.resize(slot + 1, None);
        }
        let fixed = self.heads[slot].get_or_insert_with(|| {
            let mut v = Vec::new();
            static_head(o, t, group, class, start_line, &mut v);
            v
        });
        out.extend_from_slice(fixed);
    }

    /// babeltrace2's discarded events/packets warning.
    fn discarded(&mut self, t: &Trace, rt: Src, d: Discarded) {
        let g = &t.streams[rt.group];
        let mut w = std::mem::take(&mut self.warnbuf);
        let what = if d.packets { "packet" } else { "event" };
        match d.count {
            None => {
                w.extend_from_slice(b"WARNING: Tracer may have discarded ");
                w.extend_from_slice(what.as_bytes());
                w.push(b's');
            }
            Some(n) => {
                w.extend_from_slice(b"WARNING: Tracer discarded ");
                let mut b = itoa::Buffer::new();
                w.extend_from_slice(b.format(n).as_bytes());
                w.push(b' ');
                w.extend_from_slice(what.as_bytes());
                if n != 1 {
                    w.push(b's');
                }
            }
        }
        w.push(b' ');
        let range = match (d.begin, d.end) {
            (Some(b), Some(e)) => clock_ns(rt.clock, b).zip(clock_ns(rt.clock, e)),
            _ => None,
        };
        let mut extra = Vec::new();
        match range {
            Some((b, e)) => {
                w.extend_from_slice(b"between [");
                self.clock.push(&mut w, b, &mut extra);
                w.extend_from_slice(b"] and [");
                self.clock.push(&mut w, e, &mut extra);
                w.push(b']');
            }
            None => w.extend_from_slice(b"(unknown time range)"),
        }
        w.extend_from_slice(b" in trace \"");
        w.extend_from_slice(if t.anonymous {
            b"(unknown)"
        } else {
            t.name.as_bytes()
        });
        w.extend_from_slice(b"\" ");
        match t.tc.uuid {
            Some(u) => {
                w.extend_from_slice(b"(UUID: ");
                w.extend_from_slice(uuid_string(&u).as_bytes());
                w.extend_from_slice(b") ");
            }
            None => w.extend_from_slice(b"(no UUID) "),
        }
        w.extend_from_slice(b"within stream \"");
        w.extend_from_slice(g.name.as_bytes());
        w.extend_from_slice(b"\" (stream class ID: ");
        let mut b = itoa::Buffer::new();
        w.extend_from_slice(b.format(g.class_id).as_bytes());
        w.extend_from_slice(b", stream ID: ");
        w.extend_from_slice(b.format(g.id).as_bytes());
        w.extend_from_slice(b").\n");
        // A negative-time warning (if any) goes before the line, as
        // babeltrace2 prints it while formatting.
        if !extra.is_empty() {
            let mut x = extra;
            x.extend_from_slice(&w);
            w = x;
        }
        self.warnbuf = w;
    }
}

/// The part of an event's line head that is the same for every event of
/// its class (`print_event_header` after the time): trace name, host and
/// domain fields, log level, EMF URI and the event name.
fn static_head(
    o: &TextOptions,
    t: &Trace,
    group: usize,
    class: usize,
    start_line: bool,
    out: &mut Vec<u8>,
) {
    let names = o.names.header;
    let tc = &t.tc;
    let mut dom = false;
    let sep = |out: &mut Vec<u8>, start_line: bool| {
        if !start_line {
            out.extend_from_slice(b", ");
        }
    };
    if o.fields.trace && !t.anonymous {
        sep(out, start_line);
        if names {
            out.extend_from_slice(b"trace = ");
        }
        out.extend_from_slice(t.name.as_bytes());
        if names {
            out.extend_from_slice(b", ");
        }
    }
    let env_field = |out: &mut Vec<u8>, dom: &mut bool, key: &str, label: &str| {
        if let Some(EnvValue::Str(s)) = tc.env(key) {
            sep(out, start_line);
            if names {
                out.extend_from_slice(label.as_bytes());
                out.extend_from_slice(b" = ");
            } else if *dom {
                out.push(b':');
            }
            out.extend_from_slice(s.as_bytes());
            *dom = true;
        }
    };
    if o.fields.hostname {
        if let Some(EnvValue::Str(s)) = tc.env("hostname") {
            sep(out, start_line);
            if names {
                out.extend_from_slice(b"trace:hostname = ");
            }
            out.extend_from_slice(s.as_bytes());
            dom = true;
        }
    }
    if o.fields.domain {
        env_field(out, &mut dom, "domain", "trace:domain");
    }
    if o.fields.procname {
        env_field(out, &mut dom, "procname", "trace:procname");
    }
    if o.fields.vpid {
        if let Some(EnvValue::Int(v)) = tc.env("vpid") {
            sep(out, start_line);
            if names {
                out.extend_from_slice(b"trace:vpid = ");
            } else if dom {
                out.push(b':');
            }
            out.push(b'(');
            let mut b = itoa::Buffer::new();
            out.extend_from_slice(b.format(*v).as_bytes());
            out.push(b')');
            dom = true;
        }
    }
    let sc = t
        .prog
        .streams
        .get(t.streams[group].class)
        .and_then(|s| tc.stream_class(s.id));
    let ec = sc.and_then(|s| s.event_classes.get(class));
    if o.fields.loglevel {
        if let Some(l) = ec.and_then(|e| e.log_level) {
            if (0..=14).contains(&l) {
                sep(out, start_line);
                if names {
                    out.extend_from_slice(b"loglevel = ");
                } else if dom {
                    out.push(b':');
                }
                out.extend_from_slice(LOG_LEVELS[l as usize].as_bytes());
                out.extend_from_slice(b" (");
                let mut b = itoa::Buffer::new();
                out.extend_from_slice(b.format(l).as_bytes());
                out.push(b')');
                dom = true;
            }
        }
    }
    if o.fields.emf {
        if let Some(u) = ec.and_then(|e| e.emf_uri.as_deref()) {
            sep(out, start_line);
            if names {
                out.extend_from_slice(b"model.emf.uri = ");
            } else if dom {
                out.push(b':');
            }
            out.extend_from_slice(u.as_bytes());
            dom = true;
        }
    }
    if dom && !names {
        out.push(b' ');
    }
    if !start_line {
        out.extend_from_slice(b", ");
    }
    if names {
        out.extend_from_slice(b"name = ");
    }
    match ec.and_then(|e| e.name.as_deref()) {
        Some(n) => out.extend_from_slice(n.as_bytes()),
        None => out.extend_from_slice(b"<unknown>"),
    }
    out.extend_from_slice(if names { b", " } else { b": " });
}

fn resolve_tod(t: TimeSpec, first_ns: i64, clock: &Clock) -> i64 {
    match t {
        TimeSpec::Abs(v) => v,
        TimeSpec::OfDay(tod) => {
            // The date of the first message, in the zone used to print.
            let secs = first_ns.div_euclid(1_000_000_000);
            let off = if clock.gmt {
                0
            } else {
                clock.zone.offset(secs) as i64
            };
            let local = secs + off;
            let midnight = local - local.rem_euclid(86_400);
            (midnight - off) * 1_000_000_000 + tod
        }
    }
}

/// babeltrace2's names of the log levels (TSDL's), by level.
const LOG_LEVELS: [&str; 15] = [
    "TRACE_EMERG",
    "TRACE_ALERT",
    "TRACE_CRIT",
    "TRACE_ERR",
    "TRACE_WARNING",
    "TRACE_NOTICE",
    "TRACE_INFO",
    "TRACE_DEBUG_SYSTEM",
    "TRACE_DEBUG_PROGRAM",
    "TRACE_DEBUG_PROCESS",
    "TRACE_DEBUG_MODULE",
    "TRACE_DEBUG_UNIT",
    "TRACE_DEBUG_FUNCTION",
    "TRACE_DEBUG_LINE",
    "TRACE_DEBUG",
];

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
