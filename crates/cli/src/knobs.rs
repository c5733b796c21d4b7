//! The knobs the environment sets: `TRACEMUX_THREADS` and `TRACEMUX_BATCH`,
//! read here, in the binary, and handed to the libraries in their options.

/// `TRACEMUX_THREADS`, when set to a number: how many threads to use (1
/// turns every kind of multi-threaded work off, for every format and
/// command; the output is the same). Read here, in the binary, and handed
/// to the libraries in their options.
pub fn env_threads() -> Option<usize> {
    std::env::var("TRACEMUX_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map(|n| n.clamp(1, 16))
}

/// Threads to use: [`env_threads`], else the number of cores (at most 16).
pub fn threads() -> usize {
    tracemux_core::threads::resolve(env_threads())
}

/// Events per batch: large enough that handing a batch over costs little
/// next to printing it, small enough that the batches in flight stay a
/// few MB. `TRACEMUX_BATCH` overrides it (tests use tiny batches, so that
/// the small fixtures cross many batch boundaries).
pub fn batch_events() -> usize {
    env_batch().unwrap_or(4096).max(1)
}

/// `TRACEMUX_BATCH`, when set to a number: events per batch handed between
/// threads (here and in `convert`'s pipeline).
pub fn env_batch() -> Option<usize> {
    std::env::var("TRACEMUX_BATCH")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
}
