//! babeltrace2's muxer order (`filter.utils.muxer`), shared by the text
//! output ([`crate::text`]) and the model source ([`crate::source`]): the
//! kinds of messages a data stream produces, their weights, the rank of
//! each trace, and the comparison of two stream heads with the same time.

use crate::fs::Trace;

/// The messages of one data stream, as babeltrace2's source produces them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MsgKind {
    StreamBegin,
    PacketBegin,
    Event,
    Discarded,
    PacketEnd,
    /// A live stream is known to be quiet up to this time (a relayd's
    /// beacon): prints nothing, lets the muxer advance.
    Inactivity,
    DiscardedPackets,
    StreamEnd,
}

impl MsgKind {
    /// babeltrace2's `message_type_weight`.
    pub(crate) fn weight(self) -> i32 {
        match self {
            MsgKind::StreamBegin => 7,
            MsgKind::PacketBegin => 6,
            MsgKind::Event => 5,
            MsgKind::Discarded => 4,
            MsgKind::PacketEnd => 3,
            MsgKind::Inactivity => 2,
            MsgKind::DiscardedPackets => 1,
            MsgKind::StreamEnd => 0,
        }
    }
}

/// What the comparison looks at in a stream head: the stream (trace and
/// group positions), the message kind, and for events the position of the
/// class in the IR stream class.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Head {
    pub trace: usize,
    pub group: usize,
    pub kind: MsgKind,
    pub class: usize,
}

/// Rank of each trace for ties: UUID (present first, bytewise), then name.
pub(crate) fn trace_ranks(traces: &[Trace]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..traces.len()).collect();
    order.sort_by(|&a, &b| {
        let (ua, ub) = (traces[a].tc.uuid, traces[b].tc.uuid);
        let c = match (ua, ub) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        };
        c.then_with(|| traces[a].name.cmp(&traces[b].name))
    });
    let mut rank = vec![0u32; traces.len()];
    for (r, &t) in order.iter().enumerate() {
        rank[t] = r as u32;
    }
    rank
}

/// Of the candidate streams `(stream, head time)`, the one whose head
/// comes first: the earliest time, ties broken by `compare` (negative:
/// its first stream first), the first candidate among equals.
#[inline(always)]
pub(crate) fn earliest(
    candidates: impl IntoIterator<Item = (usize, i64)>,
    compare: impl Fn(usize, usize) -> i64,
) -> Option<(usize, i64)> {
    let mut best: Option<(usize, i64)> = None;
    for (s, ts) in candidates {
        match best {
            None => best = Some((s, ts)),
            Some((b, bts)) => {
                if ts < bts || (ts == bts && compare(s, b) < 0) {
                    best = Some((s, ts));
                }
            }
        }
    }
    best
}

/// babeltrace2's `common_muxing_compare_messages` for two stream heads
/// with the same time (negative: `a` first). (Rarely called: not inlined.)
#[inline(never)]
pub(crate) fn compare(traces: &[Trace], rank: &[u32], a: Head, b: Head) -> i64 {
    let (ta, tb) = (&traces[a.trace], &traces[b.trace]);
    let ra = rank[a.trace] as i64;
    let rb = rank[b.trace] as i64;
    if ra != rb && (ta.tc.uuid != tb.tc.uuid || ta.name != tb.name) {
        return ra - rb;
    }
    let (ga, gb) = (&ta.streams[a.group], &tb.streams[b.group]);
    if ga.class_id != gb.class_id {
        return if ga.class_id < gb.class_id { -1 } else { 1 };
    }
    if ga.id != gb.id {
        return if ga.id < gb.id { -1 } else { 1 };
    }
    if a.kind != b.kind {
        return (b.kind.weight() - a.kind.weight()) as i64;
    }
    if a.kind == MsgKind::Event {
        fn ec<'a>(
            t: &'a Trace,
            g: &crate::fs::StreamGroup,
            c: usize,
        ) -> Option<&'a crate::ir::EventClass> {
            t.prog
                .streams
                .get(g.class)
                .and_then(|s| t.tc.stream_class(s.id))
                .and_then(|s| s.event_classes.get(c))
        }
        if let (Some(x), Some(y)) = (ec(ta, ga, a.class), ec(tb, gb, b.class)) {
            if x.id != y.id {
                return if x.id < y.id { -1 } else { 1 };
            }
            match (&x.name, &y.name) {
                (Some(p), Some(q)) if p != q => return if p < q { -1 } else { 1 },
                (None, Some(_)) => return -1,
                (Some(_), None) => return 1,
                _ => {}
            }
        }
    }
    match ga.name.cmp(&gb.name) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Greater => 1,
        _ => 0,
    }
}
