//! A live session attached through a relayd, as babeltrace2's
//! `src.ctf.lttng-live` follows it: the session list, attaching (at the
//! last position, as babeltrace2 does), the traces (one per `ctf_trace_id`,
//! each with its metadata stream), the data streams, and the order of the
//! commands: metadata before the packets that need it, new streams as soon
//! as the relayd flags them, beacons of quiet streams, hang-ups.
//!
//! Everything the relayd says is bounded ([`super::proto::Limits`]): the
//! streams of a session, the metadata of a trace, each packet; waits are
//! bounded too (a stream that neither sends data nor a beacon for
//! [`SessionOptions::stall`] is an error).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::conn::{LiveError, MetadataReply, Options, PacketReply, Relay};
use super::proto::{self, Stream};
use super::url::LiveUrl;
use crate::text::{LiveItem, LiveTrace, PacketSource, StreamInfo};

/// babeltrace2's `session-not-found-action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NotFound {
    /// End quietly (what `babeltrace2 --input-format=lttng-live` does).
    #[default]
    End,
    /// Keep looking for the session.
    Continue,
    /// An error.
    Fail,
}

/// How a session is followed.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    pub conn: Options,
    pub not_found: NotFound,
    /// Pause between two polls of a relayd that has nothing new
    /// (babeltrace2's retry duration: 100 ms).
    pub retry: Duration,
    /// Longest time a stream may give neither data nor a beacon.
    pub stall: Duration,
    /// `--clock-offset` / `--clock-offset-ns`.
    pub clock_offset: (i64, i64),
    /// Set (by a signal handler) to end cleanly.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Describe each step on stderr.
    pub debug: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            conn: Options::default(),
            not_found: NotFound::End,
            retry: Duration::from_millis(100),
            stall: Duration::from_secs(60),
            clock_offset: (0, 0),
            interrupt: None,
            debug: false,
        }
    }
}

/// One line of babeltrace2's session list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLine {
    pub url: String,
    pub timer_us: u32,
    pub streams: u64,
    pub clients: u32,
}

impl std::fmt::Display for SessionLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} (timer = {}, {} stream(s), {} client(s) connected)",
            self.url, self.timer_us, self.streams, self.clients
        )
    }
}

/// The sessions of a relayd, as `babeltrace2 --input-format=lttng-live
/// net://HOST` lists them: one line per host and session name (the
/// stream counts of sessions with the same names added, the client
/// counts their maximum), in the relayd's order.
pub fn list_sessions(url: &LiveUrl, opts: Options) -> Result<Vec<SessionLine>, LiveError> {
    let mut r = Relay::connect(&url.host, url.port, opts)?;
    let sessions = r.list_sessions()?;
    let mut out: Vec<(String, String, SessionLine)> = Vec::new();
    for s in sessions {
        if let Some(e) = out.iter_mut().find(|e| e.0 == s.hostname && e.1 == s.name) {
            e.2.streams += s.streams as u64;
            e.2.clients = e.2.clients.max(s.clients);
            continue;
        }
        let line = SessionLine {
            url: format!("{}/host/{}/{}", url.text, s.hostname, s.name),
            timer_us: s.live_timer,
            streams: s.streams as u64,
            clients: s.clients,
        };
        out.push((s.hostname, s.name, line));
    }
    Ok(out.into_iter().map(|e| e.2).collect())
}

struct TraceState {
    ctf_trace_id: u64,
    /// The relayd's path of its metadata stream.
    path: String,
    metadata_stream: Option<u64>,
    bytes: Vec<u8>,
    /// Bytes parsed last time (parse again only when more arrived).
    parsed_len: usize,
    need: bool,
    closed: bool,
    /// Position in `exposed` once its metadata is known.
    exposed: Option<usize>,
    /// Since when its metadata could not be parsed.
    failing: Option<Instant>,
}

struct StreamState {
    viewer_id: u64,
    trace: usize,
    exposed: bool,
    last_beacon: Option<u64>,
    hup: bool,
}

