//! Traces as typed tables: every event class of the common event model
//! becomes an Arrow table with a column per field (integers at their width
//! and signedness, text, bytes, lists, structures), written as Parquet
//! files in constant memory.
//!
//! - [`columns`]: column builders shaped by a class's typed schema and
//!   filled by a [`tracemux_core::typed::FieldVisitor`].
//! - [`rows`]: the tables of a trace, their columns, and how a record
//!   becomes a row (shared by the writer and the scanner).
//! - [`writer`]: the Parquet dataset of one trace (one file per event class,
//!   the long `events` table, `lost`, and `meta.json`).
//! - [`scan`]: one table as Arrow record batches, live, with projection,
//!   filters and a limit (for SQL engines and DataFrame libraries).

pub mod columns;
pub mod rows;
pub mod scan;
pub mod writer;

pub use rows::{table_defs, tables, TableDef, TableKind};
pub use scan::{Scan, ScanSpec};
pub use writer::{Dataset, FileWritten, Layout, TablesWriter, WriteOptions};

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
    #[error("no table {0:?} in this trace")]
    NoTable(String),
    #[error("table {table}: no column {column:?}")]
    NoColumn { table: String, column: String },
    #[error("{0}")]
    Read(tracemux_core::Error),
    /// The thread that encodes the Parquet files stopped.
    #[error("{0}")]
    Encoder(String),
}

pub type Result<T> = std::result::Result<T, Error>;
