//! `uftrace graph [FUNC]`: the call graph of a function (with the
//! backtraces that reached it), or of the whole recording, one per
//! session, byte-identical to uftrace 0.13.
//!
//! ```text
//! # Function Call Graph for 'main' (session: 60ee6a82f5538667)
//! =============== BACKTRACE ===============
//!  backtrace #0: hit 1, time  10.428 ms
//!    [0] main (0x5586994704f9)
//!
//! ========== FUNCTION CALL GRAPH ==========
//! # TOTAL TIME   FUNCTION
//!    10.428 ms : (1) main
//!     0.921 us :  +-(2) atoi
//!              :  |
//! ```
//!
//! Records are walked in time order ([`crate::report::walk`]) into one
//! call-graph tree per session ([`tree`]). With a function name, a task
//! adds nodes only while it runs that function (the graph is rooted at
//! it); without one, every task's calls go into its session's tree, rooted
//! at the executable's name. Graphs are printed newest session first, as
//! uftrace does.

pub mod graphviz;
pub mod tree;

use std::io::{self, Write};

use crate::data::UftraceData;
use crate::events::id;
use crate::record::Kind;
use crate::report::walk::{
    begin, time_unit, unknown_name, Rec, Stacks, Walk, WalkOptions, DEFAULT_DEPTH,
};
use crate::symbols::basename;
use tree::{Forest, TaskGraph, Tree, ROOT};

/// Options of `uftrace graph`.
#[derive(Debug, Clone, Default)]
pub struct GraphOptions {
    /// Filters and common options.
    pub walk: WalkOptions,
    /// The function to graph; `None`: the whole recording.
    pub func: Option<String>,
    /// `-f FIELD[,FIELD...]`: total (total-time), self (self-time), addr
    /// (address); `+FIELD` adds to the default (total); `none`.
    pub fields: Option<String>,
}

/// A column of the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Total,
    Self_,
    Addr,
}

/// (field, name, alias, header).
const FIELDS: [(Field, &str, &str, &str); 3] = [
    (Field::Total, "total-time", "total", "TOTAL TIME"),
    (Field::Self_, "self-time", "self", " SELF TIME"),
    (Field::Addr, "address", "addr", "   ADDRESS  "),
];

/// uftrace's `setup_field` for the graph columns.
fn setup_fields(spec: Option<&str>) -> Result<Vec<Field>, String> {
    let Some(spec) = spec else {
        return Ok(vec![Field::Total]);
    };
    let table = FIELDS.map(|f| f.0);
    crate::field::select(spec, &table, &[Field::Total], |f, name| {
        FIELDS
            .iter()
            .any(|d| d.0 == f && (d.1 == name || d.2 == name))
    })
    .map_err(|name| crate::field::unknown(&name, FIELDS.iter().map(|f| f.1)))
}

fn field_len(f: Field) -> usize {
    if f == Field::Addr {
        12
    } else {
        10
    }
}

/// A backtrace to the function (`struct graph_backtrace`).
#[derive(Debug, Clone)]
struct Backtrace {
    addrs: Vec<u64>,
    hit: i32,
    time: u64,
}

/// A task's graph state (`struct task_graph`).
#[derive(Debug, Clone, Copy, Default)]
struct TaskState {
    utg: TaskGraph,
    /// (tree, index into its backtraces).
    bt_curr: Option<(usize, usize)>,
    enabled: i32,
}

struct Builder<'a> {
    forest: Forest,
    /// Per tree (= per session), oldest first (uftrace lists newest first).
    bts: Vec<Vec<Backtrace>>,
    tasks: Vec<TaskState>,
    full: bool,
    func: &'a str,
    no_libcall: bool,
    name: Vec<u8>,
    /// The backtrace being looked up (no allocation unless it is new).
    scratch: Vec<u64>,
}

