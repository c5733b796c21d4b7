//! CTF 1.8 metadata: TSDL text (plain or packetized) lowered to the IR,
//! compiled into a decoding program, and translated to CTF 2 and read
//! back (best effort: some TSDL has no CTF 2 form, e.g. two members that
//! differ only by a leading underscore, so a refusal is not a failure).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(tc) = tracemux_ctf::tsdl::parse_metadata(data) else {
        return;
    };
    let _ = tracemux_ctf::decode::Program::compile(&tc);
    if let Ok(json) = tracemux_ctf::ctf2::write_metadata(&tc) {
        let _ = tracemux_ctf::ctf2::parse(json.as_bytes());
    }
});