/// A live session being followed.
pub struct LiveSession {
    relay: Relay,
    target: (String, String),
    opts: SessionOptions,
    /// The relayd sessions attached (several may have the same names) and
    /// whether each is closed.
    sessions: Vec<(u64, bool)>,
    traces: Vec<TraceState>,
    exposed: Vec<Arc<LiveTrace>>,
    streams: Vec<StreamState>,
    /// Exposed streams: their infos, and positions in `streams`.
    infos: Vec<StreamInfo>,
    order: Vec<usize>,
    new_streams_needed: bool,
    error: Option<LiveError>,
    interrupted: bool,
}

impl LiveSession {
    /// Connect, create a viewer session, find the session that `url`
    /// names and attach to it (from its last position, as babeltrace2).
    pub fn open(url: &LiveUrl, opts: SessionOptions) -> Result<LiveSession, LiveError> {
        let target = url.target.clone().ok_or_else(|| {
            LiveError::Url(format!(
                "`{}` names no session (net://HOST[:PORT]/host/HOSTNAME/SESSION)",
                url.text
            ))
        })?;
        let relay = Relay::connect(&url.host, url.port, opts.conn)?;
        let mut s = LiveSession {
            relay,
            target,
            opts,
            sessions: Vec::new(),
            traces: Vec::new(),
            exposed: Vec::new(),
            streams: Vec::new(),
            infos: Vec::new(),
            order: Vec::new(),
            new_streams_needed: false,
            error: None,
            interrupted: false,
        };
        s.find_and_attach()?;
        if s.sessions.is_empty() && s.opts.not_found == NotFound::Fail {
            return Err(LiveError::Protocol {
                relay: s.relay.name.clone(),
                command: "LIST_SESSIONS",
                message: format!(
                    "no session `{}` of host `{}` (--session-not-found=fail)",
                    s.target.1, s.target.0
                ),
            });
        }
        s.expose()?;
        Ok(s)
    }

    /// The protocol version agreed with the relayd.
    pub fn version(&self) -> (u32, u32) {
        (self.relay.major, self.relay.minor)
    }

    /// CREATE_SESSION, LIST_SESSIONS, and ATTACH_SESSION of each match.
    fn find_and_attach(&mut self) -> Result<(), LiveError> {
        self.relay.create_viewer_session()?;
        let list = self.relay.list_sessions()?;
        self.debug(|| format!("{} sessions listed", list.len()));
        for s in list {
            self.debug(|| format!("session {} {}/{}", s.id, s.hostname, s.name));
            if s.hostname != self.target.0 || s.name != self.target.1 {
                continue;
            }
            let cmd = proto::CMD_ATTACH_SESSION;
            let (st, streams) = self.relay.attach(s.id, proto::SEEK_LAST)?;
            let why = match st {
                proto::ATTACH_OK => None,
                proto::ATTACH_ALREADY => {
                    Some("there is already a viewer attached to this session".to_string())
                }
                proto::ATTACH_UNK => Some(format!("session ID {} is unknown", s.id)),
                proto::ATTACH_NOT_LIVE => Some("not a live session".to_string()),
                proto::ATTACH_SEEK_ERR => Some("wrong seek parameter".to_string()),
                proto::ATTACH_NO_SESSION => Some("no viewer session".to_string()),
                other => Some(format!("unknown attach status {other}")),
            };
            if let Some(m) = why {
                return Err(self.relay.error(cmd, m));
            }
            self.debug(|| format!("attached to session {}: {} streams", s.id, streams.len()));
            self.sessions.push((s.id, false));
            self.add_streams(streams)?;
        }
        Ok(())
    }

