//! `uftrace report`: per-function total/self time and call counts, and the
//! per-task table of `--task`.

pub mod walk;
