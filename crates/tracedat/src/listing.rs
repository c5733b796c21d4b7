//! `trace-cmd report`'s listings of a trace.dat's metadata, as trace-cmd
//! 3.1.6 prints them: `-E` (the event list), `--events` (the stored
//! formats), `-P` (printk formats), `-f` (kernel symbols),
//! `--check-events` (its exit status) and `--stat` (buffer statistics and
//! the data's place).

use crate::{OptionId, TraceDat};
use tracemux_core::model::TraceMeta;

/// `-E`: every event of the file as `system:name`, sorted by system, name
/// and id.
pub fn write_event_list(out: &mut Vec<u8>, t: &TraceDat<'_>) {
    let mut v: Vec<(&str, String, i64)> = Vec::new();
    for f in &t.ftrace_formats {
        if let Some((n, id)) = name_and_id(f) {
            v.push(("ftrace", n, id));
        }
    }
    for (sys, evs) in &t.systems {
        for f in evs {
            if let Some((n, id)) = name_and_id(f) {
                v.push((sys.as_str(), n, id));
            }
        }
    }
    v.sort_by(|a, b| {
        a.0.as_bytes()
            .cmp(b.0.as_bytes())
            .then_with(|| a.1.as_bytes().cmp(b.1.as_bytes()))
            .then(a.2.cmp(&b.2))
    });
    for (s, n, _) in v {
        out.extend_from_slice(s.as_bytes());
        out.push(b':');
        out.extend_from_slice(n.as_bytes());
        out.push(b'\n');
    }
}

/// The name and id of a format file as libtraceevent reads them (`name:`
/// then `ID:`); `None` when it cannot, which makes the format a parsing
/// failure (`--check-events`) and leaves it out of the event list.
pub fn name_and_id(text: &[u8]) -> Option<(String, i64)> {
    let s = String::from_utf8_lossy(text);
    let mut lines = s.lines().filter(|l| !l.trim().is_empty());
    let name = lines
        .next()?
        .trim_start()
        .strip_prefix("name")?
        .trim_start();
    let name = name.strip_prefix(':')?.split_whitespace().next()?;
    if !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        return None;
    }
    let id = lines.next()?.trim_start().strip_prefix("ID")?.trim_start();
    let id = id.strip_prefix(':')?.split_whitespace().next()?;
    if !id.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        return None;
    }
    let digits: String = id.chars().take_while(|c| c.is_ascii_digit()).collect();
    let v: i64 = if digits.is_empty() {
        0
    } else {
        digits.parse::<u64>().map_or(-1, |v| v as u32 as i32 as i64)
    };
    if v < 0 {
        return None;
    }
    Some((name.to_string(), v))
}

/// `--events`: the stored format files of the event systems, as trace-cmd
/// 3.1.6 prints them (only for version 6 files: for version 7 it prints
/// nothing).
pub fn write_event_formats(out: &mut Vec<u8>, t: &TraceDat<'_>) {
    if t.version >= 7 {
        return;
    }
    for (sys, evs) in &t.systems {
        if evs.is_empty() {
            continue;
        }
        out.extend_from_slice(format!("\nsystem: {sys}\n").as_bytes());
        for f in evs {
            let n = f.iter().position(|&b| b == 0).unwrap_or(f.len());
            out.extend_from_slice(&f[..n]);
            out.push(b'\n');
        }
    }
}

/// `-P`: the printk formats, by address (`%016llx FORMAT`).
pub fn write_printk(out: &mut Vec<u8>, t: &TraceDat<'_>) {
    let text = &t.printk[..];
    let text = &text[..text.iter().position(|&b| b == 0).unwrap_or(text.len())];
    let mut v: Vec<(u64, Vec<u8>)> = Vec::new();
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        // strtok_r(line, ":"): leading colons are skipped
        let st = line.iter().position(|&b| b != b':');
        let Some(st) = st else { break };
        let rest = &line[st..];
        let (addr, fmt) = match rest.iter().position(|&b| b == b':') {
            Some(c) => (&rest[..c], &rest[c + 1..]),
            None => (rest, &[][..]),
        };
        let addr = strtoull16(addr);
        // skip the space after the colon
        let mut f = fmt.get(1..).unwrap_or(&[]);
        if f.first() == Some(&b'"') {
            f = &f[1..];
        }
        let mut f = f.to_vec();
        if f.last() == Some(&b'"') {
            f.pop();
            if f.ends_with(b"\\n") {
                f.truncate(f.len() - 2);
            }
        }
        v.push((addr, f));
    }
    // libtraceevent prepends each entry, then sorts stably by address
    v.reverse();
    v.sort_by_key(|e| e.0);
    for (a, f) in v {
        out.extend_from_slice(format!("{a:016x} ").as_bytes());
        out.extend_from_slice(&f);
        out.push(b'\n');
    }
}

