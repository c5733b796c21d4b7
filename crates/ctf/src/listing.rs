//! yactfr's element listing (the `expected-elements.txt` format of the
//! conformance corpus, described in `corpus/ctf2/README.md`), written by a
//! [`Visitor`]. It is a test and debugging aid: decode a stream file with
//! [`crate::stream::decode_file`] and this visitor, and compare with
//! yactfr's listing.

use std::fmt::Write as _;

use crate::decode::{IntValue, Kind, Len, Node, PacketInfo, Visitor};
use crate::ir::{Scope, TraceClass};

/// Writes the listing into a `String`.
pub struct Listing<'t> {
    tc: &'t TraceClass,
    /// Output.
    pub out: String,
    depth: usize,
    base: u64,
    stream_class: Option<u64>,
    /// (total, content) from the packet context: for `PI`.
    has_total: bool,
    /// The last BLOB printed its own `MSU` line.
    blob_uuid: bool,
}

impl<'t> Listing<'t> {
    pub fn new(tc: &'t TraceClass) -> Self {
        Listing {
            tc,
            out: String::new(),
            depth: 0,
            base: 0,
            stream_class: None,
            has_total: false,
            blob_uuid: false,
        }
    }

    fn line(&mut self, at: u64, text: &str) {
        let _ = writeln!(
            self.out,
            "{:>6} {}{}",
            self.base + at,
            "  ".repeat(self.depth),
            text
        );
    }

    fn open(&mut self, at: u64, text: &str) {
        self.line(at, &format!("{text} {{"));
        self.depth += 1;
    }

    fn close(&mut self, at: u64) {
        self.depth = self.depth.saturating_sub(1);
        self.line(at, "}");
    }

    /// Append the final error line (`OFFSET MESSAGE`), offset in bits from
    /// the start of the file.
    pub fn error(&mut self, abs_bit: u64, msg: &str) {
        let _ = writeln!(self.out, "{:>6} {}", abs_bit, msg);
    }

    fn named(prefix: &str, node: &Node) -> String {
        match &node.name {
            Some(n) => format!("{prefix}:{n}"),
            None => prefix.to_string(),
        }
    }

    fn raw_line(&mut self, at: u64, bytes: &[u8], string: bool) {
        if bytes.is_empty() {
            return;
        }
        let mut s = format!("RD:{}:", bytes.len());
        for &b in bytes {
            if string && (0x20..=0x7e).contains(&b) && b != b'$' {
                s.push(b as char);
            } else if string {
                let _ = write!(s, "${b:02x}");
            } else {
                let _ = write!(s, "{b:02x}");
            }
        }
        self.line(at, &s);
    }
}

/// `%g` as C's printf prints it (6 significant digits).
pub fn format_g(v: f64) -> String {
    crate::text::fmt_g(v)
}

