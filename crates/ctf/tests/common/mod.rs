//! Helpers shared by the babeltrace2 text tests: reference outputs,
//! babeltrace2 command lines as options, warnings without stream paths.
#![allow(dead_code)]

use std::io::Read;
use std::path::Path;

use tracemux_ctf::text::TextOptions;

/// A reference output: `NAME.txt`, or `NAME.txt.zst` decompressed.
pub fn read_ref(dir: &Path, name: &str) -> Option<Vec<u8>> {
    if let Ok(b) = std::fs::read(dir.join(format!("{name}.txt"))) {
        return Some(b);
    }
    let z = std::fs::read(dir.join(format!("{name}.txt.zst"))).ok()?;
    let mut out = Vec::new();
    zstd::stream::read::Decoder::new(&z[..])
        .ok()?
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

/// Options from a babeltrace2 command line (as in `exit-codes.txt`);
/// `None` for other sinks.
pub fn options(args: &[&str]) -> Option<TextOptions> {
    let mut o = TextOptions {
        timezone: Some("UTC".into()),
        ..TextOptions::default()
    };
    for a in args {
        let (k, v) = a.split_once('=').unwrap_or((a, ""));
        match k {
            "--clock-cycles" => o.clock_cycles = true,
            "--clock-seconds" => o.clock_seconds = true,
            "--clock-date" => o.clock_date = true,
            "--clock-gmt" => o.clock_gmt = true,
            "--no-delta" => o.no_delta = true,
            "--names" => o.set_names(v).ok()?,
            "--fields" => o.set_fields(v).ok()?,
            "trace" => {}
            _ => return None,
        }
    }
    Some(o)
}

/// Warnings without the stream file paths (those of the recording
/// machine in the references).
pub fn strip_stream_names(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    s.lines()
        .map(
            |l| match (l.find("within stream \""), l.rfind("\" (stream class")) {
                (Some(a), Some(b)) if b > a => format!("{}{}", &l[..a], &l[b + 1..]),
                _ => l.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}
