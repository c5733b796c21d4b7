//! What can go wrong in a session: each case keeps its cause.

use std::path::PathBuf;

use datafusion::error::DataFusionError;

/// A statement, a table or a trace failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The trace could not be opened.
    #[error(transparent)]
    Open(#[from] tracemux_open::Error),
    /// The trace's records could not be read (damage in strict mode).
    #[error(transparent)]
    Model(#[from] tracemux_core::Error),
    /// A table's rows could not be built.
    #[error(transparent)]
    Table(#[from] tracemux_table::Error),
    /// The engine refused a statement or failed running it.
    #[error(transparent)]
    Engine(#[from] DataFusionError),
    /// Arrow refused a batch of a derived table.
    #[error(transparent)]
    Arrow(#[from] datafusion::arrow::error::ArrowError),
    /// A Parquet dataset's file or directory could not be read.
    #[error("{}", path.display())]
    Dataset {
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The engine's threads could not start.
    #[error("cannot start the query engine")]
    Runtime(#[source] std::io::Error),
    /// Something the session does not do.
    #[error("{0}")]
    Refused(String),
}

/// This crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
