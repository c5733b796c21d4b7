//! A field's value as readers hand it to visitors ([`Value`], borrowing
//! from the record) and the display base its producer asked for
//! ([`Base`]).

use crate::bytes::Endian;

/// A decoded field value, borrowing from the record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'t> {
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Bool(bool),
    /// Character data, up to (not including) the first NUL.
    Str(&'t [u8]),
    /// Opaque bytes (arrays of non-integer elements, or raw payloads).
    Bytes(&'t [u8]),
    /// An array of integers, decoded element by element on demand.
    IntArray {
        data: &'t [u8],
        elem_size: u8,
        signed: bool,
        endian: Endian,
    },
}

impl<'t> Value<'t> {
    /// Element `i` of an integer array, sign-extended when signed.
    pub fn array_elem(&self, i: usize) -> Option<i128> {
        match *self {
            Value::IntArray {
                data,
                elem_size,
                signed,
                endian,
            } => {
                let es = elem_size as usize;
                let b = data.get(i.checked_mul(es)?..)?;
                let v = endian.read_uint(b, es)?;
                Some(if signed {
                    sign_extend(v, es) as i128
                } else {
                    v as i128
                })
            }
            _ => None,
        }
    }

    /// A scalar as the raw bits of an unsigned integer (signed values as
    /// two's complement, `true` as 1, floats truncated); 0 for the others.
    pub fn raw_u64(&self) -> u64 {
        match *self {
            Value::Unsigned(x) => x,
            Value::Signed(x) => x as u64,
            Value::Bool(b) => b as u64,
            Value::Float(f) => f as i64 as u64,
            _ => 0,
        }
    }
}

/// Sign-extend the low `size` bytes of `v`.
#[inline]
pub fn sign_extend(v: u64, size: usize) -> i64 {
    match size {
        1 => v as u8 as i8 as i64,
        2 => v as u16 as i16 as i64,
        4 => v as u32 as i32 as i64,
        _ => v as i64,
    }
}

/// The display base a producer asked for (CTF `base`, LTT `%x`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Base {
    #[default]
    Dec,
    Hex,
    Oct,
    Bin,
}
