//! What a trace is and how it was placed on a timeline: its container
//! [`Format`], the [`ClockDomain`] of its timestamps, and for each input of
//! a merged timeline ([`InputInfo`], in `TraceMeta::inputs`) how its
//! clock was aligned ([`Alignment`], [`describe`]). The timeline itself is
//! [`crate::timeline`].

/// The container format a trace was read from.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    TraceDat,
    Ctf,
    Uftrace,
    Ltt,
    /// perf.data (`perf record`).
    Perf,
}

impl Format {
    /// The short key of the format that writers store in what they produce
    /// (the `source_format` entry of a converted CTF trace's environment);
    /// fixed, since files carry it. Text for people uses [`Format::describe`].
    pub fn name(self) -> &'static str {
        match self {
            Format::TraceDat => "trace-cmd trace.dat",
            Format::Ctf => "CTF",
            Format::Uftrace => "uftrace data",
            Format::Ltt => "LTT",
            Format::Perf => "perf.data",
        }
    }

    /// How tracemux names a format, and a version of it, in text for
    /// people: the `format` line of `tracemux info` for every format, and
    /// the format in messages. With the version the file states:
    /// `trace-cmd trace.dat, version 7`, `CTF, version 1.8 (TSDL
    /// metadata)`, `CTF, version 2 (JSON metadata)`, `legacy LTT, version
    /// 2.6 (LTTng 0.x)`; without one, the name alone (`CTF`).
    pub fn describe(self, version: Option<&str>) -> String {
        let name = match self {
            Format::TraceDat => "trace-cmd trace.dat",
            Format::Ctf => "CTF",
            Format::Uftrace => "uftrace data",
            Format::Ltt => "legacy LTT",
            Format::Perf => "perf.data",
        };
        let Some(v) = version else {
            return name.to_string();
        };
        let what = match (self, v) {
            (Format::Ctf, "2") => " (JSON metadata)",
            (Format::Ctf, _) => " (TSDL metadata)",
            (Format::Ltt, _) => " (LTTng 0.x)",
            _ => "",
        };
        format!("{name}, version {v}{what}")
    }
}

/// What a trace says about the clock of its timestamps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockDomain {
    /// The clock, as tracemux names it: `monotonic`, `monotonic-raw`,
    /// `boot`, `tai`, `realtime`, or the file's own name of a clock that
    /// has no relation to these (`local`, `global`, `perf`, `x86-tsc`...).
    pub clock: String,
    /// Whether [`ClockDomain::clock`] is one of the system clocks named
    /// above (so that two inputs of the same name share it).
    pub system: bool,
    /// What the timestamps hold beyond that clock's count, in ns (a CTF
    /// clock's offset from its origin): `ts - base_ns` is the clock.
    pub base_ns: i64,
    /// The host the trace says it was recorded on.
    pub host: Option<String>,
    /// How this was read, for people: `trace.dat trace_clock mono`.
    pub source: String,
}

/// How an input was put on the timeline.
#[derive(Debug, Clone, PartialEq)]
pub enum Alignment {
    /// The first input: its clock is the timeline's.
    Reference,
    /// Same clock as input `with`: exact.
    SameClock { with: usize },
    /// `--clock-offset`.
    Given,
    /// Estimated from events this input and input `against` both see.
    Estimated(Estimate),
}

/// An offset estimated from events two inputs both see.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub against: usize,
    /// How: `sched-out pairs`, `sched-in pairs` or `running intervals`.
    pub method: &'static str,
    /// The offset of the clocks (ns to add to this input's clock to get
    /// the other's, the bases the files state taken out).
    pub offset_ns: i64,
    /// The same without what the files state (the difference of the two
    /// clocks' bases, e.g. a CTF clock's offset to the epoch): what the
    /// clocks themselves differ by.
    pub clock_offset_ns: i64,
    /// Pairs that agree (matched switches; events placed in running
    /// intervals), and how many were tried.
    pub pairs: u64,
    pub tried: u64,
    /// The range of offsets the pairs allow (max - min of the matched
    /// pairs' offsets; the width of the best range of intervals).
    pub spread_ns: u64,
}

/// One input of a merged timeline, as its [`TraceMeta::inputs`] entry says.
#[derive(Debug, Clone, PartialEq)]
pub struct InputInfo {
    /// The path as given.
    pub name: String,
    pub format: Option<Format>,
    pub clock: ClockDomain,
    /// Its streams in the merged [`TraceMeta::streams`].
    pub streams: std::ops::Range<u32>,
    /// Added to every timestamp of the input.
    pub shift_ns: i64,
    pub alignment: Alignment,
}

/// How input `i` of `inputs` was placed, for people (`info`, a CTF
/// environment): `same clock as input 0 (a.dat): exact`, `estimated
/// against input 0 (a.dat) from sched-out pairs: offset 30562195 ns, 135
/// pairs of 135 agree, spread 3185 ns`...
pub fn describe(inputs: &[InputInfo], i: usize) -> String {
    let name = |j: usize| inputs.get(j).map_or("", |x| x.name.as_str());
    match inputs.get(i).map(|x| &x.alignment) {
        None => String::new(),
        Some(Alignment::Reference) => "reference (the timeline's clock)".to_string(),
        Some(Alignment::SameClock { with }) => {
            format!("same clock as input {with} ({}): exact", name(*with))
        }
        Some(Alignment::Given) => "given (--clock-offset)".to_string(),
        Some(Alignment::Estimated(e)) => format!(
            "estimated against input {} ({}) from {}: offset {} ns{}, {} pairs of {} agree, spread {} ns",
            e.against,
            name(e.against),
            e.method,
            e.offset_ns,
            if e.clock_offset_ns != e.offset_ns {
                format!(
                    " (clocks {} ns apart once their stated offsets are taken out)",
                    e.clock_offset_ns
                )
            } else {
                String::new()
            },
            e.pairs,
            e.tried,
            e.spread_ns
        ),
    }
}
