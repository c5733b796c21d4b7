//! The wire format of lttng-relayd's viewer protocol (the "live" port,
//! 5344 by default): big-endian, fixed-size structures, one command at a
//! time on one TCP connection.
//!
//! Every request is a 16-byte header (`data_size` u64, `cmd` u32,
//! `cmd_version` u32) followed by `data_size` bytes; every reply has a
//! fixed size known from the command, except the lists that follow some
//! replies (sessions, streams) and the bytes of a packet or of metadata,
//! whose counts and lengths the reply gives. This module only encodes
//! requests and decodes replies from byte slices (no I/O), so that every
//! bound is checked in one place and the parser can be fuzzed; the
//! limits below are what a reply may claim before anything is allocated.
//!
//! Facts from lttng-tools' `lttng-viewer-abi` (2.4 to 2.15): session
//! entries are 20 bytes + host name (64) + session name (255) up to
//! protocol 2.14, and from 2.15 20 bytes + 3 u32 (host name length, session
//! name length, trace format) followed by the two strings without NUL;
//! stream entries are 8 + 8 + 4 + path (4096) + channel name (255) bytes.

use tracemux_core::bytes::{Cursor, Endian};
use tracemux_core::Error;

/// The protocol this client speaks: major 2, minor 15 (the relayd picks
/// the lower minor of both sides).
pub const MAJOR: u32 = 2;
pub const MINOR: u32 = 15;

/// Commands.
pub const CMD_CONNECT: u32 = 1;
pub const CMD_LIST_SESSIONS: u32 = 2;
pub const CMD_ATTACH_SESSION: u32 = 3;
pub const CMD_GET_NEXT_INDEX: u32 = 4;
pub const CMD_GET_PACKET: u32 = 5;
pub const CMD_GET_METADATA: u32 = 6;
pub const CMD_GET_NEW_STREAMS: u32 = 7;
pub const CMD_CREATE_SESSION: u32 = 8;
pub const CMD_DETACH_SESSION: u32 = 9;

/// The name of a command, for errors.
pub fn command_name(cmd: u32) -> &'static str {
    match cmd {
        CMD_CONNECT => "CONNECT",
        CMD_LIST_SESSIONS => "LIST_SESSIONS",
        CMD_ATTACH_SESSION => "ATTACH_SESSION",
        CMD_GET_NEXT_INDEX => "GET_NEXT_INDEX",
        CMD_GET_PACKET => "GET_PACKET",
        CMD_GET_METADATA => "GET_METADATA",
        CMD_GET_NEW_STREAMS => "GET_NEW_STREAMS",
        CMD_CREATE_SESSION => "CREATE_SESSION",
        CMD_DETACH_SESSION => "DETACH_SESSION",
        _ => "unknown command",
    }
}

/// Reply flags of GET_NEXT_INDEX and GET_PACKET.
pub const FLAG_NEW_METADATA: u32 = 1;
pub const FLAG_NEW_STREAM: u32 = 2;

/// Connection type of CONNECT: a command connection.
pub const CLIENT_COMMAND: u32 = 1;

/// ATTACH_SESSION seek: from the beginning, or from now (babeltrace2's).
pub const SEEK_BEGINNING: u32 = 1;
pub const SEEK_LAST: u32 = 2;

/// Fixed sizes.
pub const HEADER_LEN: usize = 16;
pub const CONNECT_LEN: usize = 20;
pub const SESSION_24_LEN: usize = 20 + HOST_NAME_MAX + NAME_MAX;
pub const SESSION_215_LEN: usize = 32;
pub const STREAM_LEN: usize = 20 + PATH_MAX + NAME_MAX;
pub const INDEX_LEN: usize = 64;
pub const PACKET_REPLY_LEN: usize = 12;
pub const METADATA_REPLY_LEN: usize = 12;
pub const STATUS_COUNT_LEN: usize = 8;
pub const STATUS_LEN: usize = 4;

pub const HOST_NAME_MAX: usize = 64;
pub const NAME_MAX: usize = 255;
pub const PATH_MAX: usize = 4096;

