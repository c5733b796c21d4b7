//! `tracemux info`.

use std::path::Path;

use anyhow::Result;

use crate::Outcome;

pub fn run(_path: &Path, _strict: bool) -> Result<Outcome> {
    anyhow::bail!("info: not implemented yet")
}
