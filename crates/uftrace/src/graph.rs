//! `uftrace graph`: the call graph of a function (or of the whole
//! recording) per session, with backtraces.

pub mod tree;
