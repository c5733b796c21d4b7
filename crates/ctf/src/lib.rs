//! CTF 1.8 (TSDL metadata) and CTF 2 (JSON metadata) reader.
//!
//! Both metadata languages lower into one IR ([`ir`]); the binary decoder and
//! the babeltrace2-style printer work on the IR only.
#![forbid(unsafe_code)]

pub mod ctf2;
pub mod decode;
pub mod fs;
pub mod ir;
pub mod listing;
pub mod stats;
pub mod stream;
pub mod text;
pub mod tsdl;
pub mod tz;
