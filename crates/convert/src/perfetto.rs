//! [`To::Perfetto`](crate::To::Perfetto): the Perfetto writer of `tracemux-export` as a sink.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use crate::Result;
use tracemux_core::model::{Event, Lost, TraceMeta};
use tracemux_export::perfetto::{PerfettoOptions, PerfettoWriter};

use super::{close, create, Sink};

struct PerfettoSink(PerfettoWriter<BufWriter<File>>);

impl Sink for PerfettoSink {
    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()> {
        Ok(self.0.event(meta, ev)?)
    }
    fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> Result<()> {
        Ok(self.0.lost(meta, l)?)
    }
    fn finish(self: Box<Self>, _meta: &TraceMeta) -> Result<()> {
        let (f, _stats) = self.0.finish()?;
        close(f)
    }
}

/// A Perfetto protobuf trace at `path`.
pub fn sink(meta: &TraceMeta, path: &Path, opts: PerfettoOptions) -> Result<Box<dyn Sink + Send>> {
    let w = PerfettoWriter::with_options(meta, create(path)?, opts)?;
    Ok(Box::new(PerfettoSink(w)))
}
