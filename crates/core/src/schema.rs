//! The schema of every event class: field classes with the expressive
//! power of CTF 2 (integers with size, signedness, display base and
//! enumeration mappings; booleans; floats; strings; byte blobs; static and
//! dynamic arrays; structures; variants; optionals), grouped in [`Scope`]s
//! as CTF groups them (see [`crate::typed`] for how values are visited).

use crate::value::Base;

/// Where a field lives, as CTF groups them. ftrace's `common_*` fields are
/// the common context; uftrace's task, depth and address are the common
/// context of its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Per packet (CTF packet context: `cpu_id`, discarded counts...).
    PacketContext,
    /// The event header (id, timestamp): rarely interesting to sinks.
    EventHeader,
    /// Fields every event of a stream has (CTF stream event context,
    /// ftrace `common_*`).
    CommonContext,
    /// Per-class context (CTF event context).
    SpecificContext,
    /// The event's own fields.
    Payload,
}

impl Scope {
    /// Every scope, in decoding order.
    pub const ALL: [Scope; 5] = [
        Scope::PacketContext,
        Scope::EventHeader,
        Scope::CommonContext,
        Scope::SpecificContext,
        Scope::Payload,
    ];

    /// A short stable name (JSON keys, Parquet column prefixes).
    pub fn name(self) -> &'static str {
        match self {
            Scope::PacketContext => "packet_context",
            Scope::EventHeader => "event_header",
            Scope::CommonContext => "common_context",
            Scope::SpecificContext => "specific_context",
            Scope::Payload => "payload",
        }
    }
}

/// One enumeration label and the integer ranges (inclusive) it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumMapping {
    pub label: String,
    pub ranges: Vec<(i128, i128)>,
}

/// An integer field class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntType {
    /// Size in bits (1 to 64).
    pub bits: u8,
    pub signed: bool,
    /// The base its producer prefers for display.
    pub base: Base,
    /// Enumeration mappings (empty: a plain integer).
    pub mappings: Vec<EnumMapping>,
}

impl IntType {
    pub fn new(bits: u8, signed: bool) -> Self {
        IntType {
            bits,
            signed,
            base: Base::Dec,
            mappings: Vec::new(),
        }
    }
    pub fn hex(bits: u8, signed: bool) -> Self {
        IntType {
            base: Base::Hex,
            ..IntType::new(bits, signed)
        }
    }
    /// With one more enumeration mapping.
    pub fn mapping(mut self, label: &str, ranges: &[(i128, i128)]) -> Self {
        self.mappings.push(EnumMapping {
            label: label.into(),
            ranges: ranges.to_vec(),
        });
        self
    }
    /// The labels whose ranges hold `v`, in mapping order.
    pub fn labels(&self, v: i128) -> impl Iterator<Item = &str> {
        self.mappings
            .iter()
            .filter(move |m| m.ranges.iter().any(|&(lo, hi)| lo <= v && v <= hi))
            .map(|m| m.label.as_str())
    }
}

/// The length of an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayLen {
    /// Always this many elements.
    Static(u64),
    /// Given per event (a CTF sequence, an ftrace `__data_loc` array).
    Dynamic,
    /// Given per event by the value of an earlier member of the same
    /// structure (or scope): the one at this index. Writers then use that
    /// member as the length instead of adding one of their own.
    Sibling(u32),
}

/// A field class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldType {
    Int(IntType),
    Bool,
    /// IEEE 754 binary32 or binary64.
    Float {
        bits: u8,
    },
    /// Text (UTF-8 when valid; producers' other bytes are kept).
    Str,
    /// Opaque bytes.
    Blob,
    Array {
        elem: Box<FieldType>,
        len: ArrayLen,
    },
    Struct(Vec<FieldSchema>),
    /// One of the options, chosen per event.
    Variant(Vec<FieldSchema>),
    /// Present or not, per event.
    Optional(Box<FieldType>),
}

impl FieldType {
    pub fn u(bits: u8) -> Self {
        FieldType::Int(IntType::new(bits, false))
    }
    pub fn s(bits: u8) -> Self {
        FieldType::Int(IntType::new(bits, true))
    }
}

/// A named field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSchema {
    pub name: String,
    pub ty: FieldType,
}

impl FieldSchema {
    pub fn new(name: impl Into<String>, ty: FieldType) -> Self {
        FieldSchema {
            name: name.into(),
            ty,
        }
    }
}

/// The fields of one scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeSchema {
    pub scope: Scope,
    pub fields: Vec<FieldSchema>,
}

/// Everything an event of one class carries besides its timestamp and
/// stream, scope by scope (scopes without fields are left out), in the
/// order a visitor receives them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClassSchema {
    pub scopes: Vec<ScopeSchema>,
}

impl ClassSchema {
    /// The fields of `scope` (empty when the class has none there).
    pub fn scope(&self, scope: Scope) -> &[FieldSchema] {
        self.scopes
            .iter()
            .find(|s| s.scope == scope)
            .map_or(&[], |s| s.fields.as_slice())
    }
    /// Declare `scope` (with no fields yet) if it is not there: for formats
    /// where an empty scope differs from an absent one (a CTF event whose
    /// payload is an empty structure).
    pub fn declare(&mut self, scope: Scope) {
        if !self.scopes.iter().any(|s| s.scope == scope) {
            let at = self.scopes.partition_point(|s| s.scope < scope);
            self.scopes.insert(
                at,
                ScopeSchema {
                    scope,
                    fields: Vec::new(),
                },
            );
        }
    }

    /// Add (or extend) a scope, keeping scopes in [`Scope`] order.
    pub fn push(&mut self, scope: Scope, fields: Vec<FieldSchema>) {
        if fields.is_empty() {
            return;
        }
        if let Some(s) = self.scopes.iter_mut().find(|s| s.scope == scope) {
            s.fields.extend(fields);
            return;
        }
        let at = self.scopes.partition_point(|s| s.scope < scope);
        self.scopes.insert(at, ScopeSchema { scope, fields });
    }
}
