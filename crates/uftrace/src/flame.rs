//! `uftrace dump --flame-graph`: folded call stacks with sample counts
//! (`main;foo;bar 12`), the input of flamegraph.pl, byte-identical to
//! uftrace 0.13.
//!
//! The records are walked in time order into one call-graph tree for all
//! tasks ([`crate::graph::tree`]); a node's count is its self time divided
//! by the sample time (1 us, raised tenfold until the recording's elapsed
//! time gives at most a million samples), or its call count when the
//! recording has no elapsed time. Child time that does not fill whole
//! samples is given back to the parent, as uftrace does. A pre-empted
//! sched-out opens no `linux:schedule` node but its sched-in closes the
//! running function's node, and a forked child's first records attach at
//! the top: uftrace's quirks, kept.

use std::io::{self, Write};

use crate::data::UftraceData;
use crate::graph::tree::{Forest, NodeRef, SingleTree, ROOT};
use crate::header::info_bit;
use crate::report::walk::{dump_replay, DumpOps, Rec, Stacks, Walk, WalkOptions, WalkView, Walked};

/// uftrace's target: at most this many samples per second of recording.
const SAMPLE_FREQ: u64 = 1_000_000;

/// Options of `uftrace dump --flame-graph`.
#[derive(Debug, Clone, Default)]
pub struct FlameOptions {
    /// Filters and common options.
    pub walk: WalkOptions,
    /// `--sample-time` in ns; `None`: derived from the elapsed time.
    pub sample_time: Option<u64>,
}

/// The sample time uftrace derives from the recording's elapsed time
/// (`elapsed_time:` of `info`, in seconds); 0 when there is none.
pub fn sample_time(data: &UftraceData) -> u64 {
    if data.header.info_mask & info_bit::RECORD_DATE == 0 {
        return 0;
    }
    let total = (leading_float(data.info.elapsed_time.as_deref().unwrap_or("")) * 1e9) as u64;
    let mut st = 1000u64;
    while st.saturating_mul(SAMPLE_FREQ) < total {
        if st == 1_000_000_000 {
            break;
        }
        st *= 10;
    }
    st
}

/// The number at the start of `s`, as `strtod` reads it (0 when none).
fn leading_float(s: &str) -> f64 {
    let s = s.trim_start();
    let end = s
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || ((c == '-' || c == '+') && i == 0)))
        .map_or(s.len(), |(i, _)| i);
    s[..end].parse().unwrap_or(0.0)
}

struct Flame {
    tree: SingleTree,
    sample_time: u64,
}

impl Flame {
    /// uftrace's `adjust_fg_time`: child time not making whole samples
    /// goes back to the parent.
    fn adjust(&mut self, st: &Stacks<'_>, ti: usize, orig: NodeRef) {
        if self.sample_time == 0 {
            return;
        }
        let forest = &mut self.tree.forest;
        let Some(p) = forest.node(orig).parent else {
            return;
        };
        let Some(f) = st.get(ti, st.tasks[ti].stack_count) else {
            return;
        };
        let curr = f.total_time;
        let accounted = curr / self.sample_time * self.sample_time;
        let pn = forest.node_mut((orig.0, p));
        pn.child_time = pn.child_time.wrapping_sub(curr).wrapping_add(accounted);
    }
}

impl DumpOps for Flame {
    fn task_rstack(&mut self, st: &mut Stacks<'_>, ti: usize, name: &[u8], r: &Rec, _blob: &[u8]) {
        if let Some(orig) = self.tree.add(st, ti, name, r) {
            self.adjust(st, ti, orig);
        }
    }
}

impl WalkView for FlameOptions {
    /// `uftrace dump --flame-graph`.
    fn render(&self, v: Walked<'_>) -> io::Result<()> {
        let (data, out, warn) = (v.data, v.out, v.warn);
        let mut w = Walk::new(data, &self.walk, v.mode);
        let mut fl = Flame {
            tree: SingleTree::new("", data.tasks.len()),
            sample_time: self.sample_time.unwrap_or_else(|| sample_time(data)),
        };
        dump_replay(&mut w, &mut fl, self.walk.no_libcall);
        w.warn_damage(warn)?;
        let mut buf = Vec::new();
        print(&mut buf, &fl.tree.forest, fl.sample_time);
        out.write_all(&buf)
    }

    fn walk_options(&self) -> &WalkOptions {
        &self.walk
    }
}

/// `print_flame_graph`: one line per node with samples.
fn print(out: &mut Vec<u8>, forest: &Forest, sample_time: u64) {
    let nodes = &forest.trees[0].nodes;
    let mut path: Vec<usize> = Vec::new();
    forest.walk(0, |n, depth| {
        // the root (no name in uftrace) is not part of the stacks
        path.truncate(depth.saturating_sub(1));
        if n == ROOT {
            return;
        }
        path.push(n);
        let node = &nodes[n];
        let mut sample = node.nr_calls.max(0) as u64;
        if sample != 0 && sample_time != 0 {
            sample = node.time.wrapping_sub(node.child_time) / sample_time;
        }
        if sample == 0 {
            return;
        }
        for (i, &p) in path.iter().enumerate() {
            if i > 0 {
                out.push(b';');
            }
            out.extend_from_slice(nodes[p].name.as_bytes());
        }
        let _ = writeln!(out, " {sample}");
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtod_prefix() {
        assert_eq!(leading_float("0.023842427 sec"), 0.023842427);
        assert_eq!(leading_float("12 sec"), 12.0);
        assert_eq!(leading_float("sec"), 0.0);
    }
}
