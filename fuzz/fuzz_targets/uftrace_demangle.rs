//! uftrace symbol demangling: `--demangle=full` (libstdc++-compatible),
//! `simple` and `no` on arbitrary names.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracemux_uftrace::demangle::{demangle, full, Demangle};

fuzz_target!(|data: &[u8]| {
    let name = String::from_utf8_lossy(data);
    let _ = full(&name);
    // the same bytes as the body of a mangled name
    let _ = full(&format!("_Z{name}"));
    for mode in [Demangle::Simple, Demangle::No] {
        let _ = demangle(&name, mode);
    }
});
