//! The metadata IR: one description of a CTF trace class that both metadata
//! frontends produce and that the binary decoder and the printers consume.
//!
//! * The CTF 1.8 frontend ([`crate::tsdl`]) parses TSDL and lowers it here.
//! * The CTF 2 frontend (`crate::ctf2`) parses the JSON text sequence and
//!   lowers it here.
//!
//! After lowering, nothing in the IR depends on the metadata language:
//! type aliases are expanded, `native` byte orders are resolved, clock and
//! stream references are indices, field locations are absolute
//! `(scope, path)` pairs, special fields carry explicit [`Roles`], and every
//! CTF 1.8 convention that CTF 2 spells out (bit order, text arrays,
//! implicit default clock, variant tags given by enumeration labels) has been
//! made explicit. The decoder ([`crate::decode`]) never looks at names to
//! decide what a field means.
//!
//! # How a frontend fills the IR (the contract)
//!
//! 1. [`TraceClass`]: `version`, `uuid`, `native_byte_order` (CTF 1.8:
//!    `trace.byte_order`; CTF 2: the byte order of the packet magic field,
//!    else little-endian; it only matters for printing metadata),
//!    `packet_header`, `environment` in metadata order, `clocks`,
//!    `stream_classes` (each with its event classes).
//! 2. Every structure member name is final: the CTF 1.8 frontend strips one
//!    leading underscore from TSDL identifiers (as babeltrace2 and yactfr
//!    do); CTF 2 names are used verbatim.
//! 3. Every fixed-length field has an explicit [`ByteOrder`] and [`BitOrder`]:
//!    CTF 1.8 bit order is [`BitOrder::FirstToLast`] for little-endian and
//!    [`BitOrder::LastToFirst`] for big-endian fields (use
//!    [`BitOrder::default_for`]); CTF 2 takes `bit-order` or that default.
//! 4. Alignments are in bits, powers of two, at least 1. A CTF 1.8 integer
//!    without `align` has alignment 8 when its size is a multiple of 8, else 1
//!    (the frontend decides; the IR stores the result).
//! 5. [`FieldLocation`]s are absolute: the frontend turns relative TSDL paths
//!    and CTF 2 locations without an origin into a [`Scope`] plus the member
//!    names from that scope's root structure. See [`FieldLocation`] for how
//!    variants, optionals and arrays on the way are handled.
//! 6. [`Roles`] mark the special fields. The CTF 2 frontend copies `roles`.
//!    The CTF 1.8 frontend derives them from names and scopes, as
//!    babeltrace2 does: packet header `magic` (PACKET_MAGIC), `uuid`
//!    (METADATA_STREAM_UUID, on the array/BLOB field), `stream_id`
//!    (DATA_STREAM_CLASS_ID; at any depth, the last one decoded wins, as
//!    yactfr does, where babeltrace2 reads only the top-level one),
//!    `stream_instance_id` (DATA_STREAM_ID); packet
//!    context `packet_size` (PACKET_TOTAL_LENGTH), `content_size`
//!    (PACKET_CONTENT_LENGTH), `timestamp_begin` (PACKET_BEGIN_DEFAULT_CLOCK_TIMESTAMP
//!    | DEFAULT_CLOCK_TIMESTAMP), `timestamp_end`
//!    (PACKET_END_DEFAULT_CLOCK_TIMESTAMP only), `events_discarded`
//!    (DISCARDED_EVENT_COUNTER_SNAPSHOT), `packet_seq_num`
//!    (PACKET_SEQUENCE_NUMBER); event header `id` at any depth
//!    (EVENT_CLASS_ID; the last one decoded wins, which is how LTTng's
//!    extended header works); every integer mapped to a clock, in any scope,
//!    gets DEFAULT_CLOCK_TIMESTAMP (except `timestamp_end`, whose clock
//!    mapping is dropped). Integers get roles whatever their signedness
//!    (babeltrace2 does the same); fields of other kinds get none, except
//!    the 16-element `uuid` array.
//! 7. Variant options carry integer ranges of the selector: the CTF 1.8
//!    frontend copies, for each option, the ranges of the tag enumeration's
//!    mapping with the option's name (an option without a mapping gets no
//!    ranges and can never be selected).
//! 8. CTF 1.8 arrays and sequences of byte-aligned 8-bit integers with
//!    `encoding = UTF8` or `ASCII` become [`StringClass`]es of static or
//!    dynamic length (babeltrace2 prints them as strings, yactfr lists them as
//!    `SLS`/`DLS`).
//! 9. Enumerations are integers with non-empty `mappings`.
//! 10. The default clock of a stream class is an index into
//!     [`TraceClass::clocks`]. CTF 1.8: the clock mapped by the integers of
//!     the packet context / event header; with exactly one clock and no
//!     mapping, that clock when the stream has a `timestamp` or
//!     `timestamp_begin` field (those fields then get the role).
//!
//! The IR types are plain data (`Clone`, `Debug`, `PartialEq`) so a frontend
//! can be tested by comparing IRs.