/// Limits on what a reply may claim (a relayd that says more is refused
/// before anything is allocated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Sessions in a LIST_SESSIONS reply.
    pub sessions: u32,
    /// Streams in an ATTACH_SESSION or GET_NEW_STREAMS reply, and in a
    /// session in all.
    pub streams: u32,
    /// Bytes of one data packet.
    pub packet: u64,
    /// Bytes of one metadata reply, and of a trace's metadata in all.
    pub metadata: u64,
    /// Bytes of a 2.15 session entry's host or session name.
    pub name: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            sessions: 4096,
            streams: 65536,
            packet: 256 << 20,
            metadata: 64 << 20,
            name: 4096,
        }
    }
}

/// A request: the header and its payload.
pub fn request(cmd: u32, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(HEADER_LEN + payload.len());
    v.extend_from_slice(&(payload.len() as u64).to_be_bytes());
    v.extend_from_slice(&cmd.to_be_bytes());
    v.extend_from_slice(&0u32.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// CONNECT's payload (and reply): viewer session ID, major, minor, type.
pub fn connect_payload(major: u32, minor: u32) -> [u8; CONNECT_LEN] {
    let mut b = [0u8; CONNECT_LEN];
    b[..8].copy_from_slice(&u64::MAX.to_be_bytes());
    b[8..12].copy_from_slice(&major.to_be_bytes());
    b[12..16].copy_from_slice(&minor.to_be_bytes());
    b[16..20].copy_from_slice(&CLIENT_COMMAND.to_be_bytes());
    b
}

/// ATTACH_SESSION's payload.
pub fn attach_payload(session: u64, seek: u32) -> [u8; 20] {
    let mut b = [0u8; 20];
    b[..8].copy_from_slice(&session.to_be_bytes());
    b[16..20].copy_from_slice(&seek.to_be_bytes());
    b
}

/// GET_PACKET's payload.
pub fn packet_payload(stream: u64, offset: u64, len: u32) -> [u8; 20] {
    let mut b = [0u8; 20];
    b[..8].copy_from_slice(&stream.to_be_bytes());
    b[8..16].copy_from_slice(&offset.to_be_bytes());
    b[16..20].copy_from_slice(&len.to_be_bytes());
    b
}

fn cur(b: &[u8]) -> Cursor<'_> {
    Cursor::new(b, Endian::Big, "relayd reply")
}

/// The decoded reply to CONNECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connected {
    pub viewer_session_id: u64,
    pub major: u32,
    pub minor: u32,
}

pub fn parse_connect(b: &[u8]) -> Result<Connected, Error> {
    let mut c = cur(b);
    let viewer_session_id = c.u64()?;
    let major = c.u32()?;
    let minor = c.u32()?;
    Ok(Connected {
        viewer_session_id,
        major,
        minor,
    })
}

/// A session of LIST_SESSIONS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub id: u64,
    pub live_timer: u32,
    pub clients: u32,
    pub streams: u32,
    pub hostname: String,
    pub name: String,
    /// 0: CTF 1.8, 1: CTF 2 (protocol 2.15; 0 before).
    pub trace_format: u32,
}

