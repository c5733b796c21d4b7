//! Files written by `tracemux_tracedat::writer` in every supported
//! combination, read back with `TraceDat::parse` + `Reader`: the events
//! read (time after corrections, cpu, buffer, payload, lost markers) must
//! be exactly the events written.

use tracemux_core::bytes::Endian;
use tracemux_core::model::{Record, RecordSource};
use tracemux_testkit::Rng;
use tracemux_tracedat::options::{OptionId, TimeShift, TimeShiftCpu, Tsc2Nsec};
use tracemux_tracedat::reader::{ReadOptions, Reader};
use tracemux_tracedat::writer::{
    stored_len, BufferData, Compression, CpuStream, Event, Item, Missed, Time, TraceData,
    TraceFile, TraceOption,
};
use tracemux_tracedat::{DataKind, TraceDat};

/// What a reader reports, reduced to comparable values.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Got {
    Event {
        ts: u64,
        buffer: String,
        cpu: u32,
        payload: Vec<u8>,
    },
    Lost {
        ts: u64,
        buffer: String,
        cpu: u32,
        count: Option<u64>,
    },
}

fn read_all(bytes: &[u8], opts: &ReadOptions) -> Vec<Got> {
    let t = TraceDat::parse(bytes, true).expect("parse");
    let mut r = Reader::new(&t, opts).expect("reader");
    // stream index -> buffer name
    let meta = r.meta().clone();
    let name = |s: u32| {
        meta.buffers[meta.streams[s as usize].buffer as usize]
            .name
            .clone()
    };
    let mut v = Vec::new();
    loop {
        let rec = r.next_record().expect("record");
        let Some(rec) = rec else { break };
        let got = match rec {
            Record::Event(e) => Got::Event {
                ts: e.ts,
                buffer: name(e.stream),
                cpu: e.cpu,
                payload: e.data.to_vec(),
            },
            Record::Lost(l) => Got::Lost {
                ts: l.ts,
                buffer: name(l.stream),
                cpu: l.cpu,
                count: l.count,
            },
            Record::Damage(e) => panic!("damage: {e}"),
        };
        v.push(got);
    }
    v
}

/// The corrections trace-cmd applies (TSC2NSEC, then the summed offsets).
#[derive(Clone, Copy, Default)]
struct Correction {
    mult_shift: Option<(u32, u32)>,
    offset: i64,
}

impl Correction {
    fn apply(&self, ts: u64) -> u64 {
        let ts = match self.mult_shift {
            Some((m, s)) if m != 0 => ((ts as u128 * m as u128) >> s) as u64,
            _ => ts,
        };
        ts.wrapping_add(self.offset as u64)
    }
}

/// The records a stream must produce, computed from the items alone: a
/// lost marker precedes an event that directly follows `NewPage` with
/// missed events (it opens the page, at data offset 0).
fn expect_stream(buffer: &str, s: &CpuStream, c: Correction) -> Vec<Got> {
    const MSB: u64 = 0xf8 << 56;
    let mut now = 0u64;
    let mut pending = Missed::None;
    let mut v = Vec::new();
    for it in &s.items {
        match it {
            Item::Event(e) => {
                now = match e.time {
                    Time::Abs(t) => t,
                    Time::Delta(d) => now + d,
                };
                let ts = c.apply(now);
                match pending {
                    Missed::None => {}
                    Missed::Unknown | Missed::Count(_) => v.push(Got::Lost {
                        ts,
                        buffer: buffer.into(),
                        cpu: s.cpu,
                        count: match pending {
                            Missed::Count(n) => Some(n),
                            _ => None,
                        },
                    }),
                }
                let mut payload = e.payload.clone();
                payload.resize(stored_len(payload.len()), 0);
                v.push(Got::Event {
                    ts,
                    buffer: buffer.into(),
                    cpu: s.cpu,
                    payload,
                });
            }
            Item::Padding { delta, .. } => now += *delta as u64,
            Item::TimeStamp(t) => now = (t & !MSB) | (now & MSB),
            Item::TimeExtend(d) => now += d,
            Item::NewPage(m) => {
                pending = *m;
                continue;
            }
        }
        pending = Missed::None;
    }
    v
}

