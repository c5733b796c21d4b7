//! perf's names of events (`evsel__name` when no name is stored): the
//! generic hardware and software events by `config`, tracepoints as
//! `system:name` from the tracing data, others as `type/config`.

use crate::attr::{flag, Attr};
use crate::consts::attr_type;
use crate::tracing::TracingData;

const HW: [&str; 10] = [
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "branches",
    "branch-misses",
    "bus-cycles",
    "stalled-cycles-frontend",
    "stalled-cycles-backend",
    "ref-cycles",
];

const SW: [&str; 12] = [
    "cpu-clock",
    "task-clock",
    "page-faults",
    "context-switches",
    "cpu-migrations",
    "minor-faults",
    "major-faults",
    "alignment-faults",
    "emulation-faults",
    "dummy",
    "bpf-output",
    "cgroup-switches",
];

/// perf's modifier suffix (`:u`, `:k`, `:ppp`...) of an attribute.
fn modifiers(a: &Attr) -> String {
    let mut m = String::new();
    let eu = a.flag(flag::EXCLUDE_USER);
    let ek = a.flag(flag::EXCLUDE_KERNEL);
    let eh = a.flag(flag::EXCLUDE_HV);
    let exclude = eu || ek || eh;
    if ek != exclude || !exclude {
        // user space counted
    }
    if exclude {
        if !eu {
            m.push('u');
        }
        if !ek {
            m.push('k');
        }
        if !eh {
            m.push('h');
        }
    }
    let precise = (a.flags >> flag::PRECISE_IP_SHIFT) & 3;
    for _ in 0..precise {
        m.push('p');
    }
    if m.is_empty() {
        m
    } else {
        format!(":{m}")
    }
}

/// The name perf gives an attribute it has no stored name for.
pub fn attr_name(a: &Attr, tracing: Option<&TracingData>) -> String {
    match a.type_ {
        attr_type::HARDWARE => match HW.get(a.config as usize) {
            Some(n) => format!("{n}{}", modifiers(a)),
            None => format!("unknown-hardware{}", modifiers(a)),
        },
        attr_type::SOFTWARE => match SW.get(a.config as usize) {
            Some(n) => format!("{n}{}", modifiers(a)),
            None => format!("unknown-software{}", modifiers(a)),
        },
        attr_type::TRACEPOINT => match tracing.and_then(|t| t.format(a.config)) {
            Some(f) => format!("{}:{}", f.system, f.name),
            None => "unknown tracepoint".to_string(),
        },
        t => format!("{t}:{:#x}{}", a.config, modifiers(a)),
    }
}
