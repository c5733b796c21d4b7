//! CTF to CTF with nothing selected: the packets copied as they are.

use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// What [`copy_traces`] wrote.
#[derive(Debug)]
pub struct CopySummary {
    pub traces: usize,
    pub files: usize,
    pub bytes: u64,
}

/// CTF traces converted to CTF with nothing selected: each
/// trace's data stream files are copied as they are (their packets, so
/// every event and every loss, exactly as recorded) under `out`, at their
/// place relative to the input, with the trace's metadata as it was
/// (`ctf2`: translated to CTF 2 by the crate's metadata writer). `None`
/// when the traces cannot be copied so (damage found while indexing, a
/// trace made of several directories, several inputs): the caller then
/// converts through the model.
pub fn copy_traces(paths: &[PathBuf], out: &Path, ctf2: bool) -> Result<Option<CopySummary>> {
    let [input] = paths else { return Ok(None) };
    let loader = tracemux_open::CtfMapLoader::default();
    let traces = tracemux_ctf::source::open(paths, &loader)?;
    if traces
        .iter()
        .any(|t| !t.damage.is_empty() || !t.notes.is_empty() || t.dirs.len() != 1)
    {
        return Ok(None);
    }
    // an input naming the metadata file stands for its directory
    let root = if input.is_file() {
        input.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        input.clone()
    };
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let root = canon(&root);
    let mut sum = CopySummary {
        traces: 0,
        files: 0,
        bytes: 0,
    };
    let create = |d: &Path| std::fs::create_dir_all(d).map_err(|e| Error::file(d, "create", e));
    create(out)?;
    for t in &traces {
        let dir = &canon(&t.dirs[0]);
        let Ok(rel) = dir.strip_prefix(&root) else {
            return Ok(None);
        };
        let to = out.join(rel);
        create(&to)?;
        let meta = if ctf2 {
            tracemux_ctf::ctf2::write_metadata(&t.tc)
                .map_err(|e| Error::input(dir.display(), e))?
                .into_bytes()
        } else {
            std::fs::read(dir.join("metadata"))
                .map_err(|e| Error::input(dir.join("metadata").display(), e))?
        };
        std::fs::write(to.join("metadata"), &meta)
            .map_err(|e| Error::file(&to.join("metadata"), "write", e))?;
        for (file, _) in &t.files {
            let file = &canon(file);
            let Ok(frel) = file.strip_prefix(dir) else {
                return Ok(None);
            };
            let dest = to.join(frel);
            if let Some(p) = dest.parent() {
                create(p)?;
            }
            sum.bytes += std::fs::copy(file, &dest).map_err(|e| Error::Input {
                input: format!("{}: cannot copy to {}", file.display(), dest.display()),
                source: e.into(),
            })?;
            sum.files += 1;
        }
        sum.traces += 1;
    }
    Ok(Some(sum))
}
