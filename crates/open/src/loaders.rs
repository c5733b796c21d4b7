//! The format crates read their files through loaders of their own (so
//! that tests and fuzzers can hand them bytes in memory); these load from
//! disk through [`map`], and drop the pages a reader is done with.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::kind::{map, Mapped};

/// CTF stream and metadata files, mapped. The maps are kept by path so
/// that the reader's `release` calls reach them.
#[derive(Default)]
pub struct CtfMapLoader {
    maps: Mutex<HashMap<PathBuf, Arc<Mapped>>>,
}

/// A map shared by the CTF reader and the [`CtfMapLoader`].
struct SharedMap(Arc<Mapped>);

impl AsRef<[u8]> for SharedMap {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl tracemux_ctf::fs::Loader for CtfMapLoader {
    fn load(&self, path: &Path) -> std::io::Result<tracemux_ctf::fs::FileBytes> {
        let m = Arc::new(map(path).map_err(io_error)?);
        if let Ok(mut maps) = self.maps.lock() {
            maps.insert(tracemux_ctf::fs::normalize_path(path), m.clone());
        }
        Ok(Box::new(SharedMap(m)))
    }

    fn release(&self, path: &Path, start: u64, end: u64) {
        let m = self.maps.lock().ok().and_then(|m| m.get(path).cloned());
        if let Some(m) = m {
            m.release(start, end);
        }
    }
}

/// uftrace's data files, mapped; a file's pages are dropped once the
/// reader is past them (flat memory whatever the recording's size).
pub struct UftraceMapLoader;

struct MappedFile(Mapped);

impl AsRef<[u8]> for MappedFile {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl tracemux_uftrace::DataBytes for MappedFile {
    fn release(&self, start: u64, end: u64) {
        self.0.release(start, end);
    }
}

impl tracemux_uftrace::Loader for UftraceMapLoader {
    fn load(&self, path: &Path) -> std::io::Result<tracemux_uftrace::Bytes> {
        Ok(Box::new(MappedFile(map(path).map_err(io_error)?)))
    }
}

/// A uftrace data directory, its data files mapped.
pub fn open_uftrace(
    trace: &Path,
    demangle: tracemux_uftrace::Demangle,
    strict: bool,
) -> Result<tracemux_uftrace::UftraceData> {
    let oo = tracemux_uftrace::OpenOptions { demangle, strict };
    tracemux_uftrace::UftraceData::open_with(trace, oo, &UftraceMapLoader)
        .map_err(|e| Error::trace(trace, e))
}

/// An LTT tracefile, mapped.
pub fn ltt_load(path: &Path) -> std::io::Result<tracemux_ltt::trace::FileBytes> {
    map(path)
        .map(|m| Box::new(m) as tracemux_ltt::trace::FileBytes)
        .map_err(io_error)
}

/// A loader's error as the format crates take it: the system's own error
/// where there is one (its kind kept), the message otherwise.
fn io_error(e: Error) -> std::io::Error {
    match e {
        Error::Io { source, .. } => source,
        e => std::io::Error::other(e.to_string()),
    }
}
