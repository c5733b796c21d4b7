//! tracemux-filter: the event filters of `trace-cmd report -F` (trace-cmd
//! 3.1.6's `tracecmd_filter` over libtraceevent 1.7.1's `tep_event_filter`).
//!
//! A filter string is `EVENTS[:FILTER]`:
//! - `EVENTS` is a comma-separated list of `SYSTEM/EVENT` or `NAME`, each a
//!   POSIX basic regular expression matched case-insensitively against the
//!   whole name (`^...$`); a lone `NAME` matches an event whose name *or*
//!   system matches (so `sched_*` means the system `sched`);
//! - `FILTER` (optional: without it every matching event passes) is the
//!   expression language of [`parse`]: `FIELD == 3`, `FIELD =~ "REGEX"`,
//!   `COMM`, `CPU`, `&&`, `||`, `!`, parentheses. A field an event does not
//!   have makes its comparison false.
//!
//! [`EventFilter`] is one filter string compiled for the events of one
//! trace; [`FilterSet`] combines them as trace-cmd does: an event is shown
//! when some positive filter has a filter for it that matches (or when there
//! is no positive filter, or it is a stack trace right after a shown event
//! on its CPU), and no negative (`-v`) filter matches it.
//!
//! Filters are compiled once; evaluating one on an event allocates nothing.
#![forbid(unsafe_code)]

pub mod bre;
mod error;
pub mod eval;
mod lexer;
pub mod parse;

pub use error::{ErrorKind, FilterError};
use parse::Tree;
use tracemux_core::model::{Event, TraceMeta};

/// The result of one filter on one event (`tep_filter_match`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// The filter has a filter for the event and the event matches it.
    Match,
    /// The filter has a filter for the event and the event does not match.
    Miss,
    /// The filter has no filter for this event.
    NotFound,
    /// The filter has no filters at all.
    NoFilter,
    /// Evaluating the filter failed (e.g. a string used as a number).
    Error,
}

/// One filter string compiled for the events of one trace
/// (`tep_filter_add_filter_str` on a new `tep_event_filter`).
#[derive(Debug, Clone)]
pub struct EventFilter {
    text: String,
    /// Per event id: index into `trees`.
    by_id: Vec<Option<u32>>,
    trees: Vec<Tree>,
}

fn split_slash(s: &[u8]) -> (Option<&[u8]>, Option<&[u8]>) {
    let mut it = s.split(|&b| b == b'/').filter(|p| !p.is_empty());
    (it.next(), it.next())
}

fn strim(s: &[u8]) -> &[u8] {
    let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r');
    let start = s.iter().position(|b| !is_space(b)).unwrap_or(s.len());
    let s = &s[start..];
    let end = s.iter().rposition(|b| !is_space(b)).map_or(0, |e| e + 1);
    &s[..end]
}

impl EventFilter {
    /// Compile `text` for the event classes of `meta`.
    pub fn new(meta: &TraceMeta, text: &str) -> Result<EventFilter, FilterError> {
        let b = text.as_bytes();
        let colon = b.iter().position(|&c| c == b':');
        // the events the filter is for, by id
        let mut ids: Vec<u32> = Vec::new();
        let mut cur = Some(0usize);
        while let Some(p) = cur {
            let next = b[p..].iter().position(|&c| c == b',').map(|i| p + i);
            let end = match (next, colon) {
                (Some(n), None) => n,
                (Some(n), Some(c)) if n < c => n,
                (_, Some(c)) if c >= p => c,
                // a comma after the colon: libtraceevent reads the filter as
                // an event name of negative length
                (_, Some(_)) => {
                    return Err(FilterError::new(
                        ErrorKind::MemAllocFailed,
                        "failed to allocate memory",
                    ))
                }
                (None, None) => b.len(),
            };
            let this = &b[p..end];
            cur = next.map(|n| n + 1);
            let (sys, name) = split_slash(this);
            let Some(sys) = sys else {
                return Err(FilterError::new(
                    ErrorKind::FilterNotFound,
                    "no filter found",
                ));
            };
            let (sys, name) = match name {
                Some(n) => (Some(strim(sys)), strim(n)),
                None => (None, strim(sys)),
            };
            let bad = || FilterError::new(ErrorKind::InvalidEventName, "invalid event name");
            let ereg =
                bre::compile(&format!("^{}$", String::from_utf8_lossy(name))).map_err(|_| bad())?;
            let sreg = match sys {
                Some(s) => Some(
                    bre::compile(&format!("^{}$", String::from_utf8_lossy(s)))
                        .map_err(|_| bad())?,
                ),
                None => None,
            };
            let mut found = false;
            for c in meta.classes.iter() {
                let hit = match &sreg {
                    Some(s) => s.is_match(c.system.as_bytes()) && ereg.is_match(c.name.as_bytes()),
                    None => ereg.is_match(c.system.as_bytes()) || ereg.is_match(c.name.as_bytes()),
                };
                if hit {
                    found = true;
                    ids.push(c.id);
                }
            }
            if !found {
                return Err(FilterError::new(ErrorKind::EventNotFound, "no event found"));
            }
        }
        let mut by_id: Vec<Option<u32>> = Vec::new();
        let mut trees = Vec::new();
        let mut err = None;
        for id in ids {
            // the class this id resolves to
            let Some(class) = meta.classes.get(id) else {
                continue;
            };
            let tree = match colon {
                Some(c) => match parse::parse_event(class, &b[c + 1..]) {
                    Ok(t) => t,
                    Err(e) => {
                        err = Some(e);
                        continue;
                    }
                },
                None => Tree {
                    nodes: vec![parse::Node::Bool(true)],
                    root: 0,
                },
            };
            let i = id as usize;
            if by_id.len() <= i {
                by_id.resize(i + 1, None);
            }
            by_id[i] = Some(trees.len() as u32);
            trees.push(tree);
        }
        if let Some(e) = err {
            return Err(e);
        }
        Ok(EventFilter {
            text: text.to_string(),
            by_id,
            trees,
        })
    }

