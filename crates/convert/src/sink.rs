//! The writers of the output formats ([`Sink`]) and where the reading
//! loop hands the events ([`Target`]: a sink, or the feed of a sink's
//! thread).

use crate::Result;
use tracemux_core::model::{Event, Lost, RecordSource, TraceMeta};

/// A writer of one output format: a sink of the model.
pub trait Sink {
    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()>;
    fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> Result<()>;
    /// Damage the reader skipped (already reported to the user); sinks that
    /// describe their output may record it.
    fn damage(&mut self, _what: &str) {}
    /// Flush everything to the (temporary) output.
    fn finish(self: Box<Self>, meta: &TraceMeta) -> Result<()>;
}

/// Where [`read`](crate::read) hands the events: the sink, or the feed of the sink's
/// thread.
pub(crate) trait Target {
    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()>;
    fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> Result<()>;
    fn damage(&mut self, what: &str);
    /// After an event was handed over and before the next is read.
    fn settle(&mut self, _src: &mut dyn RecordSource) {}
}

impl Target for Box<dyn Sink + Send> {
    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()> {
        Sink::event(&mut **self, meta, ev)
    }
    fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> Result<()> {
        Sink::lost(&mut **self, meta, l)
    }
    fn damage(&mut self, what: &str) {
        Sink::damage(&mut **self, what)
    }
}
