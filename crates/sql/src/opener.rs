//! How a table reaches its trace: an [`Opener`] opens it again for each
//! pass a query needs (traces borrow memory maps, so a table cannot keep
//! one open).

use crate::Result;
use tracemux_core::model::RecordSource;

/// Opens a trace, for as many passes as queries need.
pub trait Opener: Send + Sync + 'static {
    /// Open the trace and hand its records to `f`.
    fn open(&self, f: &mut dyn FnMut(&mut dyn RecordSource) -> Result<()>) -> Result<()>;
}
