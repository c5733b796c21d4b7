//! Which events `trace-cmd report` shows, and how each line is decorated
//! when the inputs say so: the [`Plan`]'s filters, `--cpu`, `-I`/`-S`,
//! the per-file and per-instance prefixes, the `cpus=` lines and
//! `--ts-diff`.

use std::path::Path;

use tracemux_core::model::{Event, TraceMeta};
use tracemux_filter::FilterSet;

use super::plan::Plan;
use super::{usage, ReportError};
use crate::tracecmd::tracecmd_cpus;
use crate::{OptionId, TraceDat};

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

/// What is known of each file when the selection is built.
#[derive(Debug)]
struct FileSel {
    filter: Option<FilterSet>,
    name: String,
    /// Per buffer (index into `TraceMeta::buffers`): its name for line
    /// prefixes (`None`: the top buffer) and the first `--cpu` number of
    /// its CPUs.
    buffers: Vec<(Option<String>, u32)>,
    /// `common_flags` (offset, size), for `-I`/`-S`.
    flags: Option<(usize, usize)>,
    /// ts-diff values are rounded to microseconds (a trace clock is
    /// recorded and `-t` is not given).
    round_diff: bool,
}

/// The per-event selection: filters, CPUs, interrupt contexts, and the
/// per-line decorations that depend on the inputs (file prefixes, cpus=
/// lines, `--ts-diff`).
#[derive(Debug)]
pub struct Selection {
    files: Vec<FileSel>,
    cpus: Option<Vec<(u32, u32)>>,
    no_irqs: bool,
    no_softirqs: bool,
    multi: bool,
    /// Single file: the file has instances (its lines get the prefix).
    instances: bool,
    /// Width of the prefix column, and for each file the width its `cpus=`
    /// line uses.
    width: usize,
    cpus_width: Vec<usize>,
    ts_diff: bool,
    last_ts: u64,
}

const TRACE_FLAG_HARDIRQ: u64 = 0x08;
const TRACE_FLAG_SOFTIRQ: u64 = 0x10;

