//! Kernel events as Perfetto's ftrace bundles: per-CPU `FtraceEventBundle`s
//! flushed at [`BUNDLE_EVENTS`], the compact sched encoding of switches and
//! wakings, typed messages read from a record's layout or its tree, and the
//! `GenericFtraceEvent` of every other event.

use super::*;

impl<W: Write + Send + 'static> PerfettoWriter<W> {
    pub(super) fn flush_bundle(&mut self, s: u32) -> std::io::Result<()> {
        let Some(p) = self.pending.get_mut(s).and_then(|p| p.as_mut()) else {
            return Ok(());
        };
        if p.len() == 0 && !p.lost {
            return Ok(());
        }
        // kernel symbols first used by this bundle
        let mut kernel_symbols = Vec::new();
        for addr in p.symbols.drain(..) {
            if let Some(k) = self.ksyms.get_mut(&addr) {
                if !k.written {
                    k.written = true;
                    kernel_symbols.push(InternedString {
                        iid: Some(k.iid),
                        str: Some(k.name.clone()),
                    });
                }
            }
        }
        let mut descriptors = Vec::new();
        for key in p.descriptors.drain(..) {
            if let Some(Some(d)) = self.dense.get_mut(&key) {
                if !d.written {
                    d.written = true;
                    descriptors.push(d.descriptor.clone());
                }
            }
        }
        // the buffers of the next bundle: ones the encoder is done with
        let compact = (!p.compact.is_empty())
            .then(|| std::mem::replace(&mut p.compact, self.out.compact_buffer()));
        let events = std::mem::replace(&mut p.events, self.out.events_buffer());
        let weight = events.len() + compact.as_ref().map_or(0, |c| c.len());
        let bundle = FtraceEventBundle {
            cpu: Some(p.cpu),
            event: events,
            lost_events: p.lost.then_some(true),
            compact_sched: compact,
            generic_event_descriptors: descriptors,
        };
        p.lost = false;
        p.comms.clear();
        p.switch_ts = 0;
        p.waking_ts = 0;
        let first = !self.ftrace_started;
        self.ftrace_started = true;
        let mut pk = TracePacket {
            trusted_packet_sequence_id: Some(FTRACE_SEQUENCE),
            sequence_flags: Some(if first {
                SEQ_INCREMENTAL_STATE_CLEARED
            } else {
                SEQ_NEEDS_INCREMENTAL_STATE
            }),
            first_packet_on_sequence: first.then_some(true),
            interned_data: None,
            data: Some(Data::FtraceEvents(bundle)),
            ..Default::default()
        };
        if !kernel_symbols.is_empty() {
            self.stats.kernel_symbols += kernel_symbols.len() as u64;
            pk.interned_data = Some(InternedData {
                kernel_symbols,
                ..Default::default()
            });
        }
        self.packet(pk, weight)
    }

    /// What the writer does with the events of class `c`, found at its
    /// first event.
    pub(super) fn plan(&mut self, c: &EventClass) -> Plan {
        *self.plans.get_or_insert_with(c.index, || {
            let typed = Typed::of(c);
            Plan {
                typed,
                layout: Layout::of(c, typed),
                slots: typed.map(|t| TreeSlots::of(c, t)),
                fields: ClassFields::of(c),
            }
        })
    }

    /// An event of a bundle read straight from its record (classes of a
    /// fixed layout); `None`: read it through the tree.
    pub(super) fn read_record(
        &mut self,
        ev: &Event<'_>,
        c: &EventClass,
        plan: Plan,
    ) -> Option<Built> {
        let layout = plan.layout.filter(|_| ev.tape.is_none())?;
        let (data, endian) = (ev.data, ev.endian);
        let int = |defs: &[FieldDef], i: Option<u16>| {
            i.and_then(|i| value_int(record_value(defs, i, data, endian)))
        };
        let mut b = Built {
            event: FtraceEvent {
                timestamp: Some(ev.ts),
                pid: if ev.pid >= 0 {
                    Some(ev.pid as u32)
                } else {
                    int(&c.fields, layout.pid()).map(|v| v as u32)
                },
                common_flags: int(&c.common_fields, layout.flags()).map(|v| v as u32),
                event: None,
                dense: None,
            },
            descriptor: None,
        };
        match plan.typed {
            Some(t) => b.event.event = Some(t.message(&Fields::record(c, &layout, data, endian))),
            None if self.opts.describe_generic => {
                let (key, tag, written) =
                    dense_record(&self.dense, c, data, endian, &mut self.dense_buf)?;
                b.event.dense = Some((tag, Packed::new(&self.dense_buf)));
                b.descriptor = Some((key, written));
            }
            None => return None,
        }
        Some(b)
    }

    /// An event of a bundle from the tree of its values.
    pub(super) fn read_tree(
        &mut self,
        meta: &TraceMeta,
        ev: &Event<'_>,
        plan: Option<Plan>,
    ) -> Built {
        self.tree.collect(meta, ev);
        let t = &self.tree;
        let fields = plan.map(|p| p.fields).unwrap_or_default();
        let pid = if ev.pid >= 0 {
            Some(ev.pid as u32)
        } else {
            t.at(Scope::Payload, fields.pid)
                .and_then(|i| t.int(i))
                .map(|v| v as u32)
        };
        let common_flags = t
            .at(Scope::CommonContext, fields.flags)
            .and_then(|i| t.int(i))
            .map(|v| v as u32);
        let mut b = Built {
            event: FtraceEvent {
                timestamp: Some(ev.ts),
                pid,
                common_flags,
                event: None,
                dense: None,
            },
            descriptor: None,
        };
        match plan.and_then(|p| p.typed.zip(p.slots)) {
            Some((ty, slots)) => b.event.event = Some(ty.message(&Fields::tree(t, &slots))),
            None => {
                let d = if self.opts.describe_generic {
                    dense_event(&mut self.dense, ev, t, &mut self.dense_buf)
                } else {
                    None
                };
                match d {
                    Some((key, tag, written)) => {
                        b.event.dense = Some((tag, Packed::new(&self.dense_buf)));
                        b.descriptor = Some((key, written));
                    }
                    None => b.event.event = Some(FtraceKind::Generic(generic(ev, t))),
                }
            }
        }
        b
    }

    pub(super) fn ftrace(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> std::io::Result<()> {
        let plan = ev.class.map(|c| (c, self.plan(c)));
        let mut built = match plan {
            Some((c, plan)) => match self.read_record(ev, c, plan) {
                Some(b) => b,
                None => self.read_tree(meta, ev, Some(plan)),
            },
            None => self.read_tree(meta, ev, None),
        };
        if plan.is_none_or(|(_, p)| p.typed.is_none()) {
            self.stats.generic_events += 1;
        }
        self.stats.ftrace_events += 1;
        let s = ev.stream;
        // funcgraph: the function's name interned on the bundles' sequence
        let func = match &mut built.event.event {
            Some(FtraceKind::FuncgraphEntry(e)) => e.func.as_mut(),
            Some(FtraceKind::FuncgraphExit(e)) => e.func.as_mut(),
            _ => None,
        };
        let mut new_symbol = None;
        if let Some(f) = func {
            if !meta.symbols.is_empty() {
                let n = self.ksyms.len() as u64 + 1;
                let k = self.ksyms.entry(*f).or_insert_with(|| Ksym {
                    iid: n,
                    name: symbol_name(meta, *f).into_bytes(),
                    written: false,
                });
                if !k.written {
                    new_symbol = Some(*f);
                }
                *f = k.iid;
            }
        }
        let p = self
            .pending
            .slot(s)
            .get_or_insert_with(|| Pending::new(ev.cpu));
        p.cpu = ev.cpu;
        if let Some(a) = new_symbol {
            p.symbols.push(a);
        }
        if let Some((key, false)) = built.descriptor {
            p.descriptors.push(key);
        }
        let st = self.cpu_sched.slot(ev.cpu);
        let fe = &built.event;
        let compacted = self.opts.compact_sched
            && fe
                .event
                .as_ref()
                .is_some_and(|k| compact(p, st, ev.ts, fe.pid, fe.common_flags, k));
        if let Some(FtraceKind::SchedSwitch(e)) = &fe.event {
            // what runs on the CPU now
            let tie = match &st.last {
                Some(l) => l.0 >= ev.ts,
                None => false,
            };
            st.tie = tie;
            let mut comm = match st.last.take() {
                Some(l) => l.2,
                None => String::new(),
            };
            comm.clear();
            comm.push_str(e.next_comm.as_deref().unwrap_or_default());
            st.last = Some((
                ev.ts,
                e.next_pid.unwrap_or(-1),
                comm,
                e.next_prio.unwrap_or(0),
            ));
        }
        if compacted {
            self.stats.compact_events += 1;
        } else {
            p.events.push(built.event);
        }
        if p.len() >= BUNDLE_EVENTS {
            self.flush_bundle(s)?;
        }
        Ok(())
    }
}

