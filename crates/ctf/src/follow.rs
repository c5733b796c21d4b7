//! `--follow`: a CTF trace directory still being written (a relayd's or a
//! local session's output), printed as it grows.
//!
//! A [`PacketSource`] over the files: a stream's next packet is handed out
//! once all its bytes are in the file (its size comes from its header);
//! until then the stream is quiet up to the end time of its last packet
//! (nothing a writer appends to a stream can be older), which lets the
//! muxer print the other streams. Metadata that does not parse yet (seen
//! half-written) is read again when it grows, never an error; new trace
//! directories and stream files are picked up as they appear. The source
//! ends when nothing has grown for [`FollowOptions::idle`], or on Ctrl-C.
//!
//! Not handled (yet): LTTng tracefile rotation (`ch_N_M` files of one
//! stream are followed as separate streams), traces of several
//! directories with one UUID, and files rewritten in place (snapshots).

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::fs::{discover, normalize_path, parse_metadata_bytes};
use crate::text::{LiveItem, LiveTrace, PacketSource, StreamInfo};

/// How a directory is followed.
#[derive(Debug, Clone)]
pub struct FollowOptions {
    /// Pause between two looks at files that did not grow.
    pub retry: Duration,
    /// End when nothing grew for this long (`None`: until interrupted).
    pub idle: Option<Duration>,
    pub interrupt: Option<Arc<AtomicBool>>,
    /// `--clock-offset` / `--clock-offset-ns`.
    pub clock_offset: (i64, i64),
    /// Largest packet accepted (a bigger size in a header is damage).
    pub max_packet: u64,
}

impl Default for FollowOptions {
    fn default() -> Self {
        FollowOptions {
            retry: Duration::from_millis(100),
            idle: None,
            interrupt: None,
            clock_offset: (0, 0),
            max_packet: 256 << 20,
        }
    }
}

/// Why following stopped short.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Trace(#[from] tracemux_core::Error),
}

struct FTrace {
    dir: PathBuf,
    rel: String,
    meta_len: u64,
    exposed: Option<usize>,
    /// The metadata's last parse error (kept while it does not parse).
    failing: Option<tracemux_core::Error>,
    files: usize,
}

struct FStream {
    path: PathBuf,
    trace: usize,
    offset: u64,
    last_end: Option<u64>,
    reported: Option<u64>,
}

/// A trace directory being followed.
pub struct FollowDir {
    input: PathBuf,
    opts: FollowOptions,
    traces: Vec<FTrace>,
    exposed: Vec<Arc<LiveTrace>>,
    streams: Vec<FStream>,
    infos: Vec<StreamInfo>,
    last_growth: Instant,
    last_scan: Option<Instant>,
    error: Option<FollowError>,
    interrupted: bool,
}

impl FollowDir {
    /// Follow the traces under `input` (a directory).
    pub fn new(input: &Path, opts: FollowOptions) -> Result<FollowDir, FollowError> {
        let mut f = FollowDir {
            input: input.to_path_buf(),
            opts,
            traces: Vec::new(),
            exposed: Vec::new(),
            streams: Vec::new(),
            infos: Vec::new(),
            last_growth: Instant::now(),
            last_scan: None,
            error: None,
            interrupted: false,
        };
        f.scan()?;
        Ok(f)
    }

    fn idle(&self) -> bool {
        self.opts
            .idle
            .is_some_and(|d| self.last_growth.elapsed() >= d)
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

    /// Look for new traces, metadata and stream files (at most once per
    /// retry interval).
    fn scan(&mut self) -> Result<(), FollowError> {
        if self
            .last_scan
            .is_some_and(|t| t.elapsed() < self.opts.retry)
        {
            return Ok(());
        }
        self.last_scan = Some(Instant::now());
        let found = discover(std::slice::from_ref(&self.input))?;
        for f in found {
            if !self.traces.iter().any(|t| t.dir == f.dir) {
                self.traces.push(FTrace {
                    dir: f.dir,
                    rel: f.rel,
                    meta_len: 0,
                    exposed: None,
                    failing: None,
                    files: 0,
                });
                self.last_growth = Instant::now();
            }
        }
        for ti in 0..self.traces.len() {
            self.metadata(ti)?;
            if self.traces[ti].exposed.is_some() {
                self.stream_files(ti)?;
            }
        }
        Ok(())
    }

    fn metadata(&mut self, ti: usize) -> Result<(), FollowError> {
        let path = self.traces[ti].dir.join("metadata");
        let io = |source| FollowError::Io {
            path: path.clone(),
            source,
        };
        let len = std::fs::metadata(&path).map_err(io)?.len();
        let t = &mut self.traces[ti];
        if len == t.meta_len {
            return Ok(());
        }
        self.last_growth = Instant::now();
        let bytes = std::fs::read(&path).map_err(io)?;
        t.meta_len = bytes.len() as u64;
        let parsed = parse_metadata_bytes(&bytes, &path, false).and_then(|(mut tc, _)| {
            crate::fs::apply_clock_offset(
                &mut tc,
                self.opts.clock_offset.0,
                self.opts.clock_offset.1,
            );
            LiveTrace::new(tc)
        });
        match parsed {
            Ok(mut lt) => {
                t.failing = None;
                let host = match lt.tc.env("hostname") {
                    Some(crate::ir::EnvValue::Str(h)) => h.clone(),
                    _ => String::new(),
                };
                lt.name = Some(match (host.is_empty(), t.rel.is_empty()) {
                    (false, false) => format!("{host}/{}", t.rel),
                    (false, true) => host,
                    (true, _) => t.rel.clone(),
                });
                let lt = Arc::new(lt);
                match t.exposed {
                    Some(i) => self.exposed[i] = lt,
                    None => {
                        t.exposed = Some(self.exposed.len());
                        self.exposed.push(lt);
                    }
                }
            }
            // (half-written: read again when it grows)
            Err(e) => t.failing = Some(e),
        }
        Ok(())
    }

    fn stream_files(&mut self, ti: usize) -> Result<(), FollowError> {
        let dir = self.traces[ti].dir.clone();
        let rd = std::fs::read_dir(&dir).map_err(|source| FollowError::Io {
            path: dir.clone(),
            source,
        })?;
        let mut names: Vec<String> = rd
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "metadata" && !n.starts_with('.'))
            .collect();
        names.sort();
        let Some(trace) = self.traces[ti].exposed else {
            return Ok(());
        };
        for n in names {
            let path = dir.join(&n);
            if self.streams.iter().any(|s| s.path == path) {
                continue;
            }
            let t = &mut self.traces[ti];
            self.infos.push(StreamInfo {
                trace,
                name: normalize_path(&path).to_string_lossy().into_owned(),
                fallback_id: t.files as u64,
            });
            t.files += 1;
            self.streams.push(FStream {
                path,
                trace: ti,
                offset: 0,
                last_end: None,
                reported: None,
            });
            self.last_growth = Instant::now();
        }
        Ok(())
    }

