//! The perf.data header in its two forms.
//!
//! File mode (`perf record -o FILE`): a 104-byte `perf_file_header`
//! (`PERFILE2`, its size, the size of one attribute entry, the attrs, data
//! and event_types sections as {offset, size}, and a 256-bit map of the
//! feature sections present), the attrs section (each entry a
//! `perf_event_attr` followed by the {offset, size} of its id array), the
//! data section (the records), and after the data section one {offset,
//! size} per feature bit set, in bit order.
//!
//! Pipe mode (`perf record -o -`): a 16-byte header (`PERFILE2`, size 16);
//! everything else arrives as records: HEADER_ATTR (an attribute and its
//! ids), HEADER_TRACING_DATA (followed by the tracing data itself),
//! HEADER_FEATURE (one feature section), EVENT_UPDATE (a name)...
//!
//! The byte order is the one in which the magic reads `PERFILE2`.

use tracemux_core::{Cursor, Endian, Error, Result};

use crate::attr::Attr;

/// `PERFILE2` read as a little-endian u64.
pub const MAGIC: u64 = 0x3245_4c49_4652_4550;

/// Whether `data` starts like a perf.data file (either mode, either byte
/// order).
pub fn sniff(data: &[u8]) -> bool {
    data.len() >= 16 && (&data[..8] == b"PERFILE2" || &data[..8] == b"2ELIFREP")
}

/// A {offset, size} pair of the file header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Section {
    pub offset: u64,
    pub size: u64,
}

impl Section {
    fn parse(c: &mut Cursor<'_>) -> Result<Section> {
        Ok(Section {
            offset: c.u64()?,
            size: c.u64()?,
        })
    }

    /// The bytes of this section in `data`, or an error naming it.
    pub fn bytes<'a>(&self, data: &'a [u8], what: &'static str) -> Result<&'a [u8]> {
        let end = self.offset.checked_add(self.size);
        match end {
            Some(end) if end <= data.len() as u64 => Ok(&data[self.offset as usize..end as usize]),
            _ => Err(Error::invalid(
                format!(
                    "section at {:#x} of {} bytes runs past the end of the file ({} bytes)",
                    self.offset,
                    self.size,
                    data.len()
                ),
                what,
                self.offset,
            )),
        }
    }
}

/// One event of the recording: its attribute and the ids its records carry.
#[derive(Debug, Clone, Default)]
pub struct EventAttr {
    pub attr: Attr,
    pub ids: Vec<u64>,
    /// The name perf gave it (EVENT_DESC or EVENT_UPDATE), when stored.
    pub name: Option<String>,
}

/// What the header of a file says (pipe mode: the 16 bytes only).
#[derive(Debug, Clone, Default)]
pub struct FileHeader {
    pub endian: Option<Endian>,
    pub pipe: bool,
    pub header_size: u64,
    pub attr_size: u64,
    pub attrs: Section,
    pub data: Section,
    pub event_types: Section,
    /// The 256 feature bits.
    pub features: [u64; 4],
}

impl FileHeader {
    pub fn endian(&self) -> Endian {
        self.endian.unwrap_or(Endian::Little)
    }

    /// Whether feature bit `id` is set.
    pub fn has_feature(&self, id: u32) -> bool {
        id < 256 && self.features[(id / 64) as usize] & (1 << (id % 64)) != 0
    }
}

