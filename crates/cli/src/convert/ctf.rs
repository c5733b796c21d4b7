//! `convert --to ctf|ctf2`: the CTF writer of `tracemux-ctf` as a sink.

use std::path::Path;

use anyhow::{bail, Result};
use tracemux_core::model::TraceMeta;

use super::Sink;

/// A CTF 1.8 (`ctf2`: CTF 2) trace directory at `dir`.
pub fn sink(_meta: &TraceMeta, _dir: &Path, _ctf2: bool) -> Result<Box<dyn Sink>> {
    bail!("--to ctf is not built yet")
}
