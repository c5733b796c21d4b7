//! trace-cmd dump's `--options`: the options of a v6 file or of v7 option
//! sections, each as `trace-cmd dump` prints it (buffers, time shifts of
//! guests, the guests themselves, strings and sized numbers).

use super::*;

impl<'a, 'o> Dumper<'a, 'o> {
    pub(super) fn options(&mut self) -> R<()> {
        let count = self.options_read()?;
        self.pf(SUMMARY | OPTIONS, format_args!("\t[{count} options]\n"))
    }

    /// All options from the current position, following the chain of v7
    /// options sections. Returns how many options were seen (each v7 DONE
    /// counts; the bare v6 terminator does not).
    pub(super) fn options_read(&mut self) -> R<i32> {
        let mut count: i32 = 0;
        let mut visited: Vec<u64> = Vec::new();
        loop {
            if self.version >= 7 {
                if visited.contains(&self.pos) {
                    return die(format!(
                        "options sections form a loop at offset {}",
                        self.pos
                    ));
                }
                visited.push(self.pos);
                let flags = self.section_header(OPTIONS)?;
                if flags & SEC_COMPRESSED != 0 {
                    self.uncompress_block("file")?;
                }
            }
            match self.options_section(&mut count)? {
                Some(next) => {
                    self.seek_file(next, "next options offset")?;
                    self.put(OPTIONS, b"\n\n")?;
                }
                None => return Ok(count),
            }
        }
    }

    /// The options of one section. Returns the offset of the next options
    /// section to read, if any.
    pub(super) fn options_section(&mut self, count: &mut i32) -> R<Option<u64>> {
        loop {
            let Some(id) = self.u16() else {
                return die("cannot read the option id");
            };
            if id == 0 && self.version < 7 {
                self.uncompress_reset();
                return Ok(None);
            }
            let Some(size) = self.u32() else {
                return die("cannot read the option size");
            };
            *count += 1;
            let start = self.tell();
            let isize = size as i32;
            match id {
                0 => {
                    self.option_head("DONE", size)?;
                    if size < 8 {
                        self.uncompress_reset();
                        return Ok(None);
                    }
                    // trace-cmd leaves the compressed block before reading
                    // the next offset; it is part of the block, so read it
                    // first.
                    let next = self.u64();
                    self.uncompress_reset();
                    let Some(next) = next else {
                        return die("cannot read the next options offset");
                    };
                    self.pf(OPTIONS, format_args!("{}\n", next as i64))?;
                    return Ok((next != 0).then_some(next));
                }
                1 => self.option_string(size, "DATE")?,
                2 => self.option_string(size, "CPUSTAT")?,
                3 | 22 => self.option_buffer(id, size)?,
                4 => {
                    self.option_head("TRACECLOCK", size)?;
                    self.dump_string(isize, OPTIONS | CLOCK)?;
                    self.has_clock = true;
                }
                5 => self.option_string(size, "UNAME")?,
                6 => self.option_string(size, "HOOK")?,
                7 => self.option_string(size, "OFFSET")?,
                8 => {
                    self.option_head("CPUCOUNT", size)?;
                    let v = self.sized_number(size).unwrap_or(0);
                    self.pf(OPTIONS, format_args!("{}\n", v as i32))?;
                }
                9 => self.option_string(size, "VERSION")?,
                10 => self.option_string(size, "PROCMAPS")?,
                11 => {
                    self.option_head("TRACEID", size)?;
                    let v = self.sized_number(size).unwrap_or(0);
                    self.pf(OPTIONS, format_args!("0x{v:X}\n"))?;
                }
                12 => self.option_time_shift(size)?,
                13 => self.option_guest(size)?,
                14 => {
                    self.pf(
                        OPTIONS,
                        format_args!("\n\t\t[Option TSC2NSEC, {isize} bytes]\n"),
                    )?;
                    let (Some(mult), Some(shift), Some(off)) = (self.u32(), self.u32(), self.u64())
                    else {
                        return die("cannot read tsc2nsec multiplier, shift and offset");
                    };
                    self.pf(
                        OPTIONS,
                        format_args!(
                            "{} {} {} [multiplier, shift, offset]\n",
                            mult as i32, shift as i32, off
                        ),
                    )?;
                }
                16..=21 => {
                    let (name, v) = match id {
                        16 => ("HEADERS", HEAD_PAGE | HEAD_EVENT),
                        17 => ("FTRACE EVENTS", FTRACE_FORMAT),
                        18 => ("EVENT FORMATS", EVENT_SYSTEMS | EVENT_FORMAT),
                        19 => ("KALLSYMS", KALLSYMS),
                        20 => ("PRINTK", TRACE_PRINTK),
                        _ => ("CMDLINES", CMDLINES),
                    };
                    let Some(off) = self.u64() else {
                        return die(format!("cannot read the option {id} offset"));
                    };
                    // prepended: the sections are dumped in reverse order
                    self.sections.insert(0, (id, off, v));
                    self.pf(
                        OPTIONS,
                        format_args!("\t\t[Option {name}, {isize} bytes] @ {}\n", off as i64),
                    )?;
                }
                _ => {
                    self.pf(
                        OPTIONS,
                        format_args!(" {id} {isize}\t[Unknown option, size - skipping]\n"),
                    )?;
                }
            }
            // Continue right after the option whatever its decoder read
            // (trace-cmd continues where the decoder stopped, which only
            // differs for malformed options).
            self.seek(start + size as u64);
        }
    }

