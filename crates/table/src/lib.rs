//! Traces as typed tables: every event class of the common event model
//! becomes an Arrow table with a column per field (integers at their width
//! and signedness, text, bytes, lists, structures), written as Parquet
//! files in constant memory.
//!
//! - [`columns`]: column builders shaped by a class's typed schema and
//!   filled by a [`tracemux_core::typed::FieldVisitor`].
//! - [`comm`]: task names tracked over time from the scheduler's events.
//! - [`writer`]: the Parquet dataset of one trace (one file per event class,
//!   the long `events` table, `lost`, and `meta.json`).

pub mod columns;
pub mod comm;
pub mod writer;

pub use writer::{Layout, TablesWriter, WriteOptions};

/// What can go wrong writing tables.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Parquet {
        path: String,
        source: parquet::errors::ParquetError,
    },
    #[error("{table}: {source}")]
    Arrow {
        table: String,
        source: arrow_schema::ArrowError,
    },
}

pub type Result<T> = std::result::Result<T, Error>;