pub use tracemux_core::Endian as ByteOrder;

/// Which metadata language the trace class came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CtfVersion {
    /// CTF 1.8 (TSDL).
    Ctf1,
    /// CTF 2 (JSON text sequence).
    Ctf2,
}

/// A whole trace class: what the metadata stream says.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceClass {
    pub version: CtfVersion,
    /// Trace UUID (CTF 1.8 `trace.uuid`; CTF 2 `uuid` when the trace class
    /// has one). Compared to the packet header's METADATA_STREAM_UUID field.
    pub uuid: Option<[u8; 16]>,
    /// CTF 2 `uid` / `name` of the trace class, when present (informational).
    pub name: Option<String>,
    /// The byte order called `native` in TSDL (the trace's byte order).
    pub native_byte_order: ByteOrder,
    /// Packet header field class (`trace.packet.header`), scope 0.
    pub packet_header: Option<StructClass>,
    /// Environment entries in metadata order (`env { ... }` or CTF 2
    /// `environment`). babeltrace2 shows `hostname`, `domain`... from here.
    pub environment: Vec<(String, EnvValue)>,
    /// Clock classes in metadata order; referenced by index.
    pub clocks: Vec<ClockClass>,
    /// Data stream classes in metadata order.
    pub stream_classes: Vec<StreamClass>,
}

impl TraceClass {
    /// An empty trace class of the given version (little-endian, no
    /// packet header, no environment, no clocks, no stream classes).
    pub fn new(version: CtfVersion) -> Self {
        TraceClass {
            version,
            uuid: None,
            name: None,
            native_byte_order: ByteOrder::Little,
            packet_header: None,
            environment: Vec::new(),
            clocks: Vec::new(),
            stream_classes: Vec::new(),
        }
    }

    /// The environment value called `key`.
    pub fn env(&self, key: &str) -> Option<&EnvValue> {
        self.environment
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The stream class with ID `id`.
    pub fn stream_class(&self, id: u64) -> Option<&StreamClass> {
        self.stream_classes.iter().find(|s| s.id == id)
    }
}

/// An environment value: TSDL `env` allows integers and strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvValue {
    Int(i64),
    Str(String),
}

/// A clock class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockClass {
    /// CTF 1.8 `name`; CTF 2 `name`, or its `id` when it has no name.
    pub name: String,
    /// Cycles per second (CTF 1.8 default 1 000 000 000).
    pub frequency: u64,
    /// Offset of the origin in seconds (`offset_s`; CTF 2 `offset.seconds`).
    pub offset_seconds: i64,
    /// Further offset in cycles (`offset`; CTF 2 `offset.cycles`). May be
    /// larger than `frequency`; consumers normalise.
    pub offset_cycles: u64,
    /// Precision in cycles, when given.
    pub precision: Option<u64>,
    pub uuid: Option<[u8; 16]>,
    pub description: Option<String>,
    /// The clock's origin is the Unix epoch (CTF 1.8 `absolute = true`;
    /// CTF 2 `origin` = `"unix-epoch"`).
    pub origin_is_unix_epoch: bool,
}

