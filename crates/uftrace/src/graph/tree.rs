//! The call-graph tree uftrace builds for `graph`, `dump --flame-graph` and
//! `dump --graphviz` (its `utils/graph.c`): one node per distinct call
//! path, with call counts and accumulated total and child times.
//!
//! Each task has a cursor ([`TaskGraph`]) into a tree. A function entry
//! moves the cursor to the child of that name (created on first sight); an
//! exit adds the frame's times to the cursor's node and moves it to the
//! parent. The exit does not check that it matches the node; a mismatch
//! only triggers the fork recovery (a forked child's first exit returns
//! from the parent's `fork` node). Schedule events are a
//! `linux:schedule` pseudo function. Like uftrace, a cursor that climbs
//! above the root stays lost until something resets it; the outputs depend
//! on these details.
//!
//! Nodes live in an arena per tree; a cursor is a ([`NodeRef`]) that may
//! point into another tree than the task's current one, as uftrace's
//! pointers may after an exec.

use crate::events::id;
use crate::record::Kind;
use crate::report::walk::{Rec, Stacks};
pub use crate::report::{SCHED_NAME, SCHED_PREEMPT_NAME};

/// The root node of every tree.
pub const ROOT: usize = 0;

/// One call-graph node (`struct uftrace_graph_node`).
#[derive(Debug, Clone, Default)]
pub struct Node {
    pub addr: u64,
    pub name: Box<str>,
    pub nr_edges: i32,
    pub nr_calls: i32,
    pub time: u64,
    pub child_time: u64,
    pub id: u32,
    /// In insertion order.
    pub children: Vec<usize>,
    pub parent: Option<usize>,
}

/// Kinds of special nodes (for fork recovery).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Special {
    Fork,
    Exec,
}

/// A node of some tree.
pub type NodeRef = (usize, usize);

/// One call-graph tree (`struct uftrace_graph`).
#[derive(Debug, Clone)]
pub struct Tree {
    pub nodes: Vec<Node>,
    /// Session the tree belongs to (decides the fork/exec special nodes).
    pub sess: Option<usize>,
    /// Fork and exec nodes, oldest first (searched newest first).
    special: Vec<(NodeRef, Special, i32)>,
}

impl Tree {
    /// A tree with only its root, named `root_name`.
    pub fn new(root_name: &str, sess: Option<usize>) -> Tree {
        Tree {
            nodes: vec![Node {
                name: root_name.into(),
                ..Node::default()
            }],
            sess,
            special: Vec::new(),
        }
    }
}

/// A task's cursor (`struct uftrace_task_graph`).
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskGraph {
    pub lost: bool,
    pub new_sess: bool,
    /// Index of the task's current tree.
    pub graph: Option<usize>,
    pub node: Option<NodeRef>,
}

/// All trees plus the node id counter.
#[derive(Debug, Clone, Default)]
pub struct Forest {
    pub trees: Vec<Tree>,
    next_id: u32,
}

impl Forest {
    /// The trees; node ids start at 1.
    pub fn new(trees: Vec<Tree>) -> Forest {
        Forest { trees, next_id: 1 }
    }

    /// The node `r`.
    pub fn node(&self, r: NodeRef) -> &Node {
        &self.trees[r.0].nodes[r.1]
    }

    /// The node `r`, mutable.
    pub fn node_mut(&mut self, r: NodeRef) -> &mut Node {
        &mut self.trees[r.0].nodes[r.1]
    }

    /// `add_graph_entry`: returns 1 (ignored after LOST), -1 (no cursor or
    /// frame) or 0.
    pub fn add_entry(&mut self, tg: &mut TaskGraph, st: &Stacks<'_>, ti: usize, name: &str) -> i32 {
        if tg.lost {
            return 1;
        }
        let mut curr = tg.node;
        if tg.new_sess {
            curr = tg.graph.map(|g| (g, ROOT));
            tg.new_sess = false;
        }
        let sc = st.tasks[ti].stack_count;
        let (Some(curr), Some(f)) = (curr, st.get(ti, sc - 1)) else {
            return -1;
        };
        let (t, c) = curr;
        let found = self.trees[t].nodes[c]
            .children
            .iter()
            .copied()
            .find(|&k| &*self.trees[t].nodes[k].name == name);
        let n = match found {
            Some(n) => n,
            None => {
                let n = self.trees[t].nodes.len();
                let id = self.next_id;
                self.next_id = self.next_id.wrapping_add(1);
                self.trees[t].nodes.push(Node {
                    addr: f.addr,
                    name: name.into(),
                    id,
                    parent: Some(c),
                    ..Node::default()
                });
                let p = &mut self.trees[t].nodes[c];
                p.children.push(n);
                p.nr_edges = p.nr_edges.wrapping_add(1);
                if let Some(g) = tg.graph {
                    self.mark_special(g, (t, n), f.addr, st, ti);
                }
                n
            }
        };
        self.trees[t].nodes[n].nr_calls = self.trees[t].nodes[n].nr_calls.wrapping_add(1);
        tg.node = Some((t, n));
        0
    }

