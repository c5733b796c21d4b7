//! One timeline of several inputs: which clock each input's timestamps
//! come from, and the one constant that puts each input on the first
//! input's clock.
//!
//! The rule, for each input against the inputs already placed (the first
//! input is the reference, shift 0):
//!
//! 1. **Same clock** ([`ClockDomain::same_clock`]): the two say the same
//!    clock by name (CLOCK_MONOTONIC is trace.dat's `mono`, LTTng's
//!    `monotonic` and uftrace's default clock; `mono_raw`, `boot`, `tai`
//!    likewise) and do not name different hosts. The shift is exact: the
//!    difference of the offsets the files state (a CTF clock's offset to the
//!    epoch is taken out).
//! 2. **Estimated** from events both inputs see, when one input is a kernel
//!    trace with `sched_switch` and the other has events of the same thread
//!    ids ([`estimate`]): uftrace's own `linux:sched-out`/`sched-in` records
//!    of a thread against the kernel's switches of that thread (the offset
//!    of each matched pair; the median, the spread and the number of pairs
//!    are kept), else the offsets that put the most user-space events of
//!    each thread inside the intervals where the kernel ran that thread
//!    (the middle of the best range; its width is the spread).
//! 3. **Given** by the user (`--clock-offset INPUT=NS`), which overrides
//!    both.
//!
//! Otherwise the inputs are refused, with a message naming
//! `--clock-offset`: never a silent guess.

use std::collections::HashMap;

pub use crate::inputs::{describe, Alignment, ClockDomain, Estimate, InputInfo};
use crate::known::{Known, KnownClass};
use crate::model::{Format, PrintCtx, Record, RecordSource, TraceMeta};
use crate::typed::FieldTape;