impl ClockClass {
    /// A clock class with CTF 1.8 defaults (1 GHz, no offset).
    pub fn new(name: impl Into<String>) -> Self {
        ClockClass {
            name: name.into(),
            frequency: 1_000_000_000,
            offset_seconds: 0,
            offset_cycles: 0,
            precision: None,
            uuid: None,
            description: None,
            origin_is_unix_epoch: false,
        }
    }
}

/// A data stream class.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamClass {
    /// ID selected by the DATA_STREAM_CLASS_ID field (CTF 1.8 `stream.id`,
    /// 0 when absent).
    pub id: u64,
    /// CTF 2 `name`, when given.
    pub name: Option<String>,
    /// Packet context (`stream.packet.context`), scope 1.
    pub packet_context: Option<StructClass>,
    /// Event record header (`stream.event.header`), scope 2.
    pub event_header: Option<StructClass>,
    /// Event record common context (`stream.event.context`), scope 3.
    pub event_common_context: Option<StructClass>,
    /// Index into [`TraceClass::clocks`].
    pub default_clock: Option<usize>,
    /// Event record classes of this stream class, in metadata order.
    pub event_classes: Vec<EventClass>,
}

impl StreamClass {
    pub fn new(id: u64) -> Self {
        StreamClass {
            id,
            name: None,
            packet_context: None,
            event_header: None,
            event_common_context: None,
            default_clock: None,
            event_classes: Vec::new(),
        }
    }

    /// The event class with ID `id`.
    pub fn event_class(&self, id: u64) -> Option<&EventClass> {
        self.event_classes.iter().find(|e| e.id == id)
    }

    /// The root field classes of the six scopes as far as the stream class
    /// knows them (indexed by [`Scope`]): `packet_header` (the trace's), its
    /// own three, and `None` for an event record's two.
    pub fn scope_roots<'a>(
        &'a self,
        packet_header: Option<&'a StructClass>,
    ) -> [Option<&'a StructClass>; 6] {
        [
            packet_header,
            self.packet_context.as_ref(),
            self.event_header.as_ref(),
            self.event_common_context.as_ref(),
            None,
            None,
        ]
    }
}

/// An event record class.
#[derive(Debug, Clone, PartialEq)]
pub struct EventClass {
    /// ID selected by the EVENT_CLASS_ID field (CTF 1.8 `event.id`, 0 when
    /// absent).
    pub id: u64,
    /// `name` (optional in CTF 2).
    pub name: Option<String>,
    /// CTF 1.8 `loglevel`; CTF 2 LTTng attribute `log-level` when present.
    pub log_level: Option<i64>,
    /// CTF 1.8 `model.emf.uri`.
    pub emf_uri: Option<String>,
    /// Event record specific context (`event.context`), scope 4.
    pub specific_context: Option<StructClass>,
    /// Event record payload (`event.fields`), scope 5.
    pub payload: Option<StructClass>,
}

impl EventClass {
    pub fn new(id: u64, name: Option<String>) -> Self {
        EventClass {
            id,
            name,
            log_level: None,
            emf_uri: None,
            specific_context: None,
            payload: None,
        }
    }
}

/// The six scopes of a CTF data stream, in decoding order. The numeric
/// value is yactfr's scope number (`SC:N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    PacketHeader = 0,
    PacketContext = 1,
    EventHeader = 2,
    EventCommonContext = 3,
    EventSpecificContext = 4,
    EventPayload = 5,
}

impl Scope {
    pub const ALL: [Scope; 6] = [
        Scope::PacketHeader,
        Scope::PacketContext,
        Scope::EventHeader,
        Scope::EventCommonContext,
        Scope::EventSpecificContext,
        Scope::EventPayload,
    ];

    /// The TSDL name of the scope (`trace.packet.header`...).
    pub fn tsdl_name(self) -> &'static str {
        match self {
            Scope::PacketHeader => "trace.packet.header",
            Scope::PacketContext => "stream.packet.context",
            Scope::EventHeader => "stream.event.header",
            Scope::EventCommonContext => "stream.event.context",
            Scope::EventSpecificContext => "event.context",
            Scope::EventPayload => "event.fields",
        }
    }
}

