//! One command connection to lttng-relayd's viewer port: requests, and
//! replies read in full before they are decoded, each within a deadline.
//!
//! A relayd is a peer on the network, so everything it says is checked
//! before use (see [`super::proto::Limits`]): no buffer is sized from a
//! length it sent before the length is bounded, and every reply must come
//! whole within [`Options::timeout`] (a stalled or trickling relayd is an
//! error naming the relayd and the command, never a hang).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::proto::{self, Index, Limits, Session, Stream};

/// What a connection allows and waits for.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Longest wait for a whole reply (and for the connection).
    pub timeout: Duration,
    pub limits: Limits,
    /// Highest protocol minor version offered (the relayd may pick lower).
    pub minor: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(15),
            limits: Limits::default(),
            minor: proto::MINOR,
        }
    }
}

/// An error of the live protocol: which relayd, which command, what.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The socket failed, closed or timed out.
    #[error("lttng-relayd at {relay}: {command}: {source}")]
    Io {
        relay: String,
        command: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A reply that cannot be decoded.
    #[error("lttng-relayd at {relay}: {command}: {source}")]
    Reply {
        relay: String,
        command: &'static str,
        #[source]
        source: tracemux_core::Error,
    },
    /// A reply that says something this client cannot accept.
    #[error("lttng-relayd at {relay}: {command}: {message}")]
    Protocol {
        relay: String,
        command: &'static str,
        message: String,
    },
    /// A `net://` URL that is not one.
    #[error("{0}")]
    Url(String),
    /// Metadata the relayd sent that cannot be read.
    #[error("lttng-relayd at {relay}: metadata of trace {trace}: {source}")]
    Metadata {
        relay: String,
        trace: u64,
        #[source]
        source: tracemux_core::Error,
    },
    /// Interrupted (Ctrl-C): a clean end.
    #[error("interrupted")]
    Interrupted,
}

/// The reply to GET_PACKET.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PacketReply {
    Data(Vec<u8>),
    Retry,
    /// An error; with flags the relayd wants new metadata or streams first.
    Err {
        flags: u32,
    },
    Eof,
}

/// The reply to GET_METADATA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataReply {
    Data(Vec<u8>),
    NoNew,
    /// The relayd knows no such metadata stream (gone: a per-PID
    /// application that exited).
    Err,
}

/// A command connection.
pub struct Relay {
    sock: TcpStream,
    /// `HOST:PORT`, for errors.
    pub name: String,
    pub opts: Options,
    /// The protocol version in use.
    pub major: u32,
    pub minor: u32,
    pub viewer_session_id: u64,
}

