//! Recognising formats by content, and memory-mapping files.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use memmap2::Mmap;
use tracemux_core::model::Format;

/// What a path holds, decided by content (never by name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    TraceDat,
    /// A CTF trace (directory with a `metadata` file, or the metadata file).
    Ctf {
        version: u8,
    },
    Uftrace,
    Ltt,
    /// perf.data, file or pipe mode (`PERFILE2`).
    Perf,
}

impl Kind {
    /// The format in the model's terms.
    pub fn format(&self) -> Format {
        match self {
            Kind::TraceDat => Format::TraceDat,
            Kind::Ctf { .. } => Format::Ctf,
            Kind::Uftrace => Format::Uftrace,
            Kind::Ltt => Format::Ltt,
            Kind::Perf => Format::Perf,
        }
    }

    /// The format's name in messages ([`Format::describe`]; for CTF with
    /// the version: `CTF 1.8`, `CTF 2`).
    pub fn name(&self) -> String {
        let name = self.format().describe(None);
        match self {
            Kind::Ctf { version: 2 } => name + " 2",
            Kind::Ctf { .. } => name + " 1.8",
            _ => name,
        }
    }
}

fn head(path: &Path, n: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut buf = Vec::with_capacity(n);
    File::open(path)?.take(n as u64).read_to_end(&mut buf)?;
    Ok(buf)
}

// Each format's crate recognises its own files: `tracemux_tracedat::sniff`,
// `tracemux_ctf::fs::sniff` (and `metadata_version` for a file named
// `metadata`), `tracemux_uftrace::header::sniff`, `tracemux_perf::sniff`,
// `tracemux_ltt::sniff`.

/// Recognise `path`. Errors say what the path is and why it is not read.
pub fn sniff(path: &Path) -> Result<Kind> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "open", e))?;
    if meta.is_dir() {
        if let Ok(b) = head(&path.join("info"), 8) {
            if tracemux_uftrace::header::sniff(&b) {
                return Ok(Kind::Uftrace);
            }
        }
        if let Ok(b) = head(&path.join("metadata"), 64) {
            if let Some(v) = tracemux_ctf::fs::metadata_version(&b) {
                return Ok(Kind::Ctf { version: v });
            }
        }
        // plain TSDL without the `/* CTF 1.8` line
        if tracemux_ctf::fs::is_ctf(path) {
            return Ok(Kind::Ctf { version: 1 });
        }
        // a CTF trace tree (LTTng session) has metadata files further down
        if find_ctf_below(path, 16).is_some() {
            return Ok(Kind::Ctf { version: 1 });
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| Error::io(path, "list directory", e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        entries.sort();
        for p in entries.iter().take(64) {
            if let Ok(b) = head(p, 512) {
                if tracemux_ltt::sniff(&b) {
                    return Ok(Kind::Ltt);
                }
            }
        }
        return Err(Error::Refused(format!("{}: not a trace directory tracemux recognises (no uftrace 'info', CTF 'metadata' or LTT tracefile)", path.display())));
    }
    let b = head(path, 512).map_err(|e| Error::io(path, "read", e))?;
    if tracemux_tracedat::sniff(&b) {
        return Ok(Kind::TraceDat);
    }
    if let Some(v) = tracemux_ctf::fs::sniff(&b) {
        return Ok(Kind::Ctf { version: v });
    }
    if tracemux_uftrace::header::sniff(&b) {
        return Ok(Kind::Uftrace);
    }
    if tracemux_perf::sniff(&b) {
        return Ok(Kind::Perf);
    }
    if tracemux_ltt::sniff(&b) {
        return Ok(Kind::Ltt);
    }
    if b.is_empty() {
        return Err(Error::Refused(format!("{}: empty file", path.display())));
    }
    Err(Error::Refused(format!(
        "{}: unknown file format (not a trace.dat, CTF, uftrace, LTT or perf.data trace)",
        path.display()
    )))
}

fn find_ctf_below(dir: &Path, depth: u32) -> Option<PathBuf> {
    if depth == 0 {
        return None;
    }
    let rd = std::fs::read_dir(dir).ok()?;
    let mut subdirs = Vec::new();
    for e in rd.flatten().take(4096) {
        let p = e.path();
        if p.is_dir() {
            subdirs.push(p);
        } else if p.file_name().is_some_and(|n| n == "metadata") && tracemux_ctf::fs::is_ctf(&p) {
            return Some(p);
        }
    }
    subdirs
        .into_iter()
        .find_map(|d| find_ctf_below(&d, depth - 1))
}

/// A read-only memory map of a file (or an empty buffer for empty files).
pub enum Mapped {
    Map(Mmap),
    Empty,
}

impl std::ops::Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Mapped::Map(m) => m,
            Mapped::Empty => &[],
        }
    }
}

pub fn map(path: &Path) -> Result<Mapped> {
    let f = File::open(path).map_err(|e| Error::io(path, "open", e))?;
    let len = f.metadata().map_err(|e| Error::io(path, "open", e))?.len();
    if len == 0 {
        return Ok(Mapped::Empty);
    }
    // SAFETY: the map is read-only and lives as long as the data borrowed
    // from it. If another process truncates the file while we read it the
    // process may get SIGBUS; that is the accepted cost of reading
    // multi-gigabyte traces without copying them (as trace-cmd and
    // babeltrace2 do).
    #[allow(unsafe_code)]
    let m = unsafe { Mmap::map(&f) }.map_err(|e| Error::io(path, "map", e))?;
    // streams read forward: ask for readahead (an error here is harmless)
    let _ = m.advise(memmap2::Advice::Sequential);
    Ok(Mapped::Map(m))
}

impl Mapped {
    /// Drop the pages of `[start, end)` from this process's memory: they
    /// are clean pages of a read-only file mapping, so the kernel reloads
    /// them from the page cache if they are touched again. Keeps the
    /// resident set flat when streaming through a large trace.
    pub fn release(&self, start: u64, end: u64) {
        const PAGE: u64 = 4096;
        let Mapped::Map(m) = self else { return };
        let s = start.div_ceil(PAGE) * PAGE;
        let e = (end / PAGE * PAGE).min(m.len() as u64);
        if e <= s {
            return;
        }
        // SAFETY: MADV_DONTNEED on a shared, read-only, file-backed mapping
        // only drops clean pages; later reads fault them back in with the
        // same contents. No Rust reference sees different data.
        #[allow(unsafe_code)]
        let _ = unsafe {
            m.unchecked_advise_range(
                memmap2::UncheckedAdvice::DontNeed,
                s as usize,
                (e - s) as usize,
            )
        };
    }
}

/// A mapped file gives back the pages [`Releaser`] says were read.
impl tracemux_core::text::Release for Mapped {
    fn release(&self, start: u64, end: u64) {
        Mapped::release(self, start, end)
    }
}

pub use tracemux_core::text::Releaser;
