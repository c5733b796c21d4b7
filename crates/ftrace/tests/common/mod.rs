//! Helpers shared by the corpus tests and the `printfmt_oracle` example:
//! reading the event formats out of `trace-cmd dump --events` output.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use tracemux_ftrace::format::{parse_format, EventFormat};
use tracemux_ftrace::printfmt::FtracePrinter;

/// The corpus of real trace.dat files (kept outside the repository, next
/// to it: `../shared/corpus/tracedat` from the workspace root).
pub fn corpus_dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/tracedat");
    d.is_dir().then_some(d)
}

/// A text file of the corpus, `NAME` or `NAME.zst`.
pub fn read_text(dir: &Path, name: &str) -> Option<String> {
    let p = dir.join(name);
    if let Ok(b) = std::fs::read(&p) {
        return Some(String::from_utf8_lossy(&b).into_owned());
    }
    let z = std::fs::read(dir.join(format!("{name}.zst"))).ok()?;
    let b = zstd::decode_all(&z[..]).ok()?;
    Some(String::from_utf8_lossy(&b).into_owned())
}

/// One event format from a dump: its system (`ftrace` for the `[Ftrace
/// format` section, `events` otherwise) and its text (from `name:` up to
/// the next `name:` or section line).
pub struct DumpedFormat {
    pub system: &'static str,
    pub text: String,
}

pub fn split_dump(text: &str) -> Vec<DumpedFormat> {
    let mut out = Vec::new();
    let mut sys = "unknown";
    let mut cur: Option<String> = None;
    for line in text.split_inclusive('\n') {
        let starts_new = line.starts_with("name:") || line.starts_with("\t[");
        if starts_new {
            if let Some(t) = cur.take() {
                out.push(DumpedFormat {
                    system: sys,
                    text: t,
                });
            }
        }
        if line.contains("[Ftrace format") {
            sys = "ftrace";
        } else if line.contains("[Events format") {
            sys = "events";
        }
        if line.starts_with("name:") {
            cur = Some(String::new());
        }
        if let Some(t) = cur.as_mut() {
            t.push_str(line);
        }
    }
    if let Some(t) = cur {
        out.push(DumpedFormat {
            system: sys,
            text: t,
        });
    }
    out
}

/// The whole print fmt of a format text (it can span lines).
pub fn full_print_fmt(text: &str) -> String {
    let i = match text.find("\nprint fmt:") {
        Some(i) => i + "\nprint fmt:".len(),
        None => return String::new(),
    };
    let s = &text[i..];
    let s = s.strip_prefix(' ').unwrap_or(s);
    s.trim_end_matches('\n').to_string()
}

/// Parse a dumped format into an `EventFormat` (with the full print fmt)
/// and build its printer.
pub fn build(d: &DumpedFormat, long_size: u32) -> Option<(EventFormat, FtracePrinter)> {
    let mut f = parse_format(&d.text, long_size, d.system == "ftrace").ok()?;
    f.print_fmt = full_print_fmt(&d.text);
    let p = FtracePrinter::new(&f, d.system, long_size);
    Some((f, p))
}

/// Names of the trace.dat directories of the corpus.
pub fn traces(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