/// The generic event `ev` as a message of its class's descriptor (in
/// `buf`): `(class key, field number, descriptor written)`, or `None` when
/// its class has no descriptor (over 31 fields) or the event's fields do
/// not fit it (then it is written as a `GenericFtraceEvent`). A class is
/// described by its first event: its payload fields in order, unsigned
/// integers as `uint64`, signed as `int64`, strings and anything else (as
/// JSON text) as `string`.
pub(super) fn dense_event(
    classes: &mut HashMap<ClassId, Option<Dense>>,
    ev: &Event<'_>,
    t: &Tree,
    buf: &mut Vec<u8>,
) -> Option<(ClassId, u32, bool)> {
    let c = ev.class?;
    // a class in no table has no id to keep its descriptor by: written as
    // a generic event
    let key = Some(c.index).filter(|&i| i != ClassId::UNLISTED)?;
    let n = classes.len() as u32;
    let d = classes
        .entry(key)
        .or_insert_with(|| {
            let fields: Vec<(String, i32)> = t
                .top(Scope::Payload)
                .map(|i| {
                    let ty = match t.nodes[i].kind {
                        Kind::U(_) => FIELD_TYPE_UINT64,
                        Kind::S(_) => FIELD_TYPE_INT64,
                        _ => FIELD_TYPE_STRING,
                    };
                    (t.name(i).to_string(), ty)
                })
                .collect();
            if fields.len() > 31 {
                return None;
            }
            let desc = DescriptorProto {
                name: Some(c.name.clone()),
                field: fields
                    .iter()
                    .enumerate()
                    .map(|(k, (name, ty))| FieldDescriptorProto {
                        name: Some(name.clone()),
                        number: Some(k as i32 + 1),
                        label: Some(FIELD_LABEL_OPTIONAL),
                        r#type: Some(*ty),
                    })
                    .collect(),
            };
            let tag = DENSE_FIELD_BASE + n;
            Some(Dense {
                tag,
                fields,
                descriptor: GenericEventDescriptor {
                    field_id: Some(tag as i32),
                    event_descriptor: Some(desc.encode_to_vec()),
                    group_name: Some(c.system.clone()),
                },
                written: false,
            })
        })
        .as_ref()?;
    buf.clear();
    let mut k = 0;
    for i in t.top(Scope::Payload) {
        let (name, ty) = d.fields.get(k)?;
        if !t.name_is(i, name) {
            return None;
        }
        let num = k as u32 + 1;
        match (t.nodes[i].kind, *ty) {
            (Kind::U(x), FIELD_TYPE_UINT64) => put_varint(buf, num, x),
            (Kind::S(x), FIELD_TYPE_INT64) => put_varint(buf, num, x as u64),
            (Kind::U(_) | Kind::S(_), _) => return None,
            (_, FIELD_TYPE_STRING) => {
                // a string as it is, anything else as its JSON text
                let mut json = Vec::new();
                let text = match t.nodes[i].kind {
                    Kind::Str(..) => t.bytes(i),
                    _ => {
                        t.json(i, &mut json);
                        &json
                    }
                };
                put_bytes(buf, num, String::from_utf8_lossy(text).as_bytes());
            }
            _ => return None,
        }
        k += 1;
    }
    (k == d.fields.len()).then_some((key, d.tag, d.written))
}

