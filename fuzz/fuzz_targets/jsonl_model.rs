//! The typed event model's printers on any sequence of visitor calls: the
//! input drives a visit written by names ([`Named`]: scopes, structures,
//! arrays, variants, optionals, enumerations and leaves of every value
//! kind, nested in any order, balanced or not), recorded on a
//! `FieldTape` with the fields of the class's layout (names it lacks are
//! unknown fields), which the JSON lines printer and the babeltrace
//! printer then replay as an event's values. No panic, and the JSON line
//! parses as JSON.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use tracemux_core::bytes::Endian;
use tracemux_core::model::{Base, Event, EventClass, TraceMeta, Value};
use tracemux_core::named::Named;
use tracemux_core::typed::{ArrayLen, ClassSchema, FieldSchema, FieldType, Scope};
use tracemux_render::babeltrace::BabeltracePrinter;

/// Names from a small set (so that they meet the schema's), or taken from
/// the input (any bytes, as UTF-8 lossily).
const NAMES: &[&str] = &["a", "b", "s", "", "0x", "arr", "v", "\"q\\", "é"];

struct In<'a>(&'a [u8]);

impl<'a> In<'a> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, r) = self.0.split_first()?;
        self.0 = r;
        Some(b)
    }
    fn bytes(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.0.len());
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
    fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        let s = self.bytes(8);
        b[..s.len()].copy_from_slice(s);
        u64::from_le_bytes(b)
    }
    fn name(&mut self) -> String {
        let b = self.byte().unwrap_or(0);
        if (b as usize) < NAMES.len() * 16 {
            NAMES[b as usize % NAMES.len()].to_string()
        } else {
            let n = (b & 7) as usize;
            String::from_utf8_lossy(self.bytes(n)).into_owned()
        }
    }
    fn value(&mut self) -> (Base, Value<'a>) {
        let k = self.byte().unwrap_or(0);
        let base = match k >> 6 {
            0 => Base::Dec,
            1 => Base::Hex,
            2 => Base::Oct,
            _ => Base::Bin,
        };
        let v = match k & 7 {
            0 => Value::Unsigned(self.u64()),
            1 => Value::Signed(self.u64() as i64),
            2 => Value::Float(f64::from_bits(self.u64())),
            3 => Value::Bool(self.byte().unwrap_or(0) & 1 != 0),
            4 => {
                let n = self.byte().unwrap_or(0) as usize % 24;
                Value::Str(self.bytes(n))
            }
            5 => {
                let n = self.byte().unwrap_or(0) as usize % 24;
                Value::Bytes(self.bytes(n))
            }
            _ => {
                let f = self.byte().unwrap_or(0);
                let elem_size = [0u8, 1, 2, 3, 4, 8, 16, 255][(f & 7) as usize];
                let n = self.byte().unwrap_or(0) as usize % 40;
                Value::IntArray {
                    data: self.bytes(n),
                    elem_size,
                    signed: f & 8 != 0,
                    endian: if f & 16 != 0 {
                        Endian::Big
                    } else {
                        Endian::Little
                    },
                }
            }
        };
        (base, v)
    }
}

fn scope(b: u8) -> Scope {
    [
        Scope::PacketContext,
        Scope::EventHeader,
        Scope::CommonContext,
        Scope::SpecificContext,
        Scope::Payload,
    ][b as usize % 5]
}

