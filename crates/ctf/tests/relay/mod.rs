//! A relayd of our own for the tests: serves a fixture trace directory
//! over lttng-relayd's viewer protocol on 127.0.0.1 (one connection, on a
//! thread), following a script: metadata in pieces, beacons, streams
//! announced late, RETRY replies, and hostile replies (huge counts and
//! sizes, truncated replies, stalls, a wrong version). Built from the
//! protocol's facts (lttng-tools' viewer ABI), not from lttng-tools' code.
#![allow(dead_code)] // (each test crate that includes it uses a part)

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::Duration;

use tracemux_ctf::fs::{discover, open_traces, ReadLoader};

/// A stream of the fixture: its file's bytes and packets.
struct StreamSrc {
    bytes: Vec<u8>,
    /// (offset, bytes, content bits, begin, end, stream class ID, discarded)
    packets: Vec<(u64, u64, u64, u64, u64, u64, u64)>,
}

struct TraceSrc {
    /// Its directory, relative to the fixture's.
    rel: String,
    metadata: Vec<u8>,
    streams: Vec<StreamSrc>,
}

/// What the relayd does wrong, on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hostile {
    /// LIST_SESSIONS claims u32::MAX sessions.
    HugeSessions,
    /// ATTACH_SESSION claims 2^30 streams.
    HugeStreams,
    /// GET_NEXT_INDEX gives a packet of 2^61 bytes.
    HugePacket,
    /// GET_METADATA claims 2^40 bytes.
    HugeMetadata,
    /// A 2.15 session entry with a 4 GiB host name.
    LongName,
    /// Half of the reply to this command, then the connection closes.
    Truncate(u32),
    /// No reply to this command (the connection stays open).
    Stall(u32),
    /// CONNECT answers protocol 3.0.
    WrongMajor,
    /// The relayd's packet is not the size asked for.
    ShortPacket,
}

/// How the relayd behaves.
#[derive(Debug, Clone)]
pub struct Script {
    pub minor: u32,
    /// Metadata in this many replies (cut anywhere).
    pub metadata_pieces: usize,
    /// A beacon (INACTIVE) before each packet.
    pub beacons: bool,
    /// Only the first stream of each trace at attach; the others later.
    pub late_streams: bool,
    /// RETRY replies before each stream's first index.
    pub retries: usize,
    /// Pause before each reply.
    pub delay: Option<Duration>,
    pub hostile: Option<Hostile>,
    /// The session never ends: once a stream has sent every packet, it
    /// is quiet (a beacon at its last packet's end) instead of hung up;
    /// the flag is set when every stream is there.
    pub endless: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    pub host: String,
    pub session: String,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            minor: 13,
            metadata_pieces: 1,
            beacons: false,
            late_streams: false,
            retries: 0,
            delay: None,
            hostile: None,
            endless: None,
            host: "testhost".into(),
            session: "s".into(),
        }
    }
}

fn load(dir: &Path) -> Vec<TraceSrc> {
    let found = discover(&[dir.to_path_buf()]).unwrap();
    let traces = open_traces(&found, &[dir.to_path_buf()], &ReadLoader, (0, 0)).unwrap();
    let mut out = Vec::new();
    for (t, f) in traces.iter().zip(&found) {
        let metadata = std::fs::read(t.dirs[0].join("metadata")).unwrap();
        let rel = f.rel.clone();
        let mut streams = Vec::new();
        for g in &t.streams {
            assert_eq!(g.files.len(), 1, "one file per stream in these fixtures");
            let bytes = (*t.files[g.files[0]].1).as_ref().to_vec();
            let packets = g
                .packets
                .iter()
                .map(|p| {
                    (
                        p.offset,
                        p.total_bytes,
                        p.content_bits,
                        p.info.begin_clock.unwrap_or(0),
                        p.info.end_clock.unwrap_or(0),
                        g.class_id,
                        p.info.discarded.unwrap_or(0),
                    )
                })
                .collect();
            streams.push(StreamSrc { bytes, packets });
        }
        out.push(TraceSrc {
            rel,
            metadata,
            streams,
        });
    }
    out
}