/// Where a length, selector or tag field is: an absolute location.
///
/// `path` holds the member names from the scope's root structure down to the
/// field. On the way:
/// * a structure is entered through the member named by the next element;
/// * an array is entered implicitly (its element: the value decoded most
///   recently, i.e. the one of the current element);
/// * a variant is entered through the option named by the next element when
///   one has that name (CTF 1.8 paths may name options); otherwise
///   implicitly, through every option whose field class can continue the
///   path (CTF 2 locations never name options);
/// * an optional is entered implicitly.
///
/// The decoder resolves the path once, when it compiles the trace class,
/// and keeps the value of the field decoded last at that location; it
/// must be decoded before the field that uses it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldLocation {
    pub scope: Scope,
    pub path: Vec<String>,
}

impl FieldLocation {
    pub fn new(scope: Scope, path: Vec<String>) -> Self {
        FieldLocation { scope, path }
    }
}

/// The roles of a field: what the decoder does with its value besides
/// reporting it. A set of bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Roles(pub u16);

impl Roles {
    pub const NONE: Roles = Roles(0);
    /// Packet magic number (must be 0xC1FC1FC1).
    pub const PACKET_MAGIC: Roles = Roles(1 << 0);
    /// Metadata stream UUID (a 16-byte array or BLOB in the packet header).
    pub const METADATA_STREAM_UUID: Roles = Roles(1 << 1);
    /// Selects the data stream class of the packet.
    pub const DATA_STREAM_CLASS_ID: Roles = Roles(1 << 2);
    /// Data stream (instance) ID.
    pub const DATA_STREAM_ID: Roles = Roles(1 << 3);
    /// Packet total length in bits.
    pub const PACKET_TOTAL_LENGTH: Roles = Roles(1 << 4);
    /// Packet content length in bits.
    pub const PACKET_CONTENT_LENGTH: Roles = Roles(1 << 5);
    /// Packet beginning time (CTF 1.8 `timestamp_begin`). Informational: a
    /// DEFAULT_CLOCK_TIMESTAMP field in the packet context has the same
    /// effect (CTF 2 has no separate role for it).
    pub const PACKET_BEGIN_DEFAULT_CLOCK_TIMESTAMP: Roles = Roles(1 << 6);
    /// Packet end time (does not update the default clock).
    pub const PACKET_END_DEFAULT_CLOCK_TIMESTAMP: Roles = Roles(1 << 7);
    /// Snapshot of the discarded event record counter.
    pub const DISCARDED_EVENT_COUNTER_SNAPSHOT: Roles = Roles(1 << 8);
    /// Packet sequence number.
    pub const PACKET_SEQUENCE_NUMBER: Roles = Roles(1 << 9);
    /// Selects the event record class.
    pub const EVENT_CLASS_ID: Roles = Roles(1 << 10);
    /// Updates the default clock (N-bit update rule).
    pub const DEFAULT_CLOCK_TIMESTAMP: Roles = Roles(1 << 11);

    #[inline]
    pub fn has(self, r: Roles) -> bool {
        self.0 & r.0 != 0
    }
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl std::ops::BitOr for Roles {
    type Output = Roles;
    fn bitor(self, o: Roles) -> Roles {
        Roles(self.0 | o.0)
    }
}

impl std::ops::BitOrAssign for Roles {
    fn bitor_assign(&mut self, o: Roles) {
        self.0 |= o.0;
    }
}

/// Order of the bits inside the bytes of a fixed-length field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BitOrder {
    /// The first bit is the least significant bit of the first byte (the
    /// little-endian default).
    FirstToLast,
    /// The first bit is the most significant bit of the first byte (the
    /// big-endian default).
    LastToFirst,
}

impl BitOrder {
    /// The bit order that goes with a byte order when none is given (CTF 1.8
    /// always; CTF 2 when `bit-order` is absent).
    pub fn default_for(bo: ByteOrder) -> BitOrder {
        match bo {
            ByteOrder::Little => BitOrder::FirstToLast,
            ByteOrder::Big => BitOrder::LastToFirst,
        }
    }
}

