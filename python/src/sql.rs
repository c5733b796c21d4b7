//! `Trace.sql()`: a statement run by `tracemux_sql`'s DataFusion engine
//! over the trace's tables (only with the cargo feature `sql`).

use pyo3::prelude::*;
use pyo3_arrow::PyTable;

#[cfg(feature = "sql")]
use crate::errors;
use crate::trace::Trace;

/// Run `query` over every table of `trace` (and the derived scheduler
/// tables), the batches collected as one Arrow table.
#[cfg(feature = "sql")]
pub fn run(py: Python<'_>, trace: &Trace, query: &str) -> PyResult<PyTable> {
    use std::sync::Arc;
    use tracemux_sql::{Engine, Paths};

    let file = trace.file();
    let fail = |py: Python<'_>, e: anyhow::Error| errors::from_anyhow(py, &e, Some(&file));
    let opener = Paths {
        paths: trace.paths.clone(),
        strict: trace.strict,
    };
    let (engine, mut answer) = py
        .detach(|| -> anyhow::Result<_> {
            let engine = Engine::new()?;
            engine.add_trace(Arc::new(opener))?;
            let answer = engine.query(query)?;
            Ok((engine, answer))
        })
        .map_err(|e| fail(py, e))?;
    let mut batches = Vec::new();
    // a batch at a time with the GIL released, Ctrl-C looked at between
    while let Some(b) = py
        .detach(|| engine.next(&mut answer))
        .map_err(|e| fail(py, e))?
    {
        batches.push(b);
        py.check_signals()?;
    }
    PyTable::try_new(batches, answer.schema.clone())
}

/// Without the engine: say how to get it.
#[cfg(not(feature = "sql"))]
pub fn run(_py: Python<'_>, _trace: &Trace, _query: &str) -> PyResult<PyTable> {
    Err(pyo3::exceptions::PyNotImplementedError::new_err(
        "this tracemux was built without the SQL engine; reinstall with \
         MATURIN_PEP517_ARGS=\"--features sql\" pip install ./python",
    ))
}
