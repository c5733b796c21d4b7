//! What a perf.data says about itself, as perf 6.1 prints it:
//! [`header_only`] is `perf report --header-only` (util/header.c's
//! `perf_header__fprintf_info` and the feature print functions) without the
//! `captured on` line (the file's modification time; [`captured_on`] makes
//! it for callers that have it), [`stats`] is `perf report --stats`
//! (records by type, then samples per event), [`evlist`] is `perf evlist
//! -v`'s attribute lines.
//!
//! Feature sections perf prints only with `-I` are announced as
//! `# NAME info available, use -I to display`; features with no text at all
//! (build ids, BPF, PMU caps) print nothing, as in perf.

use std::io::{self, Write};

use crate::attr::{flag, Attr};
use crate::consts::{feat, read as rf, record_name, sample as st};
use crate::PerfData;

fn bits(out: &mut String, v: u64, names: &[&str]) {
    let mut first = true;
    for (i, n) in names.iter().enumerate() {
        if v & (1 << i) != 0 {
            if !first {
                out.push('|');
            }
            out.push_str(n);
            first = false;
        }
    }
}

/// `perf_event_attr__fprintf`: the nonzero members, each `, name = value`.
pub fn attr_text(a: &Attr) -> String {
    let mut s = String::new();
    let mut put = |name: &str, v: String| {
        s.push_str(", ");
        s.push_str(name);
        s.push_str(" = ");
        s.push_str(&v);
    };
    put("type", a.type_.to_string());
    if a.size != 0 {
        put("size", a.size.to_string());
    }
    if a.config != 0 {
        put("config", format!("{:#x}", a.config));
    }
    if a.sample_period != 0 {
        put(
            "{ sample_period, sample_freq }",
            a.sample_period.to_string(),
        );
    }
    if a.sample_type != 0 {
        let mut b = String::new();
        bits(&mut b, a.sample_type, &st::NAMES);
        put("sample_type", b);
    }
    if a.read_format != 0 {
        let mut b = String::new();
        bits(&mut b, a.read_format, &rf::NAMES);
        put("read_format", b);
    }
    for (name, bit) in flag::NAMES {
        if a.flags & bit != 0 {
            put(name, "1".into());
        }
        if name == "watermark" {
            let precise = (a.flags >> flag::PRECISE_IP_SHIFT) & 3;
            if precise != 0 {
                put("precise_ip", precise.to_string());
            }
        }
    }
    if a.wakeup_events != 0 {
        put(
            "{ wakeup_events, wakeup_watermark }",
            a.wakeup_events.to_string(),
        );
    }
    if a.bp_type != 0 {
        put("bp_type", a.bp_type.to_string());
    }
    if a.config1 != 0 {
        put("{ bp_addr, config1 }", format!("{:#x}", a.config1));
    }
    if a.config2 != 0 {
        put("{ bp_len, config2 }", format!("{:#x}", a.config2));
    }
    if a.branch_sample_type != 0 {
        put("branch_sample_type", format!("{:#x}", a.branch_sample_type));
    }
    if a.sample_regs_user != 0 {
        put("sample_regs_user", format!("{:#x}", a.sample_regs_user));
    }
    if a.sample_stack_user != 0 {
        put("sample_stack_user", a.sample_stack_user.to_string());
    }
    if a.clockid != 0 {
        put("clockid", a.clockid.to_string());
    }
    if a.sample_regs_intr != 0 {
        put("sample_regs_intr", format!("{:#x}", a.sample_regs_intr));
    }
    if a.aux_watermark != 0 {
        put("aux_watermark", a.aux_watermark.to_string());
    }
    if a.sample_max_stack != 0 {
        put("sample_max_stack", a.sample_max_stack.to_string());
    }
    if a.aux_sample_size != 0 {
        put("aux_sample_size", a.aux_sample_size.to_string());
    }
    if a.sig_data != 0 {
        put("sig_data", a.sig_data.to_string());
    }
    s
}

fn usec(t: u64) -> String {
    format!("{}.{:06}", t / 1_000_000_000, t % 1_000_000_000 / 1000)
}