fn strtoull16(s: &[u8]) -> u64 {
    let s = {
        let st = s
            .iter()
            .position(|c| !c.is_ascii_whitespace())
            .unwrap_or(s.len());
        &s[st..]
    };
    let s = if s.len() > 2 && s[0] == b'0' && (s[1] | 0x20) == b'x' && s[2].is_ascii_hexdigit() {
        &s[2..]
    } else {
        s
    };
    let mut v: u64 = 0;
    for &c in s {
        let Some(d) = (c as char).to_digit(16) else {
            break;
        };
        v = match v.checked_mul(16).and_then(|v| v.checked_add(d as u64)) {
            Some(v) => v,
            None => return u64::MAX,
        };
    }
    v
}

/// `-f`: the kernel symbols, by address (`%016llx NAME [MODULE]`).
pub fn write_funcs(out: &mut Vec<u8>, meta: &TraceMeta) {
    for s in meta.symbols.iter() {
        out.extend_from_slice(format!("{:016x} {}", s.addr, s.name).as_bytes());
        match &s.module {
            Some(m) => out.extend_from_slice(format!(" [{m}]\n").as_bytes()),
            None => out.push(b'\n'),
        }
    }
}

/// `--check-events`: trace-cmd's exit status, 0 when every stored format
/// could be read, EINVAL (22) when one could not (no readable name or id)
/// or the metadata is damaged. Nothing is printed.
pub fn check_events(t: &TraceDat<'_>) -> u8 {
    let bad_format = t
        .ftrace_formats
        .iter()
        .chain(t.systems.iter().flat_map(|(_, v)| v.iter()))
        .any(|f| name_and_id(f).is_none());
    let bad_meta = t.damage.iter().any(|e| {
        !matches!(
            e.section.as_ref(),
            "flyrecord" | "flyrecord page" | "flyrecord chunks" | "flyrecord chunk"
        )
    });
    if bad_format || bad_meta {
        22
    } else {
        0
    }
}

/// `--stat`: the kernel buffer statistics trace-cmd prints (the CPUSTAT
/// options) and where each CPU's data of the top buffer lies.
pub fn write_stat(o: &mut Vec<u8>, t: &TraceDat<'_>) {
    o.extend_from_slice(b"\nKernel buffer statistics:\n  Note: \"entries\" are the entries left in the kernel ring buffer and are not\n        recorded in the trace data. They should all be zero.\n\n");
    let mut any = false;
    for opt in t.options_with(OptionId::CPUSTAT) {
        any = true;
        let d = &opt.data;
        if d.is_empty() {
            continue;
        }
        // the last byte (the NUL) becomes a newline
        o.extend_from_slice(&d[..d.len() - 1]);
        o.push(b'\n');
    }
    if any {
        o.push(b'\n');
    } else {
        o.extend_from_slice(b" No stats in this file\n");
    }
    // Per-CPU data location of the top buffer; compressed files show the
    // offsets the data would have once decompressed, as trace-cmd does.
    if let Some(b) = t.buffers.iter().find(|b| b.name.is_empty()) {
        let ps = b.page_size.max(1) as u64;
        let mut next = ps;
        for c in &b.cpus {
            let (off, size) = if b.compressed && c.size > 0 {
                let size = uncompressed_size(t, c.offset, c.size);
                let off = next;
                next = (next + size).div_ceil(ps) * ps;
                (off, size)
            } else {
                (c.offset, c.size)
            };
            o.extend_from_slice(
                format!(
                    "CPU{} data recorded at offset=0x{:x}\n    {} bytes in size\n",
                    c.cpu, off, size
                )
                .as_bytes(),
            );
        }
    }
}

/// Sum of the uncompressed sizes of a CPU's chunks.
fn uncompressed_size(t: &TraceDat<'_>, offset: u64, size: u64) -> u64 {
    let start = offset as usize;
    let end = start.saturating_add(size as usize).min(t.data.len());
    let Some(region) = t.data.get(start..end) else {
        return 0;
    };
    let mut c = tracemux_core::Cursor::new(region, t.endian, "flyrecord chunks");
    let Ok(count) = c.u32() else { return 0 };
    let mut total = 0u64;
    for _ in 0..count {
        let (Ok(cs), Ok(us)) = (c.u32(), c.u32()) else {
            break;
        };
        total += us as u64;
        if c.skip(cs as usize).is_err() {
            break;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printk_formats() {
        let mut t = TraceDat::empty(&[], 7, tracemux_core::Endian::Little, 8, 4096);
        t.printk = std::borrow::Cow::Borrowed(
            b"0xffffffff82000010 : \"b\\n\"\n0xffffffff82000000 : \"a %d\"\n0xffffffff82000010 : \"c\\n\n",
        );
        let mut out = Vec::new();
        write_printk(&mut out, &t);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "ffffffff82000000 a %d\nffffffff82000010 c\\n\nffffffff82000010 b\n"
        );
    }
}
