//! CTF 2 metadata: a JSON text sequence (RFC 7464) lowered to the IR.
//!
//! A CTF 2 metadata stream (CTF2-SPEC-2.0, section 5) is a sequence of
//! *fragments*, each a JSON object written after a record separator byte
//! (0x1E): one preamble first, then field class aliases, at most one trace
//! class, clock classes, data stream classes and event record classes.
//! [`parse_metadata`] reads them in order and builds an [`ir::TraceClass`]
//! following the IR's contract (see [`crate::ir`]):
//!
//! * field class aliases are expanded where they are used (a relative field
//!   location inside an alias is resolved at each use);
//! * field locations become absolute [`ir::FieldLocation`]s and are checked:
//!   the target exists, is decoded before the field that needs it, and has
//!   the right kind (unsigned integer for a length; integer, or boolean for
//!   an optional, for a selector);
//! * `roles` are copied into [`ir::Roles`]; a `default-clock-timestamp`
//!   integer of a data stream class with a default clock also gets that
//!   clock as its `mapped_clock`;
//! * attributes are ignored, except the LTTng / babeltrace2 event record
//!   class attributes `log-level` and `emf-uri`; unknown properties are
//!   ignored;
//! * an extension declared in the preamble is an error (this reader
//!   supports none, and the specification forbids reading a trace whose
//!   metadata declares an unsupported extension); so is an extension used
//!   anywhere else, as it cannot have been declared.
//!
//! Errors ([`Ctf2Error`]) name the fragment (1-based), the byte offset of
//! the offending JSON value in the metadata file and its JSON pointer
//! inside the fragment. Bad input never panics: JSON nesting, field class
//! nesting and alias expansion are all bounded.
//!
//! ```
//! let meta = b"\x1e{\"type\": \"preamble\", \"version\": 2}\n\
//! \x1e{\"type\": \"data-stream-class\"}\n\
//! \x1e{\"type\": \"event-record-class\", \"name\": \"ev\", \"payload-field-class\": \
//! {\"type\": \"structure\", \"member-classes\": [{\"name\": \"x\", \"field-class\": \
//! {\"type\": \"fixed-length-unsigned-integer\", \"length\": 8, \"byte-order\": \"little-endian\"}}]}}\n";
//! let tc = tracemux_ctf::ctf2::parse_metadata(meta).unwrap();
//! assert_eq!(tc.stream_classes[0].event_classes[0].name.as_deref(), Some("ev"));
//! ```

mod check;
mod fc;
pub mod json;
mod lower;
pub mod pmeta;
mod util;
mod write;

pub(crate) use write::push_quoted;

use std::fmt;

use tracemux_core::{Error, ErrorKind};

use crate::ir::TraceClass;
pub use write::write_metadata;

/// The record separator that starts every fragment (RFC 7464).
pub const RS: u8 = 0x1E;

/// A CTF 2 metadata error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ctf2Error {
    /// 1-based number of the fragment (0: not inside a fragment).
    pub fragment: usize,
    /// Absolute byte offset in the metadata stream.
    pub offset: usize,
    /// JSON pointer (RFC 6901) of the offending value inside its fragment;
    /// an alias expansion shows as `-> alias "NAME" /field-class`. Empty
    /// for the whole fragment.
    pub path: String,
    pub msg: String,
    /// Valid CTF 2 that this reader does not support (an extension, a
    /// 128-bit integer...), as opposed to invalid metadata.
    pub unsupported: bool,
}

impl Ctf2Error {
    /// As a [`tracemux_core::Error`] in section `metadata`, at the byte
    /// offset of the problem.
    pub fn into_error(self) -> Error {
        let text = self.to_string();
        let kind = if self.unsupported {
            ErrorKind::Unsupported(text)
        } else {
            ErrorKind::Invalid(text)
        };
        Error::new(kind, "metadata", self.offset as u64)
    }
}

impl fmt::Display for Ctf2Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CTF 2 metadata")?;
        if self.fragment > 0 {
            write!(f, ", fragment {}", self.fragment)?;
        }
        if !self.path.is_empty() {
            write!(f, ", at {}", self.path)?;
        }
        write!(f, ": {}", self.msg)
    }
}

impl std::error::Error for Ctf2Error {}

