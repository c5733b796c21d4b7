//! Event headers read from a plan made once per data stream class, for
//! readers that want nothing of the header but the event record class and
//! the time (the text printer).
//!
//! [`crate::decode::field`] walks the header's field tree for every event
//! record: node by node, with the roles of each integer looked up and
//! applied in general. An event header is small and always the same tree
//! (LTTng's: a 5-bit ID and a variant of a 27-bit time or a 32-bit ID and a
//! 64-bit time). A [`HeaderPlan`] lays that tree out once as integers to
//! read, with their two possible roles (event record class ID, default
//! clock value) resolved, variants to choose, and bits to skip.
//!
//! Every field is read as a printing visitor reads it (nothing skipped),
//! so what follows decodes as it would after the printer's walk. A header
//! with anything else (strings, arrays, other roles) gets no plan; a header that fails to decode with its plan is decoded again by
//! the decoder, which reports the error as it always does.

use crate::decode::{Cursor, DecodeError, DecodeErrorKind, IntValue, Kind, Program, NO_SLOT};
use crate::ir::{ByteOrder, IntRange, Roles, Scope};

#[derive(Debug)]
enum Op {
    Align(u32),
    Int {
        align: u32,
        len: u8,
        bo: ByteOrder,
        rev: bool,
        signed: bool,
        save: u16,
        /// The value is the default clock's.
        clock: bool,
        /// The value is the event record class ID.
        id: bool,
    },
    /// Choose by the value in `slot` (0 without one).
    Variant(u16, Box<Variant>),
}

/// A variant's options, and which option each small selector value
/// chooses (LTTng's are 0 to 31), so that most events need no search.
#[derive(Debug)]
struct Variant {
    choices: Vec<Choice>,
    small: [u8; SMALL],
}

/// Selector values below this are looked up in [`Variant::small`].
const SMALL: usize = 64;
/// No option (in [`Variant::small`]).
const NONE: u8 = u8::MAX;

/// A variant option: the selector values that choose it, its alignment,
/// what to read.
type Choice = (Box<[IntRange]>, u32, Vec<Op>);

/// How to read the event header of one data stream class (see the module).
#[derive(Debug)]
pub struct HeaderPlan {
    align: u32,
    ops: Vec<Op>,
}

impl HeaderPlan {
    /// The plan of the header whose root structure is `root`, or `None`
    /// when it holds what plans do not cover.
    pub fn new(p: &Program, root: u32) -> Option<HeaderPlan> {
        let n = p.nodes.get(root as usize)?;
        let mut ops = Vec::new();
        ops_of(p, root, &mut ops)?;
        Some(HeaderPlan {
            align: n.align,
            ops,
        })
    }

    /// Read the header at the cursor (as [`crate::decode::decode_scope`]
    /// with [`crate::decode::Walk`] does).
    pub fn run(&self, c: &mut Cursor<'_>) -> Result<(), Box<DecodeError>> {
        c.scope_start(Scope::EventHeader);
        c.align(self.align)?;
        run(&self.ops, c)
    }
}

fn ops_of(p: &Program, id: u32, ops: &mut Vec<Op>) -> Option<()> {
    let n = p.nodes.get(id as usize)?;
    const KNOWN: u16 = Roles::DEFAULT_CLOCK_TIMESTAMP.0 | Roles::EVENT_CLASS_ID.0;
    if n.roles.0 & !KNOWN != 0 {
        return None;
    }
    match &n.kind {
        Kind::Int {
            len,
            bo,
            rev,
            signed,
            ..
        } => ops.push(Op::Int {
            align: n.align,
            len: *len,
            bo: *bo,
            rev: *rev,
            signed: *signed,
            save: n.save,
            clock: n.roles.has(Roles::DEFAULT_CLOCK_TIMESTAMP),
            id: n.roles.has(Roles::EVENT_CLASS_ID),
        }),
        Kind::Struct { first, count } => {
            ops.push(Op::Align(n.align));
            for &m in p.members(*first, *count) {
                ops_of(p, m, ops)?;
            }
        }
        Kind::Variant {
            slot, first, count, ..
        } => {
            let mut opts = Vec::new();
            for o in p.variant_options(*first, *count) {
                let on = p.nodes.get(o.node as usize)?;
                let mut sub = Vec::new();
                ops_of(p, o.node, &mut sub)?;
                opts.push((o.ranges.clone(), on.align, sub));
            }
            let mut small = [NONE; SMALL];
            for (sel, c) in small.iter_mut().enumerate() {
                let pick = opts
                    .iter()
                    .position(|(ranges, ..)| ranges.iter().any(|r| r.contains(sel as i128)));
                if let Some(i) = pick.filter(|&i| i < NONE as usize) {
                    *c = i as u8;
                }
            }
            ops.push(Op::Variant(
                *slot,
                Box::new(Variant {
                    choices: opts,
                    small,
                }),
            ));
        }
        _ => return None,
    }
    Some(())
}

fn run(mut ops: &[Op], c: &mut Cursor<'_>) -> Result<(), Box<DecodeError>> {
    let mut i = 0;
    while let Some(op) = ops.get(i) {
        i += 1;
        match op {
            Op::Align(a) => c.align(*a)?,
            &Op::Int {
                align,
                len,
                bo,
                rev,
                signed,
                save,
                clock,
                id,
            } => {
                c.align(align)?;
                let len = len as u32;
                let raw = c.bits(len, bo, rev)?;
                if save != NO_SLOT {
                    c.slots[save as usize] = IntValue::from_bits(raw, len, signed).as_i128();
                }
                if clock {
                    c.update_clock(raw, len);
                }
                if id {
                    c.event_id = Some(raw);
                }
            }
            Op::Variant(slot, v) => {
                let sel = if *slot == NO_SLOT {
                    0
                } else {
                    c.slots[*slot as usize]
                };
                let pick = match v.small.get(usize::try_from(sel).unwrap_or(SMALL)) {
                    Some(&i) if i != NONE => v.choices.get(i as usize),
                    _ => v
                        .choices
                        .iter()
                        .find(|(ranges, ..)| ranges.iter().any(|r| r.contains(sel))),
                };
                let Some((_, align, sub)) = pick else {
                    return Err(Box::new(DecodeError {
                        kind: DecodeErrorKind::BadSelector(sel),
                        bit: c.pos,
                    }));
                };
                c.align(*align)?;
                if i == ops.len() {
                    // (the variant ends the list, as LTTng's does: its
                    // option's list continues it, with no call)
                    (ops, i) = (sub, 0);
                } else {
                    run(sub, c)?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{discover, open_traces, ReadLoader};

    /// LTTng's event headers (compact and large) get a plan, so that the
    /// golden tests of the text output, whose printer reads headers with
    /// plans, test them.
    #[test]
    fn lttng_headers_have_plans() {
        for fixture in ["lttng-ust-uid", "lttng-ust-discard-small"] {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/ctf")
                .join(fixture)
                .join("trace");
            let inputs = [dir];
            let found = discover(&inputs).unwrap();
            let traces = open_traces(&found, &inputs, &ReadLoader, (0, 0)).unwrap();
            let mut n = 0;
            for t in &traces {
                for s in &t.prog.streams {
                    let h = s.event_header.unwrap();
                    assert!(HeaderPlan::new(&t.prog, h).is_some(), "{fixture}");
                    n += 1;
                }
            }
            assert!(n > 0, "{fixture}");
        }
    }
}
