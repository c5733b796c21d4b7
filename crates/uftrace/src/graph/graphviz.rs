//! `uftrace dump --graphviz`: the call graph of all tasks as a DOT digraph
//! (`"caller" -> "callee" [xlabel = "calls"]`), byte-identical to uftrace
//! 0.13. The tree is built as for the flame graph (one tree for the whole
//! recording, rooted at the executable's name).

use std::io::{self, Write};

use crate::chrome::UFTRACE_VERSION;
use crate::data::UftraceData;
use crate::graph::tree::SingleTree;
use crate::header::info_bit;
use crate::report::walk::{begin, dump_replay, DumpOps, Rec, Stacks, Walk, WalkOptions};
use crate::symbols::basename;

/// Options of `uftrace dump --graphviz`.
#[derive(Debug, Clone)]
pub struct GraphvizOptions {
    /// Filters and common options.
    pub walk: WalkOptions,
    /// What follows `uftrace ` in the `# version` line.
    pub version: String,
}

impl Default for GraphvizOptions {
    fn default() -> Self {
        GraphvizOptions {
            walk: WalkOptions::default(),
            version: UFTRACE_VERSION.to_string(),
        }
    }
}

struct Dot(SingleTree);

impl DumpOps for Dot {
    fn task_rstack(&mut self, st: &mut Stacks<'_>, ti: usize, name: &[u8], r: &Rec, _blob: &[u8]) {
        self.0.add(st, ti, name, r);
    }
}

/// Write `uftrace dump --graphviz` of `data` to `out`; damage goes to
/// `warn`. `-F/-N/-T` items of `opts.walk` are added to the recording's
/// filter tables (hence `&mut`).
pub fn graphviz(
    data: &mut UftraceData,
    opts: &GraphvizOptions,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> io::Result<()> {
    let mode = begin(data, &opts.walk, out, warn)?;
    let data: &UftraceData = data;
    let exe = basename(data.info.exename.as_deref().unwrap_or("")).to_string();
    let mut b = Vec::new();
    let _ = writeln!(b, "# version\":\"uftrace {}\"", opts.version);
    if data.header.info_mask & info_bit::CMDLINE != 0 {
        let _ = writeln!(
            b,
            "# command_line \"{}\"",
            data.info.cmdline.as_deref().unwrap_or("")
        );
    }
    let _ = writeln!(b, "\ndigraph \"{exe}\" {{ ");
    let mut w = Walk::new(data, &opts.walk, mode);
    let mut dot = Dot(SingleTree::new(&exe, data.tasks.len()));
    dump_replay(&mut w, &mut dot, opts.walk.no_libcall);
    w.warn_damage(warn)?;
    let forest = &dot.0.forest;
    let nodes = &forest.trees[0].nodes;
    forest.walk(0, |n, _| {
        let node = &nodes[n];
        if node.nr_calls == 0 {
            return;
        }
        b.extend_from_slice(b"    ");
        if let Some(p) = node.parent {
            let _ = write!(b, "\"{}\" -> ", nodes[p].name);
        }
        let _ = writeln!(b, "\"{}\" [xlabel = \"{}\"]", node.name, node.nr_calls);
    });
    b.extend_from_slice(b"}\n");
    out.write_all(&b)
}