    /// Remember fork/exec nodes (a fixup function of the tree's session).
    fn mark_special(&mut self, g: usize, node: NodeRef, addr: u64, st: &Stacks<'_>, ti: usize) {
        let Some(s) = self.trees[g].sess else { return };
        if !st.is_fixup(s, addr) {
            return;
        }
        let Some(sym) = st.data.symbol_in(s, 0, addr) else {
            return;
        };
        let n = &*sym.name;
        let kind = if n == "fork" || n == "vfork" || n == "daemon" {
            Special::Fork
        } else if n.starts_with("exec") {
            Special::Exec
        } else {
            return;
        };
        self.trees[g].special.push((node, kind, st.tasks[ti].pid));
    }

    /// `add_graph_exit`: returns the node the cursor was on (for the
    /// flame graph's time adjustment) or `None` (-1 in uftrace).
    pub fn add_exit(&mut self, tg: &mut TaskGraph, st: &Stacks<'_>, ti: usize) -> Option<NodeRef> {
        let sc = st.tasks[ti].stack_count;
        let (Some(node), Some(f)) = (tg.node, st.get(ti, sc)) else {
            return None;
        };
        if tg.lost {
            // kernel functions after LOST are ignored; LOST happens in the
            // kernel only, so back in user space it is over
            if st.data.is_kernel_address(f.addr) {
                return None;
            }
            tg.lost = false;
        }
        let mut n = node;
        if self.node(n).addr != f.addr {
            if let Some(g) = tg.graph {
                let rstack_addr = st.rstack(ti).1;
                let ppid = st.tasks[ti].ppid;
                let sp = &self.trees[g].special;
                if let Some(k) = (0..sp.len()).rev().find(|&k| {
                    let (r, kind, pid) = sp[k];
                    self.node(r).addr == rstack_addr && kind == Special::Fork && pid == ppid
                }) {
                    n = self.trees[g].special.remove(k).0;
                }
            }
        }
        let nd = self.node_mut(n);
        nd.time = nd.time.wrapping_add(f.total_time);
        nd.child_time = nd.child_time.wrapping_add(f.child_time);
        tg.node = nd.parent.map(|p| (n.0, p));
        Some(node)
    }

    /// `add_graph_event`: schedule events as the `linux:schedule` pseudo
    /// function. Returns what [`Self::add_entry`] does, 0 for an exit.
    pub fn add_event(
        &mut self,
        tg: &mut TaskGraph,
        st: &mut Stacks<'_>,
        ti: usize,
        addr: u64,
    ) -> Option<NodeRef> {
        if addr == id::PERF_SCHED_OUT as u64 || addr == id::PERF_SCHED_OUT_PREEMPT as u64 {
            // uftrace rewrites the record's address to match the sched-in
            st.set_rstack_addr(ti, id::PERF_SCHED_IN as u64);
            let name = if addr == id::PERF_SCHED_OUT as u64 {
                SCHED_NAME
            } else {
                SCHED_PREEMPT_NAME
            };
            self.add_entry(tg, st, ti, name);
            None
        } else if addr == id::PERF_SCHED_IN as u64 {
            self.add_exit(tg, st, ti)
        } else {
            None
        }
    }

    /// Visit the nodes of tree `t` depth first, children in insertion
    /// order, without recursion (deep recordings cannot overflow the
    /// stack): `f(node, depth)`.
    pub fn walk(&self, t: usize, mut f: impl FnMut(usize, usize)) {
        let nodes = &self.trees[t].nodes;
        let mut stack: Vec<(usize, usize)> = vec![(ROOT, 0)];
        while let Some((n, d)) = stack.pop() {
            f(n, d);
            for &c in nodes[n].children.iter().rev() {
                stack.push((c, d + 1));
            }
        }
    }
}

/// One tree for the whole recording that every task adds to (what
/// `dump --flame-graph` and `dump --graphviz` build).
pub struct SingleTree {
    pub forest: Forest,
    tgs: Vec<TaskGraph>,
}

impl SingleTree {
    /// An empty tree whose root is `root_name`, for `tasks` tasks.
    pub fn new(root_name: &str, tasks: usize) -> SingleTree {
        SingleTree {
            forest: Forest::new(vec![Tree::new(root_name, None)]),
            tgs: vec![TaskGraph::default(); tasks],
        }
    }

    /// Add record `r` of task `ti`, of the function `name` (uftrace's
    /// `task_rstack` of both dumps). Returns, for an exit or an event, the
    /// node the task left.
    pub fn add(&mut self, st: &mut Stacks<'_>, ti: usize, name: &[u8], r: &Rec) -> Option<NodeRef> {
        self.forest.trees[0].sess = st.session(ti, r.time);
        let mut tg = self.tgs[ti];
        tg.graph = Some(0);
        if tg.node.is_none() {
            tg.node = Some((0, ROOT));
        }
        let left = match r.kind {
            Kind::Entry => {
                let name = std::str::from_utf8(name).unwrap_or("?");
                self.forest.add_entry(&mut tg, st, ti, name);
                None
            }
            Kind::Exit => self.forest.add_exit(&mut tg, st, ti),
            Kind::Event => self.forest.add_event(&mut tg, st, ti, r.addr),
            Kind::Lost => None,
        };
        self.tgs[ti] = tg;
        left
    }
}