impl Builder<'_> {
    /// `get_task_graph`: the task's graph for a record at `time` (`kernel`:
    /// the address is a kernel one, which falls back to the first session).
    fn task_graph(&mut self, st: &Stacks<'_>, ti: usize, time: u64, kernel: bool) {
        let mut sess = st.session(ti, time);
        if sess.is_none() && kernel {
            sess = st.data.sessions.first;
        }
        let tg = &mut self.tasks[ti];
        if tg.utg.graph.is_some() && tg.utg.graph != sess {
            tg.utg.new_sess = true;
        }
        tg.utg.graph = sess;
        if self.full && tg.utg.node.is_none() {
            self.start(st, ti);
        }
    }

    /// `start_graph`.
    fn start(&mut self, st: &Stacks<'_>, ti: usize) {
        let Some(g) = self.tasks[ti].utg.graph else {
            return;
        };
        let was = self.tasks[ti].enabled;
        self.tasks[ti].enabled = self.tasks[ti].enabled.wrapping_add(1);
        if was != 0 {
            return;
        }
        self.save_backtrace(st, ti, g);
        self.tasks[ti].utg.node = Some((g, ROOT));
        let root = self.forest.node_mut((g, ROOT));
        root.addr = st.rstack(ti).1;
        root.nr_calls = root.nr_calls.wrapping_add(1);
    }

    /// `end_graph`.
    fn end(&mut self, st: &Stacks<'_>, ti: usize) {
        if self.tasks[ti].enabled == 0 {
            return;
        }
        self.tasks[ti].enabled = self.tasks[ti].enabled.wrapping_sub(1);
        if self.tasks[ti].enabled == 0 {
            // save_backtrace_time
            let f = st.get(ti, st.tasks[ti].stack_count);
            if let (Some((g, b)), Some(f)) = (self.tasks[ti].bt_curr, f) {
                let bt = &mut self.bts[g][b];
                bt.time = bt.time.wrapping_add(f.total_time);
            }
            self.tasks[ti].bt_curr = None;
            self.tasks[ti].utg.lost = false;
        }
    }

    /// `save_backtrace_addr`: the stack up to the function.
    fn save_backtrace(&mut self, st: &Stacks<'_>, ti: usize, g: usize) {
        let len = st.tasks[ti].stack_count;
        if len <= 0 {
            return;
        }
        self.scratch.clear();
        self.scratch
            .extend((0..len).map(|i| st.get(ti, i).map_or(0, |f| f.addr)));
        let list = &mut self.bts[g];
        let b = match list.iter().position(|b| b.addrs == self.scratch) {
            Some(b) => b,
            None => {
                list.push(Backtrace {
                    addrs: self.scratch.clone(),
                    hit: 0,
                    time: 0,
                });
                list.len() - 1
            }
        };
        list[b].hit = list[b].hit.wrapping_add(1);
        self.tasks[ti].bt_curr = Some((g, b));
    }

    /// `build_graph_node`.
    fn node(&mut self, st: &mut Stacks<'_>, ti: usize, time: u64, addr: u64, kind: Kind) {
        self.task_graph(st, ti, time, false);
        let Some(g) = self.tasks[ti].utg.graph else {
            return;
        };
        let sym = self.forest.trees[g]
            .sess
            .and_then(|s| st.symbol_in(s, time, addr));
        if self.no_libcall && sym.is_some_and(|s| s.is_plt()) {
            return;
        }
        self.name.clear();
        match sym {
            Some(s) => self.name.extend_from_slice(s.name.as_bytes()),
            None => unknown_name(&mut self.name, addr),
        }
        if self.tasks[ti].enabled != 0 {
            let mut utg = self.tasks[ti].utg;
            match kind {
                Kind::Entry => {
                    let name = std::str::from_utf8(&self.name).unwrap_or("?");
                    self.forest.add_entry(&mut utg, st, ti, name);
                }
                Kind::Exit => {
                    self.forest.add_exit(&mut utg, st, ti);
                }
                Kind::Event => {
                    self.forest.add_event(&mut utg, st, ti, addr);
                }
                Kind::Lost => {}
            }
            self.tasks[ti].utg = utg;
        }
        if kind == Kind::Event || self.full {
            return;
        }
        if self.name == self.func.as_bytes() {
            match kind {
                Kind::Entry => self.start(st, ti),
                Kind::Exit => self.end(st, ti),
                _ => {}
            }
        }
    }
}

/// uftrace's `synthesize_depth_trigger`: with `-D`, a depth trigger on the
/// function keeps the depth filter from hiding it.
fn depth_trigger(data: &UftraceData, opts: &WalkOptions, func: &str) -> Option<String> {
    if opts.depth == DEFAULT_DEPTH {
        return opts.trigger.clone();
    }
    let found = data.sessions.sessions.iter().any(|s| {
        s.maps.maps.iter().any(|m| {
            m.module
                .is_some_and(|mi| data.modules[mi].symbols.iter().any(|y| &*y.name == func))
        })
    });
    let mut t = opts.trigger.clone().unwrap_or_default();
    if !t.is_empty() {
        t.push(';');
    }
    t.push_str(&format!(
        "{func}@{}depth={}",
        if found { "" } else { "kernel," },
        opts.depth
    ));
    Some(t)
}