/// Read the header: the magic decides the byte order; a size of 16 is a
/// pipe header.
pub fn parse_header(data: &[u8]) -> Result<FileHeader> {
    let magic = data
        .get(..8)
        .ok_or_else(|| Error::eof("header", data.len() as u64))?;
    let endian = if magic == b"PERFILE2" {
        Endian::Little
    } else if magic == b"2ELIFREP" {
        Endian::Big
    } else if magic == b"PERFFILE" {
        return Err(Error::new(
            tracemux_core::ErrorKind::Unsupported("perf.data version 1 (PERFFILE)".into()),
            "header",
            0,
        ));
    } else {
        return Err(Error::new(tracemux_core::ErrorKind::BadMagic, "header", 0));
    };
    let mut c = Cursor::new(data, endian, "header");
    c.skip(8)?;
    let size = c.u64()?;
    let mut h = FileHeader {
        endian: Some(endian),
        header_size: size,
        ..FileHeader::default()
    };
    if size == 16 {
        h.pipe = true;
        return Ok(h);
    }
    if size < 104 {
        return Err(c.invalid(format!(
            "header size {size} (expected 104, or 16 for a pipe)"
        )));
    }
    h.attr_size = c.u64()?;
    h.attrs = Section::parse(&mut c)?;
    h.data = Section::parse(&mut c)?;
    h.event_types = Section::parse(&mut c)?;
    for w in &mut h.features {
        *w = c.u64()?;
    }
    Ok(h)
}

/// Read the attrs section of a file: `attr_size`-byte entries, each an
/// attribute and the {offset, size} of its ids.
pub fn parse_attrs(data: &[u8], h: &FileHeader) -> Result<Vec<EventAttr>> {
    let e = h.endian();
    let sect = h.attrs.bytes(data, "attrs")?;
    if h.attr_size < 64 + 16 {
        return Err(Error::invalid(
            format!("attribute entry size {} below 80", h.attr_size),
            "header",
            16,
        ));
    }
    let n = sect.len() as u64 / h.attr_size;
    let mut out = Vec::new();
    for i in 0..n {
        let off = i * h.attr_size;
        let entry = &sect[off as usize..(off + h.attr_size) as usize];
        let mut c = Cursor::with_base(entry, h.attrs.offset + off, e, "attrs");
        let attr_bytes = (h.attr_size - 16) as usize;
        let mut ac = c.sub(attr_bytes)?;
        let attr = Attr::parse(&mut ac)?;
        let ids = Section::parse(&mut c)?;
        let idb = ids.bytes(data, "attr ids")?;
        let ids = idb
            .chunks_exact(8)
            .map(|w| e.u64(w.try_into().unwrap_or([0; 8])))
            .collect();
        out.push(EventAttr {
            attr,
            ids,
            name: None,
        });
    }
    Ok(out)
}

/// The {offset, size} of each feature present, in bit order, from the table
/// after the data section.
pub fn feature_table(data: &[u8], h: &FileHeader) -> Result<Vec<(u32, Section)>> {
    let start = h
        .data
        .offset
        .checked_add(h.data.size)
        .ok_or_else(|| Error::invalid("data section end overflows", "header", 40))?;
    let mut out = Vec::new();
    let n: u32 = h.features.iter().map(|w| w.count_ones()).sum();
    let table = Section {
        offset: start,
        size: n as u64 * 16,
    };
    let b = table.bytes(data, "feature table")?;
    let mut c = Cursor::with_base(b, start, h.endian(), "feature table");
    for id in 0..256u32 {
        if h.has_feature(id) {
            out.push((id, Section::parse(&mut c)?));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_and_modes() {
        let mut pipe = b"PERFILE2".to_vec();
        pipe.extend_from_slice(&16u64.to_le_bytes());
        let h = parse_header(&pipe).unwrap();
        assert!(h.pipe && h.endian == Some(Endian::Little));
        let mut be = b"2ELIFREP".to_vec();
        be.extend_from_slice(&16u64.to_be_bytes());
        assert_eq!(parse_header(&be).unwrap().endian, Some(Endian::Big));
        assert!(parse_header(b"PERFILE3xxxxxxxx").is_err());
        assert!(parse_header(b"PERFILE2").is_err());
        let mut short = b"PERFILE2".to_vec();
        short.extend_from_slice(&50u64.to_le_bytes());
        assert!(parse_header(&short).is_err());
    }

    #[test]
    fn section_past_the_end() {
        let s = Section {
            offset: 10,
            size: u64::MAX,
        };
        let e = s.bytes(&[0; 20], "data").unwrap_err();
        assert_eq!(e.section, "data");
    }
}