/// Start a relayd serving `dir` with `script`; its port.
pub fn serve(dir: &Path, script: Script) -> u16 {
    let traces = load(dir);
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        // (one viewer per test; the listener goes with the thread)
        if let Ok((s, _)) = l.accept() {
            let mut r = Relay::new(traces, script, s);
            let _ = r.run();
        }
    });
    port
}

struct StreamState {
    trace: usize,
    stream: usize,
    announced: bool,
    next: usize,
    beacon_done: bool,
    retries: usize,
    hup: bool,
    /// Every packet sent (an endless session).
    drained: bool,
    quiet_polls: u64,
}

struct Relay {
    traces: Vec<TraceSrc>,
    script: Script,
    sock: TcpStream,
    minor: u32,
    /// Metadata pieces sent per trace.
    meta_sent: Vec<usize>,
    streams: Vec<StreamState>,
}

const META_BASE: u64 = 1000;

impl Relay {
    fn new(traces: Vec<TraceSrc>, script: Script, sock: TcpStream) -> Relay {
        let mut streams = Vec::new();
        for (ti, t) in traces.iter().enumerate() {
            for si in 0..t.streams.len() {
                streams.push(StreamState {
                    trace: ti,
                    stream: si,
                    announced: !(script.late_streams && si > 0),
                    next: 0,
                    beacon_done: false,
                    retries: script.retries,
                    hup: false,
                    drained: false,
                    quiet_polls: 0,
                });
            }
        }
        Relay {
            meta_sent: vec![0; traces.len()],
            traces,
            minor: script.minor,
            script,
            sock,
            streams,
        }
    }

    fn send(&mut self, cmd: u32, b: &[u8]) -> std::io::Result<()> {
        if let Some(d) = self.script.delay {
            std::thread::sleep(d);
        }
        match self.script.hostile {
            Some(Hostile::Truncate(c)) if c == cmd => {
                self.sock.write_all(&b[..b.len() / 2])?;
                let _ = self.sock.shutdown(std::net::Shutdown::Both);
                Err(std::io::ErrorKind::Other.into())
            }
            Some(Hostile::Stall(c)) if c == cmd => {
                std::thread::sleep(Duration::from_secs(30));
                Err(std::io::ErrorKind::Other.into())
            }
            _ => self.sock.write_all(b),
        }
    }

    fn run(&mut self) -> std::io::Result<()> {
        loop {
            let mut h = [0u8; 16];
            self.sock.read_exact(&mut h)?;
            let size = u64::from_be_bytes(h[..8].try_into().unwrap());
            let cmd = u32::from_be_bytes(h[8..12].try_into().unwrap());
            assert!(size <= 64, "request of {size} bytes");
            let mut p = vec![0u8; size as usize];
            self.sock.read_exact(&mut p)?;
            let u64_at = |i: usize| u64::from_be_bytes(p[i..i + 8].try_into().unwrap());
            let reply = match cmd {
                1 => self.connect(&p),
                2 => self.list(),
                3 => self.attach(),
                4 => self.next_index(u64_at(0)),
                5 => self.packet(
                    u64_at(0),
                    u64_at(8),
                    u32::from_be_bytes(p[16..20].try_into().unwrap()),
                ),
                6 => self.metadata(u64_at(0)),
                7 => self.new_streams(),
                8 => 1u32.to_be_bytes().to_vec(),
                9 => 1u32.to_be_bytes().to_vec(),
                _ => return Ok(()),
            };
            self.send(cmd, &reply)?;
        }
    }

    fn connect(&mut self, p: &[u8]) -> Vec<u8> {
        let their = u32::from_be_bytes(p[12..16].try_into().unwrap());
        self.minor = self.script.minor.min(their);
        let mut b = Vec::new();
        b.extend_from_slice(&7u64.to_be_bytes());
        let major: u32 = if self.script.hostile == Some(Hostile::WrongMajor) {
            3
        } else {
            2
        };
        b.extend_from_slice(&major.to_be_bytes());
        b.extend_from_slice(&self.script.minor.to_be_bytes());
        b.extend_from_slice(&1u32.to_be_bytes());
        b
    }