    /// trace-cmd's read_file_number on an option body of `size` bytes.
    pub(super) fn sized_number(&mut self, size: u32) -> Option<u64> {
        match size {
            1 | 2 | 4 | 8 => self.num(size as usize),
            _ => None,
        }
    }

    /// `\t\t[Option NAME, SIZE bytes]`: the line each option starts with.
    pub(super) fn option_head(&mut self, name: &str, size: u32) -> R<()> {
        self.pf(
            OPTIONS,
            format_args!("\t\t[Option {name}, {} bytes]\n", size as i32),
        )
    }

    pub(super) fn option_string(&mut self, size: u32, name: &str) -> R<()> {
        self.option_head(name, size)?;
        if size != 0 {
            self.dump_string(size as i32, OPTIONS)?;
        }
        Ok(())
    }

    /// A v7 section header at the file position, printed under `v`.
    /// Returns its flags.
    pub(super) fn section_header(&mut self, v: u32) -> R<u16> {
        let offset = self.pos;
        let Some(id) = self.u16() else {
            return die("cannot read the section id");
        };
        let Some(flags) = self.u16() else {
            return die("cannot read the section flags");
        };
        let Some(desc_id) = self.u32() else {
            return die("no section description");
        };
        let Some(size) = self.u64() else {
            return die("cannot read section size");
        };
        if self.on(v) {
            let desc = self
                .meta_string(desc_id as i32)
                .unwrap_or(b"Unknown")
                .to_vec();
            self.pf(v, format_args!("\t[Section {id} @ {}: \"", offset as i64))?;
            self.put(v, &desc)?;
            self.pf(
                v,
                format_args!("\", flags 0x{flags:X}, {} bytes]\n", size as i64),
            )?;
        }
        Ok(flags)
    }

    pub(super) fn option_buffer(&mut self, id: u16, size: u32) -> R<()> {
        let isize = size as i32;
        if isize < 8 {
            return die(format!("broken buffer option with size {isize}"));
        }
        let Some(offset) = self.u64() else {
            return die("cannot read the offset of the buffer option");
        };
        let Some(name) = self.string() else {
            return die("cannot read the name of the buffer option");
        };
        let m = OPTIONS | FLYRECORD;
        if self.version >= 7 {
            // the header of the section the option points at, read from the
            // file even while inside a compressed options block
            let saved_pos = self.pos;
            let saved_block = self.block.take();
            self.seek_file(offset, "buffer offset")?;
            self.section_header(FLYRECORD)?;
            self.pos = saved_pos;
            self.block = saved_block;
        }
        self.pf(m, format_args!("\t\t[Option BUFFER, {isize} bytes]\n"))?;
        self.pf(m, format_args!("{} [offset]\n", offset as i64))?;
        self.put(m, b"\"")?;
        self.put(m, &name)?;
        self.put(m, b"\" [name]\n")?;
        if self.version < 7 {
            return Ok(());
        }
        let Some(clock) = self.string() else {
            return die("cannot read clock of the buffer option");
        };
        self.put(m, b"\"")?;
        self.put(m, &clock)?;
        self.put(m, b"\" [clock]\n")?;
        if id == 3 {
            let Some(page_size) = self.u32() else {
                return die("cannot read the page size of the buffer option");
            };
            let page_size = page_size as i32;
            self.pf(m, format_args!("{page_size} [Page size, bytes]\n"))?;
            let Some(cpus) = self.u32() else {
                return die("cannot read the cpu count of the buffer option");
            };
            let cpus = cpus as i32;
            self.pf(m, format_args!("{cpus} [CPUs]:\n"))?;
            let mut total: u64 = 0;
            for i in 0..cpus.max(0) {
                let (Some(cid), Some(off), Some(sz)) = (self.u32(), self.u64(), self.u64()) else {
                    return die(format!("cannot read cpu {i} from the buffer option"));
                };
                total = total.wrapping_add(sz);
                self.pf(
                    m,
                    format_args!(
                        "   {} {}\t{}\t[id, data offset and size]\n",
                        cid as i32, off as i64, sz as i64
                    ),
                )?;
            }
            self.put(SUMMARY, b"\t[buffer \"")?;
            self.put(SUMMARY, &name)?;
            self.put(SUMMARY, b"\", \"")?;
            self.put(SUMMARY, &clock)?;
            self.pf(
                SUMMARY,
                format_args!(
                    "\" clock, {page_size} page size, {cpus} cpus, {} bytes flyrecord data]\n",
                    total as i64
                ),
            )?;
        } else {
            self.put(SUMMARY, b"\t[buffer \"")?;
            self.put(SUMMARY, &name)?;
            self.put(SUMMARY, b"\", \"")?;
            self.put(SUMMARY, &clock)?;
            self.put(SUMMARY, b"\" clock, latency data]\n")?;
        }
        Ok(())
    }

