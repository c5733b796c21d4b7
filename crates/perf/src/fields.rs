//! `perf script`'s field sets: the defaults per event type, `-F` lists,
//! and the checks against each event's `sample_type` (builtin-script.c's
//! `output[]` table, `parse_output_fields`, `evsel__check_attr`,
//! `perf_session__check_output_opt`, as perf 6.1 has them).
//!
//! - Each output type (hardware, software, tracepoint, hardware-cache, raw,
//!   breakpoint, other) has its own field set. A `-F` list without a type
//!   prefix replaces all of them (warning for a field a type cannot have:
//!   `'trace' not valid for software events. Ignoring.`); `TYPE:list` one
//!   type; `+f`/`-f` add to or remove from the defaults.
//! - A default field the first event of its type cannot give is dropped
//!   quietly; a field asked for with `-F` is an error
//!   (`Samples for 'cpu-clock' event do not have CPU attribute set. Cannot
//!   print 'cpu' field.`).
//! - When an event has a callchain, tracepoints (unless `-F` set them) also
//!   print ip, sym, symoff and dso.

use crate::consts::sample as st;
use crate::header::EventAttr;

pub const COMM: u64 = 1 << 0;
pub const TID: u64 = 1 << 1;
pub const PID: u64 = 1 << 2;
pub const TIME: u64 = 1 << 3;
pub const CPU: u64 = 1 << 4;
pub const EVNAME: u64 = 1 << 5;
pub const TRACE: u64 = 1 << 6;
pub const IP: u64 = 1 << 7;
pub const SYM: u64 = 1 << 8;
pub const DSO: u64 = 1 << 9;
pub const ADDR: u64 = 1 << 10;
pub const SYMOFFSET: u64 = 1 << 11;
pub const PERIOD: u64 = 1 << 12;
pub const PHYS_ADDR: u64 = 1 << 13;
pub const WEIGHT: u64 = 1 << 14;
pub const BPF_OUTPUT: u64 = 1 << 15;

/// The `-F` names tracemux prints, with their bits.
pub const NAMES: [(&str, u64); 14] = [
    ("comm", COMM),
    ("tid", TID),
    ("pid", PID),
    ("time", TIME),
    ("cpu", CPU),
    ("event", EVNAME),
    ("trace", TRACE),
    ("ip", IP),
    ("sym", SYM),
    ("dso", DSO),
    ("addr", ADDR),
    ("symoff", SYMOFFSET),
    ("period", PERIOD),
    ("phys_addr", PHYS_ADDR),
];

/// perf's other `-F` names: accepted by perf, not printed by tracemux yet.
pub const NOT_YET: [&str; 27] = [
    "srcline",
    "iregs",
    "uregs",
    "brstack",
    "brstacksym",
    "flags",
    "bpf-output",
    "brstackinsn",
    "brstackoff",
    "callindent",
    "insn",
    "insnlen",
    "synth",
    "metric",
    "misc",
    "srccode",
    "ipc",
    "data_page_size",
    "code_page_size",
    "ins_lat",
    "tod",
    "data_src",
    "weight",
    "cgroup",
    "brstackinsnlen",
    "machine_pid",
    "vcpu",
];

/// Output types, perf's order.
pub const TYPES: usize = 7;
pub const TYPE_NAMES: [&str; TYPES] = [
    "hardware",
    "software",
    "tracepoint",
    "hardware-cache",
    "raw",
    "breakpoint",
    "other",
];
/// `-F TYPE:` prefixes.
const PREFIXES: [(&str, usize); 6] = [
    ("hw", 0),
    ("sw", 1),
    ("trace", 2),
    ("raw", 4),
    ("break", 5),
    ("other", 6),
];

const SAMPLE_DEFAULT: u64 = COMM | TID | CPU | TIME | EVNAME | IP | SYM | SYMOFFSET | DSO | PERIOD;

fn defaults(t: usize) -> u64 {
    match t {
        2 => COMM | TID | CPU | TIME | EVNAME | TRACE,
        4 => SAMPLE_DEFAULT | ADDR | PHYS_ADDR,
        _ => SAMPLE_DEFAULT,
    }
}

fn invalid(t: usize) -> u64 {
    match t {
        0 | 3 => TRACE | BPF_OUTPUT,
        1 => TRACE,
        2 => BPF_OUTPUT,
        _ => 0,
    }
}