/// Preferred display base of an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DisplayBase {
    Binary = 2,
    Octal = 8,
    #[default]
    Decimal = 10,
    Hexadecimal = 16,
}

impl From<DisplayBase> for tracemux_core::model::Base {
    fn from(b: DisplayBase) -> Self {
        use tracemux_core::model::Base;
        match b {
            DisplayBase::Decimal => Base::Dec,
            DisplayBase::Hexadecimal => Base::Hex,
            DisplayBase::Octal => Base::Oct,
            DisplayBase::Binary => Base::Bin,
        }
    }
}

/// An inclusive integer range (`lower <= v <= upper`). `i128` holds every
/// signed and unsigned 64-bit value, so one type serves both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IntRange {
    pub lower: i128,
    pub upper: i128,
}

impl IntRange {
    pub fn new(lower: i128, upper: i128) -> Self {
        IntRange { lower, upper }
    }
    #[inline]
    pub fn contains(&self, v: i128) -> bool {
        self.lower <= v && v <= self.upper
    }
}

/// One enumeration mapping (CTF 1.8 enum label, CTF 2 integer `mappings`
/// entry) or bit-map flag (ranges of bit indices).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub name: String,
    pub ranges: Vec<IntRange>,
}

/// A fixed-length integer (also CTF 1.8 enumerations: non-empty `mappings`).
#[derive(Debug, Clone, PartialEq)]
pub struct IntClass {
    /// Length in bits, 1 to 64.
    pub len: u32,
    /// Alignment in bits (power of two).
    pub align: u32,
    pub byte_order: ByteOrder,
    pub bit_order: BitOrder,
    pub signed: bool,
    pub base: DisplayBase,
    /// CTF 1.8 `encoding = UTF8/ASCII` on a lone integer (babeltrace2 still
    /// prints it as an integer; kept for printers that want characters).
    pub text: bool,
    /// Index into [`TraceClass::clocks`] (CTF 1.8 `map = clock.X.value`).
    pub mapped_clock: Option<usize>,
    pub roles: Roles,
    /// Enumeration mappings, in metadata order (empty: plain integer).
    pub mappings: Vec<Mapping>,
}

impl IntClass {
    /// An unsigned, decimal, byte-aligned integer of `len` bits with the
    /// default bit order for `byte_order`.
    pub fn new(len: u32, byte_order: ByteOrder, signed: bool) -> Self {
        IntClass {
            len,
            align: if len % 8 == 0 { 8 } else { 1 },
            byte_order,
            bit_order: BitOrder::default_for(byte_order),
            signed,
            base: DisplayBase::Decimal,
            text: false,
            mapped_clock: None,
            roles: Roles::NONE,
            mappings: Vec::new(),
        }
    }
}

/// A fixed-length IEEE 754 binary floating-point number.
#[derive(Debug, Clone, PartialEq)]
pub struct FloatClass {
    /// 32 or 64 (CTF 1.8 `exp_dig`/`mant_dig` 8/24 or 11/53).
    pub len: u32,
    pub align: u32,
    pub byte_order: ByteOrder,
    pub bit_order: BitOrder,
}

/// A fixed-length boolean (CTF 2): false when all bits are zero.
#[derive(Debug, Clone, PartialEq)]
pub struct BoolClass {
    /// 1 to 64.
    pub len: u32,
    pub align: u32,
    pub byte_order: ByteOrder,
    pub bit_order: BitOrder,
}

/// A fixed-length bit array (CTF 2); a bit map when `flags` is `Some`.
#[derive(Debug, Clone, PartialEq)]
pub struct BitArrayClass {
    /// 1 to 64.
    pub len: u32,
    pub align: u32,
    pub byte_order: ByteOrder,
    pub bit_order: BitOrder,
    /// Bit-map flags: name and ranges of bit indices (bit 0 = the value's
    /// least significant bit). `None`: a plain bit array.
    pub flags: Option<Vec<Mapping>>,
}

