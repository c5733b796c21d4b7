//! The typed view of events: a schema of every event class, and values
//! visited as a tree.
//!
//! Every format maps its event layouts onto [`ClassSchema`]: field classes
//! with the expressive power of CTF 2 (integers with size, signedness,
//! display base and enumeration mappings; booleans; floats; strings; byte
//! blobs; static and dynamic arrays; structures; variants; optionals),
//! grouped in [`Scope`]s as CTF groups them. Writers (CTF, Parquet,
//! Perfetto) read the schemas of all classes before the first event.
//!
//! Values are handed to a [`FieldVisitor`] in schema order: leaves through
//! [`FieldVisitor::field`], nesting through the `*_begin`/`*_end` pairs.
//! Readers whose events are decoded lazily from fixed layouts (ftrace) visit
//! straight from the record bytes; readers whose events need stream state to
//! decode (CTF, uftrace) record their values once into a reusable
//! [`FieldTape`] that the event borrows, and that replays into any visitor.
//! Neither allocates per event once buffers have grown.

use crate::layout::{ClassLayout, FieldId, FieldRef};
pub use crate::schema::{
    ArrayLen, ClassSchema, EnumMapping, FieldSchema, FieldType, IntType, Scope, ScopeSchema,
};
use crate::value::{Base, Value};