/// Merge streams as trace-cmd does: smallest time first, ties to the
/// earlier stream; a lost marker stays right before its event.
fn merge(streams: Vec<Vec<Got>>) -> Vec<Got> {
    let mut groups: Vec<std::collections::VecDeque<(u64, Vec<Got>)>> = streams
        .into_iter()
        .map(|s| {
            let mut q = std::collections::VecDeque::new();
            let mut cur = Vec::new();
            for g in s {
                let ts = match &g {
                    Got::Event { ts, .. } => Some(*ts),
                    Got::Lost { .. } => None,
                };
                cur.push(g);
                if let Some(ts) = ts {
                    q.push_back((ts, std::mem::take(&mut cur)));
                }
            }
            q
        })
        .collect();
    let mut out = Vec::new();
    loop {
        let mut best: Option<(u64, usize)> = None;
        for (i, q) in groups.iter().enumerate() {
            if let Some((ts, _)) = q.front() {
                if best.is_none_or(|(b, _)| *ts < b) {
                    best = Some((*ts, i));
                }
            }
        }
        let Some((_, i)) = best else { break };
        out.extend(groups[i].pop_front().unwrap().1);
    }
    out
}

fn expect(f: &TraceFile, c: Correction) -> Vec<Got> {
    let TraceData::Flyrecord(bufs) = &f.data else {
        return Vec::new();
    };
    let mut streams = Vec::new();
    for b in bufs {
        for s in &b.cpus {
            streams.push(expect_stream(&b.name, s, c));
        }
    }
    merge(streams)
}

/// A stream exercising every record type: short and long events, small
/// and huge deltas (TIME_EXTEND), padding, absolute time stamps (also
/// going back in time), missed events (stored and unknown), page breaks.
fn stream(cpu: u32, seed: u64, n: usize, start: u64) -> CpuStream {
    let mut r = Rng(seed | 1);
    let mut items = vec![Item::NewPage(Missed::Count(3 + cpu as u64))];
    let mut now = start;
    for i in 0..n {
        match r.below(40) {
            0 => items.push(Item::Padding {
                delta: r.below(1000) as u32,
                len: 4 * (1 + r.below(10) as u32),
            }),
            1 => {
                // absolute stamp, possibly earlier than the last event
                now = now - r.below(500) + r.below(5000);
                items.push(Item::TimeStamp(now));
            }
            2 => items.push(Item::NewPage(Missed::Unknown)),
            3 => items.push(Item::NewPage(Missed::Count(r.below(100_000)))),
            4 => items.push(Item::TimeExtend(r.below(1 << 40))),
            5 => items.push(Item::NewPage(Missed::None)),
            _ => {}
        }
        let len = match r.below(10) {
            0 => r.below(600) as usize, // long form
            1 => 0,
            _ => 4 + r.below(100) as usize,
        };
        let mut payload: Vec<u8> = (0..len).map(|k| (i + k) as u8 ^ cpu as u8).collect();
        if len >= 2 {
            payload[0] = (i % 251) as u8;
        }
        let ev = match r.below(6) {
            0 => {
                now += r.below(1 << 33); // needs TIME_EXTEND
                Event::at(now, payload)
            }
            1 => {
                // time going back (TIME_STAMP), top bits unchanged
                now -= r.below(100).min(now & 0xffff);
                Event::at(now, payload)
            }
            2 => Event::after(r.below(1 << 20), payload),
            _ => {
                now += r.below(100_000);
                Event::at(now, payload)
            }
        };
        let ev = if r.below(8) == 0 { ev.long() } else { ev };
        // keep `now` in step with what the writer computes for a delta
        if let Time::Delta(_) = ev.time {
            items.push(Item::Event(ev));
            // resynchronise with an absolute event
            now += 1 << 21;
            items.push(Item::Event(Event::at(now, vec![7; 8])));
        } else {
            items.push(Item::Event(ev));
        }
    }
    CpuStream { cpu, items }
}

