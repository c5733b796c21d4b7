//! Decompression of v7 sections and flyrecord chunks.

use std::io::Read;
use tracemux_core::error::{Error, ErrorKind, Result};

/// The compression algorithm named in a v7 file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    None,
    Zstd,
    Zlib,
}

impl Codec {
    pub fn from_name(name: &str) -> Option<Codec> {
        match name {
            "none" | "" => Some(Codec::None),
            "zstd" => Some(Codec::Zstd),
            "zlib" => Some(Codec::Zlib),
            _ => None,
        }
    }
}

/// Above this declared size, output grows with the data actually produced
/// instead of being allocated up front, so a lying size field cannot make
/// us allocate gigabytes.
const PREALLOC_LIMIT: usize = 64 << 20;

/// A reusable decompression context (creating a zstd context per chunk
/// costs more than decompressing a small chunk).
#[derive(Default)]
pub struct Decoder {
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Decoder")
    }
}

impl Decoder {
    /// Decompress `input` into `out` (cleared first), expecting `expected`
    /// bytes. `section` and `offset` locate the block for errors. A
    /// decoder keeps its context from one block to the next.
    pub fn decompress(
        &mut self,
        codec: Codec,
        input: &[u8],
        expected: usize,
        out: &mut Vec<u8>,
        section: &'static str,
        offset: u64,
    ) -> Result<()> {
        let ctx = self;
        out.clear();
        let fail = |m: String| Error::new(ErrorKind::Decompress(m), section, offset);
        match codec {
            Codec::None => out.extend_from_slice(input),
            Codec::Zstd if expected <= PREALLOC_LIMIT => {
                out.reserve(expected);
                if ctx.zstd.is_none() {
                    ctx.zstd =
                        Some(zstd::bulk::Decompressor::new().map_err(|e| fail(e.to_string()))?);
                }
                let d = ctx.zstd.as_mut().expect("created above");
                d.decompress_to_buffer(input, out)
                    .map_err(|e| fail(e.to_string()))?;
            }
            Codec::Zstd => {
                let dec =
                    zstd::stream::read::Decoder::new(input).map_err(|e| fail(e.to_string()))?;
                dec.take(expected as u64 + 1)
                    .read_to_end(out)
                    .map_err(|e| fail(e.to_string()))?;
            }
            Codec::Zlib => {
                if expected <= PREALLOC_LIMIT {
                    out.reserve(expected);
                }
                flate2::read::ZlibDecoder::new(input)
                    .take(expected as u64 + 1)
                    .read_to_end(out)
                    .map_err(|e| fail(e.to_string()))?;
            }
        }
        if out.len() != expected {
            return Err(fail(format!(
                "expected {expected} bytes after decompression, got {}",
                out.len()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_checks_size() {
        let data: Vec<u8> = (0..10000u32).map(|i| (i % 7) as u8).collect();
        let z = zstd::bulk::compress(&data, 3).unwrap();
        let mut out = Vec::new();
        Decoder::default()
            .decompress(Codec::Zstd, &z, data.len(), &mut out, "t", 0)
            .unwrap();
        assert_eq!(out, data);
        assert!(Decoder::default()
            .decompress(Codec::Zstd, &z, data.len() + 1, &mut out, "t", 0)
            .is_err());
        assert!(Decoder::default()
            .decompress(Codec::Zstd, &z[..10], data.len(), &mut out, "t", 0)
            .is_err());
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut e, &data).unwrap();
        let zl = e.finish().unwrap();
        Decoder::default()
            .decompress(Codec::Zlib, &zl, data.len(), &mut out, "t", 0)
            .unwrap();
        assert_eq!(out, data);
        assert!(Decoder::default()
            .decompress(Codec::Zlib, &zl, 5, &mut out, "t", 0)
            .is_err());
    }
}
