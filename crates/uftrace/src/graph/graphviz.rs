//! `uftrace dump --graphviz`: the call graph of all tasks as a DOT digraph
//! (`"caller" -> "callee" [xlabel = "calls"]`), byte-identical to uftrace
//! 0.13. The tree is built as for the flame graph (one tree for the whole
//! recording, rooted at the executable's name).

use std::io::{self, Write};

use crate::graph::tree::SingleTree;
use crate::header::info_bit;
use crate::report::walk::{dump_replay, DumpOps, Rec, Stacks, Walk, WalkOptions, WalkView, Walked};
use crate::symbols::basename;

/// Options of `uftrace dump --graphviz`.
#[derive(Debug, Clone, Default)]
pub struct GraphvizOptions {
    /// Filters and common options.
    pub walk: WalkOptions,
    /// What follows `uftrace ` in the `# version` line; empty: the version
    /// string of the flavour's uftrace.
    pub version: String,
}

struct Dot(SingleTree);

impl DumpOps for Dot {
    fn task_rstack(&mut self, st: &mut Stacks<'_>, ti: usize, name: &[u8], r: &Rec, _blob: &[u8]) {
        self.0.add(st, ti, name, r);
    }
}

impl WalkView for GraphvizOptions {
    /// `uftrace dump --graphviz`.
    fn render(&self, v: Walked<'_>) -> io::Result<()> {
        let (data, out, warn) = (v.data, v.out, v.warn);
        let exe = basename(data.info.exename.as_deref().unwrap_or("")).to_string();
        let mut b = Vec::new();
        let version = match self.version.as_str() {
            "" => data.flavor.version_string(),
            v => v,
        };
        let _ = writeln!(b, "# version\":\"uftrace {version}\"");
        if data.header.info_mask & info_bit::CMDLINE != 0 {
            let _ = writeln!(
                b,
                "# command_line \"{}\"",
                data.info.cmdline.as_deref().unwrap_or("")
            );
        }
        let _ = writeln!(b, "\ndigraph \"{exe}\" {{ ");
        let mut w = Walk::new(data, &self.walk, v.mode);
        let mut dot = Dot(SingleTree::new(&exe, data.tasks.len()));
        dump_replay(&mut w, &mut dot, self.walk.no_libcall);
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

    fn walk_options(&self) -> &WalkOptions {
        &self.walk
    }
}
