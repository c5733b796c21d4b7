//! Kernel data of a recording made with `uftrace record -k` (feature bit
//! KERNEL): `kernel_header`, `kernel-cpu<N>.dat` and `kallsyms`.
//!
//! `kernel_header` is text: `PAGE_SIZE: <n>`, `LONG_SIZE: <n>` and
//! `ENDIAN: LE|BE` lines, then each saved tracefs file as a line
//! `TRACEFS: <path>: <length>` followed by `<length>` bytes of the file:
//! `events/header_page`, the formats of `ftrace/funcgraph_entry` and
//! `ftrace/funcgraph_exit`, and the formats of the other events enabled
//! with `-E` (`events/<system>/<name>/format`). Any other path makes
//! uftrace give up the kernel data.
//!
//! Each `kernel-cpu<N>.dat` is what `trace_pipe_raw` gave for CPU N: whole
//! ring-buffer pages of `PAGE_SIZE` bytes, decoded here with
//! [`tracemux_ftrace::page`]. Function records (funcgraph entry/exit) carry
//! `func` and `depth`; other events are kept as the text their `print fmt`
//! gives (libtraceevent's, through [`tracemux_ftrace::printfmt`]). A record
//! belongs to the task `common_pid` names, or for an event whose
//! `common_pid` is not a traced task, the one its `next_pid` or `pid` field
//! names (uftrace 0.13's rule).
//!
//! uftrace reads a CPU's records until the first one whose type is 0 or
//! unknown; so does this (the rest is reported as damage). A page header
//! with missed events gives the count (or -1 when unknown) to the first
//! record read from that page ([`KRecord::missed`]).
//!
//! The whole kernel data is decoded when the recording is opened: about 40
//! bytes per record plus the text of events.

use std::borrow::Cow;

use tracemux_core::model::{ClassPrinter, FieldDef, PrintCtx, TimeFormat};
use tracemux_core::tables::{PrintkTable, SymbolTable};
use tracemux_core::Endian;
use tracemux_ftrace::format::{parse_format, parse_header_page};
use tracemux_ftrace::page::{Missed, Page, PageLayout};
use tracemux_ftrace::printfmt::{strtoll, FtracePrinter};

use crate::record::{Damage, Kind};
use crate::symbols::Module;
use crate::Demangle;

/// One kernel record as uftrace's kernel reader makes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KRecord {
    pub time: u64,
    /// Entry, Exit (funcgraph) or Event.
    pub kind: Kind,
    /// funcgraph `depth` (10 bits, as uftrace stores it).
    pub depth: u16,
    /// funcgraph `func` (the full kernel address) or the event id.
    pub addr: u64,
    /// The task the record is shown for (see the module doc).
    pub tid: i32,
    /// Set on the first record read after a page was loaded: the page's
    /// missed-events count (0 none, -1 unknown).
    pub missed: Option<i64>,
    /// Byte offset of the record's payload in its file.
    pub offset: u64,
    /// Event text: range in [`KernelData::text`].
    pub text: (u32, u32),
}

/// The records of one `kernel-cpu<N>.dat`.
#[derive(Debug, Clone, Default)]
pub struct KernelCpu {
    /// File name.
    pub name: String,
    /// File size (uftrace skips empty files in `dump`).
    pub size: u64,
    pub records: Vec<KRecord>,
}

/// A kernel event format of `kernel_header`.
#[derive(Debug)]
pub struct KEvent {
    pub id: u32,
    pub system: String,
    pub name: String,
}

/// The kernel data of a recording.
#[derive(Debug, Default)]
pub struct KernelData {
    pub page_size: u32,
    pub long_size: u32,
    pub big_endian: bool,
    pub events: Vec<KEvent>,
    /// In CPU number order (uftrace sorts the file names by number).
    pub cpus: Vec<KernelCpu>,
    /// `kallsyms` (empty when absent).
    pub symbols: Module,
    /// Texts of the events of all CPUs.
    pub text: Vec<u8>,
}

impl KernelData {
    /// The `system:name` of event `id`.
    pub fn event(&self, id: u64) -> Option<&KEvent> {
        self.events.iter().find(|e| e.id as u64 == id)
    }

    /// The text of an event record.
    pub fn text_of(&self, r: &KRecord) -> &[u8] {
        self.text
            .get(r.text.0 as usize..r.text.1 as usize)
            .unwrap_or(&[])
    }
}

/// What `kernel_header` holds.
#[derive(Debug)]
struct Header {
    page_size: u32,
    long_size: u32,
    big_endian: bool,
    header_page: Option<String>,
    /// (system, format text)
    formats: Vec<(String, String)>,
}

