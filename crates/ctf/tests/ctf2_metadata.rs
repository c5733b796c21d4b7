//! Every CTF 2 metadata stream of the fixtures (and of the shared corpus,
//! when present) lowers to the IR.

use std::path::{Path, PathBuf};

fn case_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = tracemux_testkit::sorted_entries(root);
    out.retain(|p| p.join("trace/metadata").is_file());
    out
}

fn check(root: &Path) -> usize {
    let dirs = case_dirs(root);
    let mut bad = Vec::new();
    for d in &dirs {
        let data = std::fs::read(d.join("trace/metadata")).unwrap();
        if let Err(e) = tracemux_ctf::ctf2::parse_metadata(&data) {
            bad.push(format!("{}: {e}", d.display()));
        }
    }
    tracemux_testkit::assert_all_passed(&bad, dirs.len(), "failed");
    dirs.len()
}

#[test]
fn fixtures_parse() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ctf2");
    assert_eq!(check(&root), 47);
}

#[test]
fn corpus_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/ctf2");
    if root.is_dir() {
        assert_eq!(check(&root), 47);
    }
}

mod twins {
    //! The CTF 2 translation of a CTF 1.8 conformance case lowers to the same
    //! IR as the TSDL original, up to what CTF 2 spells differently: the
    //! UUID is a BLOB, there is no separate packet-beginning role, and the
    //! translation may list classes, options and mappings in another order.
    use tracemux_ctf::ir::*;

    fn norm_fc(fc: &mut FieldClass, clocks: &[usize]) {
        match fc {
            FieldClass::Int(i) => {
                i.roles.0 &= !Roles::PACKET_BEGIN_DEFAULT_CLOCK_TIMESTAMP.0;
                i.mapped_clock = i.mapped_clock.map(|c| clocks[c]);
                i.mappings.sort_by(|a, b| a.name.cmp(&b.name));
            }
            FieldClass::Array(a) if a.roles.has(Roles::METADATA_STREAM_UUID) => {
                *fc = FieldClass::Blob(BlobClass {
                    length: a.length.clone(),
                    media_type: "application/octet-stream".into(),
                    roles: a.roles,
                });
            }
            FieldClass::Array(a) => norm_fc(&mut a.element, clocks),
            FieldClass::Struct(s) => norm_struct(s, clocks),
            FieldClass::Variant(v) => {
                v.options.sort_by_key(|o| o.ranges.first().map(|r| r.lower));
                v.options
                    .iter_mut()
                    .for_each(|o| norm_fc(&mut o.class, clocks));
            }
            FieldClass::Optional(o) => norm_fc(&mut o.class, clocks),
            _ => {}
        }
    }

    fn norm_struct(s: &mut StructClass, clocks: &[usize]) {
        s.members
            .iter_mut()
            .for_each(|m| norm_fc(&mut m.class, clocks));
    }

    fn norm_opt(s: &mut Option<StructClass>, clocks: &[usize]) {
        if let Some(s) = s {
            norm_struct(s, clocks);
        }
    }

    pub fn normalize(mut tc: TraceClass) -> TraceClass {
        tc.version = CtfVersion::Ctf2;
        tc.name = None;
        // CTF 1.8: `trace.byte_order`; CTF 2: the packet magic's.
        tc.native_byte_order = ByteOrder::Little;
        // Clocks sorted by name; `clocks[old]` is the new index.
        let mut order: Vec<usize> = (0..tc.clocks.len()).collect();
        order.sort_by(|&a, &b| tc.clocks[a].name.cmp(&tc.clocks[b].name));
        let mut clocks = vec![0; order.len()];
        for (new, &old) in order.iter().enumerate() {
            clocks[old] = new;
        }
        tc.clocks = order.iter().map(|&o| tc.clocks[o].clone()).collect();
        let clocks = &clocks;
        norm_opt(&mut tc.packet_header, clocks);
        tc.stream_classes.sort_by_key(|s| s.id);
        for sc in &mut tc.stream_classes {
            sc.default_clock = sc.default_clock.map(|c| clocks[c]);
            norm_opt(&mut sc.packet_context, clocks);
            norm_opt(&mut sc.event_header, clocks);
            norm_opt(&mut sc.event_common_context, clocks);
            sc.event_classes.sort_by_key(|e| e.id);
            for ec in &mut sc.event_classes {
                norm_opt(&mut ec.specific_context, clocks);
                norm_opt(&mut ec.payload, clocks);
            }
        }
        tc
    }
}

fn twin_pairs(ctf1: &Path, ctf2: &Path) -> Vec<(PathBuf, PathBuf)> {
    case_dirs(ctf2)
        .into_iter()
        .filter_map(|d2| {
            let n = d2
                .file_name()?
                .to_str()?
                .strip_prefix("auto-translated--")?;
            let d1 = ctf1.join(n);
            d1.is_dir().then_some((d1, d2))
        })
        .collect()
}