/// Field `num` of a message: a varint.
pub(super) fn put_varint(out: &mut Vec<u8>, num: u32, x: u64) {
    use prost::encoding::{encode_key, encode_varint, WireType};
    encode_key(num, WireType::Varint, out);
    encode_varint(x, out);
}

/// Field `num` of a message: length-delimited bytes (text, a message).
pub(super) fn put_bytes(out: &mut Vec<u8>, num: u32, b: &[u8]) {
    use prost::encoding::{encode_key, encode_varint, WireType};
    encode_key(num, WireType::LengthDelimited, out);
    encode_varint(b.len() as u64, out);
    out.extend_from_slice(b);
}

/// [`dense_event`] of a fixed-layout class's record, read straight from
/// it once the class's descriptor exists; `None` when the tree must decide
/// (no descriptor yet, or a value that is not a number or text of the
/// descriptor's type).
pub(super) fn dense_record(
    classes: &HashMap<ClassId, Option<Dense>>,
    c: &EventClass,
    data: &[u8],
    endian: Endian,
    buf: &mut Vec<u8>,
) -> Option<(ClassId, u32, bool)> {
    let key = c.index;
    let d = classes.get(&key)?.as_ref()?;
    // the descriptor was made from the tree of this class, one field per
    // definition
    if d.fields.len() != c.fields.len() {
        return None;
    }
    buf.clear();
    for (k, (f, (_, ty))) in c.fields.iter().zip(&d.fields).enumerate() {
        let num = k as u32 + 1;
        match (f.value(data, endian)?, *ty) {
            (Value::Unsigned(x), FIELD_TYPE_UINT64) => put_varint(buf, num, x),
            (Value::Signed(x), FIELD_TYPE_INT64) => put_varint(buf, num, x as u64),
            (Value::Str(s), FIELD_TYPE_STRING) => {
                put_bytes(buf, num, String::from_utf8_lossy(s).as_bytes())
            }
            _ => return None,
        }
    }
    Some((key, d.tag, d.written))
}