    /// The filter string as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the filter has a filter for the event type `id`.
    pub fn has_event(&self, id: u32) -> bool {
        self.by_id.get(id as usize).is_some_and(|t| t.is_some())
    }

    /// The filter's parsed tree for an event type (for tests and tools).
    pub fn tree(&self, id: u32) -> Option<&Tree> {
        let i = (*self.by_id.get(id as usize)?)?;
        self.trees.get(i as usize)
    }

    /// `tep_filter_match`
    pub fn matches(&self, meta: &TraceMeta, ev: &Event<'_>) -> Match {
        if self.trees.is_empty() {
            return Match::NoFilter;
        }
        let Some(t) = self.tree(ev.type_id) else {
            return Match::NotFound;
        };
        let Some(class) = ev.class.or_else(|| meta.classes.get(ev.type_id)) else {
            return Match::NotFound;
        };
        let cx = eval::Ctx { meta, class, ev };
        match eval::test(t, t.root, &cx) {
            Ok(true) => Match::Match,
            Ok(false) => Match::Miss,
            Err(_) => Match::Error,
        }
    }
}

/// The filters of one trace file, combined as trace-cmd combines them
/// (`tracecmd_filter_match`): shown when a positive filter matches (or
/// there are none, or the event is a stack trace following a shown event on
/// its CPU), and no negative filter matches.
#[derive(Debug, Clone)]
pub struct FilterSet {
    positive: Vec<EventFilter>,
    negative: Vec<EventFilter>,
    kernel_stack: Option<u32>,
    user_stack: Option<u32>,
    /// Per CPU: the last event that reached the negative filters passed them.
    last_printed: tracemux_core::idmap::IdMap<bool>,
}

impl FilterSet {
    pub fn new(meta: &TraceMeta) -> FilterSet {
        let find = |name: &str| {
            meta.classes
                .iter()
                .find(|c| c.system == "ftrace" && c.name == name)
                .map(|c| c.id)
        };
        FilterSet {
            positive: Vec::new(),
            negative: Vec::new(),
            kernel_stack: find("kernel_stack"),
            user_stack: find("user_stack"),
            last_printed: tracemux_core::idmap::IdMap::new(),
        }
    }

    /// Add a filter string (`tracecmd_filter_add`); `negative` for `-v`.
    pub fn add(&mut self, meta: &TraceMeta, text: &str, negative: bool) -> Result<(), FilterError> {
        let f = EventFilter::new(meta, text)?;
        if negative {
            self.negative.push(f);
        } else {
            self.positive.push(f);
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.positive.is_empty() && self.negative.is_empty()
    }

    pub fn positive(&self) -> &[EventFilter] {
        &self.positive
    }

    pub fn negative(&self) -> &[EventFilter] {
        &self.negative
    }

    fn printed(&self, cpu: u32) -> bool {
        self.last_printed.get(cpu).copied().unwrap_or(false)
    }

    /// Whether the event passes (`== TRACECMD_FILTER_MATCH`). Call it for
    /// every event in order: it keeps the per-CPU state that lets stack
    /// traces follow the events they belong to.
    pub fn matches(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> bool {
        let pass = |m: Match| matches!(m, Match::Match | Match::NoFilter);
        if !self.positive.is_empty() && !self.positive.iter().any(|f| pass(f.matches(meta, ev))) {
            let stack =
                Some(ev.type_id) == self.kernel_stack || Some(ev.type_id) == self.user_stack;
            if !(stack && self.printed(ev.cpu)) {
                return false;
            }
        }
        let hidden = self.negative.iter().any(|f| pass(f.matches(meta, ev)));
        *self.last_printed.slot(ev.cpu) = !hidden;
        !hidden
    }
}

#[cfg(test)]
mod tests;