fn check_twins(ctf1: &Path, ctf2: &Path) -> usize {
    let pairs = twin_pairs(ctf1, ctf2);
    let mut bad = Vec::new();
    for (d1, d2) in &pairs {
        let m1 = std::fs::read(d1.join("trace/metadata")).unwrap();
        let m2 = std::fs::read(d2.join("trace/metadata")).unwrap();
        let t1 = twins::normalize(tracemux_ctf::tsdl::parse_metadata(&m1).unwrap());
        let t2 = twins::normalize(tracemux_ctf::ctf2::parse_metadata(&m2).unwrap());
        if t1 != t2 {
            bad.push(format!(
                "{}\n--- CTF 1.8:\n{t1:#?}\n--- CTF 2:\n{t2:#?}",
                d2.display()
            ));
        }
    }
    tracemux_testkit::assert_all_passed(&bad, pairs.len(), "differ");
    pairs.len()
}

#[test]
fn fixture_twins_lower_alike() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    assert_eq!(
        check_twins(&root.join("ctf/conformance"), &root.join("ctf2")),
        35
    );
}

#[test]
fn corpus_twins_lower_alike() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    if root.join("ctf2").is_dir() {
        assert_eq!(
            check_twins(&root.join("ctf1-conformance"), &root.join("ctf2")),
            35
        );
    }
}

/// Every TSDL metadata file under `dir` (recursively; `metadata.zst` too).
fn tsdl_files(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            tsdl_files(&p, out);
        } else if name == "metadata" {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        } else if name == "metadata.zst" {
            let c = std::fs::read(&p).unwrap();
            out.push((p.clone(), zstd::decode_all(&c[..]).unwrap()));
        }
    }
}

/// What the CTF 2 writer drops on purpose (see `ctf2::write_metadata`).
fn roundtrip_normalize(mut tc: TraceClass) -> TraceClass {
    fn fc(f: &mut FieldClass) {
        match f {
            FieldClass::Int(i) => {
                i.text = false;
                i.mapped_clock = None;
            }
            FieldClass::Array(a) => fc(&mut a.element),
            FieldClass::Struct(s) => s.members.iter_mut().for_each(|m| fc(&mut m.class)),
            FieldClass::Variant(v) => {
                v.options.retain(|o| !o.ranges.is_empty());
                v.options.iter_mut().for_each(|o| fc(&mut o.class));
            }
            FieldClass::Optional(o) => fc(&mut o.class),
            _ => {}
        }
    }
    let st = |s: &mut Option<StructClass>| {
        if let Some(s) = s {
            s.members.iter_mut().for_each(|m| fc(&mut m.class));
        }
    };
    st(&mut tc.packet_header);
    for sc in &mut tc.stream_classes {
        st(&mut sc.packet_context);
        st(&mut sc.event_header);
        st(&mut sc.event_common_context);
        for ec in &mut sc.event_classes {
            st(&mut ec.specific_context);
            st(&mut ec.payload);
        }
    }
    twins::normalize(tc)
}

use tracemux_ctf::ir::{FieldClass, StructClass, TraceClass};

/// CTF 1.8 metadata written as CTF 2 reads back as the same trace class.
fn check_roundtrip(dirs: &[PathBuf]) -> usize {
    let mut files = Vec::new();
    for d in dirs {
        tsdl_files(d, &mut files);
    }
    let mut bad = Vec::new();
    let mut n = 0;
    for (p, data) in &files {
        let Ok(t1) = tracemux_ctf::tsdl::parse_metadata(data) else {
            continue;
        };
        n += 1;
        let json = match tracemux_ctf::ctf2::write_metadata(&t1) {
            Ok(j) => j,
            Err(e) => {
                bad.push(format!("{}: write: {e}", p.display()));
                continue;
            }
        };
        let t2 = match tracemux_ctf::ctf2::parse(json.as_bytes()) {
            Ok(t) => t,
            Err(e) => {
                bad.push(format!("{}: read back: {e}", p.display()));
                continue;
            }
        };
        let (a, b) = (roundtrip_normalize(t1), roundtrip_normalize(t2));
        if a != b {
            bad.push(format!(
                "{}: differs\n--- CTF 1.8:\n{a:#?}\n--- CTF 2:\n{b:#?}",
                p.display()
            ));
        }
    }
    tracemux_testkit::assert_all_passed(&bad, n, "failed");
    n
}

#[test]
fn fixtures_roundtrip_through_ctf2() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ctf");
    assert!(check_roundtrip(&[root]) >= 40);
}

#[test]
fn corpus_roundtrips_through_ctf2() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    check_roundtrip(&[root.join("ctf"), root.join("ctf1-conformance")]);
}

/// CTF 2 metadata written back by `ctf2::write_metadata` reads as the same
/// trace class.
fn check_ctf2_roundtrip(root: &Path) -> usize {
    let dirs = case_dirs(root);
    let mut bad = Vec::new();
    for d in &dirs {
        let data = std::fs::read(d.join("trace/metadata")).unwrap();
        let t1 = tracemux_ctf::ctf2::parse_metadata(&data).unwrap();
        let json = tracemux_ctf::ctf2::write_metadata(&t1).unwrap();
        match tracemux_ctf::ctf2::parse(json.as_bytes()) {
            Ok(t2) if t2 == t1 => {}
            Ok(t2) => bad.push(format!("{}: differs\n{t1:#?}\n{t2:#?}", d.display())),
            Err(e) => bad.push(format!("{}: {e}\n{json}", d.display())),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    dirs.len()
}

#[test]
fn fixtures_roundtrip_as_ctf2() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ctf2");
    assert_eq!(check_ctf2_roundtrip(&root), 47);
}