    fn add_streams(&mut self, streams: Vec<Stream>) -> Result<(), LiveError> {
        let limit = self.opts.conn.limits.streams as usize;
        for st in streams {
            if self.streams.len() + self.traces.len() >= limit {
                return Err(self.relay.error(
                    proto::CMD_GET_NEW_STREAMS,
                    format!("more than {limit} streams in the session"),
                ));
            }
            let ti = match self
                .traces
                .iter()
                .position(|t| t.ctf_trace_id == st.ctf_trace_id)
            {
                Some(i) => i,
                None => {
                    self.traces.push(TraceState {
                        ctf_trace_id: st.ctf_trace_id,
                        path: String::new(),
                        metadata_stream: None,
                        bytes: Vec::new(),
                        parsed_len: 0,
                        need: true,
                        closed: false,
                        exposed: None,
                        failing: None,
                    });
                    self.traces.len() - 1
                }
            };
            if st.metadata {
                self.traces[ti].metadata_stream = Some(st.id);
                self.traces[ti].path = st.path.clone();
                self.traces[ti].need = true;
            } else {
                self.streams.push(StreamState {
                    viewer_id: st.id,
                    trace: ti,
                    exposed: false,
                    last_beacon: None,
                    hup: false,
                });
            }
        }
        Ok(())
    }

    /// GET_METADATA until there is no more, then parse what grew.
    fn update_metadata(&mut self, ti: usize) -> Result<(), LiveError> {
        let t = &mut self.traces[ti];
        let Some(ms) = t.metadata_stream else {
            // (its metadata stream is announced later)
            self.new_streams_needed = true;
            return Ok(());
        };
        if t.need && !t.closed {
            loop {
                match self.relay.metadata(ms)? {
                    MetadataReply::Data(b) => {
                        self.debug(|| format!("metadata stream {ms}: {} bytes", b.len()));
                        let t = &mut self.traces[ti];
                        let max = self.opts.conn.limits.metadata;
                        if (t.bytes.len() + b.len()) as u64 > max {
                            return Err(self.relay.error(
                                proto::CMD_GET_METADATA,
                                format!("more than {max} bytes of metadata"),
                            ));
                        }
                        t.bytes.extend_from_slice(&b);
                    }
                    MetadataReply::NoNew => break,
                    MetadataReply::Err => {
                        self.traces[ti].closed = true;
                        break;
                    }
                }
            }
            self.traces[ti].need = false;
        }
        let t = &mut self.traces[ti];
        if t.bytes.len() == t.parsed_len || t.bytes.is_empty() {
            return Ok(());
        }
        let name = format!(
            "lttng-relayd at {}: metadata of trace {}",
            self.relay.name, t.ctf_trace_id
        );
        let parsed = crate::fs::parse_metadata_bytes(&t.bytes, std::path::Path::new(&name), false)
            .and_then(|(mut tc, _)| {
                crate::fs::apply_clock_offset(
                    &mut tc,
                    self.opts.clock_offset.0,
                    self.opts.clock_offset.1,
                );
                LiveTrace::new(tc)
            });
        match parsed {
            Ok(lt) => {
                t.parsed_len = t.bytes.len();
                t.failing = None;
                let lt = Arc::new(lt);
                match t.exposed {
                    Some(i) => self.exposed[i] = lt,
                    None => {
                        t.exposed = Some(self.exposed.len());
                        self.exposed.push(lt);
                    }
                }
                Ok(())
            }
            Err(e) => {
                // Metadata seen half-written is read again when more
                // arrives; what stays unreadable is an error.
                let since = *t.failing.get_or_insert_with(Instant::now);
                if t.closed || since.elapsed() > self.opts.conn.timeout {
                    return Err(LiveError::Metadata {
                        relay: self.relay.name.clone(),
                        trace: t.ctf_trace_id,
                        source: e,
                    });
                }
                t.need = true;
                Ok(())
            }
        }
    }

