//! `convert --to ctf` from a damaged trace.dat, perf.data or CTF stream
//! (see `to_common.rs`).
#![no_main]

#[path = "to_common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    common::run(data, tracemux_convert::To::Ctf);
});
