//! Errors and warnings as Python sees them: [`TraceError`] carries the file,
//! the section and the byte offset where tracemux knows them; damage read
//! around (lenient mode) becomes a [`TraceWarning`] through `warnings`.

use std::ffi::CString;

use pyo3::prelude::*;

pyo3::create_exception!(
    tracemux,
    TraceError,
    pyo3::exceptions::PyException,
    "A trace could not be read (or, with strict=True, is damaged). Attributes: file, section and offset (None when unknown)."
);

pyo3::create_exception!(
    tracemux,
    TraceWarning,
    pyo3::exceptions::PyUserWarning,
    "Damaged input that was skipped; reading went on after it (strict=False)."
);

/// Where an error happened, as far as known.
#[derive(Debug, Clone, Default)]
pub struct Place {
    pub file: Option<String>,
    pub section: Option<String>,
    pub offset: Option<u64>,
}

impl Place {
    /// The place of a reader's error in `file`.
    pub fn of(file: &str, e: &tracemux_core::Error) -> Place {
        Place {
            file: Some(file.to_string()),
            section: Some(e.section.to_string()),
            offset: Some(e.offset),
        }
    }
}

impl Place {
    /// The place of an error of the opening or reading code (anyhow, whose
    /// chain may hold a reader's error with its section and offset).
    pub fn of_anyhow(file: Option<&str>, e: &anyhow::Error) -> Place {
        match e.chain().find_map(|c| {
            c.downcast_ref::<tracemux_core::Error>()
                .or_else(|| c.downcast_ref::<tracemux_open::Error>()?.model())
                .or_else(|| c.downcast_ref::<tracemux_convert::Error>()?.model())
        }) {
            Some(te) => Place {
                file: file.map(str::to_string),
                section: Some(te.section.to_string()),
                offset: Some(te.offset),
            },
            None => Place {
                file: file.map(str::to_string),
                ..Place::default()
            },
        }
    }
}

/// A [`TraceError`] with its attributes set.
pub fn trace_error(py: Python<'_>, msg: &str, place: &Place) -> PyErr {
    let err = TraceError::new_err(msg.to_string());
    let v = err.value(py);
    // (setting attributes on a fresh exception object cannot fail)
    let _ = v.setattr("file", place.file.clone());
    let _ = v.setattr("section", place.section.clone());
    let _ = v.setattr("offset", place.offset);
    err
}

/// An error of the opening or reading code (anyhow, whose chain may hold a
/// reader's error with its section and offset) as a [`TraceError`].
pub fn from_anyhow(py: Python<'_>, e: &anyhow::Error, file: Option<&str>) -> PyErr {
    let place = Place::of_anyhow(file, e);
    let mut msg = format!("{e:#}");
    if let Some(f) = file.filter(|f| !msg.starts_with(f)) {
        msg = format!("{f}: {msg}");
    }
    trace_error(py, &msg, &place)
}

/// `warnings.warn(msg, TraceWarning)`.
pub fn warn(py: Python<'_>, msg: &str) -> PyResult<()> {
    let msg = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    let cat = py.get_type::<TraceWarning>();
    PyErr::warn(py, cat.as_any(), &msg, 1)
}

/// A Python exception (KeyboardInterrupt) raised while Rust code ran
/// without the GIL, carried through `anyhow` back to Python.
#[derive(Debug)]
pub struct Interrupted(pub PyErr);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// Check for Ctrl-C from code that runs without the GIL (a signal handler
/// runs only when Python asks): an error carrying KeyboardInterrupt.
pub fn check_signals() -> anyhow::Result<()> {
    Python::attach(|py| py.check_signals()).map_err(|e| anyhow::Error::new(Interrupted(e)))
}

/// [`check_signals`] for a conversion's hook: the interruption kept in
/// the conversion's error ([`convert_to_py`] gives it back).
pub fn check_signals_for_convert() -> tracemux_convert::Result<()> {
    Python::attach(|py| py.check_signals())
        .map_err(|e| tracemux_convert::Error::Hook(Box::new(Interrupted(e))))
}

/// A conversion's error as Python's: KeyboardInterrupt as it was raised,
/// the rest as [`from_anyhow`] makes it.
pub fn convert_to_py(py: Python<'_>, e: tracemux_convert::Error, file: Option<&str>) -> PyErr {
    match e {
        tracemux_convert::Error::Hook(c) => match c.downcast::<Interrupted>() {
            Ok(i) => i.0,
            Err(c) => trace_error(
                py,
                &c.to_string(),
                &Place {
                    file: file.map(str::to_string),
                    ..Place::default()
                },
            ),
        },
        e => from_anyhow(py, &anyhow::Error::new(e), file),
    }
}

/// [`from_anyhow`], except that an interruption stays KeyboardInterrupt.
pub fn to_py(py: Python<'_>, e: anyhow::Error, file: Option<&str>) -> PyErr {
    match e.downcast::<Interrupted>() {
        Ok(Interrupted(err)) => err,
        Err(e) => from_anyhow(py, &e, file),
    }
}
