//! What the trace says besides its events: the process and thread tree
//! (track descriptors as threads and processes are learned), the clock
//! snapshot and timeline, loss markers as instants, and the system info.

use super::*;

impl<W: Write + Send + 'static> PerfettoWriter<W> {
    pub(super) fn lost_instant(&mut self, meta: &TraceMeta, l: &Lost) -> std::io::Result<()> {
        let key = TrackKey::Stream(l.stream);
        if !self.seqs.contains_key(&key) {
            self.new_stream_sequence(meta, l.stream, l.cpu)?;
        }
        let seq = self.seqs.get_mut(&key).expect("sequence made above");
        let seq_id = seq.id;
        self.new_names.clear();
        self.new_ann_names.clear();
        let n = seq.names.len() as u64 + 1;
        let name_iid = *seq
            .names
            .entry("lost events".into())
            .or_insert_with_key(|k| {
                self.new_names.push(EventName {
                    iid: Some(n),
                    name: Some(k.clone()),
                });
                n
            });
        let mut names = Interner {
            map: &mut seq.ann_names,
            new: &mut self.new_ann_names,
            fields: None,
        };
        let anns = vec![
            DebugAnnotation {
                name_iid: Some(names.iid("cpu")),
                uint_value: Some(u64::from(l.cpu)),
                ..Default::default()
            },
            DebugAnnotation {
                name_iid: Some(names.iid("count")),
                uint_value: l.count,
                ..Default::default()
            },
        ];
        let interned = self.take_interned();
        self.packet(
            TracePacket {
                timestamp: Some(l.ts),
                trusted_packet_sequence_id: Some(seq_id),
                interned_data: interned,
                sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
                data: Some(Data::TrackEvent(TrackEvent {
                    debug_annotations: anns,
                    r#type: Some(TYPE_INSTANT),
                    name_iid: Some(name_iid),
                    ..Default::default()
                })),
                ..Default::default()
            },
            1,
        )
    }

    pub(super) fn new_stream_sequence(
        &mut self,
        meta: &TraceMeta,
        stream: u32,
        cpu: u32,
    ) -> std::io::Result<()> {
        // the descriptor of a stream track needs no event fields
        self.tree.clear();
        let ev_cpu = cpu;
        let key = TrackKey::Stream(stream);
        self.describe(meta, key, ev_cpu, FieldId::UNKNOWN)
    }

    /// A timeline of several inputs: a clock snapshot at `ts` saying each
    /// input's own clock (ids from 128 on, in the order of the inputs) and
    /// the system clocks the inputs stamp, against the packets' clock (the
    /// first input's, written as BOOTTIME); and on a track of its own, an
    /// instant per input saying how it was placed (clock, shift, method,
    /// offset, pairs, spread).
    pub(super) fn timeline(&mut self, meta: &TraceMeta, ts: u64) -> std::io::Result<()> {
        use tracemux_core::timeline::Alignment;
        self.timeline_written = true;
        let mut clocks = vec![Clock {
            clock_id: Some(CLOCK_BOOTTIME),
            timestamp: Some(ts),
        }];
        let mut system = Vec::new();
        for (i, inp) in meta.inputs.iter().enumerate() {
            // the input's own time at `ts`
            let own = (ts as i128) - i128::from(inp.shift_ns);
            if let Ok(own) = u64::try_from(own) {
                clocks.push(Clock {
                    clock_id: Some(128 + i as u32),
                    timestamp: Some(own),
                });
            }
            let id = match inp.clock.clock.as_str() {
                "monotonic" if inp.clock.system => Some(CLOCK_MONOTONIC),
                "monotonic-raw" if inp.clock.system => Some(CLOCK_MONOTONIC_RAW),
                "realtime" if inp.clock.system => Some(CLOCK_REALTIME),
                _ => None,
            };
            let clock = own - i128::from(inp.clock.base_ns);
            if let (Some(id), Ok(c)) = (id, u64::try_from(clock)) {
                if !system.contains(&id) {
                    system.push(id);
                    clocks.push(Clock {
                        clock_id: Some(id),
                        timestamp: Some(c),
                    });
                }
            }
        }
        self.packet(
            TracePacket {
                timestamp: Some(ts),
                data: Some(Data::ClockSnapshot(ClockSnapshot {
                    clocks,
                    primary_trace_clock: Some(CLOCK_BOOTTIME as i32),
                })),
                ..Default::default()
            },
            1,
        )?;
        let id = self.seqs.len() as u32 + 1;
        let uuid = Seq::track_uuid(id);
        self.seqs.insert(TrackKey::Stream(u32::MAX), Seq::new(id));
        self.packet(
            TracePacket {
                trusted_packet_sequence_id: Some(id),
                sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED),
                first_packet_on_sequence: Some(true),
                data: Some(Data::TrackDescriptor(TrackDescriptor {
                    uuid: Some(uuid),
                    name: Some("tracemux timeline: clock alignment".into()),
                    ..Default::default()
                })),
                ..Default::default()
            },
            1,
        )?;
        for inp in &meta.inputs {
            let s = |n: &str, v: String| DebugAnnotation {
                name: Some(n.into()),
                string_value: Some(v),
                ..Default::default()
            };
            let int = |n: &str, v: i64| DebugAnnotation {
                name: Some(n.into()),
                int_value: Some(v),
                ..Default::default()
            };
            let mut anns = vec![
                s("input", inp.name.clone()),
                s(
                    "clock",
                    format!("{} ({})", inp.clock.clock, inp.clock.source),
                ),
                int("shift_ns", inp.shift_ns),
            ];
            match &inp.alignment {
                Alignment::Reference => anns.push(s("placed", "reference".into())),
                Alignment::SameClock { with } => {
                    anns.push(s("placed", "same clock".into()));
                    anns.push(int("with_input", *with as i64));
                }
                Alignment::Given => anns.push(s("placed", "given (--clock-offset)".into())),
                Alignment::Estimated(e) => {
                    anns.push(s("placed", format!("estimated from {}", e.method)));
                    anns.push(int("against_input", e.against as i64));
                    anns.push(int("offset_ns", e.offset_ns));
                    anns.push(int("clock_offset_ns", e.clock_offset_ns));
                    anns.push(int("pairs", e.pairs as i64));
                    anns.push(int("tried", e.tried as i64));
                    anns.push(int("spread_ns", e.spread_ns as i64));
                }
            }
            self.packet(
                TracePacket {
                    timestamp: Some(ts),
                    trusted_packet_sequence_id: Some(id),
                    data: Some(Data::TrackEvent(TrackEvent {
                        debug_annotations: anns,
                        r#type: Some(TYPE_INSTANT),
                        track_uuid: Some(uuid),
                        name: Some(format!("clock of {}", inp.name)),
                        ..Default::default()
                    })),
                    ..Default::default()
                },
                1,
            )?;
        }
        Ok(())
    }

    /// The thread groups learned from the events that the trace's task
    /// table did not say, as one more process tree (threads with their
    /// tgid, and each group's process).
    pub(super) fn learned_groups(&mut self) -> std::io::Result<()> {
        let meta = &self.task_meta;
        let learned: Vec<(i32, i32)> = self
            .tasks
            .learned_tgids()
            .into_iter()
            .filter(|(t, g)| meta.tgids.get(t) != Some(g))
            .collect();
        if learned.is_empty() {
            return Ok(());
        }
        let mut tree = ProcessTree::default();
        for &(tid, tgid) in &learned {
            tree.threads.push(Thread {
                tid: Some(tid),
                // the name the first process tree gave it (the trace's
                // table), not the last one of the events
                name: meta.tasks.get(tid).map(str::to_string),
                tgid: Some(tgid),
            });
        }
        let mut groups: Vec<i32> = learned.iter().map(|l| l.1).collect();
        groups.sort_unstable();
        groups.dedup();
        for pid in groups {
            tree.processes.push(process(meta, pid));
        }
        drop(learned);
        self.packet(
            TracePacket {
                data: Some(Data::ProcessTree(tree)),
                ..Default::default()
            },
            1,
        )
    }
}