fn sample_file(
    version: u32,
    endian: Endian,
    size: u8,
    page_size: u32,
    comp: Compression,
) -> TraceFile {
    let mut f = TraceFile::new(version, endian);
    f.long_size = size;
    f.commit_size = size;
    f.page_size = page_size;
    f.compression = comp;
    f.cpus = 3;
    f.ftrace_formats = vec![b"name: function\nID: 1\nformat:\n".to_vec()];
    f.systems = vec![(
        "sched".into(),
        vec![
            b"name: a\nID: 300\n".to_vec(),
            b"name: b\nID: 301\n".to_vec(),
        ],
    )];
    f.kallsyms = b"ffffffff81000000 T _stext\n".to_vec();
    f.printk = b"0xffffffff82000000 : \"hello\"\n".to_vec();
    f.cmdlines = b"1 init\n42 worker\n".to_vec();
    f.options = vec![
        TraceOption::trace_clock("local"),
        TraceOption::text(OptionId::UNAME, "Linux synth 6.1.0 x86_64"),
        TraceOption::raw(77, vec![1, 2, 3]),
    ];
    let mut top = BufferData::new("", "local");
    top.cpus = vec![
        stream(0, 11 + page_size as u64, 300, 1 << 32),
        stream(2, 12, 200, (1 << 32) + 500),
    ];
    let mut inst = BufferData::new("inst", "local");
    if version == 7 && page_size == 4096 {
        inst.page_size = Some(16384); // per-buffer page size
    }
    inst.cpus = vec![stream(1, 13, 150, (1 << 32) + 77)];
    let empty = BufferData::new("empty", "local");
    f.set_buffers(vec![top, inst, empty]);
    f
}

fn check(f: &TraceFile, opts: &ReadOptions, c: Correction) -> Vec<Got> {
    let bytes = f.to_bytes().expect("write");
    let got = read_all(&bytes, opts);
    let want = expect(f, c);
    assert!(!want.is_empty());
    assert_eq!(got.len(), want.len(), "record count");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "record {i}");
    }
    want
}

#[test]
fn every_layout_round_trips() {
    for version in [6, 7] {
        for endian in [Endian::Little, Endian::Big] {
            for size in [4u8, 8] {
                for page_size in [4096, 8192, 16384] {
                    let comps: &[Compression] = if version == 6 {
                        &[Compression::None]
                    } else {
                        &[Compression::None, Compression::Zstd, Compression::Zlib]
                    };
                    for &comp in comps {
                        let f = sample_file(version, endian, size, page_size, comp);
                        eprintln!("v{version} {endian:?} long {size} page {page_size} {comp:?}");
                        let got = check(&f, &ReadOptions::default(), Correction::default());
                        // the sample really has both kinds of lost markers
                        let lost = |stored: bool| {
                            got.iter()
                                .filter(|g| {
                                    matches!(g, Got::Lost { count, .. } if count.is_some() == stored)
                                })
                                .count()
                        };
                        assert!(lost(true) > 3 && lost(false) > 0);
                    }
                }
            }
        }
    }
}

