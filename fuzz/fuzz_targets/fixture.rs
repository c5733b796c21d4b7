//! A fixture recording opened once per fuzzing process, shared by the
//! uftrace targets (each includes this file with `#[path]`).

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use tracemux_uftrace::{OpenOptions, UftraceData};

/// `tests/fixtures/uftrace/DIR/uftrace.data`, opened by the first call
/// (`cell` keeps it for the following runs).
pub fn recording(
    cell: &'static OnceLock<Mutex<UftraceData>>,
    dir: &str,
) -> &'static Mutex<UftraceData> {
    cell.get_or_init(|| {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/uftrace")
            .join(dir)
            .join("uftrace.data");
        let data = UftraceData::open(&path, OpenOptions::default()).expect("fixture recording");
        Mutex::new(data)
    })
}