/// Receives the values of one event, in schema order.
///
/// Every value comes with its field ([`FieldRef`]: its [`FieldId`] in the
/// class's [`ClassLayout`] and its node, which names it), so a sink finds
/// what it made for a field by index. Leaves come through
/// [`field`](Self::field) (an array's elements are its element field);
/// enumerations through [`enum_field`](Self::enum_field). A structure is
/// `struct_begin`, its members, `struct_end`; an array is `array_begin`,
/// its elements, `array_end`; a variant wraps its chosen option (`option`
/// is the option's field, which the value inside comes with) and an
/// optional wraps its value when present. Scopes come between
/// `scope_begin` and `scope_end`. Every method but `field` has a default,
/// so a flat visitor sees the leaves only.
pub trait FieldVisitor {
    fn field(&mut self, f: FieldRef<'_>, base: Base, value: Value<'_>);
    /// An integer with enumeration mappings: `labels` are those whose
    /// ranges hold the value (possibly none).
    fn enum_field(&mut self, f: FieldRef<'_>, value: Value<'_>, labels: &[&str]) {
        let _ = labels;
        self.field(f, Base::Dec, value);
    }
    fn scope_begin(&mut self, _scope: Scope) {}
    fn scope_end(&mut self, _scope: Scope) {}
    fn struct_begin(&mut self, _f: FieldRef<'_>) {}
    fn struct_end(&mut self) {}
    fn array_begin(&mut self, _f: FieldRef<'_>, _len: u64) {}
    fn array_end(&mut self) {}
    /// `option`: the chosen option's field (its [`FieldRef::option`] is
    /// the option's name).
    fn variant_begin(&mut self, _f: FieldRef<'_>, _option: FieldRef<'_>) {}
    fn variant_end(&mut self) {}
    /// `present`: whether a value follows before `optional_end`.
    fn optional_begin(&mut self, _f: FieldRef<'_>, _present: bool) {}
    fn optional_end(&mut self) {}
    /// Whether the visitor wants the value of field `f` (a field of a
    /// scope): sources that decode on demand skip the fields it does not
    /// want (a projection), sources that recorded their values hand them
    /// over anyway.
    fn wants(&self, _f: FieldRef<'_>) -> bool {
        true
    }
}

/// What a [`FieldTape`] recorded, step by step ([`FieldTape::steps`]): the
/// calls of the visit, for readers that look for a known shape without
/// replaying it into a visitor.
#[derive(Debug, Clone, Copy)]
pub enum TapeStep<'a> {
    ScopeBegin(Scope),
    ScopeEnd(Scope),
    StructBegin(FieldRef<'a>),
    StructEnd,
    ArrayBegin(FieldRef<'a>, u64),
    ArrayEnd,
    VariantBegin(FieldRef<'a>, FieldRef<'a>),
    VariantEnd,
    OptionalBegin(FieldRef<'a>, bool),
    OptionalEnd,
    Field(FieldRef<'a>, Base, Value<'a>),
    /// An enumeration's value; its labels are the next `n` steps.
    Enum(FieldRef<'a>, Value<'a>, u32),
    Label(&'a str),
}

impl TapeStep<'_> {
    /// Whether this is the end of a compound (of any kind).
    pub fn is_end(&self) -> bool {
        matches!(
            self,
            TapeStep::StructEnd | TapeStep::ArrayEnd | TapeStep::VariantEnd | TapeStep::OptionalEnd
        )
    }
}

/// One step of a [`FieldTape`]. Fields are their ids; byte values and
/// labels are ranges into the tape's buffers.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    ScopeBegin(Scope),
    ScopeEnd(Scope),
    StructBegin(FieldId),
    StructEnd,
    ArrayBegin(FieldId, u64),
    ArrayEnd,
    VariantBegin(FieldId, FieldId),
    VariantEnd,
    OptionalBegin(FieldId, bool),
    OptionalEnd,
    Leaf(FieldId, Base, Leaf),
    /// An enumeration: the value, then `n` labels in the next `n` steps.
    Enum(FieldId, Leaf, u32),
    Label(Span),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Leaf {
    U(u64),
    S(i64),
    F(f64),
    B(bool),
    Str(Span),
    Bytes(Span),
    /// An integer array kept as its bytes.
    Ints(Span, u8, bool, crate::bytes::Endian),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span(u32, u32);

/// A position in a [`FieldTape`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TapeMark(usize, usize, usize);

/// The values of one event, recorded from a visit and replayed into any
/// visitor, with the layout of the event's class (the tape keeps field
/// ids, not names). Reused from event to event (`clear`), it stops
/// allocating once it has grown to the largest event.
#[derive(Debug, Default, Clone)]
pub struct FieldTape {
    steps: Vec<Step>,
    bytes: Vec<u8>,
    /// Enumeration labels (kept as text, so that replaying them needs no
    /// UTF-8 check).
    names: String,
    /// Nesting depth while recording (unbalanced tapes are closed on replay).
    depth: u32,
}

impl FieldTape {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn clear(&mut self) {
        self.steps.clear();
        self.bytes.clear();
        self.names.clear();
        self.depth = 0;
    }
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
    /// About how many bytes the recorded values take.
    pub fn size(&self) -> usize {
        self.steps.len() * std::mem::size_of::<Step>() + self.bytes.len() + self.names.len()
    }
    /// Make this tape a copy of `o`, in the room it already has.
    pub fn copy_from(&mut self, o: &FieldTape) {
        self.steps.clear();
        self.steps.extend_from_slice(&o.steps);
        self.bytes.clear();
        self.bytes.extend_from_slice(&o.bytes);
        self.names.clear();
        self.names.push_str(&o.names);
        self.depth = o.depth;
    }
    /// Where the tape ends now: [`FieldTape::truncate`] goes back to it
    /// (a reader keeps what all events of a packet share and records only
    /// each event's own values after it).
    pub fn mark(&self) -> TapeMark {
        TapeMark(self.steps.len(), self.bytes.len(), self.names.len())
    }
    /// Drop everything recorded after `m`.
    pub fn truncate(&mut self, m: TapeMark) {
        self.steps.truncate(m.0);
        self.bytes.truncate(m.1);
        self.names.truncate(m.2);
        self.depth = 0;
    }
    /// Append everything `o` recorded (a packet's values before each of its
    /// events).
    pub fn append(&mut self, o: &FieldTape) {
        let (b, n) = (self.bytes.len() as u32, self.names.len() as u32);
        let shift = |s: Span, by: u32| Span(s.0 + by, s.1 + by);
        let leaf = |l: Leaf| match l {
            Leaf::Str(s) => Leaf::Str(shift(s, b)),
            Leaf::Bytes(s) => Leaf::Bytes(shift(s, b)),
            Leaf::Ints(s, e, g, en) => Leaf::Ints(shift(s, b), e, g, en),
            other => other,
        };
        self.steps.extend(o.steps.iter().map(|s| match *s {
            Step::Leaf(f, base, l) => Step::Leaf(f, base, leaf(l)),
            Step::Enum(f, l, c) => Step::Enum(f, leaf(l), c),
            Step::Label(s) => Step::Label(shift(s, n)),
            other => other,
        }));
        self.bytes.extend_from_slice(&o.bytes);
        self.names.push_str(&o.names);
    }
    #[inline(always)]
    fn span(&mut self, b: &[u8]) -> Span {
        let s = self.bytes.len() as u32;
        self.bytes.extend_from_slice(b);
        Span(s, self.bytes.len() as u32)
    }
    fn get(&self, s: Span) -> &[u8] {
        self.bytes.get(s.0 as usize..s.1 as usize).unwrap_or(&[])
    }
    /// Record a label (see [`FieldTape::name`]).
    #[inline(always)]
    fn name_span(&mut self, n: &str) -> Span {
        let s = self.names.len() as u32;
        self.names.push_str(n);
        Span(s, self.names.len() as u32)
    }
    fn name(&self, s: Span) -> &str {
        self.names.get(s.0 as usize..s.1 as usize).unwrap_or("")
    }
    #[inline(always)]
    fn leaf(&mut self, v: Value<'_>) -> Leaf {
        match v {
            Value::Unsigned(x) => Leaf::U(x),
            Value::Signed(x) => Leaf::S(x),
            Value::Float(x) => Leaf::F(x),
            Value::Bool(x) => Leaf::B(x),
            Value::Str(b) => Leaf::Str(self.span(b)),
            Value::Bytes(b) => Leaf::Bytes(self.span(b)),
            Value::IntArray {
                data,
                elem_size,
                signed,
                endian,
            } => Leaf::Ints(self.span(data), elem_size, signed, endian),
        }
    }
    fn value(&self, l: Leaf) -> Value<'_> {
        match l {
            Leaf::U(x) => Value::Unsigned(x),
            Leaf::S(x) => Value::Signed(x),
            Leaf::F(x) => Value::Float(x),
            Leaf::B(x) => Value::Bool(x),
            Leaf::Str(s) => Value::Str(self.get(s)),
            Leaf::Bytes(s) => Value::Bytes(self.get(s)),
            Leaf::Ints(s, elem_size, signed, endian) => Value::IntArray {
                data: self.get(s),
                elem_size,
                signed,
                endian,
            },
        }
    }

    /// The recorded steps, in order, their fields in `layout`.
    pub fn steps<'a>(&'a self, layout: &'a ClassLayout) -> impl Iterator<Item = TapeStep<'a>> + 'a {
        self.steps.iter().map(move |s| self.step(s, layout))
    }

    /// Whether every step is inside a scope and no scope comes twice (so
    /// that [`FieldTape::scope_steps`] gives every value of a scope).
    pub fn scopes_once(&self) -> bool {
        let mut seen = 0u32;
        let mut open = None;
        for s in &self.steps {
            match (s, open) {
                (Step::ScopeBegin(x), None) => {
                    let bit = 1 << (*x as u32);
                    if seen & bit != 0 {
                        return false;
                    }
                    seen |= bit;
                    open = Some(*x);
                }
                (Step::ScopeEnd(x), Some(o)) if *x == o => open = None,
                (Step::ScopeBegin(_) | Step::ScopeEnd(_), _) | (_, None) => return false,
                _ => {}
            }
        }
        open.is_none()
    }

    /// The steps inside the first `scope` recorded (none if there is no
    /// such scope), their fields in `layout`.
    pub fn scope_steps<'a>(
        &'a self,
        layout: &'a ClassLayout,
        scope: Scope,
    ) -> impl Iterator<Item = TapeStep<'a>> + 'a {
        let begin = self
            .steps
            .iter()
            .position(|s| matches!(s, Step::ScopeBegin(x) if *x == scope))
            .map_or(self.steps.len(), |i| i + 1);
        self.steps[begin..]
            .iter()
            .take_while(move |s| !matches!(s, Step::ScopeEnd(x) if *x == scope))
            .map(move |s| self.step(s, layout))
    }

    fn step<'a>(&'a self, s: &Step, l: &'a ClassLayout) -> TapeStep<'a> {
        match *s {
            Step::ScopeBegin(s) => TapeStep::ScopeBegin(s),
            Step::ScopeEnd(s) => TapeStep::ScopeEnd(s),
            Step::StructBegin(f) => TapeStep::StructBegin(l.get(f)),
            Step::StructEnd => TapeStep::StructEnd,
            Step::ArrayBegin(f, len) => TapeStep::ArrayBegin(l.get(f), len),
            Step::ArrayEnd => TapeStep::ArrayEnd,
            Step::VariantBegin(f, o) => TapeStep::VariantBegin(l.get(f), l.get(o)),
            Step::VariantEnd => TapeStep::VariantEnd,
            Step::OptionalBegin(f, p) => TapeStep::OptionalBegin(l.get(f), p),
            Step::OptionalEnd => TapeStep::OptionalEnd,
            Step::Leaf(f, base, v) => TapeStep::Field(l.get(f), base, self.value(v)),
            Step::Enum(f, v, count) => TapeStep::Enum(l.get(f), self.value(v), count),
            Step::Label(n) => TapeStep::Label(self.name(n)),
        }
    }

    /// Hand every recorded value to `v`, in the order recorded, with its
    /// field in `layout` (the layout of the class the values are of).
    pub fn replay<V: FieldVisitor + ?Sized>(&self, layout: &ClassLayout, v: &mut V) {
        let mut labels: [&str; 8] = [""; 8];
        let mut i = 0;
        while i < self.steps.len() {
            match self.steps[i] {
                Step::ScopeBegin(s) => v.scope_begin(s),
                Step::ScopeEnd(s) => v.scope_end(s),
                Step::StructBegin(f) => v.struct_begin(layout.get(f)),
                Step::StructEnd => v.struct_end(),
                Step::ArrayBegin(f, len) => v.array_begin(layout.get(f), len),
                Step::ArrayEnd => v.array_end(),
                Step::VariantBegin(f, o) => v.variant_begin(layout.get(f), layout.get(o)),
                Step::VariantEnd => v.variant_end(),
                Step::OptionalBegin(f, p) => v.optional_begin(layout.get(f), p),
                Step::OptionalEnd => v.optional_end(),
                Step::Leaf(f, base, l) => v.field(layout.get(f), base, self.value(l)),
                Step::Enum(f, l, count) => {
                    let count = count as usize;
                    let mut k = 0;
                    for j in 0..count {
                        if let Some(Step::Label(s)) = self.steps.get(i + 1 + j) {
                            if k < labels.len() {
                                labels[k] = self.name(*s);
                                k += 1;
                            }
                        }
                    }
                    v.enum_field(layout.get(f), self.value(l), &labels[..k]);
                    i += count;
                }
                Step::Label(_) => {}
            }
            i += 1;
        }
    }
}

impl FieldTape {
    /// Into a compound: its step, one level deeper.
    fn begin(&mut self, step: Step) {
        self.steps.push(step);
        self.depth += 1;
    }
}

/// The ends of compounds: their step, one level up.
macro_rules! tape_ends {
    ($($method:ident => $step:ident),*) => {$(
        fn $method(&mut self) {
            self.steps.push(Step::$step);
            self.depth = self.depth.saturating_sub(1);
        }
    )*};
}

impl FieldVisitor for FieldTape {
    #[inline]
    fn field(&mut self, f: FieldRef<'_>, base: Base, value: Value<'_>) {
        let l = self.leaf(value);
        self.steps.push(Step::Leaf(f.id, base, l));
    }
    fn enum_field(&mut self, f: FieldRef<'_>, value: Value<'_>, labels: &[&str]) {
        self.put_enum(f.id, value, labels);
    }
    fn scope_begin(&mut self, scope: Scope) {
        self.steps.push(Step::ScopeBegin(scope));
    }
    fn scope_end(&mut self, scope: Scope) {
        self.steps.push(Step::ScopeEnd(scope));
    }
    fn struct_begin(&mut self, f: FieldRef<'_>) {
        self.begin(Step::StructBegin(f.id));
    }
    fn array_begin(&mut self, f: FieldRef<'_>, len: u64) {
        self.begin(Step::ArrayBegin(f.id, len));
    }
    fn variant_begin(&mut self, f: FieldRef<'_>, option: FieldRef<'_>) {
        self.begin(Step::VariantBegin(f.id, option.id));
    }
    fn optional_begin(&mut self, f: FieldRef<'_>, present: bool) {
        self.begin(Step::OptionalBegin(f.id, present));
    }
    tape_ends!(
        struct_end => StructEnd,
        array_end => ArrayEnd,
        variant_end => VariantEnd,
        optional_end => OptionalEnd
    );
}

/// Records into a [`FieldTape`] by field id alone: what producers that
/// know their fields' ids write with (no [`FieldRef`] needed).
impl FieldTape {
    #[inline]
    pub fn put(&mut self, f: FieldId, base: Base, value: Value<'_>) {
        let l = self.leaf(value);
        self.steps.push(Step::Leaf(f, base, l));
    }
    pub fn put_enum(&mut self, f: FieldId, value: Value<'_>, labels: &[&str]) {
        let l = self.leaf(value);
        self.steps.push(Step::Enum(f, l, labels.len() as u32));
        for lab in labels {
            let s = self.name_span(lab);
            self.steps.push(Step::Label(s));
        }
    }
    pub fn put_struct(&mut self, f: FieldId) {
        self.begin(Step::StructBegin(f));
    }
    pub fn put_array(&mut self, f: FieldId, len: u64) {
        self.begin(Step::ArrayBegin(f, len));
    }
    pub fn put_variant(&mut self, f: FieldId, option: FieldId) {
        self.begin(Step::VariantBegin(f, option));
    }
    pub fn put_optional(&mut self, f: FieldId, present: bool) {
        self.begin(Step::OptionalBegin(f, present));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes what it is given as text, to compare visits.
    #[derive(Default)]
    struct Text(String);
    impl FieldVisitor for Text {
        fn field(&mut self, f: FieldRef<'_>, base: Base, value: Value<'_>) {
            self.0
                .push_str(&format!("{}#{}:{base:?}={value:?};", f.name(), f.id.raw()));
        }
        fn enum_field(&mut self, f: FieldRef<'_>, value: Value<'_>, labels: &[&str]) {
            self.0
                .push_str(&format!("{}={value:?}{labels:?};", f.name()));
        }
        fn scope_begin(&mut self, s: Scope) {
            self.0.push_str(&format!("<{}>", s.name()));
        }
        fn scope_end(&mut self, s: Scope) {
            self.0.push_str(&format!("</{}>", s.name()));
        }
        fn struct_begin(&mut self, f: FieldRef<'_>) {
            self.0.push_str(&format!("{}{{", f.name()));
        }
        fn struct_end(&mut self) {
            self.0.push('}');
        }
        fn array_begin(&mut self, f: FieldRef<'_>, len: u64) {
            self.0.push_str(&format!("{}[{len}:", f.name()));
        }
        fn array_end(&mut self) {
            self.0.push(']');
        }
        fn variant_begin(&mut self, f: FieldRef<'_>, o: FieldRef<'_>) {
            self.0.push_str(&format!("{}<{}>(", f.name(), o.option()));
        }
        fn variant_end(&mut self) {
            self.0.push(')');
        }
        fn optional_begin(&mut self, f: FieldRef<'_>, p: bool) {
            self.0.push_str(&format!("{}?{p}(", f.name()));
        }
        fn optional_end(&mut self) {
            self.0.push(')');
        }
    }

    fn layout() -> ClassLayout {
        let mut s = ClassSchema::default();
        s.push(
            Scope::CommonContext,
            vec![FieldSchema::new("tid", FieldType::s(32))],
        );
        s.push(
            Scope::Payload,
            vec![
                FieldSchema::new("a", FieldType::u(8)),
                FieldSchema::new("e", FieldType::s(8)),
                FieldSchema::new(
                    "s",
                    FieldType::Struct(vec![
                        FieldSchema::new("t", FieldType::Str),
                        FieldSchema::new(
                            "arr",
                            FieldType::Array {
                                elem: Box::new(FieldType::Float { bits: 64 }),
                                len: ArrayLen::Dynamic,
                            },
                        ),
                    ]),
                ),
                FieldSchema::new(
                    "v",
                    FieldType::Variant(vec![FieldSchema::new("opt", FieldType::Blob)]),
                ),
                FieldSchema::new("o", FieldType::Optional(Box::new(FieldType::Bool))),
            ],
        );
        ClassLayout::of(&s)
    }

    fn visit(l: &ClassLayout, v: &mut dyn FieldVisitor) {
        let f = |i: u32| l.get(FieldId::new(i));
        v.scope_begin(Scope::Payload);
        v.field(f(1), Base::Hex, Value::Unsigned(7));
        v.enum_field(f(2), Value::Signed(-1), &["NEG", "ANY"]);
        v.struct_begin(f(3));
        v.field(f(4), Base::Dec, Value::Str(b"hi"));
        v.array_begin(f(5), 2);
        v.field(f(6), Base::Dec, Value::Float(1.5));
        v.field(f(6), Base::Dec, Value::Bool(true));
        v.array_end();
        v.struct_end();
        v.variant_begin(f(7), f(8));
        v.field(f(8), Base::Dec, Value::Bytes(&[1, 2]));
        v.variant_end();
        v.optional_begin(f(9), false);
        v.optional_end();
        v.scope_end(Scope::Payload);
    }

    #[test]
    fn tape_replays_what_it_recorded() {
        let l = layout();
        let mut direct = Text::default();
        visit(&l, &mut direct);
        let mut tape = FieldTape::new();
        visit(&l, &mut tape);
        let mut replayed = Text::default();
        tape.replay(&l, &mut replayed);
        assert_eq!(direct.0, replayed.0);
        assert!(direct.0.contains("e=Signed(-1)[\"NEG\", \"ANY\"]"));
        assert!(direct.0.contains("v<opt>(v#8:Dec=Bytes([1, 2]);)"));
        // reuse: cleared, it records the next event from scratch
        tape.clear();
        assert!(tape.is_empty());
        tape.put(FieldId::new(1), Base::Dec, Value::Unsigned(1));
        let mut t = Text::default();
        tape.replay(&l, &mut t);
        assert_eq!(t.0, "a#1:Dec=Unsigned(1);");
        // an id the layout does not hold replays as a nameless field
        tape.put(FieldId::UNKNOWN, Base::Dec, Value::Unsigned(2));
        let mut t = Text::default();
        tape.replay(&l, &mut t);
        assert_eq!(t.0, "a#1:Dec=Unsigned(1);#4294967295:Dec=Unsigned(2);");
    }

    #[test]
    fn tape_steps_copies_and_appends() {
        let l = layout();
        let mut tape = FieldTape::new();
        tape.scope_begin(Scope::CommonContext);
        tape.put(FieldId::new(0), Base::Dec, Value::Signed(7));
        tape.scope_end(Scope::CommonContext);
        visit(&l, &mut tape);
        // every step, as recorded
        let mut direct = Text::default();
        tape.replay(&l, &mut direct);
        assert_eq!(tape.steps(&l).count(), tape.steps.len());
        match tape.steps(&l).nth(1) {
            Some(TapeStep::Field(f, Base::Dec, Value::Signed(7))) => assert_eq!(f.name(), "tid"),
            other => panic!("{other:?}"),
        }
        // the payload only, without its scope's ends
        let payload: Vec<_> = tape.scope_steps(&l, Scope::Payload).collect();
        assert_eq!(payload.len(), tape.steps.len() - 5);
        assert!(!payload.iter().any(|s| matches!(s, TapeStep::ScopeEnd(_))));
        assert_eq!(tape.scope_steps(&l, Scope::EventHeader).count(), 0);
        // a copy replays the same, in a tape that had other values
        let mut copy = FieldTape::new();
        copy.put(FieldId::new(4), Base::Hex, Value::Str(b"gone"));
        copy.copy_from(&tape);
        let mut replayed = Text::default();
        copy.replay(&l, &mut replayed);
        assert_eq!(direct.0, replayed.0);
        assert_eq!(copy.size(), tape.size());
        // appended after other values, it replays after them
        let mut first = FieldTape::new();
        first.put(FieldId::new(4), Base::Dec, Value::Str(b"before"));
        first.append(&tape);
        let mut both = Text::default();
        first.replay(&l, &mut both);
        assert_eq!(
            both.0,
            format!("t#4:Dec=Str([98, 101, 102, 111, 114, 101]);{}", direct.0)
        );
    }

    #[test]
    fn schema_scopes_stay_ordered() {
        let mut s = ClassSchema::default();
        s.push(Scope::Payload, vec![FieldSchema::new("p", FieldType::u(8))]);
        s.push(
            Scope::CommonContext,
            vec![FieldSchema::new("c", FieldType::s(32))],
        );
        s.push(Scope::SpecificContext, vec![]);
        let order: Vec<Scope> = s.scopes.iter().map(|x| x.scope).collect();
        assert_eq!(order, [Scope::CommonContext, Scope::Payload]);
        assert_eq!(s.scope(Scope::Payload)[0].name, "p");
        assert!(s.scope(Scope::EventHeader).is_empty());
    }

    #[test]
    fn enum_labels() {
        let t = IntType::new(8, true)
            .mapping("NEG", &[(-128, -1)])
            .mapping("ZERO", &[(0, 0)]);
        assert_eq!(t.labels(-3).collect::<Vec<_>>(), ["NEG"]);
        assert_eq!(t.labels(5).count(), 0);
    }
}