/// Write `uftrace graph [FUNC]` of `data` to `out`; warnings go to `warn`.
/// `-F/-N/-T` items of `opts.walk` are added to the recording's filter
/// tables (hence `&mut`).
pub fn graph(
    data: &mut UftraceData,
    opts: &GraphOptions,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> io::Result<()> {
    let full = opts.func.is_none();
    let func = opts.func.clone().unwrap_or_else(|| "_start".into());
    // checked when the first graph is printed, as uftrace does
    let fields = setup_fields(opts.fields.as_deref());
    let mut wopts = opts.walk.clone();
    wopts.trigger = depth_trigger(data, &opts.walk, &func);
    let mode = begin(data, &wopts, out, warn)?;
    let data: &UftraceData = data;
    let trees = data
        .sessions
        .sessions
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let name = if full { basename(&s.exename) } else { &func };
            Tree::new(name, Some(i))
        })
        .collect::<Vec<_>>();
    let ntrees = trees.len();
    let mut w = Walk::new(data, &wopts, mode);
    let mut b = Builder {
        forest: Forest::new(trees),
        bts: vec![Vec::new(); ntrees],
        tasks: vec![TaskState::default(); data.tasks.len()],
        full,
        func: &func,
        no_libcall: opts.walk.no_libcall,
        name: Vec::new(),
        scratch: Vec::new(),
    };
    if build(&mut w, &mut b) {
        writeln!(warn, "uftrace: inverted time: broken data?")?;
    }
    w.warn_damage(warn)?;
    let mut buf = Vec::new();
    let mut printed = 0;
    for g in (0..ntrees).rev() {
        match print_graph(&mut buf, &b, &mut w.stacks, g, &fields) {
            Ok(n) => printed += n,
            Err(m) => {
                buf.extend_from_slice(m.as_bytes());
                out.write_all(&buf)?;
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    m.trim_end().to_string(),
                ));
            }
        }
    }
    if printed == 0 {
        let _ = writeln!(buf, "uftrace: cannot find graph for '{func}'");
        if opts.walk.has_filter() {
            buf.extend_from_slice(b"\t please check your filter settings.\n");
        }
    }
    out.write_all(&buf)
}

/// uftrace's `build_graph`; true when it stopped at inverted time.
fn build(w: &mut Walk<'_>, b: &mut Builder<'_>) -> bool {
    let mut prev_time = 0u64;
    while let Some(it) = w.next_item() {
        let ti = it.task;
        let r = Rec::of(&it);
        let st = &mut w.stacks;
        if !st.check_opts(ti, &r) || !st.check_filter(ti, &r) {
            continue;
        }
        if r.kind == Kind::Event
            && r.addr != id::PERF_SCHED_IN as u64
            && r.addr != id::PERF_SCHED_OUT as u64
            && r.addr != id::PERF_SCHED_OUT_PREEMPT as u64
        {
            continue;
        }
        if r.kind == Kind::Lost {
            // kernel functions outside user functions are skipped
            if st.tasks[ti].user_stack_count == 0 {
                continue;
            }
            st.unwind_lost(ti, |st, f| b.node(st, ti, prev_time, f.addr, Kind::Exit));
            b.task_graph(st, ti, prev_time, true);
            b.tasks[ti].utg.lost = true;
            continue;
        }
        if prev_time > r.time {
            return true;
        }
        prev_time = r.time;
        b.node(st, ti, r.time, r.addr, r.kind);
        st.check_filter_done(ti, &r);
    }
    // functions still running at the end
    let st = &mut w.stacks;
    for ti in 0..st.tasks.len() {
        let last = st.rstack(ti).0;
        st.close_running(ti, last, false, |st, _, f| {
            b.node(st, ti, last, f.addr, Kind::Exit)
        });
    }
    if b.full {
        for t in &mut b.forest.trees {
            let sum = t.nodes[ROOT]
                .children
                .iter()
                .fold(0u64, |a, &c| a.wrapping_add(t.nodes[c].time));
            let root = &mut t.nodes[ROOT];
            root.time = root.time.wrapping_add(sum);
            root.child_time = root.child_time.wrapping_add(sum);
        }
    }
    false
}

/// uftrace's `pr_indent`.
fn indent(out: &mut Vec<u8>, mask: &[bool], n: usize, line: bool) {
    let mut last = None;
    if line {
        last = (0..n)
            .rev()
            .find(|&i| mask.get(i).copied().unwrap_or(false));
    }
    for i in 0..n {
        let m = mask.get(i).copied().unwrap_or(false);
        if !line || last.is_none_or(|l| i < l) {
            out.extend_from_slice(if m { b" | " } else { b"   " });
        } else if Some(i) == last {
            out.extend_from_slice(b" +-");
        } else {
            out.extend_from_slice(b"---");
        }
    }
}

fn set(mask: &mut Vec<bool>, i: usize, v: bool) {
    if i >= mask.len() {
        mask.resize(i + 1, false);
    }
    mask[i] = v;
}

