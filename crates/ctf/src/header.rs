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
    /// The same header as fields at places known in advance, when it has
    /// such a layout (see [`Fixed`]).
    fixed: Option<Fixed>,
}

/// A header whose every field sits at a bit offset known in advance from
/// the header's start, for each option of its one variant (LTTng's: a
/// 5-bit ID, then 27 bits of time, or 32 bits of ID and 64 of time at
/// offsets 8 and 40): read with one bound check and one load per field,
/// in place of the walk of [`Op`]s.
#[derive(Debug)]
struct Fixed {
    /// One layout per variant option (one in all without a variant).
    layouts: Vec<Layout>,
    /// The variant's selector (a field of every layout, read first) and
    /// the layout each small selector value chooses.
    choose: Option<(FixedInt, [u8; SMALL])>,
    /// The selector values of each layout (for the others).
    ranges: Vec<Box<[IntRange]>>,
}

#[derive(Debug)]
struct Layout {
    /// Bits from the header's start to its end.
    end: u32,
    /// Bytes from the header's start that the loads touch.
    span: u32,
    ints: Vec<FixedInt>,
}

/// A little-endian integer field at a known place: an 8-byte load at byte
/// `off / 8` holds it.
#[derive(Debug, Clone, Copy)]
struct FixedInt {
    off: u32,
    len: u8,
    /// `mask(len)`.
    mask: u64,
    signed: bool,
    save: u16,
    clock: bool,
    id: bool,
}

impl FixedInt {
    /// Its bits in `s`, which holds the header from its first byte and at
    /// least 8 bytes from this field's.
    #[inline(always)]
    fn load(self, s: &[u8]) -> u64 {
        let at = (self.off / 8) as usize;
        let w = s
            .get(at..at + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
            .map_or(0, u64::from_le_bytes);
        (w >> (self.off % 8)) & self.mask
    }
}

impl Fixed {
    /// The layouts of `ops` (the root's), from a start aligned to `align`.
    fn new(align: u32, ops: &[Op]) -> Option<Fixed> {
        if align < 8 {
            return None;
        }
        let mut head = Vec::new();
        let mut off = 0u32;
        // (a variant anywhere else: no layout, `lay` refuses it)
        let (plain, variant) = match ops.split_last() {
            Some((Op::Variant(slot, v), before)) => (before, Some((*slot, v))),
            _ => (ops, None),
        };
        lay(align, plain, &mut off, &mut head)?;
        let Some((slot, v)) = variant else {
            return Some(Fixed {
                layouts: vec![Layout::of(off, head)],
                choose: None,
                ranges: Vec::new(),
            });
        };
        let sel = *head.iter().find(|f| f.save == slot && slot != NO_SLOT)?;
        let mut layouts = Vec::new();
        for (_, a, sub) in &v.choices {
            let (mut o, mut ints) = (off, head.clone());
            lay(align, &[Op::Align(*a)], &mut o, &mut ints)?;
            lay(align, sub, &mut o, &mut ints)?;
            layouts.push(Layout::of(o, ints));
        }
        Some(Fixed {
            layouts,
            choose: Some((sel, v.small)),
            ranges: v.choices.iter().map(|(r, ..)| r.clone()).collect(),
        })
    }

    /// Read the header at the cursor (aligned, its scope started) as
    /// [`run`] does; `None` (and nothing changed) when it cannot be read
    /// this way here (near the end of the data, an unusual selector): the
    /// caller then runs the ops.
    #[inline(always)]
    fn run(&self, c: &mut Cursor<'_>) -> Option<()> {
        debug_assert!(c.pos % 8 == 0);
        let start = (c.pos / 8) as usize;
        let s = c.data.get(start..)?;
        let layout = match &self.choose {
            Some((sel, small)) => {
                let v = IntValue::from_bits(sel.load(s), sel.len as u32, sel.signed).as_i128();
                let i = match small.get(usize::try_from(v).unwrap_or(SMALL)) {
                    Some(&i) => i as usize,
                    None => self
                        .ranges
                        .iter()
                        .position(|r| r.iter().any(|r| r.contains(v)))?,
                };
                self.layouts.get(i)?
            }
            None => self.layouts.first()?,
        };
        if s.len() < layout.span as usize || c.room() < layout.end as u64 {
            return None;
        }
        for f in &layout.ints {
            let raw = f.load(s);
            if f.save != NO_SLOT {
                c.slots[f.save as usize] =
                    IntValue::from_bits(raw, f.len as u32, f.signed).as_i128();
            }
            if f.clock {
                c.update_clock(raw, f.len as u32);
            }
            if f.id {
                c.event_id = Some(raw);
            }
        }
        c.pass_fixed(layout.end as u64, !layout.ints.is_empty());
        Some(())
    }
}

impl Layout {
    fn of(end: u32, ints: Vec<FixedInt>) -> Layout {
        let span = ints.iter().map(|f| f.off / 8 + 8).max().unwrap_or(0);
        Layout { end, span, ints }
    }
}

/// Lay out `ops` (no variant) from bit `off` of a header aligned to
/// `align`; `None` when a place is not known in advance or a field is
/// not a little-endian integer that one 8-byte load holds.
fn lay(align: u32, ops: &[Op], off: &mut u32, ints: &mut Vec<FixedInt>) -> Option<()> {
    let up = |off: u32, a: u32| -> Option<u32> {
        (a <= align && a.is_power_of_two()).then_some(())?;
        off.checked_next_multiple_of(a)
    };
    for op in ops {
        match *op {
            Op::Align(a) => *off = up(*off, a.max(1))?,
            Op::Int {
                align: a,
                len,
                bo,
                rev,
                signed,
                save,
                clock,
                id,
            } => {
                let at = up(*off, a.max(1))?;
                if bo != ByteOrder::Little || rev || len == 0 || at % 8 + len as u32 > 64 {
                    return None;
                }
                ints.push(FixedInt {
                    off: at,
                    len,
                    mask: crate::decode::mask(len as u32),
                    signed,
                    save,
                    clock,
                    id,
                });
                *off = at.checked_add(len as u32).filter(|&o| o <= 1 << 16)?;
            }
            Op::Variant(..) => return None,
        }
    }
    Some(())
}

impl HeaderPlan {
    /// The plan of the header whose root structure is `root`, or `None`
    /// when it holds what plans do not cover.
    pub fn new(p: &Program, root: u32) -> Option<HeaderPlan> {
        let n = p.nodes.get(root as usize)?;
        let mut ops = Vec::new();
        ops_of(p, root, &mut ops)?;
        let fixed = Fixed::new(n.align, &ops);
        Some(HeaderPlan {
            align: n.align,
            ops,
            fixed,
        })
    }