/// A NUL-terminated string in a fixed field (babeltrace2 cuts at the
/// field's last byte).
fn fixed_str(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// The fixed part of a session entry (protocol 2.4: the whole entry).
pub fn parse_session_24(b: &[u8]) -> Result<Session, Error> {
    let mut c = cur(b);
    let id = c.u64()?;
    let live_timer = c.u32()?;
    let clients = c.u32()?;
    let streams = c.u32()?;
    let hostname = fixed_str(c.bytes(HOST_NAME_MAX)?);
    let name = fixed_str(c.bytes(NAME_MAX)?);
    Ok(Session {
        id,
        live_timer,
        clients,
        streams,
        hostname,
        name,
        trace_format: 0,
    })
}

/// The fixed part of a 2.15 session entry: the session (names empty) and
/// the lengths of the host and session names that follow it.
pub fn parse_session_215(b: &[u8], limits: &Limits) -> Result<(Session, u32, u32), Error> {
    let mut c = cur(b);
    let id = c.u64()?;
    let live_timer = c.u32()?;
    let clients = c.u32()?;
    let streams = c.u32()?;
    let hl = c.u32()?;
    let nl = c.u32()?;
    let trace_format = c.u32()?;
    for (what, l) in [("host name", hl), ("session name", nl)] {
        if l > limits.name {
            return Err(Error::invalid(
                format!("session {what} of {l} bytes (at most {})", limits.name),
                "relayd reply",
                20,
            ));
        }
    }
    Ok((
        Session {
            id,
            live_timer,
            clients,
            streams,
            hostname: String::new(),
            name: String::new(),
            trace_format,
        },
        hl,
        nl,
    ))
}

/// A status and a count (ATTACH_SESSION, GET_NEW_STREAMS), or a session
/// count (LIST_SESSIONS: the count alone, 4 bytes).
pub fn parse_status_count(b: &[u8]) -> Result<(u32, u32), Error> {
    let mut c = cur(b);
    Ok((c.u32()?, c.u32()?))
}

pub fn parse_u32(b: &[u8]) -> Result<u32, Error> {
    cur(b).u32()
}

/// A stream of ATTACH_SESSION or GET_NEW_STREAMS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    pub id: u64,
    pub ctf_trace_id: u64,
    pub metadata: bool,
    pub path: String,
    pub channel: String,
}

pub fn parse_stream(b: &[u8]) -> Result<Stream, Error> {
    let mut c = cur(b);
    let id = c.u64()?;
    let ctf_trace_id = c.u64()?;
    let metadata = c.u32()? != 0;
    let path = fixed_str(c.bytes(PATH_MAX)?);
    let channel = fixed_str(c.bytes(NAME_MAX)?);
    Ok(Stream {
        id,
        ctf_trace_id,
        metadata,
        path,
        channel,
    })
}

/// GET_NEXT_INDEX statuses.
pub const INDEX_OK: u32 = 1;
pub const INDEX_RETRY: u32 = 2;
pub const INDEX_HUP: u32 = 3;
pub const INDEX_ERR: u32 = 4;
pub const INDEX_INACTIVE: u32 = 5;
pub const INDEX_EOF: u32 = 6;

/// The reply to GET_NEXT_INDEX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Index {
    pub offset: u64,
    /// Bits.
    pub packet_size: u64,
    /// Bits.
    pub content_size: u64,
    pub timestamp_begin: u64,
    pub timestamp_end: u64,
    pub events_discarded: u64,
    /// The CTF stream class ID.
    pub stream_id: u64,
    pub status: u32,
    pub flags: u32,
}

pub fn parse_index(b: &[u8]) -> Result<Index, Error> {
    let mut c = cur(b);
    Ok(Index {
        offset: c.u64()?,
        packet_size: c.u64()?,
        content_size: c.u64()?,
        timestamp_begin: c.u64()?,
        timestamp_end: c.u64()?,
        events_discarded: c.u64()?,
        stream_id: c.u64()?,
        status: c.u32()?,
        flags: c.u32()?,
    })
}

impl Index {
    /// The packet's size in bytes, checked: whole bytes, at least the
    /// content, at most `limits.packet`.
    pub fn packet_bytes(&self, limits: &Limits) -> Result<u32, String> {
        if self.packet_size % 8 != 0 || self.packet_size == 0 {
            return Err(format!("packet size of {} bits", self.packet_size));
        }
        if self.content_size > self.packet_size {
            return Err(format!(
                "content size of {} bits in a packet of {} bits",
                self.content_size, self.packet_size
            ));
        }
        let bytes = self.packet_size / 8;
        if bytes > limits.packet || bytes > u32::MAX as u64 {
            return Err(format!(
                "packet of {bytes} bytes (at most {})",
                limits.packet.min(u32::MAX as u64)
            ));
        }
        Ok(bytes as u32)
    }
}

/// GET_PACKET statuses.
pub const PACKET_OK: u32 = 1;
pub const PACKET_RETRY: u32 = 2;
pub const PACKET_ERR: u32 = 3;
pub const PACKET_EOF: u32 = 4;

/// GET_PACKET's reply: status, length, flags.
pub fn parse_packet_reply(b: &[u8]) -> Result<(u32, u32, u32), Error> {
    let mut c = cur(b);
    Ok((c.u32()?, c.u32()?, c.u32()?))
}

