//! Field values as babeltrace2 prints them: integers in their base,
//! strings, enumeration labels, and the [`FieldPrinter`] that the decoder
//! writes an event's scopes through.

use super::*;

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
pub(super) enum Frame {
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
    pub(super) names: Names,
    /// Print the packet context (capture mode) instead of the event scopes.
    pub(super) capture_pc: bool,
    /// The packet context was printed (capture mode).
    pub pc_visible: bool,
    /// A packet was opened (capture mode).
    pub(super) opened: bool,
    pub(super) active: bool,
    pub(super) pending_scope: Option<Scope>,
    pub(super) field_names: bool,
    pub(super) skip: u32,
    pub(super) frames: Vec<Frame>,
    pub(super) tmp: Vec<u8>,
    /// Visible string fields written so far (for babeltrace2's stale
    /// strings, applied later), with their texts in `raw`.
    pub(super) marks: Vec<Mark>,
    pub(super) raw: Vec<u8>,
}

impl FieldPrinter {
    pub(super) fn new(names: Names, capture_pc: bool) -> Self {
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
    pub(super) fn enter(&mut self, node: &Node) -> bool {
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

    pub(super) fn compound_begin(&mut self, node: &Node, f: Frame, open: &[u8]) {
        if !self.enter(node) {
            if self.active {
                self.skip += 1;
            }
            return;
        }
        self.out.extend_from_slice(open);
        self.frames.push(f);
    }

    pub(super) fn compound_end(&mut self, close: &[u8]) {
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

    pub(super) fn enum_labels(&mut self, node: &Node, v: IntValue) {
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
    pub(super) fn scope_head(&mut self, scope: Scope) {
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
    pub(super) fn string_value(&mut self, node: &Node, raw: &[u8], elem: u64) {
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
