//! Perfetto traces decoded back for the tests: packets unframed (and
//! decompressed), compact sched expanded into events, typed ftrace
//! messages read field by field under Perfetto's names, kernel symbols of
//! the source.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::{json, Map, Value};
use tracemux_export::prost::{self, Message};
use tracemux_export::proto::*;

/// The packets of a Perfetto trace, framed as `Trace.packet` one by one;
/// those of `compressed_packets` in their place.
pub fn packets(data: &[u8]) -> Vec<TracePacket> {
    let mut v = Vec::new();
    let mut b = data;
    while !b.is_empty() {
        assert_eq!(b[0], 0x0a, "a Trace.packet field");
        b = &b[1..];
        let len = prost::encoding::decode_varint(&mut b).unwrap() as usize;
        let p = TracePacket::decode(&b[..len]).expect("packet decodes");
        match &p.data {
            Some(Data::CompressedPackets(z)) => v.extend(packets(
                &tracemux_export::perfetto::inflate(z).expect("zlib"),
            )),
            _ => v.push(p),
        }
        b = &b[len..];
    }
    v
}

/// The kernel symbols of a trace (`dump --kallsyms`), sorted by address
/// (stably: the first of equal addresses is the one a lookup finds).
pub fn kallsyms(src: &Path) -> Vec<(u64, String)> {
    let o = super::common::tracemux(
        &["dump", "--kallsyms", src.to_str().unwrap()],
        Path::new("."),
    );
    let mut v: Vec<(u64, String)> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            if w.len() >= 3 && w[1].len() == 1 {
                Some((u64::from_str_radix(w[0], 16).ok()?, w[2].to_string()))
            } else {
                None
            }
        })
        .collect();
    v.sort_by_key(|s| s.0);
    v
}

/// An address as the writer interns it: `name`, `name+0xOFF`, or hex.
pub fn symbol_name(syms: &[(u64, String)], a: u64) -> String {
    let i = syms.partition_point(|s| s.0 <= a);
    if i == 0 {
        return format!("0x{a:x}");
    }
    let at = syms[i - 1].0;
    let (addr, name) = &syms[syms.partition_point(|s| s.0 < at)];
    if *addr == a {
        name.clone()
    } else {
        format!("{name}+0x{:x}", a - addr)
    }
}

/// A described generic event (`FtraceEvent.dense`) decoded by its
/// descriptor: its name and fields.
pub fn described_fields(
    e: &FtraceEvent,
    descs: &HashMap<u32, DescriptorProto>,
) -> Result<(String, Map<String, Value>), String> {
    let (tag, bytes) = e.dense.as_ref().ok_or("ftrace event without payload")?;
    let d = descs
        .get(tag)
        .ok_or(format!("event {tag} used before its descriptor"))?;
    let mut m = Map::new();
    let mut b = &bytes[..];
    while !b.is_empty() {
        let (num, wt) = prost::encoding::decode_key(&mut b).map_err(|e| e.to_string())?;
        let f = d
            .field
            .iter()
            .find(|f| f.number == Some(num as i32))
            .ok_or(format!("field {num} not described"))?;
        let v = match (wt, f.r#type) {
            (prost::encoding::WireType::Varint, Some(FIELD_TYPE_UINT64)) => {
                json!(prost::encoding::decode_varint(&mut b).unwrap())
            }
            (prost::encoding::WireType::Varint, Some(FIELD_TYPE_INT64)) => {
                json!(prost::encoding::decode_varint(&mut b).unwrap() as i64)
            }
            (prost::encoding::WireType::LengthDelimited, Some(FIELD_TYPE_STRING)) => {
                let n = prost::encoding::decode_varint(&mut b).unwrap() as usize;
                let s = String::from_utf8(b[..n].to_vec()).map_err(|e| e.to_string())?;
                b = &b[n..];
                json!(s)
            }
            _ => {
                return Err(format!(
                    "field {num}: wire type {wt:?}, type {:?}",
                    f.r#type
                ))
            }
        };
        m.insert(f.name.clone().unwrap_or_default(), v);
    }
    if m.len() != d.field.len() {
        return Err(format!("{} of {} fields", m.len(), d.field.len()));
    }
    Ok((d.name.clone().unwrap_or_default(), m))
}

