//! What can go wrong while opening a trace: each case keeps its cause
//! (`source()`), so a caller prints the whole chain or looks into it.

use std::path::{Path, PathBuf};

/// Opening failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The system refused a file: `{path}: cannot {action}`.
    #[error("{}: cannot {action}", path.display())]
    Io {
        path: PathBuf,
        /// What was tried: "open", "read", "map", "list directory".
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A file was read but its reader refused it; the cause says where.
    #[error("{}", path.display())]
    Trace {
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// A reader's error where no one path says more (several CTF traces
    /// opened together; damage in strict mode while the model is read).
    #[error(transparent)]
    Model(#[from] tracemux_core::Error),
    /// Inputs tracemux does not read, or does not read together.
    #[error("{0}")]
    Refused(String),
}

/// This crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The reader's own error (section and offset), where there is one:
    /// what a caller shows as the place of the damage.
    pub fn model(&self) -> Option<&tracemux_core::Error> {
        match self {
            Error::Model(e) => Some(e),
            Error::Trace { source, .. } => source.downcast_ref(),
            _ => None,
        }
    }

    /// A failed `action` on `path` (made only when there is one:
    /// `map_err(|e| ...)`).
    pub(crate) fn io(path: &Path, action: &'static str, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    }

    /// The reader of `path` refused it.
    pub(crate) fn trace<E>(path: &Path, e: E) -> Error
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        Error::Trace {
            path: path.to_path_buf(),
            source: Box::new(e),
        }
    }
}
