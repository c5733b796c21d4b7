//! Numbers trace-cmd derives from a trace.dat's header and options, which
//! `report` and `info` print the same way.

use crate::{OptionId, TraceDat};

/// The `cpus=N` number trace-cmd prints: the largest of the header CPU
/// count, the CPUCOUNT option and the top buffer's CPU ids.
pub fn tracecmd_cpus(t: &TraceDat<'_>) -> u32 {
    let top = t
        .buffers
        .iter()
        .find(|b| b.name.is_empty())
        .map_or(0, |b| b.cpus.iter().map(|c| c.cpu + 1).max().unwrap_or(0));
    let count = t
        .options_with(OptionId::CPUCOUNT)
        .filter_map(|o| o.u32_at(0, t.endian))
        .max()
        .unwrap_or(0);
    t.cpus.max(top).max(count)
}

/// Whether trace-cmd shows `secs.usecs` for this file (else raw clock values).
pub fn tracecmd_usecs(t: &TraceDat<'_>) -> bool {
    if t.options_with(OptionId::TSC2NSEC).next().is_some() {
        return true;
    }
    match t.trace_clock() {
        None => true,
        Some(c) => {
            matches!(
                c.as_str(),
                "local" | "global" | "uptime" | "perf" | "tai" | "tsc2nsec"
            ) || c.starts_with("mono")
        }
    }
}
