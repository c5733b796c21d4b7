//! Every metadata file of the shared corpus parses (when the corpus is
//! present; the repository's own fixtures are checked by the golden tests).

use std::path::{Path, PathBuf};

fn metadata_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            metadata_files(&p, out);
        } else if p.file_name().is_some_and(|n| n == "metadata") {
            out.push(p);
        }
    }
}

#[test]
fn corpus_metadata_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    let mut files = Vec::new();
    metadata_files(&root.join("ctf"), &mut files);
    metadata_files(&root.join("ctf1-conformance"), &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let data = std::fs::read(f).unwrap();
        if let Err(e) = tracemux_ctf::tsdl::parse_metadata(&data) {
            bad.push(format!("{}: {e}", f.display()));
        }
    }
    tracemux_testkit::assert_all_passed(&bad, files.len(), "failed");
}
