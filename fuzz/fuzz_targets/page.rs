//! One ring-buffer page, both byte orders and commit sizes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracemux_core::Endian;
use tracemux_ftrace::page::{Page, PageLayout};

fuzz_target!(|data: &[u8]| {
    for endian in [Endian::Little, Endian::Big] {
        for commit in [4u32, 8] {
            let layout = PageLayout {
                endian,
                commit_size: commit,
                data_offset: 8 + commit,
                page_size: 4096,
            };
            if let Ok(mut p) = Page::parse(data, 0, layout) {
                while let Some(r) = p.next() {
                    if r.is_err() {
                        break;
                    }
                }
            }
        }
    }
});
