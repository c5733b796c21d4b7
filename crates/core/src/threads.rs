//! How many threads a command may use.

/// Threads to use: `wanted` when given (1 turns every kind of
/// multi-threaded work off, for every format and command; the output is
/// the same), else the number of cores; at least 1, at most 16. The
/// binaries take `wanted` from `TRACEMUX_THREADS`.
pub fn resolve(wanted: Option<usize>) -> usize {
    match wanted {
        Some(n) => n.clamp(1, 16),
        None => std::thread::available_parallelism()
            .map(|n| n.get().min(16))
            .unwrap_or(1),
    }
}
