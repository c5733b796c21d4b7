//! tracefs `format` files.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(f) = tracemux_ftrace::format::parse_format(&text, 8, true) {
        let _ = tracemux_ftrace::event_class(&f, "fuzz", 8);
    }
    let _ = tracemux_ftrace::format::parse_header_page(&text, 8);
});