#[test]
fn metadata_and_options_round_trip() {
    for (version, comp) in [
        (6, Compression::None),
        (7, Compression::None),
        (7, Compression::Zstd),
        (7, Compression::Zlib),
    ] {
        for endian in [Endian::Little, Endian::Big] {
            let f = sample_file(version, endian, 8, 4096, comp);
            let bytes = f.to_bytes().unwrap();
            let t = TraceDat::parse(&bytes, true).unwrap();
            assert_eq!((t.version, t.endian, t.long_size), (version, endian, 8));
            assert_eq!(&t.header_page[..], &f.header_page_text()[..]);
            assert!(t.header_event.starts_with(b"# compressed entry header\n"));
            assert_eq!(t.ftrace_formats.len(), 1);
            assert_eq!(&t.ftrace_formats[0][..], &f.ftrace_formats[0][..]);
            assert_eq!(t.systems.len(), 1);
            assert_eq!(t.systems[0].0, "sched");
            assert_eq!(&t.systems[0].1[1][..], b"name: b\nID: 301\n");
            assert_eq!(&t.kallsyms[..], &f.kallsyms[..]);
            assert_eq!(&t.printk[..], &f.printk[..]);
            assert_eq!(&t.cmdlines[..], &f.cmdlines[..]);
            assert_eq!(t.cpus, 3);
            assert_eq!(t.trace_clock().as_deref(), Some("local"));
            let unknown: Vec<_> = t.options_with(OptionId(77)).collect();
            assert_eq!(unknown.len(), 1);
            assert_eq!(&unknown[0].data[..], &[1, 2, 3]);
            assert_eq!(
                t.option_text(OptionId::UNAME).as_deref(),
                Some("Linux synth 6.1.0 x86_64")
            );
            let names: Vec<_> = t.buffers.iter().map(|b| b.name.as_str()).collect();
            assert_eq!(names, ["", "inst", "empty"]);
            if version == 7 {
                assert_eq!(t.compression.as_ref().unwrap().0, comp.name());
                assert_eq!(t.buffers[1].page_size, 16384);
                assert!(t.buffers[2].cpus.is_empty());
                let descs: Vec<_> = t.sections.iter().map(|s| s.desc.as_str()).collect();
                assert!(descs.contains(&"buffer flyrecord "), "{descs:?}");
                assert!(descs.contains(&"strings"), "{descs:?}");
            } else {
                assert_eq!(t.buffers[2].cpus.len(), 3);
            }
        }
    }
}

fn time_file(version: u32, endian: Endian) -> TraceFile {
    let mut f = TraceFile::new(version, endian);
    f.cpus = 2;
    f.options = vec![
        TraceOption::trace_clock("x86-tsc"),
        TraceOption::Tsc2Nsec(Tsc2Nsec {
            mult: 1_398_101,
            shift: 22,
            offset: 123_456_789,
        }),
        TraceOption::offset_ns(-5_000),
        TraceOption::date_us(0x1234),
        TraceOption::offset_ns(700),
    ];
    let mut top = BufferData::new("", "x86-tsc");
    top.cpus = vec![stream(0, 5, 200, 3 << 40), stream(1, 6, 200, 3 << 40)];
    f.set_buffers(vec![top]);
    f
}

#[test]
fn tsc2nsec_offset_and_date() {
    for version in [6, 7] {
        for endian in [Endian::Little, Endian::Big] {
            let f = time_file(version, endian);
            let all = Correction {
                mult_shift: Some((1_398_101, 22)),
                offset: -5_000 + 700 + 0x1234 * 1000,
            };
            check(&f, &ReadOptions::default(), all);
            let no_date = ReadOptions {
                no_date: true,
                ..Default::default()
            };
            check(
                &f,
                &no_date,
                Correction {
                    offset: -5_000 + 700,
                    ..all
                },
            );
            let raw = ReadOptions {
                raw_ts: true,
                ..Default::default()
            };
            check(&f, &raw, Correction::default());
        }
    }
}

/// Latency-format text longer than two 40960-byte compression chunks.
fn latency_text() -> Vec<u8> {
    let text: Vec<u8> = (0..3000)
        .flat_map(|i| format!("  <idle>-0  0d... {i:5}us : func_{i} <-caller\n").into_bytes())
        .collect();
    assert!(text.len() > 2 * 40960);
    text
}

/// A file whose data is latency text.
fn latency_file(version: u32, endian: Endian, comp: Compression, text: &[u8]) -> Vec<u8> {
    let mut f = TraceFile::new(version, endian);
    f.compression = comp;
    f.data = TraceData::Latency {
        clock: "local".into(),
        text: text.to_vec(),
    };
    f.to_bytes().unwrap()
}

