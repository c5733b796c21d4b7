//! How many threads a command may use.

/// `TRACEMUX_THREADS`, when set to a number: how many threads to use (1
/// turns every kind of multi-threaded work off, for every format and
/// command; the output is the same).
pub fn env_threads() -> Option<usize> {
    std::env::var("TRACEMUX_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map(|n| n.clamp(1, 16))
}

/// Threads to use: [`env_threads`], else the number of cores (at most 16).
pub fn threads() -> usize {
    env_threads().unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get().min(16))
            .unwrap_or(1)
    })
}