    /// Read the header at the cursor (as [`crate::decode::decode_scope`]
    /// with [`crate::decode::Walk`] does).
    pub fn run(&self, c: &mut Cursor<'_>) -> Result<(), Box<DecodeError>> {
        c.scope_start(Scope::EventHeader);
        c.align(self.align)?;
        if let Some(f) = &self.fixed {
            if f.run(c).is_some() {
                return Ok(());
            }
        }
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

    /// The fixed layouts read what the ops read: on LTTng's headers, from
    /// every start bit state and over many byte patterns (both options of
    /// the variant, and bytes that run out), the cursor ends alike.
    #[test]
    fn fixed_layouts_read_as_the_ops() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut compared = 0;
        for fixture in ["lttng-ust-uid", "lttng-ust-discard-small"] {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/ctf")
                .join(fixture)
                .join("trace");
            let inputs = [dir];
            let found = discover(&inputs).unwrap();
            let traces = open_traces(&found, &inputs, &ReadLoader, (0, 0)).unwrap();
            for t in &traces {
                for s in &t.prog.streams {
                    let plan = HeaderPlan::new(&t.prog, s.event_header.unwrap()).unwrap();
                    let fixed = plan.fixed.as_ref().expect("LTTng's header has a layout");
                    assert_eq!(fixed.layouts.len(), 2, "{fixture}: compact and extended");
                    let mut per_layout = vec![0; fixed.layouts.len()];
                    for round in 0..4000 {
                        let len = (rnd() % 24) as usize;
                        let mut data: Vec<u8> = (0..len).map(|_| rnd() as u8).collect();
                        // (small IDs, and the extended option's 31 or 65535)
                        match (round % 3, data.len()) {
                            (0, 2..) => data[..2].copy_from_slice(&[0xff, 0xff]),
                            (1, 2..) => data[..2].copy_from_slice(&[rnd() as u8 % 40, 0]),
                            _ => {}
                        }
                        let clock = rnd() >> (rnd() % 64);
                        let start = |c: &mut Cursor<'_>| {
                            c.clock = clock;
                            c.scope_start(Scope::EventHeader);
                            c.align(plan.align)
                        };
                        let mut a = Cursor::new(&data, t.prog.slots);
                        let mut b = Cursor::new(&data, t.prog.slots);
                        let ra = start(&mut a).ok().and_then(|_| fixed.run(&mut a));
                        let rb = start(&mut b).and_then(|_| run(&plan.ops, &mut b));
                        match ra {
                            Some(()) => {
                                assert!(rb.is_ok(), "{fixture}: {data:x?}");
                                assert_eq!(
                                    (a.pos, a.clock, a.event_id, &a.slots),
                                    (b.pos, b.clock, b.event_id, &b.slots),
                                    "{fixture}: {data:x?}"
                                );
                                // (the header starts at 0: its end tells
                                // the layout)
                                let i = fixed.layouts.iter().position(|l| l.end as u64 == a.pos);
                                if let Some(i) = i {
                                    per_layout[i] += 1;
                                }
                                compared += 1;
                            }
                            // (the ops then read it: only near the end)
                            None => assert!(len < 16, "{fixture}: {data:x?}"),
                        }
                    }
                    assert!(per_layout.iter().all(|&n| n > 100), "{per_layout:?}");
                }
            }
        }
        assert!(compared > 1000, "{compared}");
    }
}