    fn list(&mut self) -> Vec<u8> {
        let mut b = Vec::new();
        let n: u32 = if self.script.hostile == Some(Hostile::HugeSessions) {
            u32::MAX
        } else {
            1
        };
        b.extend_from_slice(&n.to_be_bytes());
        b.extend_from_slice(&1u64.to_be_bytes());
        b.extend_from_slice(&200_000u32.to_be_bytes());
        b.extend_from_slice(&0u32.to_be_bytes());
        b.extend_from_slice(&(self.streams.len() as u32).to_be_bytes());
        let (h, s) = (self.script.host.clone(), self.script.session.clone());
        if self.minor >= 15 {
            let hl = if self.script.hostile == Some(Hostile::LongName) {
                u32::MAX
            } else {
                h.len() as u32
            };
            b.extend_from_slice(&hl.to_be_bytes());
            b.extend_from_slice(&(s.len() as u32).to_be_bytes());
            b.extend_from_slice(&0u32.to_be_bytes());
            b.extend_from_slice(h.as_bytes());
            b.extend_from_slice(s.as_bytes());
        } else {
            let mut hb = [0u8; 64];
            hb[..h.len()].copy_from_slice(h.as_bytes());
            let mut sb = [0u8; 255];
            sb[..s.len()].copy_from_slice(s.as_bytes());
            b.extend_from_slice(&hb);
            b.extend_from_slice(&sb);
        }
        b
    }

    fn stream_entry(b: &mut Vec<u8>, id: u64, trace: u64, metadata: bool, rel: &str) {
        b.extend_from_slice(&id.to_be_bytes());
        b.extend_from_slice(&trace.to_be_bytes());
        b.extend_from_slice(&(metadata as u32).to_be_bytes());
        let mut path = vec![0u8; 4096];
        path[..rel.len()].copy_from_slice(rel.as_bytes());
        b.extend_from_slice(&path);
        let mut ch = vec![0u8; 255];
        ch[..3].copy_from_slice(b"ch0");
        b.extend_from_slice(&ch);
    }

    fn entries(&self, which: impl Fn(&StreamState) -> bool, with_meta: bool) -> (u32, Vec<u8>) {
        let mut b = Vec::new();
        let mut n = 0;
        if with_meta {
            for ti in 0..self.traces.len() {
                let rel = &self.traces[ti].rel;
                Self::stream_entry(&mut b, META_BASE + ti as u64, ti as u64, true, rel);
                n += 1;
            }
        }
        for (k, s) in self.streams.iter().enumerate() {
            if which(s) {
                let rel = &self.traces[s.trace].rel;
                Self::stream_entry(&mut b, k as u64, s.trace as u64, false, rel);
                n += 1;
            }
        }
        (n, b)
    }

    fn attach(&mut self) -> Vec<u8> {
        let (mut n, entries) = self.entries(|s| s.announced, true);
        if self.script.hostile == Some(Hostile::HugeStreams) {
            n = 1 << 30;
        }
        let mut b = Vec::new();
        b.extend_from_slice(&1u32.to_be_bytes());
        b.extend_from_slice(&n.to_be_bytes());
        b.extend_from_slice(&entries);
        b
    }

    fn new_streams(&mut self) -> Vec<u8> {
        let (n, entries) = self.entries(|s| !s.announced, false);
        let mut b = Vec::new();
        if n > 0 {
            for s in &mut self.streams {
                s.announced = true;
            }
            b.extend_from_slice(&1u32.to_be_bytes());
            b.extend_from_slice(&n.to_be_bytes());
            b.extend_from_slice(&entries);
        } else if self.streams.iter().all(|s| s.hup) {
            b.extend_from_slice(&4u32.to_be_bytes());
            b.extend_from_slice(&0u32.to_be_bytes());
        } else {
            b.extend_from_slice(&2u32.to_be_bytes());
            b.extend_from_slice(&0u32.to_be_bytes());
        }
        b
    }

