//! [`To::Chrome`](crate::To::Chrome): the Chrome writer of `tracemux-export` as a sink.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use crate::Result;
use tracemux_core::model::{Event, Lost, TraceMeta};
use tracemux_export::chrome::ChromeWriter;

use super::{close, create, Sink};

struct ChromeSink(ChromeWriter<BufWriter<File>>);

impl Sink for ChromeSink {
    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()> {
        Ok(self.0.event(meta, ev)?)
    }
    fn lost(&mut self, _meta: &TraceMeta, l: &Lost) -> Result<()> {
        Ok(self.0.lost(l)?)
    }
    fn finish(self: Box<Self>, _meta: &TraceMeta) -> Result<()> {
        let (f, _stats) = self.0.finish()?;
        close(f)
    }
}

/// A Chrome Trace Event JSON at `path`.
pub fn sink(meta: &TraceMeta, path: &Path) -> Result<Box<dyn Sink + Send>> {
    let w = ChromeWriter::new(meta, create(path)?)?;
    Ok(Box::new(ChromeSink(w)))
}