/// The text of one feature (`# ...` lines), empty when perf prints none.
fn feature_text(p: &PerfData<'_>, id: u32) -> String {
    let f = &p.features;
    let line = |k: &str, v: &Option<String>| {
        v.as_ref()
            .map_or(String::new(), |v| format!("# {k} : {v}\n"))
    };
    match id {
        feat::HOSTNAME => line("hostname", &f.hostname),
        feat::OSRELEASE => line("os release", &f.osrelease),
        feat::VERSION => line("perf version", &f.version),
        feat::ARCH => line("arch", &f.arch),
        feat::NRCPUS => f.nrcpus.map_or(String::new(), |(avail, online)| {
            format!("# nrcpus online : {online}\n# nrcpus avail : {avail}\n")
        }),
        feat::CPUDESC => line("cpudesc", &f.cpudesc),
        feat::CPUID => line("cpuid", &f.cpuid),
        feat::TOTAL_MEM => f.total_mem.map_or(String::new(), |m| format!("# total memory : {m} kB\n")),
        feat::CMDLINE => f.cmdline.as_ref().map_or(String::new(), |c| {
            let mut s = String::from("# cmdline : ");
            for a in c {
                s.push_str(a);
                s.push(' ');
            }
            s.push('\n');
            s
        }),
        feat::EVENT_DESC => {
            let mut s = String::new();
            for ev in &f.event_desc {
                s.push_str("# event : name = ");
                s.push_str(ev.name.as_deref().unwrap_or(""));
                s.push_str(", ");
                if !ev.ids.is_empty() {
                    s.push_str(", id = {");
                    for (j, id) in ev.ids.iter().enumerate() {
                        if j > 0 {
                            s.push(',');
                        }
                        s.push(' ');
                        s.push_str(&id.to_string());
                    }
                    s.push_str(" }");
                }
                s.push_str(&attr_text(&ev.attr));
                s.push('\n');
            }
            s
        }
        feat::CPU_TOPOLOGY | feat::NUMA_TOPOLOGY | feat::CACHE | feat::MEM_TOPOLOGY => {
            let name = match id {
                feat::CPU_TOPOLOGY => "CPU_TOPOLOGY",
                feat::NUMA_TOPOLOGY => "NUMA_TOPOLOGY",
                feat::CACHE => "CACHE",
                _ => "MEM_TOPOLOGY",
            };
            format!("# {name} info available, use -I to display\n")
        }
        feat::PMU_MAPPINGS => {
            if f.pmu_mappings.is_empty() {
                return "# pmu mappings: not available\n".into();
            }
            let v: Vec<String> = f.pmu_mappings.iter().map(|(t, n)| format!("{n} = {t}")).collect();
            format!("# pmu mappings: {}\n", v.join(", "))
        }
        feat::SAMPLE_TIME => f.sample_time.map_or(String::new(), |(a, b)| {
            let d = b.wrapping_sub(a) as f64 / 1e6;
            format!(
                "# time of first sample : {}\n# time of last sample : {}\n# sample duration : {d:10.3} ms\n",
                usec(a),
                usec(b)
            )
        }),
        feat::CLOCKID => f.clockid_res_ns.map_or(String::new(), |r| {
            format!("# clockid frequency: {} MHz\n", 1000u64.checked_div(r).unwrap_or(0))
        }),
        feat::DIR_FORMAT => f.dir_format.map_or(String::new(), |v| format!("# directory data version : {v}\n")),
        feat::COMPRESSED => f.compressed.map_or(String::new(), |(_, t, level, ratio, _)| {
            let name = if t == 1 { "Zstd" } else { "Unknown" };
            format!("# compressed : {name}, level = {level}, ratio = {ratio}\n")
        }),
        _ => String::new(),
    }
}

/// The upper-case name `missing features:` uses.
fn feature_upper(id: u32) -> String {
    match id {
        feat::TRACING_DATA => "TRACING_DATA".into(),
        _ => feat::name(id).unwrap_or("").to_ascii_uppercase(),
    }
}

/// `ctime`-style `captured on` line for a file modified at `mtime`
/// (seconds, local time as the caller computed it).
pub fn captured_on(text: &str) -> String {
    format!("# captured on    : {text}\n")
}

/// `perf report --header-only`, without the `captured on` line.
pub fn header_only(p: &PerfData<'_>, w: &mut dyn Write) -> io::Result<()> {
    let h = &p.header;
    let mut s = String::from("# ========\n");
    s.push_str("# header version : 1\n");
    if h.pipe {
        s.push_str(
            "# data offset    : 0\n# data size      : 0\n# feat offset    : 0\n# ========\n#\n",
        );
        for (id, _, _) in &p.features.raw {
            s.push_str(&feature_text(p, *id));
        }
        return w.write_all(s.as_bytes());
    }
    let feat_off = h.data.offset + h.data.size;
    s.push_str(&format!(
        "# data offset    : {}\n# data size      : {}\n# feat offset    : {}\n",
        h.data.offset, h.data.size, feat_off
    ));
    for (id, _, _) in &p.features.raw {
        s.push_str(&feature_text(p, *id));
    }
    s.push_str("# missing features: ");
    for id in 1..=feat::HYBRID_TOPOLOGY {
        if !h.has_feature(id) {
            s.push_str(&feature_upper(id));
            s.push(' ');
        }
    }
    s.push_str("\n# ========\n#\n");
    w.write_all(s.as_bytes())
}

/// `perf report --stats`: records read, by type, then the samples of each
/// event. `counts` and `samples` come from reading every record.
pub fn stats(
    p: &PerfData<'_>,
    counts: &std::collections::BTreeMap<u32, u64>,
    samples: &[u64],
    w: &mut dyn Write,
) -> io::Result<()> {
    let total: u64 = counts.values().sum();
    let mut s = String::from("\nAggregated stats:\n");
    s.push_str(&format!("{:>16} events: {total:>10}\n", "TOTAL"));
    for (&t, &n) in counts {
        let name = record_name(t).map_or_else(|| format!("type {t}"), str::to_string);
        let pct = if total == 0 {
            0.0
        } else {
            n as f64 * 100.0 / total as f64
        };
        s.push_str(&format!("{name:>16} events: {n:>10}  ({pct:4.1}%)\n"));
    }
    for (i, &n) in samples.iter().enumerate() {
        if n == 0 {
            continue;
        }
        s.push_str(&format!(
            "{} stats:\n{:>16} events: {n:>10}\n",
            p.event_name(i),
            "SAMPLE"
        ));
    }
    w.write_all(s.as_bytes())
}

/// `perf evlist -v`: one line per event, `NAME: ` and the attribute.
pub fn evlist(p: &PerfData<'_>, w: &mut dyn Write) -> io::Result<()> {
    for (i, ev) in p.events.iter().enumerate() {
        let t = attr_text(&ev.attr);
        writeln!(w, "{}: {}", p.event_name(i), t.trim_start_matches(", "))?;
    }
    Ok(())
}
