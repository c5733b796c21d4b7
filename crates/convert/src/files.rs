//! The output's files: written under a temporary name beside it and
//! renamed into place when complete; devices and pipes written as they are.

use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Whether `p` is a device, a pipe or a socket (not a file or a directory).
pub(crate) fn is_special(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(p).is_ok_and(|m| {
            let t = m.file_type();
            t.is_char_device() || t.is_block_device() || t.is_fifo() || t.is_socket()
        })
    }
    #[cfg(not(unix))]
    {
        let _ = p;
        false
    }
}

/// `OUT` -> `.OUT.tracemux-tmp` beside it.
pub(crate) fn temp_name(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    out.with_file_name(format!(".{name}.tracemux-tmp"))
}

/// The error of an output that exists (without `force`).
pub(crate) fn exists(output: &Path) -> Error {
    Error::Refused(format!(
        "{}: the output exists (use --force to replace it)",
        output.display()
    ))
}

/// The finished `tmp` renamed to `output`, replacing it.
pub(crate) fn into_place(tmp: &Path, output: &Path) -> Result<()> {
    if output.exists() {
        remove(output);
    }
    std::fs::rename(tmp, output).map_err(|e| Error::file(output, "rename into place", e))
}

/// `path` created, with a large write buffer.
pub(crate) fn create(path: &Path) -> Result<std::io::BufWriter<std::fs::File>> {
    let f = std::fs::File::create(path).map_err(|e| Error::file(path, "create", e))?;
    Ok(std::io::BufWriter::with_capacity(1 << 20, f))
}

/// The buffer of `w` written out, and its file synced.
pub(crate) fn close(w: std::io::BufWriter<std::fs::File>) -> Result<()> {
    w.into_inner().map_err(|e| e.into_error())?.sync_all().ok();
    Ok(())
}

pub(crate) fn remove(p: &Path) {
    if is_special(p) {
        return;
    }
    if p.is_dir() {
        let _ = std::fs::remove_dir_all(p);
    } else {
        let _ = std::fs::remove_file(p);
    }
}
