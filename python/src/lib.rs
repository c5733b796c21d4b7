//! tracemux for Python: the `tracemux._native` extension module (the
//! package `tracemux` in `python/tracemux/` re-exports it).

use pyo3::prelude::*;

mod convert;
mod errors;
mod events;
mod sql;
mod table;
mod trace;

use tracemux_open as opener;

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("TraceError", py.get_type::<errors::TraceError>())?;
    m.add("TraceWarning", py.get_type::<errors::TraceWarning>())?;
    m.add_class::<trace::Trace>()?;
    m.add_class::<events::Event>()?;
    m.add_class::<events::Lost>()?;
    m.add_class::<events::EventIter>()?;
    m.add_class::<table::Table>()?;
    m.add_function(wrap_pyfunction!(trace::open_trace, m)?)?;
    m.add_function(wrap_pyfunction!(convert::convert, m)?)?;
    Ok(())
}