fn parse_header(b: &[u8]) -> Result<Header, (u64, String)> {
    let mut h = Header {
        page_size: 0,
        long_size: 8,
        big_endian: false,
        header_page: None,
        formats: Vec::new(),
    };
    let mut pos = 0usize;
    while pos < b.len() {
        let line_start = pos;
        let end = b[pos..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |i| pos + i + 1);
        let line = String::from_utf8_lossy(&b[pos..end]);
        let line = line.trim_end_matches('\n');
        pos = end;
        let Some(rest) = line.strip_prefix("TRACEFS:") else {
            let (name, val) = line.split_once(':').unwrap_or((line, ""));
            let val = val.split_whitespace().next().unwrap_or("");
            match name {
                "PAGE_SIZE" => h.page_size = strtoll(val) as u32,
                "LONG_SIZE" => h.long_size = strtoll(val) as u32,
                "ENDIAN" => h.big_endian = val == "BE",
                _ => {}
            }
            continue;
        };
        let rest = rest.trim_start();
        let bad = || (line_start as u64, format!("malformed line {line:?}"));
        let (path, len) = rest.rsplit_once(':').ok_or_else(bad)?;
        let len: usize = len.trim().parse().map_err(|_| bad())?;
        let Some(body) = b.get(pos..pos.saturating_add(len)) else {
            return Err((
                pos as u64,
                format!("{path}: {len} bytes announced, {} left", b.len() - pos),
            ));
        };
        pos += len;
        let text = String::from_utf8_lossy(body).into_owned();
        if path == "events/header_page" {
            h.header_page = Some(text);
        } else if path.starts_with("events/ftrace/") {
            h.formats.push(("ftrace".to_string(), text));
        } else if let (Some(p), true) = (path.strip_prefix("events/"), path.ends_with("/format")) {
            let system = p.split('/').next().unwrap_or("").to_string();
            h.formats.push((system, text));
        } else {
            return Err((line_start as u64, format!("unknown data {path:?}")));
        }
    }
    Ok(h)
}

/// How to take a record apart, per event.
struct Decoder {
    id: u32,
    kind: Kind,
    printer: Option<FtracePrinter>,
    func: Option<FieldDef>,
    depth: Option<FieldDef>,
    pid: Option<FieldDef>,
    next_pid: Option<FieldDef>,
    own_pid: Option<FieldDef>,
}

fn read_field(f: &FieldDef, data: &[u8], e: Endian) -> Option<u64> {
    let n = f.size as usize;
    if !matches!(n, 1 | 2 | 4 | 8) {
        return None;
    }
    let b = data.get(f.offset as usize..f.offset as usize + n)?;
    e.read_uint(b, n)
}

fn signed(v: u64, size: u32) -> i64 {
    match size {
        1 => v as u8 as i8 as i64,
        2 => v as u16 as i16 as i64,
        4 => v as u32 as i32 as i64,
        _ => v as i64,
    }
}

/// A damage note on `file`.
fn dmg(file: &str, offset: u64, message: String) -> Damage {
    Damage {
        file: Cow::Owned(file.to_string()),
        offset,
        message,
    }
}

/// Load the kernel data of the recording in `dir`: `None` when uftrace
/// would not use it (no `kernel-cpu*.dat`, or an unusable `kernel_header`;
/// the reason goes to `damage`).
pub(crate) fn load(
    dir: &std::path::Path,
    tids: &[i32],
    demangle: Demangle,
    damage: &mut Vec<Damage>,
) -> Option<KernelData> {
    let mut names: Vec<(i64, String)> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("kernel-cpu"))
        .map(|n| (strtoll(&n[10..]), n))
        .collect();
    if names.is_empty() {
        damage.push(dmg(
            "kernel-cpu0.dat",
            0,
            "cannot find kernel trace data".into(),
        ));
        return None;
    }
    names.sort_by_key(|(n, _)| *n);
    let Ok(hb) = std::fs::read(dir.join("kernel_header")) else {
        damage.push(dmg("kernel_header", 0, "cannot read kernel header".into()));
        return None;
    };
    let files: Vec<(String, Result<Vec<u8>, String>)> = names
        .into_iter()
        .map(|(_, n)| {
            let b = std::fs::read(dir.join(&n)).map_err(|e| e.to_string());
            (n, b)
        })
        .collect();
    let cpus: Vec<(&str, Result<&[u8], &str>)> = files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_deref().map_err(String::as_str)))
        .collect();
    let kallsyms = std::fs::read(dir.join("kallsyms")).ok();
    parse(&hb, &cpus, kallsyms.as_deref(), tids, demangle, damage)
}

