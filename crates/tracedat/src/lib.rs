//! tracemux-tracedat: trace-cmd's `trace.dat` container, versions 6 and 7.
//!
//! [`TraceDat::parse`] reads the container (header, sections, options,
//! metadata) from a byte slice (usually a memory map); [`reader::Reader`]
//! streams the events of every buffer and CPU merged in time order, as
//! `trace-cmd report` orders them.
#![forbid(unsafe_code)]

pub mod compress;
pub mod convert;
pub mod dump;
pub mod file;
pub mod info;
pub mod inspect;
pub mod listing;
pub mod options;
pub mod reader;
pub mod report;
pub mod tracecmd;
pub mod writer;

pub use file::{sniff, Buffer, CpuData, DataKind, Section, TraceDat, MAGIC};
pub use options::{OptionId, OptionRec};