    /// Fetch what is needed and expose the streams whose traces are known.
    fn expose(&mut self) -> Result<(), LiveError> {
        if self.new_streams_needed {
            self.new_streams_needed = false;
            for i in 0..self.sessions.len() {
                let (id, closed) = self.sessions[i];
                if closed {
                    continue;
                }
                let (st, streams) = self.relay.new_streams(id)?;
                self.debug(|| {
                    format!(
                        "session {id}: new streams status {st}, {} streams",
                        streams.len()
                    )
                });
                match st {
                    proto::NEW_STREAMS_OK => self.add_streams(streams)?,
                    proto::NEW_STREAMS_NO_NEW => {}
                    proto::NEW_STREAMS_HUP => self.sessions[i].1 = true,
                    proto::NEW_STREAMS_ERR => {
                        return Err(self.relay.error(
                            proto::CMD_GET_NEW_STREAMS,
                            format!("the relayd reported an error for session {id}"),
                        ))
                    }
                    other => {
                        return Err(self.relay.error(
                            proto::CMD_GET_NEW_STREAMS,
                            format!("unknown status {other}"),
                        ))
                    }
                }
            }
        }
        for ti in 0..self.traces.len() {
            let t = &mut self.traces[ti];
            if t.exposed.is_none() {
                // (until its metadata is known, ask each time)
                t.need = true;
            }
            if t.need {
                self.update_metadata(ti)?;
            }
        }
        for (k, st) in self.streams.iter_mut().enumerate() {
            if st.exposed {
                continue;
            }
            let Some(trace) = self.traces[st.trace].exposed else {
                continue;
            };
            st.exposed = true;
            self.infos.push(StreamInfo {
                trace,
                name: format!("stream-{}", st.viewer_id),
                fallback_id: st.viewer_id,
            });
            self.order.push(k);
        }
        Ok(())
    }

    fn debug(&self, f: impl FnOnce() -> String) {
        if self.opts.debug {
            eprintln!("tracemux: live: {}", f());
        }
    }

    fn check_interrupt(&mut self) -> bool {
        if self
            .opts
            .interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
        {
            self.interrupted = true;
        }
        self.interrupted
    }

    fn fail(&mut self, e: LiveError) -> LiveItem {
        if self.error.is_none() {
            self.error = Some(e);
        }
        LiveItem::End
    }

    fn flags(&mut self, ti: usize, flags: u32) {
        if flags & proto::FLAG_NEW_METADATA != 0 {
            self.traces[ti].need = true;
        }
        if flags & proto::FLAG_NEW_STREAM != 0 {
            self.new_streams_needed = true;
        }
    }

    fn next_item(&mut self, k: usize) -> Result<LiveItem, LiveError> {
        let started = Instant::now();
        loop {
            if self.check_interrupt() {
                return Ok(LiveItem::End);
            }
            self.expose()?;
            let st = &self.streams[k];
            if st.hup {
                return Ok(LiveItem::End);
            }
            let (id, ti) = (st.viewer_id, st.trace);
            let idx = self.relay.next_index(id)?;
            self.debug(|| format!("stream {id}: index {idx:?}"));
            self.flags(ti, idx.flags);
            match idx.status {
                proto::INDEX_OK => {
                    let cmd = proto::CMD_GET_NEXT_INDEX;
                    let len = idx
                        .packet_bytes(&self.opts.conn.limits)
                        .map_err(|m| self.relay.error(cmd, format!("stream {id}: {m}")))?;
                    for _ in 0..1000 {
                        self.expose()?;
                        match self.relay.packet(id, idx.offset, len)? {
                            PacketReply::Data(bytes) => {
                                let Some(x) = self.traces[ti].exposed else {
                                    return Err(self.relay.error(
                                        proto::CMD_GET_PACKET,
                                        format!("stream {id}: data before its metadata"),
                                    ));
                                };
                                return Ok(LiveItem::Packet {
                                    bytes,
                                    trace: self.exposed[x].clone(),
                                });
                            }
                            PacketReply::Retry => std::thread::sleep(self.opts.retry),
                            PacketReply::Err { flags }
                                if flags & (proto::FLAG_NEW_METADATA | proto::FLAG_NEW_STREAM)
                                    != 0 =>
                            {
                                self.flags(ti, flags)
                            }
                            PacketReply::Err { .. } => {
                                return Err(self.relay.error(
                                    proto::CMD_GET_PACKET,
                                    format!("the relayd reported an error for stream {id}"),
                                ))
                            }
                            PacketReply::Eof => {
                                self.streams[k].hup = true;
                                return Ok(LiveItem::End);
                            }
                        }
                        if self.check_interrupt() {
                            return Ok(LiveItem::End);
                        }
                    }
                    return Err(self.relay.error(
                        proto::CMD_GET_PACKET,
                        format!("stream {id}: the packet never came"),
                    ));
                }
                proto::INDEX_INACTIVE => {
                    let ts = idx.timestamp_end;
                    if self.streams[k].last_beacon != Some(ts) {
                        self.streams[k].last_beacon = Some(ts);
                        return Ok(LiveItem::Inactive(ts));
                    }
                    // (the same beacon: nothing new yet)
                    std::thread::sleep(self.opts.retry);
                }
                proto::INDEX_RETRY => {
                    if started.elapsed() > self.opts.stall {
                        return Err(self.relay.error(
                            proto::CMD_GET_NEXT_INDEX,
                            format!(
                                "stream {id}: neither data nor a beacon for {:?}",
                                self.opts.stall
                            ),
                        ));
                    }
                    std::thread::sleep(self.opts.retry);
                }
                proto::INDEX_HUP | proto::INDEX_EOF => {
                    self.streams[k].hup = true;
                    return Ok(LiveItem::End);
                }
                proto::INDEX_ERR => {
                    return Err(self.relay.error(
                        proto::CMD_GET_NEXT_INDEX,
                        format!("the relayd reported an error for stream {id}"),
                    ))
                }
                other => {
                    return Err(self
                        .relay
                        .error(proto::CMD_GET_NEXT_INDEX, format!("unknown status {other}")))
                }
            }
        }
    }

