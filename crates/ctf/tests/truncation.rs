//! Damaged input: stream files cut at many offsets and metadata cut or
//! corrupted. Nothing panics; in lenient mode every event of the packets
//! before the cut is printed (and nothing that the intact trace does not
//! have); in strict mode the damage is an error.

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use common::{copy_tree, fixtures};
use tracemux_ctf::text::{report, TextOptions};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tracemux-ctf-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn opts(strict: bool) -> TextOptions {
    TextOptions {
        strict,
        timezone: Some("UTC".into()),
        ..TextOptions::default()
    }
}

/// Lines without the delta (which depends on the previous printed line)
/// and without string values (babeltrace2's stale empty strings depend on
/// which events came before).
fn norm(out: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| {
            let l = match (l.find(" (+"), l.find(") ")) {
                (Some(a), Some(b)) if b > a => format!("{}{}", &l[..a], &l[b + 1..]),
                _ => l.to_string(),
            };
            tracemux_testkit::without_strings(&l)
        })
        .collect()
}

fn run(dir: &Path, strict: bool) -> (Result<u64, String>, Vec<u8>) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let r = report(&[dir.to_path_buf()], &opts(strict), &mut out, &mut err)
        .map(|s| s.events)
        .map_err(|e| e.to_string());
    (r, out)
}

/// Packet end offsets of a stream file (from its packets' sizes).
fn packet_ends(meta: &Path, data: &[u8]) -> Vec<u64> {
    let tc = tracemux_ctf::tsdl::parse_metadata(&std::fs::read(meta).unwrap()).unwrap();
    let p = tracemux_ctf::decode::Program::compile(&tc).unwrap();
    let (pk, _) = tracemux_ctf::stream::index_file(&p, tc.uuid, 0, data);
    pk.iter().map(|e| e.offset + e.total_bytes).collect()
}

fn truncation_case(trace: &str, rel_stream: &str, meta_rel: &str, step: usize) {
    let src = fixtures("ctf").join(trace).join("trace");
    let (full, full_out) = run(&src, true);
    assert!(full.is_ok(), "{full:?}");
    let full_set: HashSet<String> = norm(&full_out).into_iter().collect();
    let data = std::fs::read(src.join(rel_stream)).unwrap();
    let ends = packet_ends(&src.join(meta_rel), &data);
    let work = scratch(&trace.replace('/', "_"));
    copy_tree(&src, &work);
    let target = work.join(rel_stream);
    // every `step` bytes, and at, just before and just after every packet end
    let mut cuts: Vec<usize> = (1..data.len()).step_by(step).collect();
    for &e in &ends {
        let e = e as usize;
        cuts.extend(
            [e.saturating_sub(1), e, e + 1]
                .iter()
                .filter(|&&c| c > 0 && c < data.len()),
        );
    }
    cuts.sort_unstable();
    cuts.dedup();
    for cut in cuts {
        std::fs::write(&target, &data[..cut]).unwrap();
        let (r, out) = run(&work, false);
        assert!(r.is_ok(), "lenient run failed at cut {cut}: {r:?}");
        let got = norm(&out);
        for l in &got {
            assert!(full_set.contains(l), "cut {cut}: unexpected line {l}");
        }
        // Every event of the packets before the cut is there: the output
        // of the trace cut at the last packet boundary is included.
        let b = ends
            .iter()
            .copied()
            .filter(|&e| e <= cut as u64)
            .max()
            .unwrap_or(0);
        std::fs::write(&target, &data[..b as usize]).unwrap();
        let (rb, outb) = run(&work, false);
        assert!(rb.is_ok());
        let got_set: HashSet<String> = got.iter().cloned().collect();
        for l in norm(&outb) {
            assert!(got_set.contains(&l), "cut {cut}: lost {l}");
        }
        // Strict mode: a cut inside a packet is an error.
        if !ends.contains(&(cut as u64)) {
            std::fs::write(&target, &data[..cut]).unwrap();
            let (rs, _) = run(&work, true);
            assert!(rs.is_err(), "strict run accepted a cut at {cut}");
        }
    }
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn lttng_stream_cut_anywhere() {
    truncation_case(
        "lttng-ust-uid",
        "ust/uid/0/64-bit/ch0_1",
        "ust/uid/0/64-bit/metadata",
        97,
    );
}

#[test]
fn barectf_stream_cut_anywhere() {
    truncation_case("barectf-bitfields", "stream", "metadata", 13);
}

#[test]
fn perf_stream_cut_anywhere() {
    truncation_case("perf-data-convert-sched", "perf_stream_1", "metadata", 1531);
}

#[test]
fn metadata_cut_or_corrupted_is_an_error_not_a_panic() {
    let src = fixtures("ctf/lttng-ust-uid/trace");
    let meta_rel = "ust/uid/0/64-bit/metadata";
    let meta = std::fs::read(src.join(meta_rel)).unwrap();
    let work = scratch("meta");
    copy_tree(&src, &work);
    let target = work.join(meta_rel);
    let mut cut = 0;
    while cut < meta.len() {
        std::fs::write(&target, &meta[..cut]).unwrap();
        let _ = run(&work, false);
        cut += 211;
    }
    // Flip bytes here and there.
    for i in (0..meta.len()).step_by(389) {
        let mut m = meta.clone();
        m[i] ^= 0x5a;
        std::fs::write(&target, &m).unwrap();
        let _ = run(&work, false);
    }
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn stream_bytes_flipped_no_panic() {
    let src = fixtures("ctf/barectf-bitfields/trace");
    let data = std::fs::read(src.join("stream")).unwrap();
    let work = scratch("flip");
    copy_tree(&src, &work);
    for i in (0..data.len()).step_by(37) {
        let mut d = data.clone();
        d[i] ^= 0xff;
        std::fs::write(work.join("stream"), &d).unwrap();
        let _ = run(&work, false);
        let _ = run(&work, true);
    }
    let _ = std::fs::remove_dir_all(&work);
}
