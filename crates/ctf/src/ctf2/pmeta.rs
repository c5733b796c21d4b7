//! Packetized CTF 2 metadata streams: the JSON text sequence cut into
//! metadata packets, each a header and a part of the text.
//!
//! Two header layouts carry version 2.0, both read here:
//!
//! * CTF2-PMETA-1.0: 44 bytes: magic 0x75D11D57 (its byte order is the
//!   header's), UUID (16 bytes), checksum, content size and total size in
//!   bits (32 bits each), compression, encryption and checksum schemes, major
//!   (2) and minor (0) version (one byte each), 3 reserved bytes, then the
//!   size of the header in bits (352);
//! * the 37-byte header of CTF 1.8 (section 7.1) with version 2.0, as LTTng
//!   writes it: the same fields up to the minor version.
//!
//! A packet has the 44-byte layout when the 7 bytes after the minor version
//! are 3 zero bytes and a header size of at least 352 bits, a multiple of 8,
//! within the content (a CTF 2 text, which starts with a record separator,
//! whitespace or `{`, cannot start so); the first packet's layout is every
//! packet's. The text of a packet is its content after the header (its
//! padding, up to the total size, is skipped); packets may cut the text
//! anywhere, fragments included.
//!
//! What the format forbids and a reader can step over is noted (a warning by
//! default, refused in strict mode): a packet whose UUID is not the first
//! packet's (all the packets of a stream share one), a checksum field that is
//! not zero although the checksum scheme is 0 is not a violation ("consumers
//! must ignore this field"). A bad magic, a scheme other than 0, a version
//! other than 2.0, sizes that do not hold the header or pass the end of the
//! data (but for the last packet's total size) are errors: the text cannot
//! be recovered from them.

use tracemux_core::{Error, ErrorKind};

use crate::tsdl::METADATA_PACKET_MAGIC;

/// Header length of CTF 1.8 (and of LTTng's CTF 2 packets).
const SHORT_HEADER: usize = 37;
/// Header length of CTF2-PMETA-1.0.
const PMETA_HEADER: usize = 44;

/// A violation found while depacketizing: byte offset in the metadata file
/// and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketNote {
    pub offset: usize,
    pub msg: String,
}