/// The times of compact_sched events (their deltas summed up), once every
/// other column (`lens`) is seen to hold one value per event.
pub fn compact_times(deltas: &[u64], lens: &[usize], what: &str) -> Result<Vec<u64>, String> {
    if lens.iter().any(|&l| l != deltas.len()) {
        return Err(format!("compact {what} columns of unequal lengths"));
    }
    Ok(deltas
        .iter()
        .scan(0, |ts, d| {
            *ts += d;
            Some(*ts)
        })
        .collect())
}

/// The compact `sched_switch`/`sched_waking` events of the bundles as full
/// events (cpu, event): the missing fields from the `next_*` of the last
/// switch (compact or full) strictly before on the CPU, which must not tie.
pub fn expand_compact(pk: &[TracePacket]) -> Result<Vec<(u32, FtraceEvent)>, String> {
    let mut switches: BTreeMap<u32, Vec<(u64, i32, String, i32)>> = BTreeMap::new();
    let mut compact = Vec::new();
    for p in pk {
        let Some(Data::FtraceEvents(b)) = &p.data else {
            continue;
        };
        let cpu = b.cpu.unwrap_or(0);
        for e in &b.event {
            if let Some(FtraceKind::SchedSwitch(s)) = &e.event {
                switches.entry(cpu).or_default().push((
                    e.timestamp.unwrap_or(0),
                    s.next_pid.unwrap_or(-1),
                    s.next_comm.clone().unwrap_or_default(),
                    s.next_prio.unwrap_or(0),
                ));
            }
        }
        let Some(c) = &b.compact_sched else { continue };
        let comm = |i: u32| {
            c.intern_table
                .get(i as usize)
                .cloned()
                .ok_or(format!("comm index {i} out of the table"))
        };
        let lens = [
            c.switch_prev_state.len(),
            c.switch_next_pid.len(),
            c.switch_next_prio.len(),
            c.switch_next_comm_index.len(),
        ];
        let times = compact_times(&c.switch_timestamp, &lens, "sched_switch")?;
        for (k, ts) in times.into_iter().enumerate() {
            let next_comm = comm(c.switch_next_comm_index[k])?;
            switches.entry(cpu).or_default().push((
                ts,
                c.switch_next_pid[k],
                next_comm.clone(),
                c.switch_next_prio[k],
            ));
            let e = SchedSwitchFtraceEvent {
                prev_state: Some(c.switch_prev_state[k]),
                next_comm: Some(next_comm),
                next_pid: Some(c.switch_next_pid[k]),
                next_prio: Some(c.switch_next_prio[k]),
                ..Default::default()
            };
            compact.push((cpu, ts, FtraceKind::SchedSwitch(e)));
        }
        let lens = [
            c.waking_pid.len(),
            c.waking_target_cpu.len(),
            c.waking_prio.len(),
            c.waking_comm_index.len(),
        ];
        let times = compact_times(&c.waking_timestamp, &lens, "sched_waking")?;
        for (k, ts) in times.into_iter().enumerate() {
            let e = SchedWakeupFtraceEvent {
                comm: Some(comm(c.waking_comm_index[k])?),
                pid: Some(c.waking_pid[k]),
                prio: Some(c.waking_prio[k]),
                target_cpu: Some(c.waking_target_cpu[k]),
                success: None,
            };
            compact.push((cpu, ts, FtraceKind::SchedWaking(e)));
        }
    }
    for v in switches.values_mut() {
        v.sort_by_key(|s| s.0);
    }
    let mut out = Vec::new();
    for (cpu, ts, mut kind) in compact {
        let sw = switches.get(&cpu).map_or(&[][..], |v| v.as_slice());
        let i = sw.partition_point(|s| s.0 < ts);
        if i == 0 || (i >= 2 && sw[i - 2].0 == sw[i - 1].0) {
            return Err(format!(
                "compact event at {ts} on cpu {cpu}: no single switch before it"
            ));
        }
        let (_, pid, comm, prio) = &sw[i - 1];
        if let FtraceKind::SchedSwitch(e) = &mut kind {
            e.prev_comm = Some(comm.clone());
            e.prev_pid = Some(*pid);
            e.prev_prio = Some(*prio);
        }
        out.push((
            cpu,
            FtraceEvent {
                timestamp: Some(ts),
                pid: Some(*pid as u32),
                common_flags: None,
                event: Some(kind),
                dense: None,
            },
        ));
    }
    Ok(out)
}