impl Selection {
    /// Build the selection for the opened inputs (in `plan.inputs` order).
    /// Returns it with the warnings trace-cmd prints on stderr (a `--comm`
    /// name not in the task list); a filter that does not compile is an
    /// error (trace-cmd: "Failed to create event filter").
    pub fn new(
        plan: &Plan,
        files: &[(&TraceDat<'_>, &TraceMeta)],
    ) -> Result<(Selection, Vec<String>), ReportError> {
        let mut warnings = Vec::new();
        let mut sel = Selection {
            files: Vec::new(),
            cpus: plan.cpus.clone(),
            no_irqs: plan.no_irqs,
            no_softirqs: plan.no_softirqs,
            multi: plan.multi,
            instances: false,
            width: 0,
            cpus_width: Vec::new(),
            ts_diff: plan.ts_diff,
            last_ts: 0,
        };
        // --cpu numbering: the top buffers of all files, then the instances
        let mut next_cpu: u32 = 0;
        let mut tops = Vec::new();
        for (t, _) in files {
            let n = tracecmd_cpus(t);
            tops.push((next_cpu, n));
            next_cpu = next_cpu.saturating_add(n);
        }
        let names_w = |f: &FileSel| {
            f.buffers
                .iter()
                .filter_map(|b| b.0.as_ref().map(|n| n.len()))
                .max()
                .unwrap_or(0)
        };
        let mut file_w = 0;
        if plan.multi {
            for inp in &plan.inputs[..files.len().min(plan.inputs.len())] {
                file_w = file_w.max(basename(&inp.path.to_string_lossy()).len());
            }
        }
        for (i, (t, meta)) in files.iter().enumerate() {
            let name = plan.inputs.get(i).map_or(String::new(), |x| {
                basename(&x.path.to_string_lossy()).to_string()
            });
            let mut buffers = Vec::new();
            for b in &meta.buffers {
                if b.name.is_empty() {
                    buffers.push((None, tops[i].0));
                } else {
                    let ncpu = t
                        .buffers
                        .iter()
                        .find(|x| x.name == b.name)
                        .map_or(0, |x| x.cpus.iter().map(|c| c.cpu + 1).max().unwrap_or(0));
                    buffers.push((Some(basename(&b.name).to_string()), next_cpu));
                    next_cpu = next_cpu.saturating_add(tops[i].1.max(ncpu));
                }
            }
            let flags = meta.classes.iter().find_map(|c| {
                c.common_fields
                    .iter()
                    .find(|f| f.name == "common_flags")
                    .map(|f| (f.offset as usize, f.size as usize))
            });
            let round_diff = !plan.nsecs
                && plan.ts2secs_of(i) == 0
                && t.options_with(OptionId::TRACECLOCK).next().is_some();
            // the filters; the first file also gets the --pid/--comm filter
            let mut list = plan.filters(i);
            if i == 0 {
                let mut pids: Vec<String> = plan.pids.clone();
                for comm in &plan.comms {
                    let found: Vec<i32> = meta
                        .tasks
                        .sorted()
                        .into_iter()
                        .filter(|(_, c)| *c == comm.as_str())
                        .map(|(p, _)| p)
                        .collect();
                    if found.is_empty() {
                        warnings.push(format!("comm: {comm} not in cmdline list"));
                    }
                    for p in found {
                        pids.insert(0, p.to_string());
                    }
                }
                if !pids.is_empty() {
                    let mut s = String::new();
                    for (k, p) in pids.iter().enumerate() {
                        s.push_str(if k == 0 { ".*:" } else { "||" });
                        s.push_str(&format!("(common_pid=={p})||(pid=={p})||(next_pid=={p})"));
                    }
                    list.push((s, false));
                }
            }
            let filter = if list.is_empty() {
                None
            } else {
                let mut fs = FilterSet::new(meta);
                for (text, neg) in &list {
                    fs.add(meta, text, *neg)
                        .map_err(|_| usage(format!("Failed to create event filter: {text}")))?;
                }
                Some(fs)
            };
            let f = FileSel {
                filter,
                name,
                buffers,
                flags,
                round_diff,
            };
            sel.cpus_width.push(file_w);
            file_w = file_w.max(names_w(&f));
            if i == 0 {
                sel.instances = f.buffers.iter().any(|b| b.0.is_some());
            }
            sel.files.push(f);
        }
        sel.width = if plan.multi {
            file_w
        } else {
            sel.files.first().map_or(0, names_w)
        };
        Ok((sel, warnings))
    }

    /// Whether to show the event (call for every event, in order: the
    /// filters keep state for stack traces). `file` is the index of the
    /// input the event comes from.
    pub fn keep(&mut self, file: usize, meta: &TraceMeta, ev: &Event<'_>) -> bool {
        let Some(f) = self.files.get_mut(file) else {
            return true;
        };
        if let Some(fs) = &mut f.filter {
            if !fs.matches(meta, ev) {
                return false;
            }
        }
        if let Some(cpus) = &self.cpus {
            let b = meta
                .streams
                .get(ev.stream as usize)
                .map_or(0, |s| s.buffer as usize);
            let base = f.buffers.get(b).map_or(0, |x| x.1);
            let n = base.saturating_add(ev.cpu);
            if !cpus.iter().any(|&(a, z)| a <= n && n <= z) {
                return false;
            }
        }
        if self.no_irqs || self.no_softirqs {
            let flags = f.flags.map_or(0, |(off, size)| {
                ev.ext
                    .get(off..)
                    .and_then(|b| ev.endian.read_uint(b, size))
                    .unwrap_or(0)
            });
            if self.no_irqs && flags & TRACE_FLAG_HARDIRQ != 0 {
                return false;
            }
            if self.no_softirqs && flags & TRACE_FLAG_SOFTIRQ != 0 {
                return false;
            }
        }
        true
    }

    /// Whether lines get a file/instance prefix at all.
    pub fn has_prefix(&self) -> bool {
        self.multi || self.instances
    }

    fn put_prefix(out: &mut Vec<u8>, name: Option<&str>, width: usize) {
        match name {
            Some(n) if !n.is_empty() => {
                out.resize(out.len() + width.saturating_sub(n.len()), b' ');
                out.extend_from_slice(n.as_bytes());
                out.extend_from_slice(b": ");
            }
            _ => out.resize(out.len() + width + 2, b' '),
        }
    }

    /// The prefix of an event line (or of a lost-events line) of a stream
    /// of input `file`: the file name when several files are read, the
    /// instance name for instances, right-aligned; nothing when there is
    /// one file without instances.
    pub fn prefix(&self, out: &mut Vec<u8>, file: usize, meta: &TraceMeta, stream: u32) {
        if !self.has_prefix() {
            return;
        }
        let Some(f) = self.files.get(file) else {
            return;
        };
        let b = meta
            .streams
            .get(stream as usize)
            .map_or(0, |s| s.buffer as usize);
        let name = match f.buffers.get(b) {
            Some((Some(n), _)) => Some(n.as_str()),
            _ if self.multi => Some(f.name.as_str()),
            _ => None,
        };
        Self::put_prefix(out, name, self.width);
    }

    /// The `cpus=N` line of input `file` (with its file name when several
    /// files are read).
    pub fn cpus_line(&self, out: &mut Vec<u8>, file: usize, cpus: u32) {
        if self.multi {
            let name = self.files.get(file).map(|f| f.name.as_str());
            Self::put_prefix(out, name, self.cpus_width.get(file).copied().unwrap_or(0));
        }
        out.extend_from_slice(format!("cpus={cpus}\n").as_bytes());
    }

    /// With `--ts-diff`, the column after the timestamp: ` (+DIFF)` padded
    /// to 8 characters after the space (`(+N)` is the time since the
    /// previous shown event, in microseconds when they are shown rounded);
    /// nothing without `--ts-diff`. Call it only for events that are shown.
    pub fn write_ts_diff(&mut self, out: &mut Vec<u8>, file: usize, ts: u64) {
        if !self.ts_diff {
            return;
        }
        let round = self.files.get(file).is_some_and(|f| f.round_diff);
        let ts = if round {
            ts.wrapping_add(500) / 1000
        } else {
            ts
        };
        let start = out.len();
        out.push(b' ');
        if self.last_ts != 0 {
            out.extend_from_slice(
                format!("(+{})", ts.wrapping_sub(self.last_ts) as i64).as_bytes(),
            );
        }
        self.last_ts = ts;
        while out.len() - start < 9 {
            out.push(b' ');
        }
    }
}

/// Whether several inputs are to be read (trace-cmd cannot merge latency
/// traces).
pub fn check_multi_latency(plan: &Plan, t: &TraceDat<'_>, path: &Path) -> Result<(), ReportError> {
    if plan.multi && t.kind == crate::DataKind::Latency {
        return Err(usage(format!(
            "{}: latency traces do not work with multiple inputs",
            path.display()
        )));
    }
    Ok(())
}
