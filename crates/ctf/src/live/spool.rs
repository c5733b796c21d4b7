//! A live session written down as it arrives: each trace's metadata and
//! each data stream's packets into a CTF directory (one directory per
//! trace, one file per stream), until the session ends or is interrupted.
//! `convert net://...` converts that directory once the session is over
//! (the writers need every event class before the first event, and a
//! finished trace is what they take).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::conn::LiveError;
use super::session::LiveSession;
use crate::text::{LiveItem, PacketSource};

/// What was written.
#[derive(Debug, Default, Clone, Copy)]
pub struct Spooled {
    pub traces: usize,
    pub streams: usize,
    pub packets: u64,
    pub bytes: u64,
    pub interrupted: bool,
}

/// Why spooling stopped short.
#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error(transparent)]
    Live(#[from] LiveError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

/// The relayd's path of a trace as a relative path of plain names.
fn relative(p: &str) -> Option<PathBuf> {
    let parts: Vec<&str> = p
        .split('/')
        .filter(|c| !c.is_empty() && *c != "." && *c != ".." && !c.contains('\0'))
        .collect();
    (!parts.is_empty()).then(|| parts.iter().collect())
}

/// Follow `s` to its end, writing what arrives under `dir` (created).
pub fn spool(s: &mut LiveSession, dir: &Path) -> Result<Spooled, SpoolError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SpoolError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut sum = Spooled::default();
    let mut files: Vec<Option<std::fs::File>> = Vec::new();
    let mut done: Vec<bool> = Vec::new();
    let mut meta_len: Vec<usize> = Vec::new();
    let mut names: Vec<PathBuf> = Vec::new();
    loop {
        // metadata first (it grows with the session)
        for t in 0..s.traces().len() {
            if meta_len.len() <= t {
                meta_len.push(0);
            }
            if names.len() <= t {
                let mut n =
                    relative(s.trace_path(t)).unwrap_or_else(|| format!("trace-{t}").into());
                if names.contains(&n) {
                    n = PathBuf::from(format!("{}-{t}", n.display()));
                }
                names.push(n);
            }
            let m = s.metadata_bytes(t);
            if m.len() != meta_len[t] {
                let d = dir.join(&names[t]);
                std::fs::create_dir_all(&d).map_err(io(&d))?;
                let p = d.join("metadata");
                std::fs::write(&p, m).map_err(io(&p))?;
                meta_len[t] = m.len();
            }
        }
        sum.traces = s.traces().len();
        let n = s.streams().len();
        files.resize_with(n, || None);
        done.resize(n, false);
        sum.streams = n;
        let mut active = false;
        for k in 0..n {
            if done[k] {
                continue;
            }
            active = true;
            match s.next(k) {
                LiveItem::Packet { bytes, .. } => {
                    let info = &s.streams()[k];
                    let Some(t) = names.get(info.trace) else {
                        continue;
                    };
                    let p = dir.join(t).join(&info.name);
                    if files[k].is_none() {
                        if let Some(d) = p.parent() {
                            std::fs::create_dir_all(d).map_err(io(d))?;
                        }
                        files[k] = Some(std::fs::File::create(&p).map_err(io(&p))?);
                    }
                    if let Some(f) = &mut files[k] {
                        f.write_all(&bytes).map_err(io(&p))?;
                    }
                    sum.packets += 1;
                    sum.bytes += bytes.len() as u64;
                }
                LiveItem::Inactive(_) => {}
                LiveItem::End => done[k] = true,
            }
            if let Some(e) = s.take_error() {
                return Err(SpoolError::Other(e));
            }
            if s.interrupted() {
                sum.interrupted = true;
                return Ok(sum);
            }
        }
        if !active {
            if s.wait() {
                continue;
            }
            if let Some(e) = s.take_error() {
                return Err(SpoolError::Other(e));
            }
            sum.interrupted = s.interrupted();
            return Ok(sum);
        }
    }
}