/// The process of a uftrace recording (its first task), whose threads its
/// tasks are; `None` for other traces.
/// Process `pid` of a process tree: its command line is its name.
pub(super) fn process(meta: &TraceMeta, pid: i32) -> Process {
    Process {
        pid: Some(pid),
        ppid: None,
        cmdline: meta
            .tasks
            .get(pid)
            .map(|c| vec![c.to_string()])
            .unwrap_or_default(),
        cmdline_is_comm: Some(true),
    }
}

/// `SystemInfo` from the trace's uname (and environment, for CTF).
pub(super) fn system_info(meta: &TraceMeta) -> SystemInfo {
    let env = |k: &str| {
        meta.env
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    let words: Vec<&str> = meta
        .uname
        .as_deref()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let mut u = Utsname::default();
    if let Some(rel) = env("kernel_release") {
        u.sysname = env("sysname");
        u.release = Some(rel);
        u.version = env("kernel_version");
    } else if meta.format == Some(Format::Uftrace) {
        u.sysname = words.first().map(|s| s.to_string());
        u.release = words.get(1).map(|s| s.to_string());
    } else if words.len() >= 3 {
        // trace-cmd: "sysname nodename release machine"
        u.sysname = Some(words[0].to_string());
        u.release = Some(words[2].to_string());
        if words.len() >= 4 {
            u.machine = words.last().map(|s| s.to_string());
        }
    }
    let page_size = meta.buffers.first().map(|b| b.page_size).filter(|&p| p > 0);
    SystemInfo {
        utsname: (u != Utsname::default()).then_some(u),
        page_size,
        num_cpus: (meta.cpus > 0).then_some(meta.cpus),
    }
}
