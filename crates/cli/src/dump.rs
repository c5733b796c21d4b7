//! `tracemux dump`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::Outcome;

#[derive(Args, Debug)]
pub struct DumpArgs {
    /// The trace file.
    pub trace: PathBuf,
}

pub fn run(_a: &DumpArgs) -> Result<Outcome> {
    anyhow::bail!("dump: not implemented yet")
}