impl Visitor for Listing<'_> {
    /// yactfr lists any packet magic number (`PMN`) and goes on.
    const CHECK_MAGIC: bool = false;

    fn packet_begin(&mut self, file_offset: u64) {
        self.base = file_offset * 8;
        self.depth = 0;
        self.has_total = false;
        self.open(0, "P");
        self.open(0, "PC");
    }

    fn data_stream_info(&mut self, at: u64, class_id: Option<u64>, stream_id: Option<u64>) {
        self.stream_class = class_id;
        let mut s = String::from("DSI");
        if let Some(t) = class_id {
            let _ = write!(s, ":T{t}");
        }
        if let Some(i) = stream_id {
            let _ = write!(s, ":I{i}");
        }
        self.line(at, &s);
    }

    fn packet_info(&mut self, at: u64, info: &PacketInfo) {
        let mut s = String::from("PI");
        match (info.total_bits, info.content_bits) {
            (Some(t), Some(c)) => {
                let _ = write!(s, ":T{t}:C{c}");
            }
            (Some(t), None) => {
                let _ = write!(s, ":T{t}:C{t}");
            }
            (None, Some(c)) => {
                let _ = write!(s, ":C{c}");
            }
            (None, None) => {}
        }
        self.has_total = info.total_bits.is_some();
        if let Some(e) = info.end_clock {
            let _ = write!(s, ":E{e}");
        }
        if let Some(n) = info.seq_num {
            let _ = write!(s, ":S{n}");
        }
        if let Some(d) = info.discarded {
            let _ = write!(s, ":D{d}");
        }
        self.line(at, &s);
    }

    fn packet_end(&mut self, content_end: u64, total_end: u64) {
        self.close(content_end);
        self.close(total_end);
    }

    fn event_begin(&mut self, at: u64) {
        self.open(at, "ER");
    }

    fn event_class(&mut self, at: u64, class: usize, id: u64) {
        let name = self
            .stream_class
            .and_then(|sid| self.tc.stream_class(sid))
            .or_else(|| self.tc.stream_classes.first())
            .and_then(|sc| sc.event_classes.get(class))
            .and_then(|e| e.name.clone());
        let mut s = format!("ERI:T{id}");
        if let Some(n) = name {
            let _ = write!(s, ":#{n}");
        }
        self.line(at, &s);
    }

    fn event_end(&mut self, at: u64) {
        self.close(at);
    }

    fn scope_begin(&mut self, scope: Scope, at: u64) {
        self.open(at, &format!("SC:{}", scope as u8));
    }

    fn scope_end(&mut self, _scope: Scope, at: u64) {
        self.close(at);
    }

    fn struct_begin(&mut self, node: &Node, at: u64) {
        self.open(at, &Self::named("ST", node));
    }

    fn struct_end(&mut self, _node: &Node, end: u64) {
        self.close(end);
    }

    fn array_begin(&mut self, node: &Node, _len: u64, at: u64) {
        let p = match node.kind {
            Kind::Array {
                len: Len::Static(_),
                ..
            } => "SLA",
            _ => "DLA",
        };
        self.open(at, &Self::named(p, node));
    }

    fn array_end(&mut self, _node: &Node, end: u64) {
        self.close(end);
    }

    fn variant_begin(&mut self, node: &Node, selector: i128, _option: usize, at: u64) {
        let p = match node.kind {
            Kind::Variant {
                sel_signed: true, ..
            } => "VS",
            _ => "VU",
        };
        self.open(at, &format!("{}:{selector}", Self::named(p, node)));
    }

    fn variant_end(&mut self, _node: &Node, end: u64) {
        self.close(end);
    }

    fn optional_begin(&mut self, node: &Node, enabled: bool, selector: i128, at: u64) {
        let state = if enabled { "enabled" } else { "disabled" };
        let text = match node.kind {
            Kind::Optional { ranges: None, .. } => format!("{}:{state}", Self::named("OB", node)),
            Kind::Optional {
                sel_signed: true, ..
            } => format!("{}:{state}:{selector}", Self::named("OS", node)),
            _ => format!("{}:{state}:{selector}", Self::named("OU", node)),
        };
        self.open(at, &text);
    }

    fn optional_end(&mut self, _node: &Node, end: u64) {
        self.close(end);
    }

    fn int(&mut self, node: &Node, v: IntValue, at: u64) {
        let vl = matches!(node.kind, Kind::VarInt { .. });
        let t = match (v, vl) {
            (IntValue::U(x), false) => format!("{}:{x}", Self::named("FLUI", node)),
            (IntValue::S(x), false) => format!("{}:{x}", Self::named("FLSI", node)),
            (IntValue::U(x), true) => format!("{}:{x}", Self::named("VLUI", node)),
            (IntValue::S(x), true) => format!("{}:{x}", Self::named("VLSI", node)),
        };
        self.line(at, &t);
    }

    fn float(&mut self, node: &Node, v: f64, at: u64) {
        let t = format!("{}:{}", Self::named("FLFPN", node), format_g(v));
        self.line(at, &t);
    }

    fn boolean(&mut self, node: &Node, v: bool, at: u64) {
        let t = format!("{}:{v}", Self::named("FLB", node));
        self.line(at, &t);
    }

    fn bit_array(&mut self, node: &Node, v: u64, at: u64) {
        match &node.kind {
            Kind::BitArray {
                flags: Some(flags), ..
            } => {
                let mut names: Vec<&str> = flags
                    .iter()
                    .filter(|f| {
                        f.ranges
                            .iter()
                            .any(|r| (r.lower.max(0)..=r.upper.min(63)).any(|b| v >> b & 1 == 1))
                    })
                    .map(|f| f.name.as_str())
                    .collect();
                names.sort_unstable();
                let mut t = format!("{}:{v}", Self::named("FLBM", node));
                if !names.is_empty() {
                    let _ = write!(t, ":{}", names.join(","));
                }
                self.line(at, &t);
            }
            _ => {
                let t = format!("{}:{v}", Self::named("FLBA", node));
                self.line(at, &t);
            }
        }
    }

    fn string(&mut self, node: &Node, raw: &[u8], at: u64, end: u64) {
        let p = match node.kind {
            Kind::String { len: None, .. } => "NTS",
            Kind::String {
                len: Some(Len::Static(_)),
                ..
            } => "SLS",
            _ => "DLS",
        };
        self.open(at, &Self::named(p, node));
        self.raw_line(at, raw, true);
        self.close(end);
    }

    fn partial(&mut self, node: &Node, raw: &[u8], at: u64) {
        let p = match &node.kind {
            Kind::String { len: None, .. } => "NTS".to_string(),
            Kind::String {
                len: Some(Len::Static(_)),
                ..
            } => "SLS".to_string(),
            Kind::String { .. } => "DLS".to_string(),
            Kind::Blob {
                len: Len::Static(_),
                media_type,
            } => format!("SLB:{media_type}"),
            Kind::Blob { media_type, .. } => format!("DLB:{media_type}"),
            _ => return,
        };
        let (head, tail) = p
            .split_once(':')
            .map(|(a, b)| (a, Some(b)))
            .unwrap_or((&p, None));
        let mut t = Self::named(head, node);
        if let Some(tail) = tail {
            t.push(':');
            t.push_str(tail);
        }
        self.open(at, &t);
        let string = matches!(node.kind, Kind::String { .. });
        self.raw_line(at, raw, string);
    }

    fn blob(&mut self, node: &Node, bytes: &[u8], at: u64, end: u64) {
        let (p, mt) = match &node.kind {
            Kind::Blob {
                len: Len::Static(_),
                media_type,
            } => ("SLB", media_type.as_ref()),
            Kind::Blob { media_type, .. } => ("DLB", media_type.as_ref()),
            _ => ("SLB", ""),
        };
        self.open(at, &format!("{}:{mt}", Self::named(p, node)));
        self.raw_line(at, bytes, false);
        if node.roles.has(crate::ir::Roles::METADATA_STREAM_UUID) && bytes.len() == 16 {
            let mut u = [0u8; 16];
            u.copy_from_slice(bytes);
            self.blob_uuid = false;
            self.metadata_uuid(&u, end);
            self.blob_uuid = true;
        }
        self.close(end);
    }

    fn clock_value(&mut self, v: u64, at: u64) {
        self.line(at, &format!("DCV:{v}"));
    }

    fn packet_magic(&mut self, v: u64, at: u64) {
        self.line(at, &format!("PMN:{v}"));
    }

    fn metadata_uuid(&mut self, uuid: &[u8; 16], at: u64) {
        if std::mem::take(&mut self.blob_uuid) {
            return;
        }
        let h: String = uuid.iter().map(|b| format!("{b:02x}")).collect();
        let t = format!(
            "MSU:{}-{}-{}-{}-{}",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        );
        self.line(at, &t);
    }
}