impl ClockDomain {
    /// The clock of `meta`'s timestamps, from what the file says.
    pub fn of(meta: &TraceMeta) -> ClockDomain {
        let env = |k: &str| {
            meta.env
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        let host = meta.hostname().map(str::to_string);
        let first = meta.clocks.first();
        let (name, base, source) = match meta.format {
            Some(Format::TraceDat) => {
                let clock = meta.buffers.first().map_or("local", |b| b.clock.as_str());
                (
                    clock.to_string(),
                    0,
                    format!("trace.dat trace_clock {clock}"),
                )
            }
            Some(Format::Ctf) => match first {
                Some(c) => (
                    c.name.clone(),
                    c.offset_ns,
                    format!(
                        "CTF clock class {} (offset {} ns{})",
                        c.name,
                        c.offset_ns,
                        if c.origin_unix_epoch {
                            ", origin Unix epoch"
                        } else {
                            ""
                        }
                    ),
                ),
                None => ("ctf".into(), 0, "CTF, no clock class".into()),
            },
            Some(Format::Uftrace) => {
                let c = first.map_or("mono", |c| c.name.as_str());
                (c.to_string(), 0, format!("uftrace clock {c}"))
            }
            Some(Format::Perf) => match env("clockid") {
                Some(id) => (
                    perf_clockid(id).to_string(),
                    0,
                    format!("perf.data clockid {id}"),
                ),
                None => ("perf".into(), 0, "perf.data perf_clock".into()),
            },
            Some(Format::Ltt) => ("ltt".into(), 0, "LTT cycle counter".into()),
            _ => match first {
                Some(c) => (c.name.clone(), c.offset_ns, format!("clock {}", c.name)),
                None => ("unknown".into(), 0, "no clock stated".into()),
            },
        };
        let canon = match name.as_str() {
            "mono" | "monotonic" | "CLOCK_MONOTONIC" => Some("monotonic"),
            "mono_raw" | "monotonic_raw" | "monotonic-raw" | "CLOCK_MONOTONIC_RAW" => {
                Some("monotonic-raw")
            }
            "boot" | "boottime" | "CLOCK_BOOTTIME" => Some("boot"),
            "tai" | "CLOCK_TAI" => Some("tai"),
            "realtime" | "CLOCK_REALTIME" => Some("realtime"),
            _ => None,
        };
        ClockDomain {
            clock: canon.map_or(name.clone(), str::to_string),
            system: canon.is_some(),
            base_ns: base,
            host,
            source,
        }
    }

    /// The clock after corrections a reader applied to every timestamp
    /// (trace.dat's TSC2NSEC, DATE, OFFSET, TIME_SHIFT): no longer the
    /// file's clock, so related to others only by estimate or by the user.
    pub fn corrected(mut self, fixes: &[&str]) -> ClockDomain {
        if !fixes.is_empty() {
            self.clock = format!("{}+{}", self.clock, fixes.join("+"));
            self.source = format!("{} with {}", self.source, fixes.join(", "));
            self.system = false;
        }
        self
    }

    /// Whether `self` and `o` stamp the same clock (system clocks of the
    /// same name, on hosts not known to differ).
    pub fn same_clock(&self, o: &ClockDomain) -> bool {
        self.system
            && o.system
            && self.clock == o.clock
            && match (&self.host, &o.host) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

/// perf's `clockid` values (the `CLOCK_*` of Linux).
fn perf_clockid(id: &str) -> &str {
    match id.trim() {
        "0" => "realtime",
        "1" => "monotonic",
        "4" => "monotonic-raw",
        "7" => "boot",
        "11" => "tai",
        other => other,
    }
}

/// Index of the input whose stream `stream` is, in `meta.inputs`.
pub fn input_of_stream(meta: &TraceMeta, stream: u32) -> Option<usize> {
    meta.inputs.iter().position(|i| i.streams.contains(&stream))
}

/// What an input says that can relate its clock to another's: the
/// kernel's switches, user-space events by thread, uftrace's own
/// scheduler records. Collected by [`Samples::collect`], bounded.
#[derive(Debug, Default, Clone)]
pub struct Samples {
    /// (ts, prev_pid, next_pid) of each `sched_switch`.
    pub switches: Vec<(u64, i32, i32)>,
    /// First and last timestamp of the input.
    pub span: Option<(u64, u64)>,
    /// Timestamps of the events of each thread (not scheduler records).
    pub user: HashMap<i32, Vec<u64>>,
    /// uftrace's `linux:sched-out` / `sched-in` records by thread.
    pub outs: HashMap<i32, Vec<u64>>,
    pub ins: HashMap<i32, Vec<u64>>,
}

/// At most this many of each kind of sample are kept.
const MAX_SAMPLES: usize = 1 << 20;

impl Samples {
    /// Read `src` to its end (or until enough is known) and keep what can
    /// relate clocks. Damage is skipped (the merge reports it).
    pub fn collect(src: &mut dyn RecordSource) -> crate::Result<Samples> {
        let meta = src.meta().clone();
        let known: Vec<Option<KnownClass>> = meta
            .classes
            .iter()
            .map(|c| KnownClass::of(c).filter(|k| k.kind == Known::SchedSwitch))
            .collect();
        let kernel = known.iter().any(Option::is_some);
        let mut s = Samples::default();
        let mut scratch = FieldTape::new();
        let mut n_user = 0usize;
        while let Some(r) = src.next_record()? {
            let Record::Event(ev) = r else { continue };
            s.span = Some(match s.span {
                Some((a, b)) => (a.min(ev.ts), b.max(ev.ts)),
                None => (ev.ts, ev.ts),
            });
            let Some(c) = ev.class else { continue };
            if kernel {
                if let Some(Some(k)) = known.get(c.index.index()) {
                    if s.switches.len() < MAX_SAMPLES {
                        let ctx = PrintCtx::of(&meta, &ev);
                        let p = k.pick(&ev, &ctx, &mut scratch);
                        if let (Some(prev), Some(next)) = (p.int(1), p.int(5)) {
                            s.switches.push((ev.ts, prev as i32, next as i32));
                        }
                    }
                }
                continue;
            }
            if ev.pid <= 0 {
                continue;
            }
            if c.system == "linux" {
                let to = if c.name.starts_with("sched-out") {
                    &mut s.outs
                } else if c.name == "sched-in" {
                    &mut s.ins
                } else {
                    continue;
                };
                to.entry(ev.pid).or_default().push(ev.ts);
                continue;
            }
            if n_user < MAX_SAMPLES {
                n_user += 1;
                s.user.entry(ev.pid).or_default().push(ev.ts);
            }
        }
        Ok(s)
    }

    /// Whether these are a kernel trace's samples.
    pub fn is_kernel(&self) -> bool {
        !self.switches.is_empty()
    }

    /// The intervals where the kernel ran each thread, `[in, out]`, in the
    /// kernel's time (a thread running when the trace begins or ends: from
    /// the beginning, to the end).
    pub fn running(&self) -> HashMap<i32, Vec<(u64, u64)>> {
        let mut open: HashMap<i32, u64> = HashMap::new();
        let mut seen: HashMap<i32, bool> = HashMap::new();
        let mut out: HashMap<i32, Vec<(u64, u64)>> = HashMap::new();
        let (start, end) = self.span.unwrap_or((0, 0));
        for &(ts, prev, next) in &self.switches {
            if prev > 0 {
                let from = match open.remove(&prev) {
                    Some(t) => Some(t),
                    // out before any in: running since the beginning
                    None if !seen.contains_key(&prev) => Some(start),
                    None => None,
                };
                if let Some(f) = from {
                    out.entry(prev).or_default().push((f, ts));
                }
                seen.insert(prev, true);
            }
            if next > 0 {
                open.insert(next, ts);
                seen.insert(next, true);
            }
        }
        for (tid, f) in open {
            out.entry(tid).or_default().push((f, end));
        }
        for v in out.values_mut() {
            v.sort_unstable();
        }
        out
    }
}

/// Offsets are looked for within this distance (ns).
const WINDOW: i64 = 3600 * 1_000_000_000;
/// Matched sched-out (or sched-in) pairs agree within this (ns).
const PAIR_TOLERANCE: i64 = 20_000;
/// Fewer agreeing pairs than this is no estimate.
const MIN_PAIRS: u64 = 3;
/// Bound on the candidate pairs examined.
const MAX_CANDIDATES: usize = 4 << 20;

/// The offset `d` (ns) such that `kernel`'s time ≈ `user`'s time + d,
/// from events both see; `None` when they share too few.
///
/// `pre` (ns) is added to the user's times before looking: the difference
/// of the two clocks' stated bases (a CTF clock's offset to the epoch), so
/// that only what the clocks do not say is looked for; it is part of the
/// offset returned.
pub fn estimate(
    kernel: &Samples,
    user: &Samples,
    pre: i64,
) -> Option<(&'static str, i64, u64, u64, u64)> {
    if !kernel.is_kernel() {
        return None;
    }
    by_switch_pairs(kernel, user, pre)
        .or_else(|| by_containment(kernel, user, pre))
        .map(|(m, d, p, t, s)| (m, d + pre, p, t, s))
}

/// uftrace's own sched-out/in records against the kernel's switches of the
/// same threads: the densest cluster of pair offsets, then each user record
/// matched to the nearest kernel switch; the median of the matched offsets.
fn by_switch_pairs(
    k: &Samples,
    u: &Samples,
    pre: i64,
) -> Option<(&'static str, i64, u64, u64, u64)> {
    let mut k_out: HashMap<i32, Vec<u64>> = HashMap::new();
    let mut k_in: HashMap<i32, Vec<u64>> = HashMap::new();
    for &(ts, prev, next) in &k.switches {
        if u.outs.contains_key(&prev) {
            k_out.entry(prev).or_default().push(ts);
        }
        if u.ins.contains_key(&next) {
            k_in.entry(next).or_default().push(ts);
        }
    }
    // the switch out first: the kernel's tracepoint and perf's record of
    // it (which uftrace keeps) are a few instructions apart, where a
    // thread switched in reaches perf's record later and less evenly
    pairs(&[(&u.outs, &k_out)], pre, "sched-out pairs")
        .or_else(|| pairs(&[(&u.ins, &k_in)], pre, "sched-in pairs"))
}

type Side<'a> = (&'a HashMap<i32, Vec<u64>>, &'a HashMap<i32, Vec<u64>>);

/// Pairs of (user record, kernel switch) of the same threads.
fn pairs(
    sides: &[Side<'_>],
    pre: i64,
    method: &'static str,
) -> Option<(&'static str, i64, u64, u64, u64)> {
    // candidate offsets of every pair within the window (bounded)
    let mut diffs: Vec<i64> = Vec::new();
    'all: for &(us, ks) in sides {
        for (tid, uts) in us {
            let Some(kts) = ks.get(tid) else { continue };
            for &x0 in uts {
                let x = x0 as i64 + pre;
                let lo = kts.partition_point(|&t| (t as i64) < x - WINDOW);
                for &t in &kts[lo..] {
                    let d = t as i64 - x;
                    if d > WINDOW {
                        break;
                    }
                    diffs.push(d);
                    if diffs.len() >= MAX_CANDIDATES {
                        break 'all;
                    }
                }
            }
        }
    }
    let center = densest(&mut diffs, PAIR_TOLERANCE)?;
    // each user record with the kernel switch nearest to it at `center`
    let mut got: Vec<i64> = Vec::new();
    let mut tried = 0u64;
    for &(us, ks) in sides {
        for (tid, uts) in us {
            let Some(kts) = ks.get(tid) else { continue };
            for &x0 in uts {
                let x = x0 as i64 + pre;
                tried += 1;
                let want = x + center;
                let i = kts.partition_point(|&t| (t as i64) < want);
                let near = [i.checked_sub(1), Some(i)]
                    .into_iter()
                    .flatten()
                    .filter_map(|j| kts.get(j))
                    .map(|&t| t as i64 - x)
                    .min_by_key(|d| (d - center).abs());
                if let Some(d) = near.filter(|d| (d - center).abs() <= PAIR_TOLERANCE) {
                    got.push(d);
                }
            }
        }
    }
    if (got.len() as u64) < MIN_PAIRS {
        return None;
    }
    got.sort_unstable();
    let med = got[got.len() / 2];
    let spread = (got[got.len() - 1] - got[0]) as u64;
    Some((method, med, got.len() as u64, tried, spread))
}

/// The centre of the window of width `w` holding the most of `v`.
fn densest(v: &mut [i64], w: i64) -> Option<i64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let (mut best, mut at, mut j) = (0usize, 0usize, 0usize);
    for i in 0..v.len() {
        while v[i] - v[j] > w {
            j += 1;
        }
        if i + 1 - j > best {
            best = i + 1 - j;
            at = j;
        }
    }
    let end = at + best - 1;
    Some(v[at] + (v[end] - v[at]) / 2)
}

/// The offsets that put the most user-space events of each thread inside
/// an interval where the kernel ran that thread: for each event and each
/// running interval of its thread, the range of offsets placing it inside;
/// a sweep finds the range covered most. Its middle is the estimate.
fn by_containment(
    k: &Samples,
    u: &Samples,
    pre: i64,
) -> Option<(&'static str, i64, u64, u64, u64)> {
    let running = k.running();
    let total: usize = u
        .user
        .iter()
        .filter(|(t, _)| running.contains_key(t))
        .map(|(_, v)| v.len())
        .sum();
    if total == 0 {
        return None;
    }
    // events taken evenly so that events x intervals stays bounded
    let ivals: usize = running.values().map(Vec::len).sum::<usize>().max(1);
    let step = (total * ivals.min(4096) / MAX_CANDIDATES).max(1);
    let mut edges: Vec<(i64, i32)> = Vec::new();
    let mut tried = 0u64;
    let mut n = 0usize;
    for (tid, uts) in &u.user {
        let Some(iv) = running.get(tid) else { continue };
        for &x0 in uts {
            let x = x0 as i64 + pre;
            n += 1;
            if n % step != 0 {
                continue;
            }
            tried += 1;
            let lo = iv.partition_point(|&(_, b)| (b as i64) < x - WINDOW);
            for &(a, b) in &iv[lo..] {
                let (a, b) = (a as i64 - x, b as i64 - x);
                if a > WINDOW {
                    break;
                }
                edges.push((a, 1));
                edges.push((b, -1));
                if edges.len() >= 2 * MAX_CANDIDATES {
                    break;
                }
            }
        }
    }
    // starts before ends at the same offset: closed intervals
    edges.sort_unstable_by_key(|&(d, e)| (d, -e));
    let (mut cur, mut best) = (0i64, 0i64);
    let (mut lo, mut hi) = (0i64, 0i64);
    let mut in_best = false;
    for &(d, e) in &edges {
        cur += i64::from(e);
        if e > 0 && cur > best {
            best = cur;
            lo = d;
            in_best = true;
        } else if e < 0 && in_best && cur == best - 1 {
            hi = d;
            in_best = false;
        }
    }
    if (best as u64) < MIN_PAIRS {
        return None;
    }
    Some((
        "running intervals",
        lo + (hi - lo) / 2,
        best as u64,
        tried,
        (hi - lo) as u64,
    ))
}

/// Why inputs cannot be put on one timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unaligned {
    /// The input that could not be placed.
    pub input: usize,
    pub message: String,
}

/// The order in which estimates are preferred (lower first).
fn rank(method: &str) -> u8 {
    match method {
        "sched-out pairs" => 0,
        "sched-in pairs" => 1,
        _ => 2,
    }
}

/// Place every input on input 0's clock: `(shift_ns, how)` for each.
/// `domains[i]` is input i's clock, `given[i]` a user's offset for it,
/// `samples(i)` its samples (asked only when an estimate is needed).
pub fn align(
    names: &[String],
    domains: &[ClockDomain],
    given: &[Option<i64>],
    samples: &mut dyn FnMut(usize) -> Option<Samples>,
) -> Result<Vec<(i64, Alignment)>, Unaligned> {
    let n = domains.len();
    let mut placed: Vec<Option<(i64, Alignment)>> = vec![None; n];
    placed[0] = Some((given[0].unwrap_or(0), Alignment::Reference));
    if given[0].is_some() {
        placed[0] = Some((given[0].unwrap_or(0), Alignment::Given));
    }
    for i in 1..n {
        if let Some(g) = given[i] {
            placed[i] = Some((g, Alignment::Given));
        }
    }
    let mut cache: HashMap<usize, Option<Samples>> = HashMap::new();
    loop {
        let mut progress = false;
        // same clock: exact
        for i in 0..n {
            if placed[i].is_some() {
                continue;
            }
            if let Some(j) =
                (0..n).find(|&j| placed[j].is_some() && domains[j].same_clock(&domains[i]))
            {
                let sj = placed[j].as_ref().map_or(0, |p| p.0);
                let shift = sj + domains[j].base_ns - domains[i].base_ns;
                placed[i] = Some((shift, Alignment::SameClock { with: j }));
                progress = true;
            }
        }
        if placed.iter().all(Option::is_some) {
            break;
        }
        // estimated against a placed input: of every unplaced input's
        // estimates, the best one (sched-out pairs before sched-in pairs
        // before running intervals, then the narrowest spread) is taken,
        // then the same-clock rule again (an input of the same clock as
        // the one just estimated is exact against it)
        let mut best: Option<(usize, i64, Estimate)> = None;
        for i in 0..n {
            if placed[i].is_some() {
                continue;
            }
            for j in 0..n {
                let Some((sj, _)) = placed[j].clone() else {
                    continue;
                };
                for a in [i, j] {
                    cache.entry(a).or_insert_with(|| samples(a));
                }
                let (Some(Some(si)), Some(Some(sjs))) = (cache.get(&i), cache.get(&j)) else {
                    continue;
                };
                // kernel j, user i: kernel ≈ user + d, so shift_i = d + shift_j
                let pre = domains[j].base_ns - domains[i].base_ns;
                let found = match estimate(sjs, si, pre) {
                    Some((m, d, p, t, s)) => Some((m, d, p, t, s)),
                    None => estimate(si, sjs, -pre).map(|(m, d, p, t, s)| (m, -d, p, t, s)),
                };
                let Some((method, off, pairs, tried, spread)) = found else {
                    continue;
                };
                let e = Estimate {
                    against: j,
                    method,
                    offset_ns: off,
                    clock_offset_ns: off - pre,
                    pairs,
                    tried,
                    spread_ns: spread,
                };
                let better = best.as_ref().is_none_or(|(_, _, b)| {
                    (rank(e.method), e.spread_ns) < (rank(b.method), b.spread_ns)
                });
                if better {
                    best = Some((i, off + sj, e));
                }
            }
        }
        if let Some((i, shift, e)) = best {
            placed[i] = Some((shift, Alignment::Estimated(e)));
            progress = true;
        }
        if !progress {
            break;
        }
    }
    let mut out = Vec::with_capacity(n);
    for (i, p) in placed.into_iter().enumerate() {
        match p {
            Some(p) => out.push(p),
            None => {
                return Err(Unaligned {
                    input: i,
                    message: format!(
                        "{}: its clock ({}, {}) is not the clock of {} ({}, {}), and the two share no events to estimate the offset from (a kernel trace's sched_switch and events of the same threads); give the offset with --clock-offset {}=NS (ns added to its timestamps)",
                        names[i],
                        domains[i].clock,
                        domains[i].source,
                        names[0],
                        domains[0].clock,
                        domains[0].source,
                        names[i]
                    ),
                })
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dom(clock: &str, system: bool, base: i64) -> ClockDomain {
        ClockDomain {
            clock: clock.into(),
            system,
            base_ns: base,
            host: None,
            source: String::new(),
        }
    }

    /// A kernel running thread 7 in [1000k, 1000k+50k] for k in 0..40, and
    /// a user input whose clock is `off` behind, with events inside.
    fn pair(off: i64, sched: bool) -> (Samples, Samples) {
        let mut k = Samples::default();
        let mut u = Samples::default();
        for i in 0..40u64 {
            let a = 1_000_000 + i * 1_000_000 + (i * i * 7919) % 300_000;
            k.switches.push((a, 0, 7));
            k.switches.push((a + 50_000, 7, 0));
            let ua = (a as i64 - off) as u64;
            u.user
                .entry(7)
                .or_default()
                .extend([ua.wrapping_add(3_000), ua.wrapping_add(45_000)]);
            if sched {
                u.ins.entry(7).or_default().push(ua + 1);
                u.outs.entry(7).or_default().push(ua + 50_000 - 2);
            }
        }
        k.span = Some((0, 50_000_000));
        (k, u)
    }

    #[test]
    fn switch_pairs_give_the_offset() {
        let (k, u) = pair(30_580_000, true);
        let (m, d, p, t, s) = estimate(&k, &u, 0).unwrap();
        assert_eq!(m, "sched-out pairs");
        assert!((d - 30_580_000).abs() <= 2, "{d}");
        assert_eq!((p, t), (40, 40));
        assert!(s <= 4);
    }

    #[test]
    fn containment_brackets_the_offset() {
        let (k, u) = pair(-12_345_678, false);
        let (m, d, p, _, s) = estimate(&k, &u, 0).unwrap();
        assert_eq!(m, "running intervals");
        assert_eq!(p, 80);
        // the events sit 3 µs after the switch in and 5 µs before the out
        assert!((d + 12_345_678).abs() <= 5_000, "{d}");
        assert!(s <= 8_000, "{s}");
    }

    #[test]
    fn same_clock_is_exact_and_unrelated_clocks_are_refused() {
        let names: Vec<String> = ["k", "ctf", "uf"].iter().map(|s| s.to_string()).collect();
        let doms = [
            dom("monotonic", true, 0),
            dom("monotonic", true, 1_000),
            dom("local", false, 0),
        ];
        let got = align(&names, &doms, &[None, None, Some(5)], &mut |_| None).unwrap();
        assert_eq!(got[0], (0, Alignment::Reference));
        assert_eq!(got[1], (-1_000, Alignment::SameClock { with: 0 }));
        assert_eq!(got[2], (5, Alignment::Given));
        let e = align(&names, &doms, &[None, None, None], &mut |_| None).unwrap_err();
        assert_eq!(e.input, 2);
        assert!(e.message.contains("--clock-offset uf=NS"), "{}", e.message);
    }

    #[test]
    fn perf_clockid_names_its_clock() {
        let meta = TraceMeta {
            format: Some(Format::Perf),
            env: vec![("clockid".into(), "1".into())],
            ..TraceMeta::default()
        };
        let d = ClockDomain::of(&meta);
        assert_eq!((d.clock.as_str(), d.system), ("monotonic", true));
        let plain = TraceMeta {
            format: Some(Format::Perf),
            ..TraceMeta::default()
        };
        assert!(!ClockDomain::of(&plain).system);
    }

    /// An input of only user events (placed by running intervals alone)
    /// and one with uftrace's sched records, on the same clock: the better
    /// estimate is taken, and the other input is exact against it.
    #[test]
    fn best_estimate_first_then_same_clock() {
        let names: Vec<String> = ["k", "ust", "uf"].iter().map(|s| s.to_string()).collect();
        let base = 1_700_000_000_000_000_000i64;
        let doms = [
            dom("local", false, 0),
            dom("monotonic", true, base),
            dom("monotonic", true, 0),
        ];
        let (k, uf) = pair(30_580_000, true);
        let (_, mut ust) = pair(30_580_000, false);
        for v in ust.user.values_mut() {
            for t in v.iter_mut() {
                // (a record before the kernel's first comes out below 0
                // and wraps; the shift brings it back)
                *t = t.wrapping_add(base as u64);
            }
        }
        let got = align(&names, &doms, &[None, None, None], &mut |i| {
            Some([k.clone(), ust.clone(), uf.clone()][i].clone())
        })
        .unwrap();
        let Alignment::Estimated(e) = &got[2].1 else {
            panic!("{:?}", got[2]);
        };
        assert_eq!(e.method, "sched-out pairs");
        assert_eq!(got[1].1, Alignment::SameClock { with: 2 });
        assert_eq!(got[1].0, got[2].0 - base);
        // alone, the user-only input is estimated by running intervals,
        // the clocks' stated offsets told apart from what they differ by
        let got = align(&names[..2], &doms[..2], &[None, None], &mut |i| {
            Some([k.clone(), ust.clone()][i].clone())
        })
        .unwrap();
        let Alignment::Estimated(e) = &got[1].1 else {
            panic!("{:?}", got[1]);
        };
        assert_eq!(e.method, "running intervals");
        assert!((e.clock_offset_ns - 30_580_000).abs() <= 5_000, "{e:?}");
        assert_eq!(e.offset_ns - e.clock_offset_ns, -base);
    }

    #[test]
    fn estimated_against_the_kernel() {
        let names: Vec<String> = ["k", "uf"].iter().map(|s| s.to_string()).collect();
        let doms = [dom("local", false, 0), dom("monotonic", true, 0)];
        let (k, u) = pair(1_000_000, true);
        let got = align(&names, &doms, &[None, None], &mut |i| {
            Some(if i == 0 { k.clone() } else { u.clone() })
        })
        .unwrap();
        assert!((got[1].0 - 1_000_000).abs() <= 2);
        assert!(matches!(
            got[1].1,
            Alignment::Estimated(Estimate { against: 0, .. })
        ));
    }
}
