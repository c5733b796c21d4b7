//! The CTF data stream decoder on arbitrary stream bytes, with fixed
//! metadata: the first input byte picks one of the metadata streams below,
//! the rest is the data stream file. Decoded once with the element listing
//! visitor (every field reported) and once with the null visitor, and
//! indexed packet by packet.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracemux_ctf::decode::{NullVisitor, Program};
use tracemux_ctf::ir::TraceClass;
use tracemux_ctf::listing::Listing;
use tracemux_ctf::stream::{decode_file, index_file};

/// LTTng-UST metadata (compact / extended event headers, enumerations,
/// strings, arrays, sequences), in CTF 2.
const LTTNG_UST: &[u8] =
    include_bytes!("../../tests/fixtures/ctf2/translated/lttng-ust-uid/ust/uid/0/64-bit/metadata");
/// The same trace's original CTF 1.8 metadata.
const LTTNG_UST_TSDL: &[u8] =
    include_bytes!("../../tests/fixtures/ctf/lttng-ust-uid/trace/ust/uid/0/64-bit/metadata");
/// barectf: bit fields in both byte orders.
const BARECTF: &[u8] =
    include_bytes!("../../tests/fixtures/ctf2/translated/barectf-bitfields/metadata");
/// Variants, dynamic arrays, several stream classes, big-endian.
const BASIC: &[u8] = include_bytes!(
    "../../tests/fixtures/ctf2/auto-translated--pass-all-basic-features-be/trace/metadata"
);
/// CTF 2 only: optionals with boolean and integer selectors.
const OPTIONALS: &[u8] = include_bytes!("../../tests/fixtures/ctf2/pass-opts/trace/metadata");
/// CTF 2 only: LEB128 integers, BLOBs, bit maps, UTF-16 strings.
const EXTRA: &[u8] = br#"{"type": "preamble", "version": 2, "uuid": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}
{"type": "trace-class", "packet-header-field-class": {"type": "structure", "member-classes": [
  {"name": "magic", "field-class": {"type": "fixed-length-unsigned-integer", "length": 32, "byte-order": "little-endian", "roles": ["packet-magic-number"]}},
  {"name": "uuid", "field-class": {"type": "static-length-blob", "length": 16, "roles": ["metadata-stream-uuid"]}}]}}
{"type": "clock-class", "id": "c", "frequency": 1000}
{"type": "data-stream-class", "default-clock-class-id": "c", "packet-context-field-class": {"type": "structure", "member-classes": [
  {"name": "total", "field-class": {"type": "variable-length-unsigned-integer", "roles": ["packet-total-length"]}},
  {"name": "content", "field-class": {"type": "fixed-length-unsigned-integer", "length": 16, "byte-order": "big-endian", "roles": ["packet-content-length"]}},
  {"name": "ts", "field-class": {"type": "variable-length-unsigned-integer", "roles": ["default-clock-timestamp"]}}]},
 "event-record-header-field-class": {"type": "structure", "member-classes": [
  {"name": "id", "field-class": {"type": "fixed-length-unsigned-integer", "length": 3, "byte-order": "little-endian", "roles": ["event-record-class-id"]}},
  {"name": "ts", "field-class": {"type": "fixed-length-unsigned-integer", "length": 13, "byte-order": "little-endian", "bit-order": "last-to-first", "roles": ["default-clock-timestamp"]}}]}}
{"type": "event-record-class", "id": 0, "payload-field-class": {"type": "structure", "member-classes": [
  {"name": "n", "field-class": {"type": "variable-length-unsigned-integer"}},
  {"name": "s", "field-class": {"type": "variable-length-signed-integer"}},
  {"name": "b", "field-class": {"type": "dynamic-length-blob", "length-field-location": {"path": ["n"]}}},
  {"name": "u16", "field-class": {"type": "null-terminated-string", "encoding": "utf-16le"}},
  {"name": "u32", "field-class": {"type": "dynamic-length-string", "encoding": "utf-32be", "length-field-location": {"path": ["n"]}}},
  {"name": "m", "field-class": {"type": "fixed-length-bit-map", "length": 7, "byte-order": "big-endian", "flags": {"a": [[0, 2]], "b": [[6, 6]]}}},
  {"name": "f", "field-class": {"type": "fixed-length-floating-point-number", "length": 32, "byte-order": "big-endian"}},
  {"name": "bl", "field-class": {"type": "fixed-length-boolean", "length": 1, "byte-order": "big-endian"}},
  {"name": "arr", "field-class": {"type": "dynamic-length-array", "length-field-location": {"path": ["n"]}, "minimum-alignment": 16,
     "element-field-class": {"type": "structure", "member-classes": [
       {"name": "k", "field-class": {"type": "fixed-length-unsigned-integer", "length": 2, "byte-order": "little-endian"}},
       {"name": "v", "field-class": {"type": "variant", "selector-field-location": {"path": ["k"]}, "options": [
          {"selector-field-ranges": [[0, 0]], "field-class": {"type": "fixed-length-signed-integer", "length": 9, "byte-order": "little-endian"}},
          {"selector-field-ranges": [[1, 2]], "field-class": {"type": "static-length-string", "length": 3}}]}}]}}}]}}
{"type": "event-record-class", "id": 1}
"#;

/// The metadata streams, parsed and compiled once.
fn programs() -> &'static [(TraceClass, Program)] {
    static P: std::sync::OnceLock<Vec<(TraceClass, Program)>> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        // A record separator before each fragment (each starts a line).
        let mut extra = Vec::new();
        for line in EXTRA.split(|&b| b == b'\n') {
            if line.starts_with(b"{\"type\"") {
                extra.push(0x1e);
            }
            extra.extend_from_slice(line);
            extra.push(b'\n');
        }
        let mut tcs = vec![tracemux_ctf::tsdl::parse_metadata(LTTNG_UST_TSDL).expect("TSDL")];
        for m in [LTTNG_UST, BARECTF, BASIC, OPTIONALS, &extra[..]] {
            tcs.push(tracemux_ctf::ctf2::parse_metadata(m).expect("CTF 2 metadata"));
        }
        tcs.into_iter()
            .map(|tc| {
                let p = Program::compile(&tc).expect("compile");
                (tc, p)
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, stream)) = data.split_first() else {
        return;
    };
    let progs = programs();
    let (tc, prog) = &progs[pick as usize % progs.len()];
    let mut l = Listing::new(tc);
    let _ = decode_file(prog, tc.uuid, stream, &mut l);
    let _ = decode_file(prog, tc.uuid, stream, &mut NullVisitor);
    let _ = index_file(prog, tc.uuid, 0, stream);
});
