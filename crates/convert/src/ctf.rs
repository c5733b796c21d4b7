//! [`To::Ctf`](crate::To::Ctf) and [`To::Ctf2`](crate::To::Ctf2): the CTF writer of `tracemux-ctf` as a sink.

use std::path::Path;

use crate::Result;
use tracemux_core::model::{Event, Lost, TraceMeta};
use tracemux_ctf::writer::{CtfWriter, WriterOptions};

use super::Sink;

struct CtfSink(CtfWriter);

impl Sink for CtfSink {
    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()> {
        Ok(self.0.event(meta, ev)?)
    }
    fn lost(&mut self, _meta: &TraceMeta, l: &Lost) -> Result<()> {
        Ok(self.0.lost(l)?)
    }
    fn finish(self: Box<Self>, _meta: &TraceMeta) -> Result<()> {
        self.0.finish()?;
        Ok(())
    }
}

/// A CTF 1.8 (`ctf2`: CTF 2) trace directory at `dir`.
pub fn sink(meta: &TraceMeta, dir: &Path, ctf2: bool) -> Result<Box<dyn Sink + Send>> {
    let opts = WriterOptions {
        ctf2,
        ..WriterOptions::default()
    };
    let w = CtfWriter::create(dir, meta, opts)?;
    Ok(Box::new(CtfSink(w)))
}
