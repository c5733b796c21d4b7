//! What can go wrong while converting: each case keeps its cause, so that
//! the caller prints the chain (`input: section at offset: what`) or
//! looks into it.

use std::path::{Path, PathBuf};

/// Any cause, kept as it was.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A conversion failed (its output is not left behind).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An input could not be opened.
    #[error(transparent)]
    Open(#[from] tracemux_open::Error),
    /// Reading an input failed (damage with `strict`, a read error).
    #[error("{input}")]
    Input {
        input: String,
        #[source]
        source: Cause,
    },
    /// A file could not be made, written or put in place.
    #[error("{}: cannot {action}", path.display())]
    File {
        path: PathBuf,
        /// What was tried: "create", "write", "rename into place".
        action: &'static str,
        #[source]
        source: Cause,
    },
    /// A writer refused an event or failed to write it.
    #[error(transparent)]
    Write(#[from] std::io::Error),
    /// A reader's or writer's error that names its own place.
    #[error(transparent)]
    Model(#[from] tracemux_core::Error),
    /// Parquet's writer failed.
    #[cfg(feature = "parquet")]
    #[error(transparent)]
    Table(#[from] tracemux_table::Error),
    /// Options that do not go together, or a conversion this build does
    /// not make.
    #[error("{0}")]
    Refused(String),
    /// A hook stopped the conversion ([`crate::Hooks::progress`]'s own
    /// error, kept for the caller who made it: Python's KeyboardInterrupt).
    #[error("{0}")]
    Hook(Cause),
    /// The conversion stopped (a thread of it failed).
    #[error("{0}")]
    Stopped(String),
}

/// This crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The reader's own error (section and offset), where there is one:
    /// what a caller shows as the place of the damage.
    pub fn model(&self) -> Option<&tracemux_core::Error> {
        match self {
            Error::Open(e) => e.model(),
            Error::Model(e) => Some(e),
            Error::Input { source, .. } | Error::File { source, .. } => source.downcast_ref(),
            _ => None,
        }
    }

    /// The system's error, where there is one (a closed pipe is no error
    /// to the user who closed it).
    pub fn io(&self) -> Option<&std::io::Error> {
        match self {
            Error::Write(e) => Some(e),
            Error::Open(tracemux_open::Error::Io { source, .. }) => Some(source),
            Error::Input { source, .. } | Error::File { source, .. } => source.downcast_ref(),
            _ => None,
        }
    }

    /// `input`'s error `e` (made only when there is one: `map_err(|e| ...)`).
    pub(crate) fn input(input: impl std::fmt::Display, e: impl Into<Cause>) -> Error {
        Error::Input {
            input: input.to_string(),
            source: e.into(),
        }
    }

    /// A failed `action` on `path`.
    pub(crate) fn file(path: &Path, action: &'static str, e: impl Into<Cause>) -> Error {
        Error::File {
            path: path.to_path_buf(),
            action,
            source: e.into(),
        }
    }
}
