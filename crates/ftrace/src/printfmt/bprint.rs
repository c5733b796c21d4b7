//! `ftrace/bprint` (`trace_printk()` with a constant format): the record
//! holds the address of the format and the arguments in binary. As
//! libtraceevent does, the format is looked up among the printk formats,
//! prefixed with `%ps: ` (for the `ip` field), the arguments are decoded
//! from the record by walking the format (`make_bprint_args`), and the
//! format is cut into segments against them.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tracemux_core::bytes::Endian;
use tracemux_core::model::PrintCtx;

use super::ast::{ArgId, PrintArg, PrintFmt, Segment};
use super::eval::{printk_text, read_number, BArg, Env, Rec};
use super::printf::put_hex;
use super::segments::parse_args;
use super::{print_seg, seg_infos, FtracePrinter, SegInfo};

/// A bprint format cut into segments for a number of arguments.
#[derive(Debug)]
pub(crate) struct BprintFmt {
    pf: PrintFmt,
    infos: Vec<SegInfo>,
    segs: Vec<Segment>,
}

impl BprintFmt {
    fn new(format: String, nargs: usize) -> (BprintFmt, bool) {
        let arena: Vec<PrintArg> = (0..nargs as u32).map(PrintArg::BArg).collect();
        let pf = PrintFmt {
            format,
            arena,
            args: (0..nargs as ArgId).collect(),
            failed: false,
            segments: None,
        };
        let (segs, failed) = parse_args(&pf);
        let infos = seg_infos(&segs);
        (BprintFmt { pf, infos, segs }, failed)
    }
}

/// `make_bprint_args`: the values the format's conversions take from the
/// record, starting at `buf` (`fmt` is the format after its `%ps: `).
#[allow(clippy::too_many_arguments)]
fn make_args(
    args: &mut Vec<BArg>,
    fmt: &[u8],
    rec: Rec<'_>,
    ip: u64,
    buf: usize,
    long_size: u32,
    endian: Endian,
) {
    args.clear();
    args.push(BArg::Num(ip));
    let at = |i: usize| fmt.get(i).copied().unwrap_or(0);
    let data = rec.data;
    let mut b = buf;
    let mut p = 0usize;
    let push_string = |args: &mut Vec<BArg>, b: &mut usize| {
        let s = data.get(*b..).unwrap_or(&[]);
        let n = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        args.push(BArg::Str(*b as u32, n as u32));
        *b += n + 1;
    };
    while b < rec.size && p < fmt.len() {
        if fmt[p] == b'%' {
            let mut ls = 0i32;
            loop {
                p += 1;
                let c = at(p);
                let mut vsize = match c {
                    b'%' => break,
                    b'l' => {
                        ls += 1;
                        continue;
                    }
                    b'L' => {
                        ls = 2;
                        continue;
                    }
                    b'0'..=b'9' | b'.' | b'#' => continue,
                    b'z' | b'Z' => {
                        ls = 1;
                        continue;
                    }
                    b'p' | b'd' | b'u' | b'i' | b'x' | b'X' | b'o' => {
                        if c == b'p' {
                            ls = 1;
                            if at(p + 1).is_ascii_alphanumeric() {
                                p += 1;
                                let numeric = match at(p) {
                                    b's' | b'S' | b'x' => true,
                                    b'f' | b'F' if at(p + 1) != b'w' => true,
                                    // dereferenced pointers: only a
                                    // printable first byte makes a string
                                    _ => !data.get(b).is_some_and(|&x| (0x20..=0x7e).contains(&x)),
                                };
                                if !numeric {
                                    push_string(args, &mut b);
                                    break;
                                }
                            }
                        }
                        match ls {
                            0 => 4,
                            1 => long_size as usize,
                            2 => 8,
                            n => n as usize,
                        }
                    }
                    b'*' => 4,
                    b's' => {
                        push_string(args, &mut b);
                        break;
                    }
                    _ => break,
                };
                if c == b'*' {
                    vsize = 4;
                }
                // the arguments are 4-byte aligned
                b = (b + 3) & !3;
                args.push(BArg::Num(read_number(endian, data, b, vsize)));
                b += vsize;
                if c != b'*' {
                    break;
                }
            }
        }
        p += 1;
    }
}

impl FtracePrinter {
    fn own_field(&self, name: &str) -> Option<&tracemux_core::model::FieldDef> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// `pretty_print` of a bprint record.
    pub(super) fn print_bprint(&self, out: &mut Vec<u8>, rec: Rec<'_>, ctx: &PrintCtx<'_>) {
        let endian = ctx.endian;
        let (Some(fmt_f), Some(buf_f), Some(ip_f)) = (
            self.own_field("fmt"),
            self.own_field("buf"),
            self.own_field("ip"),
        ) else {
            return;
        };
        let addr = read_number(endian, rec.data, fmt_f.offset as usize, fmt_f.size as usize);
        let text = printk_text(ctx.printk, addr);
        let ip = read_number(endian, rec.data, ip_f.offset as usize, ip_f.size as usize);
        let mut args = self.bprint_args.lock().unwrap_or_else(|e| e.into_inner());
        let not_found;
        let body: &[u8] = match text {
            Some(t) => t.as_bytes(),
            None => {
                let mut v = b"(NO FORMAT FOUND at ".to_vec();
                put_hex(&mut v, addr);
                v.extend_from_slice(b")\n");
                not_found = v;
                &not_found
            }
        };
        make_args(
            &mut args,
            body,
            rec,
            ip,
            buf_f.offset as usize,
            self.long_size,
            endian,
        );
        let key = (addr, args.len());
        let cached = self
            .bprint_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .cloned();
        let fmt = match cached {
            Some(f) => f,
            None => {
                let mut format = String::from("%ps: ");
                format.push_str(&String::from_utf8_lossy(body));
                let (f, failed) = BprintFmt::new(format, args.len());
                if failed {
                    // libtraceevent marks the event failed (for the
                    // following records; this one still prints)
                    if !self.bprint_failed.swap(true, Ordering::Relaxed) {
                        self.sticky_changes.fetch_add(1, Ordering::Relaxed);
                    }
                }
                let f = Arc::new(f);
                self.bprint_cache
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(key, f.clone());
                f
            }
        };
        let env = Env {
            pf: &fmt.pf,
            common: &self.common,
            own: &self.fields,
            long_size: self.long_size,
            atom_cache: &[],
            named: &[],
            bargs: &args[..],
            casts: &[],
            rec,
            ctx,
        };
        for (seg, info) in fmt.segs.iter().zip(&fmt.infos) {
            print_seg(&env, seg, info, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_arguments() {
        // "%d %s %lx" with 5, "hi", 0x1234 after an 8-byte buf offset
        let mut d = vec![0u8; 8];
        d.extend_from_slice(&5u32.to_le_bytes());
        d.extend_from_slice(b"hi\0");
        d.push(0); // align to 4
        d.extend_from_slice(&0x1234u64.to_le_bytes());
        let rec = Rec {
            data: &d,
            size: d.len(),
        };
        let mut args = Vec::new();
        make_args(&mut args, b"%d %s %lx\\n", rec, 7, 8, 8, Endian::Little);
        assert_eq!(
            args,
            vec![
                BArg::Num(7),
                BArg::Num(5),
                BArg::Str(12, 2),
                BArg::Num(0x1234)
            ]
        );
        // "%-5d" takes no argument in libtraceevent's walk
        make_args(&mut args, b"%-5d", rec, 7, 8, 8, Endian::Little);
        assert_eq!(args, vec![BArg::Num(7)]);
    }
}
