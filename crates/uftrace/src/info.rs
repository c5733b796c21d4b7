//! `uftrace info` output.
