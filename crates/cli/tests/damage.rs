//! Bad input: truncated and corrupted files never panic or hang, print only
//! what the intact file prints, and keep every event whose bytes survive.

mod common;
use common::*;

use tracemux_core::model::{Record, RecordSource};
use tracemux_render::tracecmd::{TimeFormat, TraceCmdPrinter};
use tracemux_tracedat::reader::{ReadOptions, Reader};
use tracemux_tracedat::TraceDat;

struct Line {
    text: Vec<u8>,
    /// Where the bytes needed for this line end in the file.
    file_pos: u64,
}

struct Rendered {
    lines: Vec<Line>,
    /// (classes, streams, symbols, tasks): equal counts mean intact metadata.
    meta: (usize, usize, usize, usize),
    damage: usize,
}

/// The `report -R` lines of `data` (lenient), without the `cpus=` header.
fn render(data: &[u8]) -> Option<Rendered> {
    let t = TraceDat::parse(data, false).ok()?;
    let mut r = Reader::new(&t, &ReadOptions::default()).ok()?;
    let meta = r.meta().clone();
    let mut p = TraceCmdPrinter::new(&meta, TimeFormat::Usecs);
    let mut lines = Vec::new();
    let mut damage = t.damage.len();
    let mut steps = 0usize;
    loop {
        steps += 1;
        assert!(steps < 10_000_000, "reader does not terminate");
        let mut buf = Vec::new();
        let pos = match r.next_record() {
            Ok(Some(Record::Event(ev))) => {
                p.write_raw(&mut buf, &meta, &ev, ev.ext);
                ev.file_pos
            }
            Ok(Some(Record::Lost(l))) => {
                p.write_lost(&mut buf, &meta, &l);
                0
            }
            Ok(Some(Record::Damage(_))) => {
                damage += 1;
                continue;
            }
            Ok(None) => break,
            Err(_) => {
                damage += 1;
                break;
            }
        };
        lines.push(Line {
            text: buf,
            file_pos: pos,
        });
    }
    Some(Rendered {
        lines,
        meta: (
            meta.classes.len(),
            meta.streams.len(),
            meta.symbols.len(),
            meta.tasks.len(),
        ),
        damage,
    })
}

/// What of a line must match the intact output: all of it when its page
/// survived; otherwise the part before any `ARRAY[` (libtraceevent prints
/// static arrays from the bytes after the record, which the cut removed).
///
/// Leading blanks are ignored: a file cut before its last BUFFER option
/// looks like a file without instances, whose lines have no prefix column.
fn key(l: &Line, cut: u64) -> &[u8] {
    let t = trim(&l.text);
    if l.file_pos <= cut {
        return t;
    }
    match t.windows(6).position(|w| w == b"ARRAY[") {
        Some(i) => &t[..i],
        None => t,
    }
}

fn trim(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|&&c| c == b' ').count();
    &b[n..]
}

/// Where a cut is most likely to find a reader off guard: `spread` offsets
/// spread over the file, plus its boundaries: every section start (v7),
/// every CPU's data start and end, and for uncompressed ring-buffer data
/// each page's start, the end of its header and its last byte (the first
/// `PAGES` pages of each CPU).
fn cuts(data: &[u8], spread: usize) -> Vec<usize> {
    const PAGES: u64 = 48;
    let mut v: Vec<usize> = (0..spread)
        .map(|k| (data.len() as u64 * k as u64 / spread as u64) as usize)
        .collect();
    let t = TraceDat::parse(data, false).expect("intact file parses");
    let mut at = |o: u64| v.push(o.min(data.len() as u64) as usize);
    for s in &t.sections {
        at(s.offset);
    }
    for b in &t.buffers {
        let page = b.page_size.max(1) as u64;
        let header = 8 + u64::from(t.long_size);
        for c in &b.cpus {
            at(c.offset);
            at(c.offset + c.size);
            if b.compressed || b.latency {
                continue;
            }
            for k in 0..(c.size / page).min(PAGES) {
                let start = c.offset + k * page;
                at(start);
                at(start + header);
                at(start + page - 1);
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

fn check_file(dir: &std::path::Path, spread: usize) {
    let data = std::fs::read(dir.join("trace.dat")).unwrap();
    let full = render(&data).expect("intact file reads");
    assert_eq!(
        full.damage,
        0,
        "{}: intact file reports damage",
        dir.display()
    );
    for cut in cuts(&data, spread) {
        let Some(got) = render(&data[..cut]) else {
            continue;
        };
        // 1. a subsequence of the intact output
        let mut j = 0;
        for l in &got.lines {
            let want = key(l, cut as u64);
            while j < full.lines.len() && !trim(&full.lines[j].text).starts_with(want) {
                j += 1;
            }
            assert!(
                j < full.lines.len(),
                "{} cut at {cut}: line not in the intact output: {}",
                dir.display(),
                String::from_utf8_lossy(&l.text)
            );
            j += 1;
        }
        // 2. with intact metadata, every event whose bytes precede the cut
        if got.meta == full.meta {
            let want = full
                .lines
                .iter()
                .filter(|l| l.file_pos != 0 && l.file_pos <= cut as u64)
                .count();
            let have = got
                .lines
                .iter()
                .filter(|l| l.file_pos != 0 && l.file_pos <= cut as u64)
                .count();
            assert_eq!(
                have,
                want,
                "{} cut at {cut}: events before the cut lost",
                dir.display()
            );
        }
        if cut < data.len() && !got.lines.is_empty() {
            assert!(
                got.damage > 0 || got.lines.len() == full.lines.len(),
                "{} cut at {cut}: damage not reported",
                dir.display()
            );
        }
    }
}

#[test]
fn truncated_files() {
    // recorded traces, and the synthetic files written from the format's
    // description (big-endian, 4-byte longs, 8 KiB pages, instances, latency)
    let dirs = [fixture_dirs("tracedat"), fixture_dirs("synthetic")].concat();
    assert!(dirs.len() > 30);
    for d in dirs {
        check_file(&d, 200);
    }
}

/// A small deterministic generator (xorshift) for reproducible corruption.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn corrupted_files() {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    for d in [fixture_dirs("tracedat"), fixture_dirs("synthetic")].concat() {
        let data = std::fs::read(d.join("trace.dat")).unwrap();
        for round in 0..30 {
            let mut bad = data.clone();
            // corrupt a few bytes: most rounds in the first 64 KiB (headers,
            // options, page headers), some anywhere
            let span = if round % 3 == 0 {
                bad.len()
            } else {
                bad.len().min(1 << 16)
            };
            for _ in 0..(1 + rng.next() % 8) {
                let i = (rng.next() % span as u64) as usize;
                bad[i] = rng.next() as u8;
            }
            let _ = render(&bad);
        }
    }
}