/// A kernel address as a name: the symbol it is in (`name+0xOFF` inside
/// it), else the address in hex.
pub(super) fn symbol_name(meta: &TraceMeta, addr: u64) -> String {
    match meta.symbols.lookup(addr) {
        Some(s) if s.addr == addr => s.name.to_string(),
        Some(s) => format!("{}+0x{:x}", s.name, addr - s.addr),
        None => format!("0x{addr:x}"),
    }
}

/// Put a `sched_switch` or `sched_waking` into the bundle's compact columns
/// when a reader gets every field back: a switch whose `prev_*` are the
/// `next_*` of the previous switch on the CPU (strictly earlier and not
/// tied) and whose pid is its `prev_pid`; a waking by the task that
/// switch left running, with its flags and no `success` field. Returns
/// whether it did.
pub(super) fn compact(
    p: &mut Pending,
    st: &CpuSched,
    ts: u64,
    pid: Option<u32>,
    flags: Option<u32>,
    kind: &FtraceKind,
) -> bool {
    let Some((last_ts, run_pid, run_comm, run_prio)) = &st.last else {
        return false;
    };
    if st.tie || ts <= *last_ts || pid != Some(*run_pid as u32) {
        return false;
    }
    match kind {
        FtraceKind::SchedSwitch(e) => {
            let (
                Some(prev_comm),
                Some(prev_pid),
                Some(prev_prio),
                Some(prev_state),
                Some(next_comm),
                Some(next_pid),
                Some(next_prio),
            ) = (
                &e.prev_comm,
                e.prev_pid,
                e.prev_prio,
                e.prev_state,
                &e.next_comm,
                e.next_pid,
                e.next_prio,
            )
            else {
                return false;
            };
            if prev_pid != *run_pid || prev_comm != run_comm || prev_prio != *run_prio {
                return false;
            }
            let c = p.comm(next_comm);
            let k = &mut p.compact;
            k.switch_timestamp.push(ts - p.switch_ts);
            p.switch_ts = ts;
            k.switch_prev_state.push(prev_state);
            k.switch_next_pid.push(next_pid);
            k.switch_next_prio.push(next_prio);
            k.switch_next_comm_index.push(c);
            true
        }
        FtraceKind::SchedWaking(e) => {
            let (Some(comm), Some(wpid), Some(prio), Some(target_cpu), None, Some(flags)) =
                (&e.comm, e.pid, e.prio, e.target_cpu, e.success, flags)
            else {
                return false;
            };
            let c = p.comm(comm);
            let k = &mut p.compact;
            k.waking_timestamp.push(ts - p.waking_ts);
            p.waking_ts = ts;
            k.waking_pid.push(wpid);
            k.waking_target_cpu.push(target_cpu);
            k.waking_prio.push(prio);
            k.waking_comm_index.push(c);
            k.waking_common_flags.push(flags);
            true
        }
        _ => false,
    }
}

/// Every payload field of `ev` as a `GenericFtraceEvent`: integers as
/// integers, strings as strings, anything else as its JSON text.
pub(super) fn generic(ev: &Event<'_>, t: &Tree) -> GenericFtraceEvent {
    let mut g = GenericFtraceEvent {
        event_name: Some(
            ev.class
                .map_or_else(|| format!("type_{}", ev.type_id), |c| c.name.clone()),
        ),
        field: Vec::new(),
    };
    let mut json = Vec::new();
    for i in t.top(Scope::Payload) {
        let value = match t.nodes[i].kind {
            Kind::U(x) => GenericValue::UintValue(x),
            Kind::S(x) => GenericValue::IntValue(x),
            Kind::Str(..) => GenericValue::StrValue(t.text(i)),
            _ => {
                json.clear();
                t.json(i, &mut json);
                GenericValue::StrValue(String::from_utf8_lossy(&json).into_owned())
            }
        };
        g.field.push(GenericField {
            name: Some(t.name(i).to_string()),
            value: Some(value),
        });
    }
    g
}