#[test]
fn latency_text_round_trips() {
    let text = latency_text();
    for (version, comp) in [(6, Compression::None), (7, Compression::None)] {
        for endian in [Endian::Little, Endian::Big] {
            let bytes = latency_file(version, endian, comp, &text);
            let t = TraceDat::parse(&bytes, true).unwrap();
            assert_eq!(t.kind, DataKind::Latency);
            assert_eq!(
                t.latency_text.as_deref(),
                Some(&text[..]),
                "v{version} {comp:?}"
            );
            assert!(read_all(&bytes, &ReadOptions::default()).is_empty());
        }
    }
}

/// BUG (file.rs): a compressed v7 BUFFER_TEXT section is read with
/// `section_body`, i.e. as ONE compressed block (`u32 csize, u32 usize,
/// data`). trace-cmd writes latency text like flyrecord data: `u32 chunk
/// count`, then chunks of (u32 csize, u32 usize, data) of 10 × 4096 input
/// bytes each (`copy_file_compress` → `out_copy_fd_compress`, read back by
/// `tracecmd_latency_data_read` chunk by chunk). So the chunk count is taken
/// for the compressed size and the text is lost (damage, or garbage).
#[test]
fn compressed_latency_text_round_trips() {
    let text = latency_text();
    for comp in [Compression::Zstd, Compression::Zlib] {
        let bytes = latency_file(7, Endian::Little, comp, &text);
        let t = TraceDat::parse(&bytes, false).unwrap();
        assert!(t.damage.is_empty(), "{:?}", t.damage);
        assert_eq!(t.latency_text.as_deref(), Some(&text[..]), "{comp:?}");
    }
}

/// BUG (reader.rs): TIME_SHIFT is never applied. trace-cmd 3.1.6 loads the
/// option in `handle_options` and calls `tracecmd_enable_tsync(handle,
/// true)` right away, so every timestamp of a CPU below the option's CPU
/// count goes through `timestamp_host_sync` before TSC2NSEC and the
/// offsets: one sample → `ts + offset[0]`; otherwise a pair of samples
/// around `ts` and `(ts * scaling) >> fraction + tscor`, with `tscor`
/// interpolated when flags bit 0 is set (see tracedat-facts.md §4).
#[test]
fn time_shift_is_applied() {
    let mut f = TraceFile::new(7, Endian::Little);
    f.cpus = 2;
    f.options = vec![TraceOption::TimeShift(TimeShift {
        peer_trace_id: 0x1234,
        flags: 0,
        cpus: vec![
            // cpu 0: one sample: + offset
            TimeShiftCpu {
                times: vec![0],
                offsets: vec![1_000_000],
                scalings: vec![1],
                fractions: vec![0],
            },
            // cpu 1: two samples, no interpolation: (ts*2)>>1 + offset[0]
            TimeShiftCpu {
                times: vec![0, 1 << 40],
                offsets: vec![-500, -900],
                scalings: vec![2, 2],
                fractions: vec![1, 1],
            },
        ],
    })];
    let mut top = BufferData::new("", "local");
    top.cpus = vec![
        CpuStream {
            cpu: 0,
            items: vec![Item::Event(Event::at(10_000, vec![1; 8]))],
        },
        CpuStream {
            cpu: 1,
            items: vec![Item::Event(Event::at(20_000, vec![2; 8]))],
        },
    ];
    f.set_buffers(vec![top]);
    let got = read_all(&f.to_bytes().unwrap(), &ReadOptions::default());
    let ts: Vec<u64> = got
        .iter()
        .map(|g| match g {
            Got::Event { ts, .. } | Got::Lost { ts, .. } => *ts,
        })
        .collect();
    // merged by corrected time: cpu 1's event now comes first
    assert_eq!(ts, vec![20_000 - 500, 10_000 + 1_000_000]);
}