/// The kernel data from the contents of `kernel_header`, of each
/// `kernel-cpu<N>.dat` in CPU order (`(file name, bytes or why they could
/// not be read)`) and of `kallsyms`; `tids` are the recording's tasks.
/// `None` when the header is unusable (the reason goes to `damage`).
pub fn parse(
    hb: &[u8],
    cpus: &[(&str, Result<&[u8], &str>)],
    kallsyms: Option<&[u8]>,
    tids: &[i32],
    demangle: Demangle,
    damage: &mut Vec<Damage>,
) -> Option<KernelData> {
    let h = match parse_header(hb) {
        Ok(h) => h,
        Err((off, msg)) => {
            damage.push(dmg("kernel_header", off, msg));
            return None;
        }
    };
    if h.page_size < 32 || h.page_size > 1 << 24 {
        damage.push(dmg(
            "kernel_header",
            0,
            format!("unusable page size {}", h.page_size),
        ));
        return None;
    }
    let long_size = if h.long_size == 4 { 4 } else { 8 };
    let endian = if h.big_endian {
        Endian::Big
    } else {
        Endian::Little
    };
    let ph = parse_header_page(h.header_page.as_deref().unwrap_or(""), long_size);
    let layout = PageLayout {
        endian,
        commit_size: ph.commit_size,
        data_offset: ph.data_offset,
        page_size: h.page_size,
    };
    let mut kd = KernelData {
        page_size: h.page_size,
        long_size,
        big_endian: h.big_endian,
        ..KernelData::default()
    };
    let mut decoders: Vec<Decoder> = Vec::new();
    let mut common_type: Option<FieldDef> = None;
    for (system, text) in &h.formats {
        let f = match parse_format(text, long_size, system == "ftrace") {
            Ok(f) => f,
            Err(e) => {
                damage.push(dmg(
                    "kernel_header",
                    0,
                    format!("{system} event format: {e}"),
                ));
                continue;
            }
        };
        let find = |n: &str| {
            f.fields
                .iter()
                .chain(f.common_fields.iter())
                .find(|x| x.name == n)
                .cloned()
        };
        if common_type.is_none() {
            common_type = f
                .common_fields
                .iter()
                .find(|x| x.name == "common_type")
                .cloned();
        }
        let kind = match (system.as_str(), f.name.as_str()) {
            ("ftrace", "funcgraph_entry") => Kind::Entry,
            ("ftrace", "funcgraph_exit") => Kind::Exit,
            _ => Kind::Event,
        };
        let printer = (kind == Kind::Event)
            .then(|| FtracePrinter::new(&f, system, long_size).without_plugin());
        decoders.push(Decoder {
            id: f.id,
            kind,
            printer,
            func: find("func"),
            depth: find("depth"),
            pid: f
                .common_fields
                .iter()
                .find(|x| x.name == "common_pid")
                .cloned(),
            next_pid: f.fields.iter().find(|x| x.name == "next_pid").cloned(),
            own_pid: f.fields.iter().find(|x| x.name == "pid").cloned(),
        });
        kd.events.push(KEvent {
            id: f.id,
            system: system.clone(),
            name: f.name.clone(),
        });
    }
    let common_type = common_type.unwrap_or_else(|| {
        FieldDef::scalar("common_type", "unsigned short", 0, 2, Default::default())
    });
    let symbols = SymbolTable::default();
    let printk = PrintkTable::default();
    let is_task = |t: i64| tids.contains(&(t as i32)) && t == t as i32 as i64;
    for (cpu, &(name, ref bytes)) in cpus.iter().enumerate() {
        let bytes = match bytes {
            Ok(b) => *b,
            Err(e) => {
                damage.push(dmg(name, 0, format!("cannot read: {e}")));
                kd.cpus.push(KernelCpu {
                    name: name.to_string(),
                    ..KernelCpu::default()
                });
                continue;
            }
        };
        let mut kc = KernelCpu {
            name: name.to_string(),
            size: bytes.len() as u64,
            records: Vec::new(),
        };
        let ps = h.page_size as usize;
        let mut off = 0usize;
        'pages: while off < bytes.len() {
            let page = &bytes[off..(off + ps).min(bytes.len())];
            if page.len() < ps {
                damage.push(dmg(
                    name,
                    off as u64,
                    format!("last page cut: {} of {ps} bytes", page.len()),
                ));
            }
            let (p, err) = Page::parse_checked(page, off as u64, layout);
            if let Some(e) = err {
                damage.push(dmg(name, e.offset, e.kind.to_string()));
            }
            let Some(mut p) = p else { break };
            let mut pending = Some(match p.missed {
                Missed::None => 0,
                Missed::Unknown => -1,
                Missed::Count(n) => n as i64,
            });
            while let Some(ev) = p.next() {
                let ev = match ev {
                    Ok(ev) => ev,
                    Err(e) => {
                        damage.push(dmg(name, e.offset, e.kind.to_string()));
                        break 'pages;
                    }
                };
                let data = ev.data;
                let at = (off + layout.data_offset as usize) as u64 + u64::from(ev.offset);
                let ty = read_field(&common_type, data, endian).unwrap_or(0);
                let Some(d) = decoders.iter().find(|d| d.id as u64 == ty && ty != 0) else {
                    let what = if ty == 0 {
                        "record of type 0".to_string()
                    } else {
                        format!("unknown event id {ty}")
                    };
                    damage.push(dmg(
                        name,
                        at,
                        format!("{what}: the rest of this CPU is not read (as uftrace)"),
                    ));
                    break 'pages;
                };
                let pid = d
                    .pid
                    .as_ref()
                    .and_then(|f| read_field(f, data, endian))
                    .map_or(0, |v| signed(v, 4));
                let mut rec = KRecord {
                    time: ev.ts,
                    kind: d.kind,
                    depth: 0,
                    addr: 0,
                    tid: pid as i32,
                    missed: pending.take(),
                    offset: at,
                    text: (0, 0),
                };
                if d.kind == Kind::Event {
                    rec.addr = d.id as u64;
                    if !is_task(pid) {
                        let alt = [&d.next_pid, &d.own_pid].into_iter().find_map(|f| {
                            let f = f.as_ref()?;
                            let v = signed(read_field(f, data, endian)?, f.size);
                            is_task(v).then_some(v as i32)
                        });
                        if let Some(t) = alt {
                            rec.tid = t;
                        }
                    }
                    if let Some(pr) = &d.printer {
                        let ctx = PrintCtx {
                            endian,
                            long_size,
                            symbols: &symbols,
                            printk: &printk,
                            cpu: cpu as u32,
                            ts: ev.ts,
                            time: TimeFormat::Nsecs,
                            classes: None,
                            next: None,
                            effects: None,
                        };
                        let start = kd.text.len();
                        pr.write_pretty(&mut kd.text, data, data.len(), &ctx);
                        rec.text = (start as u32, kd.text.len() as u32);
                    }
                } else {
                    let (Some(func), Some(depth)) = (
                        d.func.as_ref().and_then(|f| read_field(f, data, endian)),
                        d.depth.as_ref().and_then(|f| read_field(f, data, endian)),
                    ) else {
                        damage.push(dmg(name, at, "funcgraph record without func/depth".into()));
                        continue;
                    };
                    rec.addr = func;
                    rec.depth = (depth & 0x3ff) as u16;
                }
                kc.records.push(rec);
            }
            off += ps;
        }
        kd.cpus.push(kc);
    }
    if let Some(t) = kallsyms {
        kd.symbols
            .load_symbols(&String::from_utf8_lossy(t), demangle);
    }
    Some(kd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lines() {
        let fmt = "name: funcgraph_entry\nID: 11\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\tfield:unsigned long func;\toffset:8;\tsize:8;\tsigned:0;\n\nprint fmt: \"%lx\", REC->func\n";
        let mut b = b"PAGE_SIZE: 4096\nLONG_SIZE: 8\nENDIAN: LE\n".to_vec();
        b.extend_from_slice(
            format!(
                "TRACEFS: events/ftrace/funcgraph_entry/format: {}\n",
                fmt.len()
            )
            .as_bytes(),
        );
        b.extend_from_slice(fmt.as_bytes());
        let h = parse_header(&b).unwrap();
        assert_eq!((h.page_size, h.long_size, h.big_endian), (4096, 8, false));
        assert_eq!(h.formats.len(), 1);
        // a length past the end, and an unknown path, make it unusable
        let cut = &b[..b.len() - 3];
        assert!(parse_header(cut).unwrap_err().1.contains("announced"));
        let mut odd = b"TRACEFS: events/header_event: 1\nx".to_vec();
        odd.extend_from_slice(&b);
        assert!(parse_header(&odd).unwrap_err().1.contains("unknown data"));
    }
}
