//! `uftrace replay` output.
