//! Details of the container that only inspection tools need (`tracemux
//! info`): the chunk tables of compressed per-CPU data and the block headers
//! of compressed sections. Nothing here is needed to read events.

use crate::file::{section_id, CpuData, Section, TraceDat, SECTION_COMPRESSED};
use tracemux_core::bytes::Cursor;

/// What the chunk table of one CPU's compressed data says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChunkStats {
    /// Chunks announced by the table's count.
    pub chunks: u32,
    /// Chunks whose header and compressed bytes are all in the file.
    pub present: u32,
    /// Sum of the compressed sizes of the present chunks.
    pub compressed: u64,
    /// Sum of the uncompressed sizes of the present chunks.
    pub uncompressed: u64,
}

impl ChunkStats {
    /// Every announced chunk is in the file.
    pub fn complete(&self) -> bool {
        self.present == self.chunks
    }
}

/// Walk the chunk table of a CPU of a compressed buffer (`u32` count, then
/// per chunk `u32` compressed size, `u32` uncompressed size and the bytes),
/// without decompressing anything. Stops at the end of the file.
pub fn cpu_chunks(t: &TraceDat<'_>, c: &CpuData) -> ChunkStats {
    let mut s = ChunkStats::default();
    let Some(region) = usize::try_from(c.offset).ok().and_then(|o| t.data.get(o..)) else {
        return s;
    };
    let mut cur = Cursor::with_base(region, c.offset, t.endian, "flyrecord chunks");
    let Ok(count) = cur.u32() else {
        return s;
    };
    s.chunks = count;
    for _ in 0..count {
        let (Ok(cs), Ok(us)) = (cur.u32(), cur.u32()) else {
            break;
        };
        if cur.skip(cs as usize).is_err() {
            break;
        }
        s.present += 1;
        s.compressed += cs as u64;
        s.uncompressed += us as u64;
    }
    s
}

/// For a compressed metadata section (not a buffer's data, which is
/// compressed in chunks): the compressed and uncompressed sizes from its
/// block header.
pub fn section_block_sizes(t: &TraceDat<'_>, s: &Section) -> Option<(u32, u32)> {
    if s.flags & SECTION_COMPRESSED == 0
        || s.id == section_id::BUFFER
        || s.id == section_id::BUFFER_TEXT
    {
        return None;
    }
    let at = usize::try_from(s.offset.checked_add(16)?).ok()?;
    let b = t.data.get(at..at.checked_add(8)?)?;
    let cs = t.endian.read_uint(b, 4)? as u32;
    let us = t.endian.read_uint(&b[4..], 4)? as u32;
    Some((cs, us))
}

/// A short name for a v7 section id.
pub fn section_name(id: u16) -> &'static str {
    match id {
        section_id::OPTIONS => "options",
        section_id::BUFFER => "buffer data",
        section_id::STRINGS => "strings",
        section_id::HEADER_INFO => "headers",
        section_id::FTRACE_EVENTS => "ftrace events",
        section_id::EVENT_FORMATS => "event formats",
        section_id::KALLSYMS => "kallsyms",
        section_id::PRINTK => "printk",
        section_id::CMDLINES => "cmdlines",
        section_id::BUFFER_TEXT => "buffer text",
        23 => "BTF",
        25 => "modules",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracemux_core::bytes::Endian;

    fn container(data: &[u8]) -> TraceDat<'_> {
        let mut t = TraceDat::empty(data, 7, Endian::Little, 8, 4096);
        t.cpus = 1;
        t.kind = crate::file::DataKind::Flyrecord;
        t
    }

    #[test]
    fn chunk_table_walk_stops_at_the_end() {
        let mut d = vec![0u8; 8];
        d.extend_from_slice(&3u32.to_le_bytes());
        for (cs, us) in [(4u32, 100u32), (2, 50)] {
            d.extend_from_slice(&cs.to_le_bytes());
            d.extend_from_slice(&us.to_le_bytes());
            d.extend(vec![0xaau8; cs as usize]);
        }
        // third chunk header announces more bytes than the file has
        d.extend_from_slice(&10u32.to_le_bytes());
        d.extend_from_slice(&10u32.to_le_bytes());
        let t = container(&d);
        let s = cpu_chunks(
            &t,
            &CpuData {
                cpu: 0,
                offset: 8,
                size: 0,
            },
        );
        assert_eq!(
            s,
            ChunkStats {
                chunks: 3,
                present: 2,
                compressed: 6,
                uncompressed: 150
            }
        );
        assert!(!s.complete());
        let far = cpu_chunks(
            &t,
            &CpuData {
                cpu: 0,
                offset: 1 << 40,
                size: 0,
            },
        );
        assert_eq!(far, ChunkStats::default());
    }

    #[test]
    fn block_sizes_of_compressed_sections() {
        let mut d = vec![0u8; 16];
        d.extend_from_slice(&7u32.to_le_bytes());
        d.extend_from_slice(&99u32.to_le_bytes());
        let t = container(&d);
        let mut s = Section {
            id: section_id::KALLSYMS,
            flags: SECTION_COMPRESSED,
            desc_id: 0,
            desc: String::new(),
            offset: 0,
            size: 8,
        };
        assert_eq!(section_block_sizes(&t, &s), Some((7, 99)));
        s.id = section_id::BUFFER;
        assert_eq!(section_block_sizes(&t, &s), None);
        s.id = section_id::KALLSYMS;
        s.flags = 0;
        assert_eq!(section_block_sizes(&t, &s), None);
        assert_eq!(section_name(17), "ftrace events");
    }
}
