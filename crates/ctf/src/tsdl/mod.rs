//! CTF 1.8 metadata: TSDL text, plain or packetized, lowered to the IR.
//!
//! ```
//! let tsdl = br#"/* CTF 1.8 */
//! typealias integer { size = 8; } := u8;
//! trace { major = 1; minor = 8; byte_order = le; };
//! event { name = "ev"; fields := struct { u8 x; }; };
//! "#;
//! let tc = tracemux_ctf::tsdl::parse_metadata(tsdl).unwrap();
//! assert_eq!(tc.stream_classes[0].event_classes[0].name.as_deref(), Some("ev"));
//! ```

pub mod lexer;
pub mod lower;
pub mod parser;

use std::fmt;

use tracemux_core::{Error, ErrorKind};

use crate::ir::TraceClass;
pub use lexer::Pos;

/// The magic number of a metadata packet (CTF 1.8 section 7.1).
pub const METADATA_PACKET_MAGIC: u32 = 0x75D1_1D57;

/// Size of a metadata packet header in bytes.
const METADATA_HEADER_LEN: usize = 37;

/// A TSDL error: what and where (line and column in the metadata text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsdlError {
    pub pos: Pos,
    pub msg: String,
}

impl TsdlError {
    pub fn new(pos: Pos, msg: impl Into<String>) -> Self {
        TsdlError {
            pos,
            msg: msg.into(),
        }
    }

    /// As a [`tracemux_core::Error`] in section `metadata`, at the byte
    /// offset of the error in the metadata text.
    pub fn into_error(self) -> Error {
        Error::new(
            ErrorKind::Invalid(self.to_string()),
            "metadata",
            self.pos.offset as u64,
        )
    }
}

impl fmt::Display for TsdlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pos.line == 0 {
            write!(f, "TSDL: {}", self.msg)
        } else {
            write!(
                f,
                "TSDL line {}, column {}: {}",
                self.pos.line, self.pos.col, self.msg
            )
        }
    }
}

impl std::error::Error for TsdlError {}

/// Whether metadata bytes are packetized (start with the metadata packet
/// magic in either byte order).
pub fn is_packetized(data: &[u8]) -> bool {
    data.len() >= 4 && {
        let m = [data[0], data[1], data[2], data[3]];
        u32::from_le_bytes(m) == METADATA_PACKET_MAGIC
            || u32::from_be_bytes(m) == METADATA_PACKET_MAGIC
    }
}

/// Concatenate the text of the CTF 1.8 metadata packets in `data` (see
/// [`depacketize_any`]; packets of another version are an error).
pub fn depacketize(data: &[u8]) -> Result<Vec<u8>, Error> {
    let (text, version) = depacketize_any(data)?;
    if version != (1, 8) {
        return Err(Error::invalid(
            format!(
                "metadata packet: version {}.{} is not 1.8",
                version.0, version.1
            ),
            "metadata",
            0,
        ));
    }
    Ok(text)
}

/// The version (major, minor) of the first metadata packet of `data`, if
/// `data` is packetized metadata with a whole first header.
pub fn packet_version(data: &[u8]) -> Option<(u8, u8)> {
    if !is_packetized(data) {
        return None;
    }
    data.get(35..37).map(|v| (v[0], v[1]))
}

/// Concatenate the content of the metadata packets in `data`, and their
/// version: 1.8 (CTF 1.8 section 7.1, TSDL text) or 2.0 (CTF2-PMETA-1.0,
/// a CTF 2 JSON text sequence); the layout of the header is the same.
///
/// Every packet must have the magic (in the byte order of the first one),
/// no compression or encryption, the version and the UUID of the first;
/// its content size must hold the header and fit in the data. The
/// checksum field is ignored when the checksum scheme is 0 (none), as
/// both specifications say; another scheme is not supported. A truncated
/// last packet is an error naming its offset.
pub fn depacketize_any(data: &[u8]) -> Result<(Vec<u8>, (u8, u8)), Error> {
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
    let mut out = Vec::with_capacity(data.len());
    let mut off = 0usize;
    let mut uuid: Option<&[u8]> = None;
    let mut version = None;
    while off < data.len() {
        let bad =
            |msg: &str| Error::invalid(format!("metadata packet: {msg}"), "metadata", off as u64);
        let Some(h) = data.get(off..off + METADATA_HEADER_LEN) else {
            return Err(Error::eof("metadata packet header", off as u64));
        };
        if rd(&h[0..4]) != METADATA_PACKET_MAGIC {
            return Err(bad("bad magic number"));
        }
        match uuid {
            None => uuid = Some(&h[4..20]),
            Some(u) if u != &h[4..20] => return Err(bad("UUID differs from the first packet's")),
            _ => {}
        }
        let content = rd(&h[24..28]) as usize;
        let total = rd(&h[28..32]) as usize;
        if h[32] != 0 {
            return Err(bad("compressed metadata is not supported"));
        }
        if h[33] != 0 {
            return Err(bad("encrypted metadata is not supported"));
        }
        if h[34] != 0 {
            return Err(Error::new(
                tracemux_core::ErrorKind::Unsupported(format!(
                    "metadata packet: checksum scheme {}",
                    h[34]
                )),
                "metadata",
                off as u64 + 34,
            ));
        }
        let v = (h[35], h[36]);
        match version {
            None if v == (1, 8) || v == (2, 0) => version = Some(v),
            None => {
                return Err(bad(&format!(
                    "version {}.{} is neither 1.8 nor 2.0",
                    v.0, v.1
                )))
            }
            Some(first) if first != v => {
                return Err(bad(&format!(
                    "version {}.{} differs from the first packet's ({}.{})",
                    v.0, v.1, first.0, first.1
                )))
            }
            _ => {}
        }
        let content_bytes = content / 8;
        if content_bytes < METADATA_HEADER_LEN || total < content {
            return Err(bad(
                "content size smaller than the header or larger than the packet",
            ));
        }
        let Some(text) = data.get(off + METADATA_HEADER_LEN..off + content_bytes) else {
            return Err(Error::eof("metadata packet", off as u64));
        };
        out.extend_from_slice(text);
        // A packet size past the end of the file is tolerated (last packet).
        off = off.saturating_add((total / 8).max(content_bytes));
    }
    Ok((out, version.unwrap_or((1, 8))))
}

/// Parse TSDL text (with or without the `/* CTF 1.8` signature).
pub fn parse_text(text: &[u8]) -> Result<TraceClass, TsdlError> {
    // Text after a NUL byte is ignored (some producers pad the last packet).
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    let toks = lexer::tokenize(&text[..end])?;
    let entries = parser::parse(toks)?;
    lower::lower(&entries)
}

/// Parse a metadata stream (file contents): packetized or plain text.
pub fn parse_metadata(data: &[u8]) -> Result<TraceClass, Error> {
    if is_packetized(data) {
        let text = depacketize(data)?;
        parse_text(&text).map_err(TsdlError::into_error)
    } else {
        parse_text(data).map_err(TsdlError::into_error)
    }
}

/// The metadata text (depacketized when needed), for `dump`-style output.
pub fn metadata_text(data: &[u8]) -> Result<Vec<u8>, Error> {
    if is_packetized(data) {
        depacketize(data)
    } else {
        Ok(data.to_vec())
    }
}