/// GET_METADATA statuses.
pub const METADATA_OK: u32 = 1;
pub const METADATA_NO_NEW: u32 = 2;
pub const METADATA_ERR: u32 = 3;

/// GET_METADATA's reply: length, status.
pub fn parse_metadata_reply(b: &[u8]) -> Result<(u64, u32), Error> {
    let mut c = cur(b);
    Ok((c.u64()?, c.u32()?))
}

/// ATTACH_SESSION statuses.
pub const ATTACH_OK: u32 = 1;
pub const ATTACH_ALREADY: u32 = 2;
pub const ATTACH_UNK: u32 = 3;
pub const ATTACH_NOT_LIVE: u32 = 4;
pub const ATTACH_SEEK_ERR: u32 = 5;
pub const ATTACH_NO_SESSION: u32 = 6;

/// GET_NEW_STREAMS statuses.
pub const NEW_STREAMS_OK: u32 = 1;
pub const NEW_STREAMS_NO_NEW: u32 = 2;
pub const NEW_STREAMS_ERR: u32 = 3;
pub const NEW_STREAMS_HUP: u32 = 4;

/// CREATE_SESSION status.
pub const CREATE_SESSION_OK: u32 = 1;

/// Every reply parser over arbitrary bytes (for the fuzz target): none
/// may panic, and none allocates more than its input and the limits
/// allow.
pub fn parse_any(b: &[u8]) {
    let limits = Limits::default();
    let _ = parse_connect(b);
    let _ = parse_session_24(b);
    if let Ok((_, hl, nl)) = parse_session_215(b, &limits) {
        let names = b.get(SESSION_215_LEN..).unwrap_or(&[]);
        let _ = names.get(..hl as usize);
        let _ = names.get(hl as usize..).and_then(|r| r.get(..nl as usize));
    }
    let _ = parse_status_count(b);
    let _ = parse_stream(b);
    if let Ok(i) = parse_index(b) {
        let _ = i.packet_bytes(&limits);
    }
    let _ = parse_packet_reply(b);
    let _ = parse_metadata_reply(b);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_header_is_big_endian() {
        let r = request(CMD_GET_NEXT_INDEX, &7u64.to_be_bytes());
        assert_eq!(&r[..8], &8u64.to_be_bytes());
        assert_eq!(&r[8..12], &4u32.to_be_bytes());
        assert_eq!(&r[12..16], &[0; 4]);
        assert_eq!(&r[16..], &7u64.to_be_bytes());
    }

    #[test]
    fn truncated_replies_are_errors() {
        let full = [0u8; STREAM_LEN];
        for n in [0, 1, 7, 19, 20, STREAM_LEN - 1] {
            assert!(parse_stream(&full[..n]).is_err(), "{n}");
        }
        assert!(parse_stream(&full).is_ok());
        assert!(parse_index(&[0; INDEX_LEN - 1]).is_err());
        assert!(parse_session_24(&[0; SESSION_24_LEN - 1]).is_err());
        assert!(parse_connect(&[0; 15]).is_err());
    }

    #[test]
    fn packet_sizes_are_bounded() {
        let l = Limits::default();
        let mut i = Index {
            packet_size: 4096 * 8,
            content_size: 100,
            ..Index::default()
        };
        assert_eq!(i.packet_bytes(&l), Ok(4096));
        i.packet_size = u64::MAX - 7;
        assert!(i.packet_bytes(&l).is_err());
        i.packet_size = 12;
        assert!(i.packet_bytes(&l).is_err());
        i.packet_size = 64;
        i.content_size = 65;
        assert!(i.packet_bytes(&l).is_err());
    }

    #[test]
    fn long_names_in_215_entries_are_refused() {
        let mut b = [0u8; SESSION_215_LEN];
        b[20..24].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(parse_session_215(&b, &Limits::default()).is_err());
        b[20..24].copy_from_slice(&3u32.to_be_bytes());
        b[24..28].copy_from_slice(&2u32.to_be_bytes());
        let (_, h, n) = parse_session_215(&b, &Limits::default()).unwrap();
        assert_eq!((h, n), (3, 2));
    }
}