/// A variable-length integer (CTF 2, unsigned or signed LEB128). Always
/// byte-aligned; at most 10 bytes and 64 value bits.
#[derive(Debug, Clone, PartialEq)]
pub struct VarIntClass {
    pub signed: bool,
    pub base: DisplayBase,
    pub roles: Roles,
    pub mappings: Vec<Mapping>,
}

/// Text encodings of strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StringEncoding {
    #[default]
    Utf8,
    Utf16Be,
    Utf16Le,
    Utf32Be,
    Utf32Le,
}

impl StringEncoding {
    /// Bytes per code unit (1, 2 or 4).
    pub fn unit(self) -> usize {
        match self {
            StringEncoding::Utf8 => 1,
            StringEncoding::Utf16Be | StringEncoding::Utf16Le => 2,
            StringEncoding::Utf32Be | StringEncoding::Utf32Le => 4,
        }
    }
}

/// The length of an array, string or BLOB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Length {
    /// A fixed number of elements (arrays) or bytes (strings, BLOBs).
    Static(u64),
    /// The value of an unsigned integer field decoded earlier.
    Dynamic(FieldLocation),
}

/// How a string is delimited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StringKind {
    /// Ends with a null code unit (included in the field).
    NullTerminated,
    /// `Length` bytes; the text ends at the first null code unit, if any.
    Sized(Length),
}

/// A string (always byte-aligned).
#[derive(Debug, Clone, PartialEq)]
pub struct StringClass {
    pub kind: StringKind,
    pub encoding: StringEncoding,
}

/// A BLOB (CTF 2): opaque bytes, always byte-aligned.
#[derive(Debug, Clone, PartialEq)]
pub struct BlobClass {
    /// In bytes.
    pub length: Length,
    /// IANA media type (`application/octet-stream` by default).
    pub media_type: String,
    /// METADATA_STREAM_UUID for a 16-byte BLOB in the packet header.
    pub roles: Roles,
}

/// A static-length (CTF 1.8 array) or dynamic-length (sequence) array.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayClass {
    pub element: Box<FieldClass>,
    /// Number of elements.
    pub length: Length,
    /// Minimum alignment in bits (CTF 2 `minimum-alignment`; 1 otherwise).
    /// The array's alignment is the larger of this and its element's.
    pub min_align: u32,
    /// METADATA_STREAM_UUID on a CTF 1.8 `uuid[16]` packet header array.
    pub roles: Roles,
}

/// A structure member.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub name: String,
    pub class: FieldClass,
}

/// A structure.
#[derive(Debug, Clone, PartialEq)]
pub struct StructClass {
    pub members: Vec<Member>,
    /// Minimum alignment in bits (CTF 1.8 `align(N)`, N in bits; CTF 2
    /// `minimum-alignment`; 1 otherwise). The structure's alignment is the
    /// largest of this and its members' alignments.
    pub min_align: u32,
}

impl StructClass {
    pub fn new(members: Vec<Member>) -> Self {
        StructClass {
            members,
            min_align: 1,
        }
    }

    /// The member called `name` (the last one when several have that
    /// name: a later member shadows the earlier ones).
    pub fn member(&self, name: &str) -> Option<&Member> {
        self.members.iter().rev().find(|m| m.name == name)
    }
}

/// One option of a variant.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantOption {
    /// CTF 1.8 option name (the enum label); optional in CTF 2.
    pub name: Option<String>,
    /// Selector values that select this option.
    pub ranges: Vec<IntRange>,
    pub class: FieldClass,
}

/// A variant: the value of an integer selector field chooses one option.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantClass {
    pub selector: FieldLocation,
    pub options: Vec<VariantOption>,
}

/// An optional (CTF 2): its field is present or not depending on a
/// selector.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionalClass {
    pub selector: FieldLocation,
    /// `None`: boolean selector (present when true). `Some`: integer
    /// selector, present when its value is in one of the ranges.
    pub selector_ranges: Option<Vec<IntRange>>,
    pub class: Box<FieldClass>,
}