    fn metadata(&mut self, id: u64) -> Vec<u8> {
        let ti = (id - META_BASE) as usize;
        let all = &self.traces[ti].metadata;
        let pieces = self.script.metadata_pieces.max(1);
        let k = self.meta_sent[ti];
        let mut b = Vec::new();
        if k >= pieces {
            b.extend_from_slice(&0u64.to_be_bytes());
            b.extend_from_slice(&2u32.to_be_bytes());
            return b;
        }
        // cut points anywhere: piece k of `pieces`, unequal sizes
        let cut = |i: usize| all.len() * i * i / (pieces * pieces);
        let piece = &all[cut(k)..cut(k + 1)];
        self.meta_sent[ti] += 1;
        let len: u64 = if self.script.hostile == Some(Hostile::HugeMetadata) {
            1 << 40
        } else {
            piece.len() as u64
        };
        b.extend_from_slice(&len.to_be_bytes());
        b.extend_from_slice(&1u32.to_be_bytes());
        b.extend_from_slice(piece);
        b
    }

    fn next_index(&mut self, id: u64) -> Vec<u8> {
        let pieces = self.script.metadata_pieces.max(1);
        let late_pending = self.streams.iter().any(|s| !s.announced);
        let s = &mut self.streams[id as usize];
        let t = &self.traces[s.trace];
        let st = &t.streams[s.stream];
        let mut v = [0u64; 7];
        let (status, mut flags): (u32, u32);
        flags = 0u32;
        if s.retries > 0 {
            s.retries -= 1;
            status = 2;
        } else if s.next >= st.packets.len() && self.script.endless.is_some() {
            s.drained = true;
            // quiet up to a time that goes on (as a relayd's live timer)
            s.quiet_polls += 1;
            if let Some(p) = st.packets.last() {
                v[4] = p.4 + s.quiet_polls * 1_000_000_000;
            }
            v[6] = st.packets.last().map_or(0, |p| p.5);
            status = 5;
            if self.streams.iter().all(|s| s.drained) {
                if let Some(f) = &self.script.endless {
                    f.store(true, std::sync::atomic::Ordering::SeqCst);
                }
            }
        } else if s.next >= st.packets.len() {
            s.hup = true;
            status = 3;
        } else if self.script.beacons && !s.beacon_done {
            s.beacon_done = true;
            let p = st.packets[s.next];
            // quiet until the packet's beginning (nothing before it)
            v[4] = p.3;
            v[6] = p.5;
            status = 5;
        } else {
            let p = st.packets[s.next];
            s.next += 1;
            s.beacon_done = false;
            v = [p.0, p.1 * 8, p.2, p.3, p.4, p.6, p.5];
            if self.script.hostile == Some(Hostile::HugePacket) {
                v[1] = !7;
            }
            status = 1;
            if self.meta_sent[s.trace] < pieces {
                flags |= 1;
            }
            if late_pending {
                flags |= 2;
            }
        }
        let mut b = Vec::new();
        for x in v {
            b.extend_from_slice(&x.to_be_bytes());
        }
        b.extend_from_slice(&status.to_be_bytes());
        b.extend_from_slice(&flags.to_be_bytes());
        b
    }

    fn packet(&mut self, id: u64, offset: u64, len: u32) -> Vec<u8> {
        let s = &self.streams[id as usize];
        let bytes = &self.traces[s.trace].streams[s.stream].bytes;
        let end = (offset as usize + len as usize).min(bytes.len());
        let data = &bytes[(offset as usize).min(end)..end];
        let mut b = Vec::new();
        b.extend_from_slice(&1u32.to_be_bytes());
        let n = if self.script.hostile == Some(Hostile::ShortPacket) {
            data.len() as u32 / 2
        } else {
            data.len() as u32
        };
        b.extend_from_slice(&n.to_be_bytes());
        b.extend_from_slice(&0u32.to_be_bytes());
        b.extend_from_slice(&data[..n as usize]);
        b
    }
}