    /// The next whole packet of stream `k`, if it is in the file.
    fn packet(&mut self, k: usize) -> Result<Option<LiveItem>, FollowError> {
        let st = &self.streams[k];
        let Some(x) = self.traces[st.trace].exposed else {
            return Ok(None);
        };
        let lt = self.exposed[x].clone();
        let io = |source| FollowError::Io {
            path: st.path.clone(),
            source,
        };
        let mut f = std::fs::File::open(&st.path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        if len <= st.offset {
            return Ok(None);
        }
        f.seek(SeekFrom::Start(st.offset)).map_err(io)?;
        let mut head = vec![0u8; (len - st.offset).min(64 << 10) as usize];
        f.read_exact(&mut head).map_err(io)?;
        let (entries, _) = crate::stream::index_file(&lt.prog, lt.tc.uuid, 0, &head);
        let Some(e) = entries.first() else {
            // (the header itself is not whole yet, or the bytes are damaged:
            // handed over whole once the file holds a full maximum packet)
            if len - st.offset > self.opts.max_packet {
                return Err(FollowError::Trace(tracemux_core::Error::invalid(
                    format!(
                        "{}: no packet header at offset {:#x}",
                        st.path.display(),
                        st.offset
                    ),
                    "stream",
                    st.offset,
                )));
            }
            return Ok(None);
        };
        let size = e.total_bytes;
        let want = if e.truncated {
            // the whole packet's size, from its header
            e.info.total_bits.map(|b| b / 8).unwrap_or(size)
        } else {
            size
        };
        if want == 0 || want > self.opts.max_packet || len - st.offset < want {
            return Ok(None);
        }
        let mut bytes = vec![0u8; want as usize];
        f.seek(SeekFrom::Start(st.offset)).map_err(io)?;
        f.read_exact(&mut bytes).map_err(io)?;
        let end = e.info.end_clock;
        let st = &mut self.streams[k];
        st.offset += want;
        st.last_end = end.or(st.last_end);
        self.last_growth = Instant::now();
        Ok(Some(LiveItem::Packet { bytes, trace: lt }))
    }

    fn next_item(&mut self, k: usize) -> Result<LiveItem, FollowError> {
        loop {
            if self.check_interrupt() {
                return Ok(LiveItem::End);
            }
            self.scan()?;
            if let Some(p) = self.packet(k)? {
                return Ok(p);
            }
            if self.idle() {
                return Ok(LiveItem::End);
            }
            let st = &mut self.streams[k];
            if let Some(e) = st.last_end {
                if st.reported != Some(e) {
                    st.reported = Some(e);
                    return Ok(LiveItem::Inactive(e));
                }
            }
            std::thread::sleep(self.opts.retry);
        }
    }

    fn wait_streams(&mut self) -> Result<bool, FollowError> {
        let before = self.infos.len();
        loop {
            if self.check_interrupt() || self.idle() {
                // metadata that never parsed is an error at the end
                if let Some(t) = self.traces.iter_mut().find(|t| t.exposed.is_none()) {
                    if let Some(e) = t.failing.take() {
                        return Err(FollowError::Trace(e));
                    }
                }
                return Ok(false);
            }
            self.scan()?;
            if self.infos.len() > before {
                return Ok(true);
            }
            std::thread::sleep(self.opts.retry);
        }
    }
}

impl PacketSource for FollowDir {
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
        match self.next_item(s) {
            Ok(i) => i,
            Err(e) => {
                self.error = Some(e);
                LiveItem::End
            }
        }
    }

    fn wait(&mut self) -> bool {
        if self.error.is_some() {
            return false;
        }
        match self.wait_streams() {
            Ok(b) => b,
            Err(e) => {
                self.error = Some(e);
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
}
