//! The TRACING_DATA feature (file mode) or HEADER_TRACING_DATA record (pipe
//! mode): what perf's trace-event-info.c writes, which is the front of a
//! trace.dat version 6 file: `\x17\x08Dtracing`, the version string `0.6`
//! (or `0.5`), the byte order (0 little, 1 big), the size of a long, the
//! page size; `header_page` and `header_event` (a tag and a u64 size each);
//! the ftrace formats (a u32 count, each a u64 size and the text); the event
//! systems (a u32 count, each a name, a u32 count of formats and each
//! format as a u64 size and text); kallsyms (u32 size; perf writes 0); the
//! printk formats (u32 size); from version 0.6 on, saved cmdlines (u64
//! size).
//!
//! Formats are parsed with `tracemux_ftrace::format`; the printers are
//! libtraceevent's `print fmt` engine without plugins, since perf 6.1 as
//! Debian builds it prints tracepoints by their bare `print fmt` (checked on
//! sched_switch, whose trace-cmd plugin would print differently).

use std::collections::HashMap;
use std::sync::Arc;

use tracemux_core::model::FieldDef;
use tracemux_core::tables::{PrintkTable, SymbolTable};
use tracemux_core::{Cursor, Endian, Error, Result};
use tracemux_ftrace::format::parse_format;
use tracemux_ftrace::printfmt::FtracePrinter;

/// One tracepoint format.
#[derive(Debug, Clone)]
pub struct TpFormat {
    pub id: u32,
    pub system: String,
    pub name: String,
    pub common_fields: Vec<FieldDef>,
    pub fields: Vec<FieldDef>,
    pub print_fmt: String,
    /// The raw format text.
    pub text: String,
    pub printer: Arc<FtracePrinter>,
}

/// What the tracing data holds.
#[derive(Debug, Clone, Default)]
pub struct TracingData {
    pub version: String,
    pub endian: Option<Endian>,
    pub long_size: u32,
    pub page_size: u32,
    pub header_page: String,
    pub header_event: String,
    pub ftrace_formats: usize,
    pub formats: Vec<TpFormat>,
    pub by_id: HashMap<u32, usize>,
    pub kallsyms: SymbolTable,
    pub printk: PrintkTable,
    pub cmdlines: Vec<u8>,
    /// Formats that could not be parsed: (system, error text).
    pub bad_formats: Vec<(String, String)>,
    /// The whole section's size.
    pub size: u64,
}

impl TracingData {
    /// The format of tracepoint id `id` (the attribute's `config`).
    pub fn format(&self, id: u64) -> Option<&TpFormat> {
        let id = u32::try_from(id).ok()?;
        self.by_id.get(&id).map(|&i| &self.formats[i])
    }
}

fn text_of(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Parse tracing data at absolute offset `base`.
pub fn parse_tracing_data(b: &[u8], base: u64) -> Result<TracingData> {
    let mut c = Cursor::with_base(b, base, Endian::Little, "tracing data");
    let magic = c.bytes(10)?;
    if magic != b"\x17\x08\x44tracing" {
        return Err(Error::new(
            tracemux_core::ErrorKind::BadMagic,
            "tracing data",
            base,
        ));
    }
    let version = String::from_utf8_lossy(c.cstr()?).into_owned();
    let endian = if c.u8()? == 0 {
        Endian::Little
    } else {
        Endian::Big
    };
    c.set_endian(endian);
    let long_size = c.u8()? as u32;
    let page_size = c.u32()?;
    let mut t = TracingData {
        version,
        endian: Some(endian),
        long_size,
        page_size,
        ..TracingData::default()
    };
    c.set_section("tracing data header_page");
    let tag = c.bytes(12)?;
    if tag != b"header_page\0" {
        return Err(c.invalid("expected \"header_page\""));
    }
    let n = c.u64()?;
    t.header_page = text_of(c.bytes_u64(n)?);
    c.set_section("tracing data header_event");
    let tag = c.bytes(13)?;
    if tag != b"header_event\0" {
        return Err(c.invalid("expected \"header_event\""));
    }
    let n = c.u64()?;
    t.header_event = text_of(c.bytes_u64(n)?);
    c.set_section("tracing data ftrace formats");
    let n = c.u32()?;
    for _ in 0..n {
        let len = c.u64()?;
        let text = text_of(c.bytes_u64(len)?);
        t.add_format("ftrace", text);
        t.ftrace_formats += 1;
    }
    c.set_section("tracing data event formats");
    let systems = c.u32()?;
    for _ in 0..systems {
        let system = String::from_utf8_lossy(c.cstr()?).into_owned();
        let n = c.u32()?;
        for _ in 0..n {
            let len = c.u64()?;
            let text = text_of(c.bytes_u64(len)?);
            t.add_format(&system, text);
        }
    }
    c.set_section("tracing data kallsyms");
    let n = c.u32()?;
    let ks = c.bytes(n as usize)?;
    tracemux_ftrace::tables::parse_kallsyms(ks, &mut t.kallsyms);
    c.set_section("tracing data printk");
    let n = c.u32()?;
    let pk = c.bytes(n as usize)?;
    tracemux_ftrace::tables::parse_printk(pk, &mut t.printk);
    if t.version.as_str() >= "0.6" && !c.is_empty() {
        c.set_section("tracing data cmdlines");
        let n = c.u64()?;
        t.cmdlines = c.bytes_u64(n)?.to_vec();
    }
    t.size = c.pos() as u64;
    Ok(t)
}

impl TracingData {
    fn add_format(&mut self, system: &str, text: String) {
        match parse_format(&text, self.long_size, system == "ftrace") {
            Ok(f) => {
                let printer = FtracePrinter::new(&f, system, self.long_size).without_plugin();
                self.by_id.insert(f.id, self.formats.len());
                self.formats.push(TpFormat {
                    id: f.id,
                    system: system.to_string(),
                    name: f.name,
                    common_fields: f.common_fields,
                    fields: f.fields,
                    print_fmt: f.print_fmt,
                    text,
                    printer: Arc::new(printer),
                });
            }
            Err(e) => self.bad_formats.push((system.to_string(), e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tracing data blob with one event format.
    pub fn blob(fmt: &str) -> Vec<u8> {
        let mut b = b"\x17\x08\x44tracing0.6\0".to_vec();
        b.push(0);
        b.push(8);
        b.extend_from_slice(&4096u32.to_le_bytes());
        b.extend_from_slice(b"header_page\0");
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(b"header_event\0");
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(b"sys\0");
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&(fmt.len() as u64).to_le_bytes());
        b.extend_from_slice(fmt.as_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&0u64.to_le_bytes());
        b
    }

    const FMT: &str = "name: ev\nID: 7\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\tfield:int x;\toffset:8;\tsize:4;\tsigned:1;\n\nprint fmt: \"x=%d\", REC->x\n";

    #[test]
    fn one_format_and_every_truncation() {
        let b = blob(FMT);
        let t = parse_tracing_data(&b, 0).unwrap();
        assert_eq!(t.format(7).unwrap().name, "ev");
        assert_eq!(t.format(7).unwrap().system, "sys");
        assert_eq!(t.size, b.len() as u64);
        for n in 0..b.len() - 8 {
            assert!(parse_tracing_data(&b[..n], 0).is_err(), "{n}");
        }
    }
}
