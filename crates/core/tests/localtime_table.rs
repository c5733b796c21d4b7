//! Local times against the stored table of glibc's answers
//! (`tests/data/localtime/table.tsv`, written by
//! `tests/tz/check-tz.sh --write-fixture`, which compares many more
//! timestamps against glibc where python3 and zic are installed).
//!
//! The zone files the table names are the slim TZif files shipped beside
//! it (`tests/data/localtime/zoneinfo/`, compiled by `zic -b slim` from the
//! tzdata the table was made with), given as `TZDIR`; the other rows are
//! POSIX `TZ` strings and values glibc reads in its own ways. Nothing here
//! reads the machine's own time-zone data or environment.

use std::path::{Path, PathBuf};

use tracemux_core::localtime::Zone;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/localtime")
}

#[test]
fn glibc_table() {
    let dir = data_dir();
    let table = std::fs::read_to_string(dir.join("table.tsv")).expect("table.tsv");
    let tzdir = dir.join("zoneinfo");
    let mut zones: Vec<(String, Zone)> = Vec::new();
    let (mut rows, mut bad) = (0usize, Vec::new());
    let mut files = 0usize;
    for line in table.lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 8, "row: {line:?}");
        let tz = f[0];
        let zone = match zones.iter().find(|(n, _)| n == tz) {
            Some((_, z)) => z.clone(),
            None => {
                let z = Zone::from_tz(Some(tz), Some(&tzdir));
                if tzdir.join(tz).is_file() {
                    files += 1;
                }
                zones.push((tz.to_string(), z.clone()));
                z
            }
        };
        let secs: i64 = f[1].parse().expect("secs");
        let (t, abbrev) = zone.localtime_abbrev(secs).expect("in range");
        let got = t.oracle_row(&abbrev);
        let want = f[2..].join(" ");
        rows += 1;
        if got != want {
            bad.push(format!("TZ={tz:?} {secs}: glibc {want:?}, here {got:?}"));
        }
        // The offset alone agrees too.
        assert_eq!(zone.offset(secs), t.offset, "TZ={tz:?} {secs}");
    }
    assert!(rows >= 300, "only {rows} rows");
    assert!(files >= 10, "only {files} zone files");
    tracemux_testkit::assert_all_passed(&bad, rows, "rows differ");
}