/// Whether `data` looks like a CTF 2 metadata stream: its first byte that
/// is not ASCII whitespace is the record separator (or `{`: a fragment
/// written without it, which TSDL text cannot start with).
pub fn is_ctf2(data: &[u8]) -> bool {
    matches!(
        data.iter().find(|b| !b.is_ascii_whitespace()),
        Some(&RS | &b'{')
    )
}

/// One fragment of the JSON text sequence, not parsed yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawFragment<'a> {
    /// 1-based number (counting every record separator).
    pub number: usize,
    /// Absolute offset of the first byte after the record separator.
    pub offset: usize,
    /// The JSON text (with its trailing line feed, if any).
    pub text: &'a [u8],
}

/// Split a metadata stream into its fragments. Bytes before the first
/// record separator must be whitespace.
pub fn fragments(data: &[u8]) -> Result<Vec<RawFragment<'_>>, Ctf2Error> {
    let Some(first) = data.iter().position(|&b| b == RS) else {
        return Err(Ctf2Error {
            fragment: 0,
            offset: 0,
            path: String::new(),
            msg: "no record separator (0x1E): not a CTF 2 metadata stream".into(),
            unsupported: false,
        });
    };
    if let Some(p) = data[..first].iter().position(|b| !b.is_ascii_whitespace()) {
        return Err(Ctf2Error {
            fragment: 0,
            offset: p,
            path: String::new(),
            msg: "data before the first record separator (0x1E)".into(),
            unsupported: false,
        });
    }
    Ok(fragments_after(data, first))
}

/// The fragments of `data` from its first record separator, at `first`.
fn fragments_after(data: &[u8], first: usize) -> Vec<RawFragment<'_>> {
    let mut out = Vec::new();
    let mut start = first + 1;
    let mut number = 1;
    loop {
        let end = data[start..]
            .iter()
            .position(|&b| b == RS)
            .map_or(data.len(), |p| start + p);
        out.push(RawFragment {
            number,
            offset: start,
            text: &data[start..end],
        });
        if end == data.len() {
            return out;
        }
        start = end + 1;
        number += 1;
    }
}

/// A kind of irregularity that this reader forgives by default (and
/// refuses in strict mode). Each kind is reported once per metadata
/// stream, at its first place, with the number of places.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Leniency {
    /// Not a strict JSON text sequence: trailing commas in objects or
    /// arrays, fragments without the record separator before them.
    Json,
    /// A name from a pre-2.0 draft of CTF 2, read as its 2.0 equivalent.
    DraftName,
    /// Structure members with the same name (the later one shadows the
    /// earlier ones in field locations).
    DuplicateMember,
    /// `selector-field-ranges` on an optional whose selector is a boolean
    /// (the ranges are ignored).
    BoolSelectorRanges,
    /// A metadata packet breaks a rule of CTF2-PMETA-1.0 that does not
    /// keep its text from being read (a UUID that is not the first
    /// packet's, reserved bytes that are not zero).
    MetadataPacket,
    /// A data packet's header holds a metadata stream UUID that is not the
    /// trace's (the packet is read as the trace's).
    PacketUuid,
    /// A UTF-16 or UTF-32 string field whose size in bytes is not a
    /// multiple of its code unit (the partial unit is left out of its text).
    StringSize,
}

/// Irregularities forgiven while reading, by kind: the first place (as a
/// [`Ctf2Error`]) and how many places.
#[derive(Debug, Default, Clone)]
pub(crate) struct Notes {
    items: Vec<(Leniency, Ctf2Error, usize, Vec<&'static str>)>,
}

impl Notes {
    /// Record a forgiven irregularity of `kind`; `what` says which one
    /// (several `what`s of a kind are listed in the one report).
    pub(crate) fn add(&mut self, kind: Leniency, what: &'static str, e: Ctf2Error) {
        match self.items.iter_mut().find(|(k, ..)| *k == kind) {
            Some((_, _, n, whats)) => {
                *n += 1;
                if !whats.contains(&what) {
                    whats.push(what);
                }
            }
            None => self.items.push((kind, e, 1, vec![what])),
        }
    }

    /// One report per kind, in the order first met.
    pub(crate) fn finish(self) -> Vec<(Leniency, Ctf2Error)> {
        self.items
            .into_iter()
            .map(|(k, mut e, n, whats)| {
                let places = if n == 1 {
                    String::new()
                } else {
                    format!(" ({n} places, the first here)")
                };
                e.msg = format!("{}{places}", whats.join("; "));
                (k, e)
            })
            .collect()
    }
}

/// A parsed metadata stream and what was forgiven on the way.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub tc: TraceClass,
    /// One entry per kind of forgiven irregularity: where it was first
    /// met and what it was.
    pub notes: Vec<(Leniency, Ctf2Error)>,
}