/// Record the calls the input describes into `t`.
fn drive(data: &[u8], t: &mut Named) {
    let mut i = In(data);
    let mut steps = 0;
    while let Some(op) = i.byte() {
        steps += 1;
        if steps > 2000 {
            break;
        }
        match op % 14 {
            0 => t.scope_begin(scope(op / 14)),
            1 => t.scope_end(scope(op / 14)),
            2 => t.struct_begin(&i.name()),
            3 => t.struct_end(),
            4 => {
                let n = i.name();
                let len = match i.byte().unwrap_or(0) {
                    255 => u64::MAX,
                    x => x as u64 % 8,
                };
                t.array_begin(&n, len)
            }
            5 => t.array_end(),
            6 => {
                let n = i.name();
                let o = i.name();
                t.variant_begin(&n, &o)
            }
            7 => t.variant_end(),
            8 => {
                let n = i.name();
                t.optional_begin(&n, op & 0x80 != 0)
            }
            9 => t.optional_end(),
            10 => {
                let n = i.name();
                let (_, v) = i.value();
                let k = i.byte().unwrap_or(0) as usize % 12;
                let labels: Vec<String> = (0..k).map(|_| i.name()).collect();
                let l: Vec<&str> = labels.iter().map(|s| s.as_str()).collect();
                t.enum_field(&n, v, &l)
            }
            _ => {
                let n = i.name();
                let (b, v) = i.value();
                t.field(&n, b, v)
            }
        };
    }
}

/// A schema with fields named as the driver names them (or none).
fn schema(pick: u8) -> Option<Arc<ClassSchema>> {
    if pick & 1 == 0 {
        return None;
    }
    let mut s = ClassSchema::default();
    if pick & 2 != 0 {
        let inner = vec![
            FieldSchema::new("a", FieldType::u(32)),
            FieldSchema::new("s", FieldType::Str),
        ];
        s.push(
            Scope::Payload,
            vec![
                FieldSchema::new("a", FieldType::u(8)),
                FieldSchema::new("b", FieldType::Struct(inner.clone())),
                FieldSchema::new(
                    "arr",
                    FieldType::Array {
                        elem: Box::new(FieldType::Struct(inner.clone())),
                        len: ArrayLen::Static(2),
                    },
                ),
                FieldSchema::new("v", FieldType::Variant(inner.clone())),
                FieldSchema::new(
                    "s",
                    FieldType::Optional(Box::new(FieldType::Float { bits: 64 })),
                ),
            ],
        );
        s.push(Scope::CommonContext, inner);
    }
    Some(Arc::new(s))
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let mut named = Named::new();
    drive(rest, &mut named);
    let class = EventClass {
        index: tracemux_core::layout::ClassId::UNLISTED,
        id: 1,
        system: "sys".into(),
        name: "ev".into(),
        common_fields: Vec::new(),
        fields: Vec::new(),
        print_fmt: String::new(),
        printer: None,
        schema: schema(pick),
        compiled: Default::default(),
    };
    let classless = pick & 4 != 0;
    let tape = named.tape(if classless {
        &tracemux_core::layout::EMPTY
    } else {
        class.layout()
    });
    let meta = TraceMeta::default();
    let ev = Event {
        ts: 1,
        stream: 0,
        cpu: 0,
        type_id: 1,
        class: if classless { None } else { Some(&class) },
        pid: 1,
        data: &[],
        ext: &[],
        endian: Endian::Little,
        file_pos: 0,
        tape: Some(&tape),
        raw_ts: None,
    };
    let mut out = Vec::new();
    tracemux_render::jsonl::write_event(&mut out, &meta, &ev);
    // (serde_json, the oracle, refuses nesting deeper than 128 levels:
    // such a line is valid JSON it cannot check; the 20-minute run of 26
    // Nov stopped on one, 130 structures deep)
    if let Err(e) = serde_json::from_slice::<serde_json::Value>(&out)
        .map_err(|e| e.to_string())
        .or_else(|e| {
            if e.contains("recursion limit") {
                Ok(serde_json::Value::Null)
            } else {
                Err(e)
            }
        })
    {
        panic!(
            "JSON line does not parse: {e}: {}",
            String::from_utf8_lossy(&out)
        );
    }
    out.clear();
    let mut p = BabeltracePrinter::new();
    p.names_as_given = pick & 8 != 0;
    p.omit_empty_payload = pick & 16 != 0;
    p.write_event(&mut out, &meta, &ev);
});
