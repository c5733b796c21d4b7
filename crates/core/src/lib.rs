//! tracemux-core: the format-independent part of tracemux.
//!
//! It holds the event model shared by every reader and every sink
//! ([`model`]), the bounds-checked byte cursor that every parser uses
//! ([`bytes`]), the error type with section and byte offset ([`error`]) and
//! the symbol/task tables that printers resolve names through ([`tables`]).
//!
//! This crate knows no trace format: the format crates (`tracemux-ftrace`,
//! `tracemux-tracedat`, ...) build [`model::TraceMeta`] and produce
//! [`model::Record`]s; the sinks (`tracemux-render`) consume them.
//!
//! ```
//! use tracemux_core::bytes::{Cursor, Endian};
//! let data = [0x01, 0x00, 0x00, 0x00, 0xff];
//! let mut c = Cursor::new(&data, Endian::Little, "example");
//! assert_eq!(c.u32().unwrap(), 1);
//! assert!(c.u32().is_err()); // only one byte is left
//! ```
#![forbid(unsafe_code)]

pub mod bytes;
pub mod digits;
pub mod error;
pub mod ident;
pub mod idmap;
pub mod inputs;
pub mod json;
pub mod known;
pub mod layout;
pub mod localtime;
pub mod merge;
pub mod model;
pub mod named;
pub mod schema;
pub mod stage;
pub mod tables;
pub mod tasks;
pub mod text;
pub mod threads;
pub mod timeline;
pub mod typed;
pub mod value;

pub use bytes::{Cursor, Endian};
pub use error::{Error, ErrorKind, Result};