/// The source fields a typed message carries, under Perfetto's names
/// (alternatives: LTTng's names first).
pub fn typed_fields(name: &str) -> &'static [(&'static str, &'static [&'static str])] {
    const WAKE: &[(&str, &[&str])] = &[
        ("comm", &["comm"]),
        ("pid", &["tid", "pid"]),
        ("prio", &["prio"]),
        ("success", &["success"]),
        ("target_cpu", &["target_cpu"]),
    ];
    match name {
        "sched_switch" => &[
            ("prev_comm", &["prev_comm"]),
            ("prev_pid", &["prev_tid", "prev_pid"]),
            ("prev_prio", &["prev_prio"]),
            ("prev_state", &["prev_state"]),
            ("next_comm", &["next_comm"]),
            ("next_pid", &["next_tid", "next_pid"]),
            ("next_prio", &["next_prio"]),
        ],
        "sched_wakeup" | "sched_wakeup_new" | "sched_waking" => WAKE,
        "sched_process_fork" => &[
            ("parent_comm", &["parent_comm"]),
            ("parent_pid", &["parent_tid", "parent_pid"]),
            ("child_comm", &["child_comm"]),
            ("child_pid", &["child_tid", "child_pid"]),
        ],
        "sched_process_exit" | "sched_process_free" => &[
            ("comm", &["comm"]),
            ("pid", &["tid", "pid"]),
            ("prio", &["prio"]),
        ],
        "sched_process_exec" => &[
            ("filename", &["filename"]),
            ("pid", &["tid", "pid"]),
            ("old_pid", &["old_tid", "old_pid"]),
        ],
        "task_newtask" => &[
            ("pid", &["tid", "pid"]),
            ("comm", &["comm"]),
            ("clone_flags", &["clone_flags"]),
            ("oom_score_adj", &["oom_score_adj"]),
        ],
        "task_rename" => &[
            ("pid", &["tid", "pid"]),
            ("oldcomm", &["oldcomm"]),
            ("newcomm", &["newcomm"]),
            ("oom_score_adj", &["oom_score_adj"]),
        ],
        "sched_migrate_task" => &[
            ("comm", &["comm"]),
            ("pid", &["tid", "pid"]),
            ("prio", &["prio"]),
            ("orig_cpu", &["orig_cpu"]),
            ("dest_cpu", &["dest_cpu"]),
        ],
        "cpu_frequency" | "cpu_idle" => &[("state", &["state"]), ("cpu_id", &["cpu_id"])],
        "irq_handler_entry" => &[("irq", &["irq"]), ("name", &["name"])],
        "irq_handler_exit" => &[("irq", &["irq"]), ("ret", &["ret"])],
        "softirq_entry" | "softirq_exit" => &[("vec", &["vec"])],
        "sys_enter" => &[("id", &["id"]), ("args", &["args"])],
        "sys_exit" => &[("id", &["id"]), ("ret", &["ret"])],
        "workqueue_execute_start" | "workqueue_execute_end" => {
            &[("work", &["work"]), ("function", &["function"])]
        }
        "print" => &[("ip", &["ip"]), ("buf", &["buf"])],
        "funcgraph_entry" => &[("depth", &["depth"]), ("func", &["func"])],
        "funcgraph_exit" => &[
            ("calltime", &["calltime"]),
            ("depth", &["depth"]),
            ("func", &["func"]),
            ("overrun", &["overrun"]),
            ("rettime", &["rettime"]),
        ],
        _ => &[],
    }
}

macro_rules! obj {
    ($($k:literal => $v:expr),* $(,)?) => {{
        let mut m = Map::new();
        $( if let Some(x) = $v.clone() { m.insert($k.to_string(), json!(x)); } )*
        m
    }};
}