/// `print_graph`: returns 1 when the graph was printed.
fn print_graph(
    out: &mut Vec<u8>,
    b: &Builder<'_>,
    st: &mut Stacks<'_>,
    g: usize,
    fields: &Result<Vec<Field>, String>,
) -> Result<usize, String> {
    let tree = &b.forest.trees[g];
    let root = &tree.nodes[ROOT];
    let bts = &b.bts[g];
    if bts.is_empty() && root.time == 0 && root.nr_edges == 0 {
        return Ok(0);
    }
    let Some(s) = tree.sess else { return Ok(0) };
    let sid = &st.data.sessions.sessions[s].sid;
    let _ = writeln!(
        out,
        "# Function Call Graph for '{}' (session: {})",
        root.name,
        &sid[..sid.len().min(16)]
    );
    if !b.full && !bts.is_empty() {
        out.extend_from_slice(b"=============== BACKTRACE ===============\n");
        for (i, bt) in bts.iter().rev().enumerate() {
            let _ = write!(out, " backtrace #{i}: hit {}, time ", bt.hit);
            time_unit(out, bt.time);
            out.push(b'\n');
            for (k, &a) in bt.addrs.iter().enumerate() {
                let _ = write!(out, "   [{k}] ");
                match st.symbol_in(s, bt.time, a) {
                    Some(y) => out.extend_from_slice(y.name.as_bytes()),
                    None => unknown_name(out, a),
                }
                if a == 0 {
                    out.extend_from_slice(b" (0)\n");
                } else {
                    let _ = writeln!(out, " ({a:#x})");
                }
            }
            out.push(b'\n');
        }
    }
    let fields = fields.as_ref().map_err(Clone::clone)?;
    if root.time != 0 || root.nr_edges != 0 {
        out.extend_from_slice(b"========== FUNCTION CALL GRAPH ==========\n");
        if !fields.is_empty() {
            for (i, f) in fields.iter().enumerate() {
                out.extend_from_slice(if i == 0 { b"# " } else { b"  " });
                let h = FIELDS.iter().find(|x| x.0 == *f).map_or("", |x| x.3);
                out.extend_from_slice(h.as_bytes());
            }
            out.extend_from_slice(b"   FUNCTION\n");
        }
        print_nodes(out, &b.forest, g, b.full, fields);
        out.push(b'\n');
    }
    Ok(1)
}

/// `print_graph_node` from the root, iteratively.
fn print_nodes(out: &mut Vec<u8>, forest: &Forest, g: usize, full: bool, fields: &[Field]) {
    let nodes = &forest.trees[g].nodes;
    let mut mask: Vec<bool> = Vec::new();
    // (node, orig indent, indent for the children, next child)
    let mut stack: Vec<(usize, usize, usize, usize)> = Vec::new();
    let enter = |out: &mut Vec<u8>, mask: &mut Vec<bool>, n: usize, ind: usize, line: bool| {
        let node = &nodes[n];
        for f in fields {
            out.extend_from_slice(b"  ");
            match f {
                Field::Total => time_unit(out, node.time),
                Field::Self_ => time_unit(out, node.time.wrapping_sub(node.child_time)),
                Field::Addr => {
                    let _ = write!(out, "{:12x}", node.addr & ((1u64 << 48) - 1));
                }
            }
        }
        if !fields.is_empty() {
            out.extend_from_slice(b" : ");
        }
        indent(out, mask, ind, line);
        let name: &str = if node.addr == id::PERF_SCHED_IN as u64 {
            tree::SCHED_NAME
        } else {
            &node.name
        };
        if full && n == ROOT {
            let _ = writeln!(out, "(1) {name}");
        } else {
            let _ = writeln!(out, "({}) {name}", node.nr_calls);
        }
        let mut child_ind = ind;
        if node.nr_edges > 1 {
            set(mask, ind, true);
            child_ind += 1;
        }
        if let Some(p) = node.parent {
            let pn = &nodes[p];
            if pn.nr_edges > 1 && ind > 0 && pn.children.last() == Some(&n) {
                set(mask, ind - 1, false);
            }
        }
        child_ind
    };
    let ci = enter(out, &mut mask, ROOT, 0, nodes[ROOT].nr_edges > 1);
    stack.push((ROOT, 0, ci, 0));
    while let Some(top) = stack.last_mut() {
        let (n, orig, ind, next) = *top;
        let children = &nodes[n].children;
        if next < children.len() {
            if next > 0 {
                // a blank line between siblings (empty columns)
                for f in fields {
                    out.resize(out.len() + field_len(*f) + 2, b' ');
                }
                if !fields.is_empty() {
                    out.extend_from_slice(b" : ");
                }
                indent(out, &mask, ind, false);
                out.push(b'\n');
            }
            top.3 += 1;
            let c = children[next];
            let line = nodes[n].nr_edges > 1;
            let cci = enter(out, &mut mask, c, ind, line);
            stack.push((c, ind, cci, 0));
        } else {
            set(&mut mask, orig, false);
            stack.pop();
        }
    }
}