/// A field class.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldClass {
    Int(IntClass),
    Float(FloatClass),
    Bool(BoolClass),
    BitArray(BitArrayClass),
    VarInt(VarIntClass),
    String(StringClass),
    Blob(BlobClass),
    Array(ArrayClass),
    Struct(StructClass),
    Variant(VariantClass),
    Optional(OptionalClass),
}

impl FieldClass {
    /// Alignment in bits of a field of this class (before its first bit).
    /// Strings, BLOBs and LEB128 integers are byte-aligned; a variant or an
    /// optional has the alignment of its selected field (1 here).
    pub fn alignment(&self) -> u32 {
        match self {
            FieldClass::Int(c) => c.align,
            FieldClass::Float(c) => c.align,
            FieldClass::Bool(c) => c.align,
            FieldClass::BitArray(c) => c.align,
            FieldClass::VarInt(_) | FieldClass::String(_) | FieldClass::Blob(_) => 8,
            FieldClass::Array(a) => a.min_align.max(a.element.alignment()),
            FieldClass::Struct(s) => s
                .members
                .iter()
                .map(|m| m.class.alignment())
                .fold(s.min_align.max(1), u32::max),
            FieldClass::Variant(_) | FieldClass::Optional(_) => 1,
        }
    }

    /// The roles of this field (empty for kinds that cannot have any).
    pub fn roles(&self) -> Roles {
        match self {
            FieldClass::Int(c) => c.roles,
            FieldClass::VarInt(c) => c.roles,
            FieldClass::Blob(c) => c.roles,
            FieldClass::Array(c) => c.roles,
            _ => Roles::NONE,
        }
    }

    /// A short name of the kind, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            FieldClass::Int(c) if !c.mappings.is_empty() => "enumeration",
            FieldClass::Int(_) => "integer",
            FieldClass::Float(_) => "floating-point number",
            FieldClass::Bool(_) => "boolean",
            FieldClass::BitArray(c) if c.flags.is_some() => "bit map",
            FieldClass::BitArray(_) => "bit array",
            FieldClass::VarInt(_) => "variable-length integer",
            FieldClass::String(_) => "string",
            FieldClass::Blob(_) => "BLOB",
            FieldClass::Array(_) => "array",
            FieldClass::Struct(_) => "structure",
            FieldClass::Variant(_) => "variant",
            FieldClass::Optional(_) => "optional",
        }
    }
}

/// The CTF 2 / LTTng log level names, by level (0 = emergency).
pub const LOG_LEVELS: [&str; 15] = [
    "emergency",
    "alert",
    "critical",
    "error",
    "warning",
    "notice",
    "info",
    "debug:system",
    "debug:program",
    "debug:process",
    "debug:module",
    "debug:unit",
    "debug:function",
    "debug:line",
    "debug",
];

/// A UUID in its usual text form, `4d86e02c-f527-4971-b960-971d26074bd4`.
pub fn uuid_string(u: &[u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (i, b) in u.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push(char::from(HEX_LOWER[usize::from(b >> 4)]));
        s.push(char::from(HEX_LOWER[usize::from(b & 15)]));
    }
    s
}

const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_alignment_is_the_largest() {
        let s = FieldClass::Struct(StructClass {
            members: vec![
                Member {
                    name: "a".into(),
                    class: FieldClass::Int(IntClass::new(3, ByteOrder::Big, false)),
                },
                Member {
                    name: "b".into(),
                    class: FieldClass::Int(IntClass::new(32, ByteOrder::Big, false)),
                },
            ],
            min_align: 1,
        });
        assert_eq!(s.alignment(), 8);
    }

    #[test]
    fn roles_combine() {
        let r = Roles::PACKET_BEGIN_DEFAULT_CLOCK_TIMESTAMP | Roles::DEFAULT_CLOCK_TIMESTAMP;
        assert!(r.has(Roles::DEFAULT_CLOCK_TIMESTAMP));
        assert!(!r.has(Roles::EVENT_CLASS_ID));
    }
}
