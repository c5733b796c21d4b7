//! The event format files of this directory, copied from a recording
//! (kernel 6.18, x86_64), for the examples that write fixtures.

use std::path::Path;

/// The text of `examples/formats/<name>.format` (`name`: `system_event`).
pub fn text(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/formats")
        .join(format!("{name}.format"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
