//! uftrace directory metadata: the `info` header and text sections,
//! `task.txt`, a `sid-*.map`, a `.sym` table (demangled in every mode) and
//! a `.dbg` file, each parsed on its own and then together as a whole
//! directory (`uftrace info`, `info --task`, replay of a recording whose
//! data file is empty). The input is cut into the five files at split
//! points taken from its first ten bytes.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tracemux_uftrace::argspec::{parse_argspec, AutoArgs};
use tracemux_uftrace::enums::EnumDefs;
use tracemux_uftrace::events::UserEvents;
use tracemux_uftrace::replay::{replay, ReplayOptions};
use tracemux_uftrace::symbols::SessionMaps;
use tracemux_uftrace::{Demangle, FileHeader, InfoSections, Module, Sessions};

/// A private scratch directory for the whole-directory pass.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d =
            std::env::temp_dir().join(format!("tracemux-fuzz-uftrace-info-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

fn parts(data: &[u8]) -> Option<[&[u8]; 5]> {
    if data.len() < 10 {
        return None;
    }
    let rest = &data[10..];
    let mut cut = [0usize; 4];
    let mut prev = 0;
    for (i, c) in cut.iter_mut().enumerate() {
        let v = u16::from_le_bytes([data[2 * i], data[2 * i + 1]]) as usize;
        *c = (prev + v).min(rest.len());
        prev = *c;
    }
    Some([
        &rest[..cut[0]],
        &rest[cut[0]..cut[1]],
        &rest[cut[1]..cut[2]],
        &rest[cut[2]..cut[3]],
        &rest[cut[3]..],
    ])
}

fuzz_target!(|data: &[u8]| {
    let Some([info, task, map, sym, dbg]) = parts(data) else {
        return;
    };
    // each parser alone
    let mut lp64 = true;
    if let Ok(h) = FileHeader::parse(info) {
        lp64 = h.is_lp64();
        let start = (h.header_size as usize).clamp(40, info.len().max(40));
        let (s, _) =
            InfoSections::parse(info.get(start..).unwrap_or(&[]), start as u64, h.info_mask);
        for spec in [&s.argspec, &s.retspec].into_iter().flatten() {
            for item in spec.split(';') {
                let _ = parse_argspec(item, lp64);
            }
        }
        for mode in [Demangle::No, Demangle::Simple, Demangle::Full] {
            let _ = AutoArgs::build(
                s.autoarg.as_deref(),
                s.autoret.as_deref(),
                s.autoenum.as_deref(),
                lp64,
                mode,
            );
        }
    }
    let task_text = String::from_utf8_lossy(task);
    let mut sessions = Sessions::default();
    let _ = sessions.parse(&task_text, true);
    let _ = UserEvents::parse(&task_text);
    let map_text = String::from_utf8_lossy(map);
    let maps = SessionMaps::parse(&map_text);
    for m in &maps.maps {
        let _ = maps.find(m.start);
    }
    let sym_text = String::from_utf8_lossy(sym);
    for mode in [Demangle::No, Demangle::Simple, Demangle::Full] {
        let mut module = Module::default();
        module.load_symbols(&sym_text, mode);
        for s in module.symbols.iter().take(64) {
            let _ = module.find(s.addr);
        }
    }
    let dbg_text = String::from_utf8_lossy(dbg);
    let mut module = Module::default();
    let _ = module.load_debug(&dbg_text);
    let mut enums = EnumDefs::default();
    let _ = enums.parse(&dbg_text);
    for item in dbg_text.split([';', '\n']).take(64) {
        let _ = parse_argspec(item, lp64);
    }

    // the whole directory: the map is named after the session of the
    // first SESS line, the symbol file after the executable name
    let dir = scratch();
    let _ = std::fs::remove_dir_all(dir);
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let sid = sessions
        .sessions
        .first()
        .map(|s| s.sid.clone())
        .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric()))
        .unwrap_or_else(|| "0".into());
    let files: [(String, &[u8]); 5] = [
        ("info".into(), info),
        ("task.txt".into(), task),
        (format!("sid-{sid}.map"), map),
        ("prog.sym".into(), sym),
        ("prog.dbg".into(), dbg),
    ];
    for (name, bytes) in files {
        if std::fs::write(dir.join(name), bytes).is_err() {
            return;
        }
    }
    let _ = tracemux_uftrace::info::info(dir, &mut std::io::sink(), &mut std::io::sink());
    let _ = tracemux_uftrace::info::info_task(dir, &mut std::io::sink(), &mut std::io::sink());
    let _ = replay(
        dir,
        &ReplayOptions::default(),
        &mut std::io::sink(),
        &mut std::io::sink(),
    );
});