/// The output type of an attribute type.
pub fn output_type(attr_type: u32) -> usize {
    if attr_type < 6 {
        attr_type as usize
    } else {
        6
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Out {
    fields: u64,
    user_set: bool,
    wildcard: bool,
    user_fields: u64,
}

/// The field sets decided for a recording.
#[derive(Debug, Clone)]
pub struct FieldSets {
    out: [Out; TYPES],
    /// Warnings perf prints on stderr.
    pub warnings: Vec<String>,
}

fn field_bit(name: &str) -> Result<u64, String> {
    if let Some(&(_, b)) = NAMES.iter().find(|(n, _)| *n == name) {
        return Ok(b);
    }
    if NOT_YET.contains(&name) {
        return Err(format!(
            "perf script field '{name}' is not supported by tracemux yet"
        ));
    }
    Err(format!("Invalid field requested: '{name}'"))
}

impl FieldSets {
    /// Parse the `-F` arguments (in order) over the defaults.
    pub fn parse(args: &[String]) -> Result<FieldSets, String> {
        let mut out = [Out::default(); TYPES];
        for (t, o) in out.iter_mut().enumerate() {
            o.fields = defaults(t);
        }
        let mut warnings = Vec::new();
        for arg in args {
            let (types, list): (Vec<usize>, &str) = match arg.split_once(':') {
                Some((p, rest)) => match PREFIXES.iter().find(|(n, _)| *n == p) {
                    Some(&(_, t)) => (vec![t], rest),
                    None => return Err(format!("Invalid event type in field string: '{p}'")),
                },
                None => ((0..TYPES).collect(), arg.as_str()),
            };
            let wildcard = !arg.contains(':');
            let modify = list.starts_with('+') || list.starts_with('-');
            if !modify {
                for &t in &types {
                    out[t].fields = 0;
                    out[t].user_set = true;
                    out[t].wildcard = wildcard;
                }
            }
            for tok in list.split(',').filter(|s| !s.is_empty()) {
                let (sign, name) = match tok.as_bytes()[0] {
                    b'+' => (1, &tok[1..]),
                    b'-' => (-1, &tok[1..]),
                    _ => (0, tok),
                };
                let bit = field_bit(name)?;
                for &t in &types {
                    if sign < 0 {
                        out[t].fields &= !bit;
                        continue;
                    }
                    if invalid(t) & bit != 0 {
                        if wildcard {
                            warnings.push(format!(
                                "'{name}' not valid for {} events. Ignoring.",
                                TYPE_NAMES[t]
                            ));
                            continue;
                        }
                        return Err(format!("'{name}' not valid for {} events.", TYPE_NAMES[t]));
                    }
                    out[t].fields |= bit;
                    out[t].user_fields |= bit;
                }
            }
        }
        Ok(FieldSets { out, warnings })
    }

    /// Check the sets against the events (the first of each type), as
    /// perf does before it prints.
    pub fn check(&mut self, events: &[EventAttr], names: &[&str]) -> Result<(), String> {
        #[allow(clippy::needless_range_loop)]
        for t in 0..TYPES {
            let Some(i) = events.iter().position(|e| output_type(e.attr.type_) == t) else {
                if self.out[t].user_set && !self.out[t].wildcard {
                    return Err(format!(
                        "{} events do not exist. Remove corresponding -F option to proceed.",
                        TYPE_NAMES[t]
                    ));
                }
                continue;
            };
            let stype = events[i].attr.sample_type;
            let name = names[i];
            let o = &mut self.out[t];
            let need = |o: &mut Out,
                        field: u64,
                        bit: u64,
                        msg: &str,
                        fname: &str|
             -> Result<(), String> {
                if o.fields & field == 0 || stype & bit != 0 {
                    return Ok(());
                }
                if o.user_fields & field != 0 {
                    return Err(format!(
                        "Samples for '{name}' event do not have {msg} attribute set. Cannot print '{fname}' field."
                    ));
                }
                o.fields &= !field;
                Ok(())
            };
            need(o, IP, st::IP, "IP", "ip")?;
            need(o, ADDR, st::ADDR, "ADDR", "addr")?;
            if o.fields & SYM != 0 && stype & (st::IP | st::ADDR) == 0 {
                return Err("Display of symbols requested but neither sample IP nor sample address\navailable. Hence, no addresses to convert to symbols.".into());
            }
            if o.fields & SYMOFFSET != 0 && o.fields & SYM == 0 {
                return Err("Display of offsets requested but symbol is not selected.".into());
            }
            if o.fields & DSO != 0 && stype & (st::IP | st::ADDR) == 0 {
                return Err("Display of DSO requested but no address to convert.".into());
            }
            if o.fields & (PID | TID) != 0 && stype & st::TID == 0 {
                if o.user_fields & (PID | TID) != 0 {
                    return Err(format!(
                        "Samples for '{name}' event do not have TID attribute set. Cannot print 'tid' field."
                    ));
                }
                o.fields &= !(PID | TID);
            }
            need(o, TIME, st::TIME, "TIME", "time")?;
            need(o, CPU, st::CPU, "CPU", "cpu")?;
            need(o, PHYS_ADDR, st::PHYS_ADDR, "PHYS_ADDR", "phys_addr")?;
        }
        let any_callchain = events
            .iter()
            .any(|e| e.attr.sample_type & st::CALLCHAIN != 0);
        if any_callchain && !self.out[2].user_set {
            let tp_callchain = events
                .iter()
                .any(|e| output_type(e.attr.type_) == 2 && e.attr.sample_type & st::CALLCHAIN != 0);
            if tp_callchain {
                self.out[2].fields |= IP | SYM | SYMOFFSET | DSO;
            }
        }
        Ok(())
    }

    /// The fields of output type `t`.
    pub fn fields(&self, t: usize) -> u64 {
        self.out[t].fields
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_list_and_warnings() {
        let f = FieldSets::parse(&["comm,tid,trace".to_string()]).unwrap();
        assert_eq!(f.fields(2), COMM | TID | TRACE);
        assert_eq!(f.fields(1), COMM | TID);
        assert_eq!(f.warnings.len(), 3);
        let f = FieldSets::parse(&["sw:+addr".to_string(), "-F".into()]);
        assert!(f.is_err());
        let f = FieldSets::parse(&["sw:-period".to_string()]).unwrap();
        assert_eq!(f.fields(1), SAMPLE_DEFAULT & !PERIOD);
        assert!(FieldSets::parse(&["bogus".to_string()]).is_err());
    }
}