    fn wait_streams(&mut self) -> Result<bool, LiveError> {
        loop {
            if self.check_interrupt() {
                return Ok(false);
            }
            if self.sessions.is_empty() {
                if self.opts.not_found != NotFound::Continue {
                    return Ok(false);
                }
                self.find_and_attach()?;
            }
            let before = self.infos.len();
            self.new_streams_needed = true;
            self.expose()?;
            if self.infos.len() > before {
                return Ok(true);
            }
            if !self.sessions.is_empty() && self.sessions.iter().all(|s| s.1) {
                return Ok(false);
            }
            std::thread::sleep(self.opts.retry);
        }
    }

    /// The metadata received so far of trace `t` (as in
    /// [`PacketSource::traces`]).
    pub fn metadata_bytes(&self, t: usize) -> &[u8] {
        self.traces
            .iter()
            .find(|x| x.exposed == Some(t))
            .map_or(&[][..], |x| &x.bytes[..x.parsed_len])
    }

    /// Detach from the sessions (best effort).
    pub fn detach(&mut self) {
        for i in 0..self.sessions.len() {
            let id = self.sessions[i].0;
            let _ = self.relay.detach(id);
        }
    }
}

impl PacketSource for LiveSession {
    fn traces(&self) -> &[Arc<LiveTrace>] {
        &self.exposed
    }

    fn streams(&self) -> &[StreamInfo] {
        &self.infos
    }

    fn next(&mut self, s: usize) -> LiveItem {
        if self.error.is_some() {
            return LiveItem::End;
        }
        let Some(&k) = self.order.get(s) else {
            return LiveItem::End;
        };
        match self.next_item(k) {
            Ok(i) => i,
            Err(e) => self.fail(e),
        }
    }

    fn wait(&mut self) -> bool {
        if self.error.is_some() {
            return false;
        }
        match self.wait_streams() {
            Ok(b) => b,
            Err(e) => {
                self.fail(e);
                false
            }
        }
    }

    fn take_error(&mut self) -> Option<Box<dyn std::error::Error + Send + Sync>> {
        self.error
            .take()
            .map(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)
    }

    fn interrupted(&self) -> bool {
        self.interrupted
    }

    /// The relayd's path of trace `t`.
    fn trace_path(&self, t: usize) -> &str {
        self.traces
            .iter()
            .find(|x| x.exposed == Some(t))
            .map_or("", |x| x.path.as_str())
    }
}