/// Split a metadata stream into its JSON values, forgiving trailing commas
/// and fragments without a record separator (recorded in `notes`).
fn values(data: &[u8], notes: &mut Notes) -> Result<Vec<(usize, json::Value)>, Ctf2Error> {
    let syntax = |number: usize, e: json::SyntaxError| Ctf2Error {
        fragment: number,
        offset: e.off,
        path: String::new(),
        msg: format!("JSON syntax: {}", e.msg),
        unsupported: false,
    };
    let mut out = Vec::new();
    let mut number = 0;
    // The bytes before the first record separator, then each fragment.
    let first = data.iter().position(|&b| b == RS).unwrap_or(data.len());
    let mut chunks = vec![(0usize, &data[..first], false)];
    if first < data.len() {
        // (the bytes before the first separator are checked below: JSON
        // objects there are fragments without their separator)
        chunks.extend(
            fragments_after(data, first)
                .into_iter()
                .map(|f| (f.offset, f.text, true)),
        );
    } else if data.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        // No separator and no object: the error of `fragments`.
        fragments(data)?;
    }
    for (offset, text, after_rs) in chunks {
        if !after_rs {
            // Only whitespace or JSON objects may come before the first
            // separator.
            if let Some(p) = text.iter().position(|b| !b.is_ascii_whitespace()) {
                if text[p] != b'{' {
                    return Err(Ctf2Error {
                        fragment: 0,
                        offset: offset + p,
                        path: String::new(),
                        msg: "data before the first record separator (0x1E)".into(),
                        unsupported: false,
                    });
                }
            }
        }
        // RFC 7464: an empty text in the sequence is skipped (it still
        // counts as a fragment).
        let start = if after_rs { number + 1 } else { number };
        let l = json::parse_lenient(text, offset).map_err(|e| syntax(start.max(1), e))?;
        if after_rs && l.values.is_empty() {
            number += 1;
        }
        for c in &l.trailing_commas {
            notes.add(
                Leniency::Json,
                "not strict JSON: trailing comma in an object or array",
                Ctf2Error {
                    fragment: start.max(1),
                    offset: *c,
                    path: String::new(),
                    msg: String::new(),
                    unsupported: false,
                },
            );
        }
        for (i, v) in l.values.into_iter().enumerate() {
            number += 1;
            if i > 0 || !after_rs {
                notes.add(
                    Leniency::Json,
                    "not a JSON text sequence: fragment not preceded by the record separator (0x1E)",
                    Ctf2Error {
                        fragment: number,
                        offset: v.off,
                        path: String::new(),
                        msg: String::new(),
                        unsupported: false,
                    },
                );
            }
            out.push((number, v));
        }
    }
    Ok(out)
}

/// Parse a CTF 2 metadata stream, forgiving what [`Leniency`] lists
/// unless `strict`: then the first such irregularity is the error.
pub fn parse_with(data: &[u8], strict: bool) -> Result<Parsed, Ctf2Error> {
    let mut notes = Notes::default();
    let parsed = values(data, &mut notes)?;
    if strict {
        if let Some((_, e)) = notes.clone().finish().into_iter().next() {
            return Err(e);
        }
    }
    let tc = lower::lower(&parsed, data.len(), &mut notes)?;
    let notes = notes.finish();
    if strict {
        if let Some((_, e)) = notes.into_iter().next() {
            return Err(e);
        }
        return Ok(Parsed {
            tc,
            notes: Vec::new(),
        });
    }
    Ok(Parsed { tc, notes })
}

/// Parse a CTF 2 metadata stream into a trace class, with the details of
/// the first error; forgiven irregularities ([`Leniency`]) are not
/// reported (see [`parse_with`]).
pub fn parse(data: &[u8]) -> Result<TraceClass, Ctf2Error> {
    parse_with(data, false).map(|p| p.tc)
}

/// Parse a CTF 2 metadata stream (the contents of a `metadata` file).
pub fn parse_metadata(data: &[u8]) -> Result<TraceClass, Error> {
    parse(data).map_err(Ctf2Error::into_error)
}

#[cfg(test)]
mod tests;