/// A decoded ftrace event: its name and fields (typed: under Perfetto's
/// names; generic: under the source's, non-scalars parsed from their JSON).
pub fn ftrace_fields(k: &FtraceKind) -> (String, Map<String, Value>, bool) {
    use FtraceKind as F;
    let w = |n: &str, e: &SchedWakeupFtraceEvent| {
        (
            n.to_string(),
            obj!("comm" => e.comm, "pid" => e.pid, "prio" => e.prio, "success" => e.success, "target_cpu" => e.target_cpu),
        )
    };
    let (n, m) = match k {
        F::SchedSwitch(e) => (
            "sched_switch".to_string(),
            obj!("prev_comm" => e.prev_comm, "prev_pid" => e.prev_pid, "prev_prio" => e.prev_prio, "prev_state" => e.prev_state, "next_comm" => e.next_comm, "next_pid" => e.next_pid, "next_prio" => e.next_prio),
        ),
        F::SchedWakeup(e) => w("sched_wakeup", e),
        F::SchedWakeupNew(e) => w("sched_wakeup_new", e),
        F::SchedWaking(e) => w("sched_waking", e),
        F::SchedProcessFork(e) => (
            "sched_process_fork".into(),
            obj!("parent_comm" => e.parent_comm, "parent_pid" => e.parent_pid, "child_comm" => e.child_comm, "child_pid" => e.child_pid),
        ),
        F::SchedProcessExit(e) => (
            "sched_process_exit".into(),
            obj!("comm" => e.comm, "pid" => e.pid, "prio" => e.prio),
        ),
        F::SchedProcessFree(e) => (
            "sched_process_free".into(),
            obj!("comm" => e.comm, "pid" => e.pid, "prio" => e.prio),
        ),
        F::SchedProcessExec(e) => (
            "sched_process_exec".into(),
            obj!("filename" => e.filename, "pid" => e.pid, "old_pid" => e.old_pid),
        ),
        F::TaskNewtask(e) => (
            "task_newtask".into(),
            obj!("pid" => e.pid, "comm" => e.comm, "clone_flags" => e.clone_flags, "oom_score_adj" => e.oom_score_adj),
        ),
        F::TaskRename(e) => (
            "task_rename".into(),
            obj!("pid" => e.pid, "oldcomm" => e.oldcomm, "newcomm" => e.newcomm, "oom_score_adj" => e.oom_score_adj),
        ),
        F::SchedMigrateTask(e) => (
            "sched_migrate_task".into(),
            obj!("comm" => e.comm, "pid" => e.pid, "prio" => e.prio, "orig_cpu" => e.orig_cpu, "dest_cpu" => e.dest_cpu),
        ),
        F::CpuFrequency(e) => (
            "cpu_frequency".into(),
            obj!("state" => e.state, "cpu_id" => e.cpu_id),
        ),
        F::CpuIdle(e) => (
            "cpu_idle".into(),
            obj!("state" => e.state, "cpu_id" => e.cpu_id),
        ),
        F::IrqHandlerEntry(e) => (
            "irq_handler_entry".into(),
            obj!("irq" => e.irq, "name" => e.name),
        ),
        F::IrqHandlerExit(e) => (
            "irq_handler_exit".into(),
            obj!("irq" => e.irq, "ret" => e.ret),
        ),
        F::SoftirqEntry(e) => ("softirq_entry".into(), obj!("vec" => e.vec)),
        F::SoftirqExit(e) => ("softirq_exit".into(), obj!("vec" => e.vec)),
        F::SysEnter(e) => (
            "sys_enter".into(),
            obj!("id" => e.id, "args" => Some(e.args.iter().collect::<Vec<u64>>())),
        ),
        F::SysExit(e) => ("sys_exit".into(), obj!("id" => e.id, "ret" => e.ret)),
        F::WorkqueueExecuteStart(e) => (
            "workqueue_execute_start".into(),
            obj!("work" => e.work, "function" => e.function),
        ),
        F::WorkqueueExecuteEnd(e) => (
            "workqueue_execute_end".into(),
            obj!("work" => e.work, "function" => e.function),
        ),
        F::Print(e) => ("print".into(), obj!("ip" => e.ip, "buf" => e.buf)),
        F::FuncgraphEntry(e) => (
            "funcgraph_entry".into(),
            obj!("depth" => e.depth, "func" => e.func),
        ),
        F::FuncgraphExit(e) => (
            "funcgraph_exit".into(),
            obj!("calltime" => e.calltime, "depth" => e.depth, "func" => e.func, "overrun" => e.overrun, "rettime" => e.rettime),
        ),
        F::Generic(g) => {
            let mut m = Map::new();
            for f in &g.field {
                let v = match &f.value {
                    Some(GenericValue::IntValue(x)) => json!(x),
                    Some(GenericValue::UintValue(x)) => json!(x),
                    Some(GenericValue::StrValue(s)) => json!(s),
                    None => Value::Null,
                };
                m.insert(f.name.clone().unwrap_or_default(), v);
            }
            return (g.event_name.clone().unwrap_or_default(), m, false);
        }
    };
    (n, m, true)
}
