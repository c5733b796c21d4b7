//! The binary decoder: a trace class compiled to flat [`Node`]s, and a
//! streaming field decoder that reports every field to a [`Visitor`].
//!
//! Nothing here allocates per event: the compiled program is built once,
//! field values are passed to the visitor as they are read (strings and
//! BLOBs borrow the packet bytes), and the values that later fields need
//! (lengths, selectors) are kept in a fixed table of slots.
//!
//! Bit reading follows CTF: a fixed-length field of `len` bits starts at
//! the current bit position after alignment; little-endian fields take
//! their first bit from the least significant bit of the first byte,
//! big-endian fields from the most significant bit. A CTF 2 field whose
//! bit order is not the default for its byte order is read as usual and its
//! `len` bits are then reversed (yactfr does the same). Changing the byte
//! order in the middle of a byte is an error, checked from the start of
//! each scope (babeltrace2 does the check per scope).

use crate::ir::*;

mod cursor;
mod program;
mod visitor;
mod walk;

pub use cursor::*;
pub use program::*;
pub use visitor::*;
pub use walk::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_reads_both_orders() {
        // 0b1011_0110, 0b1100_0011
        let d = [0xB6u8, 0xC3];
        let mut c = Cursor::new(&d, 0);
        c.pos = 3;
        // LE: bits 3..8 of byte 0 (LSB first) then bits of byte 1.
        assert_eq!(c.bits(7, ByteOrder::Little, false).unwrap(), 0b11_10110);
        let mut c = Cursor::new(&d, 0);
        c.pos = 3;
        // BE: from MSB: 101 [10110 11] 000011
        assert_eq!(c.bits(7, ByteOrder::Big, false).unwrap(), 0b1011011);
        let mut c = Cursor::new(&d, 0);
        assert_eq!(c.bits(8, ByteOrder::Little, true).unwrap(), 0x6D);
        assert_eq!(c.bits(8, ByteOrder::Big, false).unwrap(), 0xC3);
    }

    #[test]
    fn byte_order_change_in_byte() {
        let d = [0u8; 4];
        let mut c = Cursor::new(&d, 0);
        c.bits(3, ByteOrder::Big, false).unwrap();
        let e = c.bits(5, ByteOrder::Little, false).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::ByteOrderChange);
        assert_eq!(e.bit, 3);
    }

    #[test]
    fn clock_wraps() {
        let mut c = Cursor::new(&[], 0);
        c.clock = 0x4D05;
        c.update_clock(0x04, 8);
        assert_eq!(c.clock, 0x4E04);
        c.update_clock(0x10, 8);
        assert_eq!(c.clock, 0x4E10);
    }

    #[test]
    fn beyond_content_vs_data() {
        let d = [0u8; 4];
        let mut c = Cursor::new(&d, 0);
        c.set_end(16);
        c.pos = 8;
        let e = c.bits(16, ByteOrder::Big, false).unwrap_err();
        assert_eq!(
            e.kind,
            DecodeErrorKind::BeyondContent {
                bits: 16,
                remaining: 8
            }
        );
        let mut c = Cursor::new(&d, 0);
        c.pos = 24;
        let e = c.bits(16, ByteOrder::Big, false).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::EndOfData { bits: 16 });
    }
}
