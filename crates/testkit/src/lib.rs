//! Helpers that the integration tests of several crates share: finding
//! fixtures, comparing outputs, a deterministic generator. Only a
//! dev-dependency; nothing here is part of tracemux.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

/// The repository's root directory.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `tests/fixtures` of the repository.
pub fn fixtures() -> PathBuf {
    repo_root().join("tests/fixtures")
}

/// The entries of `dir`, sorted by path; none when it cannot be read.
pub fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// The uftrace recordings (directories with `uftrace.data`) of the
/// fixture sets `corpus`, `recorded` (uftrace 0.13) and `newer` (uftrace
/// 0.19), in that order, each sorted.
pub fn uftrace_recordings() -> Vec<PathBuf> {
    let root = fixtures().join("uftrace");
    ["corpus", "recorded", "newer"]
        .iter()
        .flat_map(|group| sorted_entries(&root.join(group)))
        .filter(|p| p.join("uftrace.data").is_dir())
        .collect()
}

/// The first line where `got` differs from `want`, for readable failures.
pub fn first_diff(want: &[u8], got: &[u8]) -> String {
    let w: Vec<&[u8]> = want.split(|&b| b == b'\n').collect();
    let g: Vec<&[u8]> = got.split(|&b| b == b'\n').collect();
    for i in 0..w.len().max(g.len()) {
        let a = w.get(i).copied().unwrap_or(b"<missing>");
        let b = g.get(i).copied().unwrap_or(b"<missing>");
        if a != b {
            return format!(
                "line {}:\n  want: {}\n  got:  {}",
                i + 1,
                String::from_utf8_lossy(a),
                String::from_utf8_lossy(b)
            );
        }
    }
    String::from("(no line differs)")
}

/// A small deterministic pseudo-random generator (xorshift).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// `l` with the text of every double-quoted string removed (the quotes
/// stay; `\"` inside a string does not end it).
pub fn without_strings(l: &str) -> String {
    let mut out = String::with_capacity(l.len());
    let mut inside = false;
    let mut escaped = false;
    for c in l.chars() {
        if inside {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                inside = false;
                out.push(c);
            }
            continue;
        }
        if c == '"' {
            inside = true;
        }
        out.push(c);
    }
    out
}

/// Fail, listing every problem one a line, unless `failures` is empty:
/// `N of TOTAL WHAT:` (e.g. `3 of 40 differ:`).
#[track_caller]
pub fn assert_all_passed(failures: &[String], total: usize, what: &str) {
    assert!(
        failures.is_empty(),
        "{} of {total} {what}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