/// The text of packetized CTF 2 metadata `data` (see the module docs), and
/// the violations stepped over.
pub fn depacketize(data: &[u8]) -> Result<(Vec<u8>, Vec<PacketNote>), Error> {
    let le = data.len() >= 4
        && u32::from_le_bytes([data[0], data[1], data[2], data[3]]) == METADATA_PACKET_MAGIC;
    let rd = |b: &[u8]| {
        let a = [b[0], b[1], b[2], b[3]];
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let mut off = 0usize;
    let mut uuid: Option<[u8; 16]> = None;
    // header length of every packet (from the first)
    let mut hlen: Option<usize> = None;
    while off < data.len() {
        let bad = |msg: String| {
            Error::new(
                ErrorKind::Invalid(format!("metadata packet: {msg}")),
                "metadata",
                off as u64,
            )
        };
        let Some(h) = data.get(off..off + SHORT_HEADER) else {
            return Err(Error::eof("metadata packet header", off as u64));
        };
        if rd(&h[0..4]) != METADATA_PACKET_MAGIC {
            return Err(bad("bad magic number".into()));
        }
        let content = rd(&h[24..28]) as usize;
        let total = rd(&h[28..32]) as usize;
        if content % 8 != 0 || total % 8 != 0 {
            return Err(bad(format!(
                "content size {content} or total size {total} (bits) is not a multiple of 8"
            )));
        }
        let (content_bytes, total_bytes) = (content / 8, total / 8);
        if h[32] != 0 {
            return Err(bad("compressed metadata is not supported".into()));
        }
        if h[33] != 0 {
            return Err(bad("encrypted metadata is not supported".into()));
        }
        if h[34] != 0 {
            return Err(Error::new(
                ErrorKind::Unsupported(format!("metadata packet: checksum scheme {}", h[34])),
                "metadata",
                off as u64 + 34,
            ));
        }
        if (h[35], h[36]) != (2, 0) {
            return Err(bad(format!(
                "version {}.{} in a CTF 2 metadata stream (2.0 expected)",
                h[35], h[36]
            )));
        }
        let n =
            *hlen.get_or_insert_with(|| match data.get(off + SHORT_HEADER..off + PMETA_HEADER) {
                Some(x) if x[..3] == [0, 0, 0] => {
                    let bits = rd(&x[3..7]) as usize;
                    if bits >= PMETA_HEADER * 8 && bits % 8 == 0 && bits / 8 <= content_bytes {
                        bits / 8
                    } else {
                        SHORT_HEADER
                    }
                }
                _ => SHORT_HEADER,
            });
        if n > SHORT_HEADER {
            let Some(x) = data.get(off + SHORT_HEADER..off + PMETA_HEADER) else {
                return Err(Error::eof("metadata packet header", off as u64));
            };
            let bits = rd(&x[3..7]) as usize;
            if bits / 8 != n {
                return Err(bad(format!(
                    "header size {bits} bits differs from the first packet's ({} bits)",
                    n * 8
                )));
            }
            if x[..3] != [0, 0, 0] {
                notes.push(PacketNote {
                    offset: off + SHORT_HEADER,
                    msg: "reserved bytes of the metadata packet header are not zero".into(),
                });
            }
        }
        let mut u = [0u8; 16];
        u.copy_from_slice(&h[4..20]);
        match uuid {
            None => uuid = Some(u),
            Some(first) if first != u => notes.push(PacketNote {
                offset: off + 4,
                msg: format!(
                    "metadata packet UUID {} is not the first packet's ({})",
                    crate::ir::uuid_string(&u),
                    crate::ir::uuid_string(&first)
                ),
            }),
            _ => {}
        }
        if content_bytes < n || total_bytes < content_bytes {
            return Err(bad(format!(
                "content size {content} bits smaller than the header or larger than the total size {total}"
            )));
        }
        let Some(text) = data.get(off + n..off + content_bytes) else {
            return Err(Error::eof("metadata packet", off as u64));
        };
        out.extend_from_slice(text);
        // A total size past the end of the file is tolerated (last packet).
        off = off.saturating_add(total_bytes.max(1));
    }
    Ok((out, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(text: &[u8], le: bool, pmeta: bool, pad: usize, uuid: u8) -> Vec<u8> {
        let hl = if pmeta { PMETA_HEADER } else { SHORT_HEADER };
        let w = |v: u32| if le { v.to_le_bytes() } else { v.to_be_bytes() };
        let content = ((hl + text.len()) * 8) as u32;
        let mut p = w(METADATA_PACKET_MAGIC).to_vec();
        p.extend_from_slice(&[uuid; 16]);
        p.extend_from_slice(&w(0));
        p.extend_from_slice(&w(content));
        p.extend_from_slice(&w(content + pad as u32 * 8));
        p.extend_from_slice(&[0, 0, 0, 2, 0]);
        if pmeta {
            p.extend_from_slice(&[0, 0, 0]);
            p.extend_from_slice(&w(352));
        }
        p.extend_from_slice(text);
        p.resize(p.len() + pad, 0xAA);
        p
    }

    #[test]
    fn both_layouts_both_byte_orders() {
        let text = b"\x1e{\"type\": \"preamble\", \"version\": 2}\n";
        for le in [true, false] {
            for pmeta in [true, false] {
                let mut d = packet(&text[..10], le, pmeta, 3, 1);
                d.extend(packet(&text[10..], le, pmeta, 0, 1));
                let (t, notes) = depacketize(&d).unwrap();
                assert_eq!(t, text, "le {le} pmeta {pmeta}");
                assert!(notes.is_empty());
            }
        }
    }

    #[test]
    fn uuid_mismatch_is_noted_and_read_on() {
        let mut d = packet(b"\x1e{}", true, true, 0, 1);
        d.extend(packet(b"\x1e{}", true, true, 0, 2));
        let (t, notes) = depacketize(&d).unwrap();
        assert_eq!(t, b"\x1e{}\x1e{}");
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].offset, 47 + 4); // second packet (44 + 3 bytes), its UUID
    }

    #[test]
    fn bad_packets_are_errors() {
        let p = packet(b"\x1e{}", true, true, 0, 1);
        let mut v = p.clone();
        v[35] = 1;
        v[36] = 8;
        assert!(depacketize(&v).is_err());
        let mut v = p.clone();
        v[24] = 1; // content size not a multiple of 8
        assert!(depacketize(&v).is_err());
        assert!(depacketize(&p[..40]).is_err());
    }
}
