//! Reader tests on the corpus fixtures: every record decodes, the merged
//! stream has as many records as `uftrace dump` printed (dump.txt).

use std::path::PathBuf;

use tracemux_uftrace::{MergeOptions, Merger, OpenOptions, UftraceData};

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/uftrace/corpus")
        .join(name)
}

const NAMES: [&str; 4] = ["pg-basic", "pg-args-retval", "finstrument", "dynamic-plain"];

#[test]
fn merged_record_counts_match_dump() {
    for n in NAMES {
        let dir = fixture(n);
        let data = UftraceData::open(&dir.join("uftrace.data"), OpenOptions::default()).unwrap();
        assert!(data.damage.is_empty(), "{n}: {:?}", data.damage);
        let mut m = Merger::new(&data, &MergeOptions::default());
        let mut count = 0usize;
        while m.next_item().is_some() {
            count += 1;
        }
        assert!(m.take_damage().is_empty(), "{n}");
        // records in `uftrace dump`: lines starting with a timestamp, not
        // counting the [args ]/[retval] lines that follow some of them
        let dump =
            zstd::decode_all(std::fs::File::open(dir.join("dump.txt.zst")).unwrap()).unwrap();
        let want = String::from_utf8(dump)
            .unwrap()
            .lines()
            .filter(|l| {
                l.split(' ').next().is_some_and(|w| {
                    w.contains('.')
                        && w.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                        && !w.is_empty()
                })
            })
            .filter(|l| !l.contains("[args ]") && !l.contains("[retval]"))
            .count();
        assert_eq!(count, want, "{n}");
    }
}