impl Relay {
    /// Connect to `host:port` and agree on a protocol version.
    pub fn connect(host: &str, port: u16, opts: Options) -> Result<Relay, LiveError> {
        let name = format!("{host}:{port}");
        let io = |source| LiveError::Io {
            relay: name.clone(),
            command: "connect",
            source,
        };
        let addrs: Vec<_> = (host, port).to_socket_addrs().map_err(io)?.collect();
        let mut last = None;
        let mut sock = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, opts.timeout) {
                Ok(s) => {
                    sock = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let sock = match sock {
            Some(s) => s,
            None => {
                return Err(io(last.unwrap_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::NotFound, "no address")
                })))
            }
        };
        let _ = sock.set_nodelay(true);
        let mut r = Relay {
            sock,
            name,
            opts,
            major: proto::MAJOR,
            minor: opts.minor,
            viewer_session_id: 0,
        };
        r.handshake()?;
        Ok(r)
    }

    fn protocol(&self, cmd: u32, message: impl Into<String>) -> LiveError {
        LiveError::Protocol {
            relay: self.name.clone(),
            command: proto::command_name(cmd),
            message: message.into(),
        }
    }

    fn reply_err(&self, cmd: u32, source: tracemux_core::Error) -> LiveError {
        LiveError::Reply {
            relay: self.name.clone(),
            command: proto::command_name(cmd),
            source,
        }
    }

    fn send(&mut self, cmd: u32, payload: &[u8]) -> Result<(), LiveError> {
        let req = proto::request(cmd, payload);
        let _ = self.sock.set_write_timeout(Some(self.opts.timeout));
        self.sock.write_all(&req).map_err(|source| LiveError::Io {
            relay: self.name.clone(),
            command: proto::command_name(cmd),
            source,
        })
    }

    /// Read exactly `buf.len()` bytes of the reply to `cmd` before the
    /// deadline.
    fn recv_into(&mut self, cmd: u32, buf: &mut [u8], deadline: Instant) -> Result<(), LiveError> {
        let mut got = 0;
        while got < buf.len() {
            let now = Instant::now();
            let io = |source| LiveError::Io {
                relay: self.name.clone(),
                command: proto::command_name(cmd),
                source,
            };
            if now >= deadline {
                return Err(io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "no complete reply within {:?} ({got} of {} bytes)",
                        self.opts.timeout,
                        buf.len()
                    ),
                )));
            }
            let _ = self.sock.set_read_timeout(Some(deadline - now));
            match self.sock.read(&mut buf[got..]) {
                Ok(0) => {
                    return Err(io(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!(
                            "connection closed by the relayd ({got} of {} bytes of the reply)",
                            buf.len()
                        ),
                    )))
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => return Err(io(e)),
            }
        }
        Ok(())
    }

    fn recv<const N: usize>(&mut self, cmd: u32, deadline: Instant) -> Result<[u8; N], LiveError> {
        let mut b = [0u8; N];
        self.recv_into(cmd, &mut b, deadline)?;
        Ok(b)
    }

    /// Read `len` bytes (already bounded by the caller), growing the
    /// buffer only as bytes arrive.
    fn recv_vec(&mut self, cmd: u32, len: usize, deadline: Instant) -> Result<Vec<u8>, LiveError> {
        let mut v = Vec::with_capacity(len.min(1 << 20));
        let mut chunk = [0u8; 64 << 10];
        while v.len() < len {
            let n = (len - v.len()).min(chunk.len());
            self.recv_into(cmd, &mut chunk[..n], deadline)?;
            v.extend_from_slice(&chunk[..n]);
        }
        Ok(v)
    }

    fn deadline(&self) -> Instant {
        Instant::now() + self.opts.timeout
    }

    fn handshake(&mut self) -> Result<(), LiveError> {
        let cmd = proto::CMD_CONNECT;
        self.send(cmd, &proto::connect_payload(proto::MAJOR, self.opts.minor))?;
        let d = self.deadline();
        let b: [u8; proto::CONNECT_LEN] = self.recv(cmd, d)?;
        let c = proto::parse_connect(&b).map_err(|e| self.reply_err(cmd, e))?;
        if c.major != proto::MAJOR {
            return Err(self.protocol(
                cmd,
                format!(
                    "incompatible protocol version {}.{} (this client speaks {}.{})",
                    c.major,
                    c.minor,
                    proto::MAJOR,
                    self.opts.minor
                ),
            ));
        }
        if c.minor < 4 {
            return Err(self.protocol(
                cmd,
                format!("protocol version {}.{} is older than 2.4", c.major, c.minor),
            ));
        }
        self.minor = c.minor.min(self.opts.minor);
        self.viewer_session_id = c.viewer_session_id;
        Ok(())
    }

    /// LIST_SESSIONS.
    pub fn list_sessions(&mut self) -> Result<Vec<Session>, LiveError> {
        let cmd = proto::CMD_LIST_SESSIONS;
        self.send(cmd, &[])?;
        let d = self.deadline();
        let b: [u8; 4] = self.recv(cmd, d)?;
        let n = proto::parse_u32(&b).map_err(|e| self.reply_err(cmd, e))?;
        if n > self.opts.limits.sessions {
            return Err(self.protocol(
                cmd,
                format!(
                    "{n} sessions (at most {} accepted)",
                    self.opts.limits.sessions
                ),
            ));
        }
        let mut out = Vec::with_capacity((n as usize).min(64));
        for _ in 0..n {
            if self.minor >= 15 {
                let b: [u8; proto::SESSION_215_LEN] = self.recv(cmd, d)?;
                let (mut s, hl, nl) = proto::parse_session_215(&b, &self.opts.limits)
                    .map_err(|e| self.reply_err(cmd, e))?;
                let h = self.recv_vec(cmd, hl as usize, d)?;
                let n = self.recv_vec(cmd, nl as usize, d)?;
                s.hostname = String::from_utf8_lossy(&h).into_owned();
                s.name = String::from_utf8_lossy(&n).into_owned();
                out.push(s);
            } else {
                let b: [u8; proto::SESSION_24_LEN] = self.recv(cmd, d)?;
                out.push(proto::parse_session_24(&b).map_err(|e| self.reply_err(cmd, e))?);
            }
        }
        Ok(out)
    }

    /// CREATE_SESSION (a viewer session, needed before attaching).
    pub fn create_viewer_session(&mut self) -> Result<(), LiveError> {
        let cmd = proto::CMD_CREATE_SESSION;
        self.send(cmd, &[])?;
        let d = self.deadline();
        let b: [u8; 4] = self.recv(cmd, d)?;
        let st = proto::parse_u32(&b).map_err(|e| self.reply_err(cmd, e))?;
        if st != proto::CREATE_SESSION_OK {
            return Err(self.protocol(cmd, format!("refused (status {st})")));
        }
        Ok(())
    }

    fn streams(&mut self, cmd: u32, n: u32, d: Instant) -> Result<Vec<Stream>, LiveError> {
        if n > self.opts.limits.streams {
            return Err(self.protocol(
                cmd,
                format!(
                    "{n} streams (at most {} accepted)",
                    self.opts.limits.streams
                ),
            ));
        }
        let mut out = Vec::with_capacity((n as usize).min(64));
        let mut b = vec![0u8; proto::STREAM_LEN];
        for _ in 0..n {
            self.recv_into(cmd, &mut b, d)?;
            out.push(proto::parse_stream(&b).map_err(|e| self.reply_err(cmd, e))?);
        }
        Ok(out)
    }

    /// ATTACH_SESSION: the status and, when attached, the streams.
    pub fn attach(&mut self, session: u64, seek: u32) -> Result<(u32, Vec<Stream>), LiveError> {
        let cmd = proto::CMD_ATTACH_SESSION;
        self.send(cmd, &proto::attach_payload(session, seek))?;
        let d = self.deadline();
        let b: [u8; proto::STATUS_COUNT_LEN] = self.recv(cmd, d)?;
        let (st, n) = proto::parse_status_count(&b).map_err(|e| self.reply_err(cmd, e))?;
        if st != proto::ATTACH_OK {
            return Ok((st, Vec::new()));
        }
        Ok((st, self.streams(cmd, n, d)?))
    }

    /// GET_NEW_STREAMS: the status and the new streams.
    pub fn new_streams(&mut self, session: u64) -> Result<(u32, Vec<Stream>), LiveError> {
        let cmd = proto::CMD_GET_NEW_STREAMS;
        self.send(cmd, &session.to_be_bytes())?;
        let d = self.deadline();
        let b: [u8; proto::STATUS_COUNT_LEN] = self.recv(cmd, d)?;
        let (st, n) = proto::parse_status_count(&b).map_err(|e| self.reply_err(cmd, e))?;
        if st != proto::NEW_STREAMS_OK {
            return Ok((st, Vec::new()));
        }
        Ok((st, self.streams(cmd, n, d)?))
    }

    /// GET_NEXT_INDEX.
    pub fn next_index(&mut self, stream: u64) -> Result<Index, LiveError> {
        let cmd = proto::CMD_GET_NEXT_INDEX;
        self.send(cmd, &stream.to_be_bytes())?;
        let d = self.deadline();
        let b: [u8; proto::INDEX_LEN] = self.recv(cmd, d)?;
        proto::parse_index(&b).map_err(|e| self.reply_err(cmd, e))
    }

    /// GET_PACKET of `len` bytes (bounded by the caller) at `offset`.
    pub fn packet(&mut self, stream: u64, offset: u64, len: u32) -> Result<PacketReply, LiveError> {
        let cmd = proto::CMD_GET_PACKET;
        self.send(cmd, &proto::packet_payload(stream, offset, len))?;
        let d = self.deadline();
        let b: [u8; proto::PACKET_REPLY_LEN] = self.recv(cmd, d)?;
        let (st, n, flags) = proto::parse_packet_reply(&b).map_err(|e| self.reply_err(cmd, e))?;
        match st {
            proto::PACKET_OK => {
                if n != len {
                    return Err(
                        self.protocol(cmd, format!("{n} bytes sent for a packet of {len} bytes"))
                    );
                }
                Ok(PacketReply::Data(self.recv_vec(cmd, n as usize, d)?))
            }
            proto::PACKET_RETRY => Ok(PacketReply::Retry),
            proto::PACKET_ERR => Ok(PacketReply::Err { flags }),
            proto::PACKET_EOF => Ok(PacketReply::Eof),
            s => Err(self.protocol(cmd, format!("unknown status {s}"))),
        }
    }

    /// GET_METADATA of a metadata stream.
    pub fn metadata(&mut self, stream: u64) -> Result<MetadataReply, LiveError> {
        let cmd = proto::CMD_GET_METADATA;
        self.send(cmd, &stream.to_be_bytes())?;
        let d = self.deadline();
        let b: [u8; proto::METADATA_REPLY_LEN] = self.recv(cmd, d)?;
        let (len, st) = proto::parse_metadata_reply(&b).map_err(|e| self.reply_err(cmd, e))?;
        match st {
            proto::METADATA_OK => {
                if len == 0 || len > self.opts.limits.metadata {
                    return Err(self.protocol(
                        cmd,
                        format!(
                            "metadata reply of {len} bytes (1 to {} accepted)",
                            self.opts.limits.metadata
                        ),
                    ));
                }
                Ok(MetadataReply::Data(self.recv_vec(cmd, len as usize, d)?))
            }
            proto::METADATA_NO_NEW => Ok(MetadataReply::NoNew),
            proto::METADATA_ERR => Ok(MetadataReply::Err),
            s => Err(self.protocol(cmd, format!("unknown status {s}"))),
        }
    }

    /// DETACH_SESSION (protocol 2.13 and later).
    pub fn detach(&mut self, session: u64) -> Result<(), LiveError> {
        if self.minor < 13 {
            return Ok(());
        }
        let cmd = proto::CMD_DETACH_SESSION;
        self.send(cmd, &session.to_be_bytes())?;
        let d = self.deadline();
        let _: [u8; proto::STATUS_LEN] = self.recv(cmd, d)?;
        Ok(())
    }

    /// A command error (for callers that judge a status).
    pub fn error(&self, cmd: u32, message: impl Into<String>) -> LiveError {
        self.protocol(cmd, message)
    }
}