    /// A field of the time shift option's header: `width` bytes (0 when
    /// they cannot be read) taken from `size`, printed as `0x{v:X} [what]`.
    pub(super) fn shift_field(&mut self, width: usize, size: &mut i32, what: &str) -> R<u64> {
        let v = self.num(width).unwrap_or(0);
        *size -= width as i32;
        self.pf(OPTIONS, format_args!("0x{v:X} [{what}]\n"))?;
        Ok(v)
    }

    pub(super) fn option_time_shift(&mut self, size: u32) -> R<()> {
        let mut size = size as i32;
        if size < 12 {
            return self.pf(
                OPTIONS,
                format_args!("Broken time shift option, size {size}\n"),
            );
        }
        self.pf(
            OPTIONS,
            format_args!("\t\t[Option TimeShift, {size} bytes]\n"),
        )?;
        self.shift_field(8, &mut size, "peer's trace id")?;
        self.shift_field(4, &mut size, "peer's protocol flags")?;
        let cpus = self.shift_field(4, &mut size, "peer's CPU count")? as u32;
        // (times, offsets, scalings, fractions) per CPU
        type Samples = (Vec<u64>, Vec<i64>, Vec<i64>, Vec<i64>);
        let mut data: Vec<Samples> = Vec::new();
        let mut broken = false;
        'read: for j in 0..cpus {
            if size < 4 {
                broken = true;
                break;
            }
            let count = self.u32().unwrap_or(0);
            size -= 4;
            self.pf(
                OPTIONS,
                format_args!("{count} [samples count for CPU {}]\n", j as i32),
            )?;
            // every sample takes 24 bytes: a count larger than the rest is
            // broken (and must not allocate)
            let n = count as usize;
            let mut s: Samples = (Vec::new(), Vec::new(), Vec::new(), vec![0; 0]);
            for k in 0..3 {
                for _ in 0..n {
                    if size < 8 {
                        broken = true;
                        break 'read;
                    }
                    let v = self.u64().unwrap_or(0);
                    size -= 8;
                    match k {
                        0 => s.0.push(v),
                        1 => s.1.push(v as i64),
                        _ => s.2.push(v as i64),
                    }
                }
            }
            s.3 = vec![0; n];
            data.push(s);
        }
        if !broken && size > 0 {
            'frac: for s in data.iter_mut() {
                for f in s.3.iter_mut() {
                    if size < 8 {
                        broken = true;
                        break 'frac;
                    }
                    *f = self.u64().unwrap_or(0) as i64;
                    size -= 8;
                }
            }
        }
        if broken {
            return self.put(OPTIONS, b"Broken time shift option\n");
        }
        for s in &data {
            for i in 0..s.0.len() {
                self.pf(
                    OPTIONS,
                    format_args!(
                        "\t{} {} {} {}[offset * scaling >> fraction @ time]\n",
                        s.1[i], s.2[i], s.3[i] as u64, s.0[i]
                    ),
                )?;
            }
        }
        Ok(())
    }

    pub(super) fn option_guest(&mut self, size: u32) -> R<()> {
        self.option_head("GUEST", size)?;
        let Some(body) = self.read(size as usize).map(|b| b.to_vec()) else {
            return Ok(());
        };
        let e = self.endian;
        let name = cstr(&body);
        self.put(OPTIONS, name)?;
        self.put(OPTIONS, b" [Guest name]\n")?;
        let mut p = (name.len() + 1).min(body.len());
        let rest = |p: usize| body.len() - p;
        if rest(p) < 8 {
            return Ok(());
        }
        let id = e.read_uint(&body[p..], 8).unwrap_or(0);
        p += 8;
        self.pf(OPTIONS, format_args!("0x{id:X} [trace id]\n"))?;
        if rest(p) < 4 {
            return Ok(());
        }
        let cpus = e.read_uint(&body[p..], 4).unwrap_or(0) as i32;
        p += 4;
        self.pf(OPTIONS, format_args!("{cpus} [Guest CPUs]\n"))?;
        for _ in 0..cpus.max(0) {
            if rest(p) < 8 {
                break;
            }
            let cpu = e.read_uint(&body[p..], 4).unwrap_or(0) as i32;
            let pid = e.read_uint(&body[p + 4..], 4).unwrap_or(0) as i32;
            p += 8;
            self.pf(
                OPTIONS,
                format_args!("  {cpu} {pid} [guest cpu, host pid]\n"),
            )?;
        }
        Ok(())
    }
}
