//! Unit tests of the parser and the evaluator on hand-made records. The
//! expected results are libtraceevent 1.7.1's (checked against trace-cmd
//! 3.1.6 on the recordings in tests/fixtures/report-options).

use super::*;
use tracemux_core::bytes::Endian;
use tracemux_core::model::{ClassTable, Event, EventClass, FieldDef, FieldFlags};
use tracemux_core::tables::Symbol;

fn f(name: &str, offset: u32, size: u32, flags: u32) -> FieldDef {
    FieldDef::scalar(name, "", offset, size, FieldFlags(flags))
}

const S: u32 = FieldFlags::SIGNED;
const STR: u32 = FieldFlags::STRING | FieldFlags::ARRAY;

fn common() -> Vec<FieldDef> {
    vec![
        f("common_type", 0, 2, 0),
        f("common_flags", 2, 1, 0),
        f("common_preempt_count", 3, 1, 0),
        f("common_pid", 4, 4, S),
    ]
}

fn class(id: u32, system: &str, name: &str, fields: Vec<FieldDef>) -> EventClass {
    EventClass {
        index: tracemux_core::layout::ClassId::UNLISTED,
        id,
        system: system.into(),
        name: name.into(),
        common_fields: common(),
        fields,
        print_fmt: String::new(),
        printer: None,
        schema: None,
        compiled: Default::default(),
    }
}

fn meta() -> TraceMeta {
    let mut c = ClassTable::new();
    c.push(class(
        372,
        "sched",
        "sched_switch",
        vec![
            f("prev_comm", 8, 16, STR),
            f("prev_pid", 24, 4, S),
            f("prev_prio", 28, 4, S),
            f("prev_state", 32, 8, S | FieldFlags::LONG),
            f("next_comm", 40, 16, STR),
            f("next_pid", 56, 4, S),
            f("next_prio", 60, 4, S),
        ],
    ));
    c.push(class(
        374,
        "sched",
        "sched_wakeup",
        vec![
            f("comm", 8, 16, STR),
            f("pid", 24, 4, S),
            f("prio", 28, 4, S),
            f("target_cpu", 32, 4, S),
        ],
    ));
    c.push(class(
        460,
        "timer",
        "hrtimer_start",
        vec![
            f("hrtimer", 8, 8, FieldFlags::POINTER),
            f("function", 16, 8, FieldFlags::POINTER),
            f("expires", 24, 8, S),
        ],
    ));
    c.push(class(
        100,
        "irq",
        "irq_handler_entry",
        vec![
            f("irq", 8, 4, S),
            f("name", 12, 4, FieldFlags::STRING | FieldFlags::DYNAMIC),
        ],
    ));
    c.push(class(
        12,
        "ftrace",
        "kernel_stack",
        vec![f("size", 8, 4, S)],
    ));
    let mut m = TraceMeta {
        cpus: 2,
        classes: c,
        ..Default::default()
    };
    m.tasks.insert(42, "bash");
    m.tasks.insert(7, "ls");
    for (a, n) in [
        (0xffffffff81000000u64, "_text"),
        (0xffffffff8141e4b0, "hrtimer_wakeup"),
        (0xffffffff814332e0, "tick_nohz_handler"),
    ] {
        m.symbols.push(Symbol {
            addr: a,
            kind: 't',
            name: n.into(),
            module: None,
        });
    }
    m.symbols.finish();
    m
}

fn head(id: u16, pid: i32, flags: u8) -> Vec<u8> {
    let mut d = id.to_le_bytes().to_vec();
    d.push(flags);
    d.push(0);
    d.extend_from_slice(&pid.to_le_bytes());
    d
}

fn comm16(s: &str) -> [u8; 16] {
    let mut c = [0u8; 16];
    c[..s.len()].copy_from_slice(s.as_bytes());
    c
}

fn switch(pid: i32, prev: (&str, i32), state: i64, next: (&str, i32)) -> Vec<u8> {
    let mut d = head(372, pid, 0);
    d.extend_from_slice(&comm16(prev.0));
    d.extend_from_slice(&prev.1.to_le_bytes());
    d.extend_from_slice(&120i32.to_le_bytes());
    d.extend_from_slice(&state.to_le_bytes());
    d.extend_from_slice(&comm16(next.0));
    d.extend_from_slice(&next.1.to_le_bytes());
    d.extend_from_slice(&120i32.to_le_bytes());
    d
}

fn wakeup(pid: i32, comm: &str, wpid: i32, cpu: i32) -> Vec<u8> {
    let mut d = head(374, pid, 0);
    d.extend_from_slice(&comm16(comm));
    d.extend_from_slice(&wpid.to_le_bytes());
    d.extend_from_slice(&120i32.to_le_bytes());
    d.extend_from_slice(&cpu.to_le_bytes());
    d
}

fn hrtimer(timer: u64, func: u64) -> Vec<u8> {
    let mut d = head(460, 0, 0x08);
    d.extend_from_slice(&timer.to_le_bytes());
    d.extend_from_slice(&func.to_le_bytes());
    d.extend_from_slice(&5i64.to_le_bytes());
    d
}

fn irq(name: &str) -> Vec<u8> {
    let mut d = head(100, 0, 0x08);
    d.extend_from_slice(&3i32.to_le_bytes());
    let loc = ((name.len() as u32 + 1) << 16) | 16;
    d.extend_from_slice(&loc.to_le_bytes());
    d.extend_from_slice(name.as_bytes());
    d.push(0);
    d
}

fn ev<'a>(m: &'a TraceMeta, data: &'a [u8], cpu: u32) -> Event<'a> {
    let type_id = u16::from_le_bytes([data[0], data[1]]) as u32;
    Event {
        ts: 0,
        stream: 0,
        cpu,
        type_id,
        class: m.classes.get(type_id),
        pid: i32::from_le_bytes(data[4..8].try_into().unwrap()),
        data,
        ext: data,
        endian: Endian::Little,
        file_pos: 0,
        tape: None,
        raw_ts: None,
    }
}

/// Does the filter pass the record (as a single positive `-F`)?
fn pass(m: &TraceMeta, filter: &str, data: &[u8]) -> bool {
    let f = EventFilter::new(m, filter).unwrap_or_else(|e| panic!("{filter}: {e}"));
    f.matches(m, &ev(m, data, 0)) == Match::Match
}

fn err(m: &TraceMeta, filter: &str) -> ErrorKind {
    match EventFilter::new(m, filter) {
        Ok(_) => panic!("{filter}: accepted"),
        Err(e) => e.kind,
    }
}

#[test]
fn event_selection() {
    let m = meta();
    let f = EventFilter::new(&m, "sched_*").unwrap();
    // `sched_*` is "sched" followed by underscores: it matches the system
    assert!(f.has_event(372) && f.has_event(374) && !f.has_event(460));
    let f = EventFilter::new(&m, "SCHED/Sched_s.*,hrtimer_start").unwrap();
    assert!(f.has_event(372) && !f.has_event(374) && f.has_event(460));
    let f = EventFilter::new(&m, " timer / hrtimer_start : expires == 5").unwrap();
    assert!(f.has_event(460) && !f.has_event(372));
    let f = EventFilter::new(&m, ".*").unwrap();
    assert!(f.has_event(12) && f.has_event(100));
    assert_eq!(err(&m, "nothing"), ErrorKind::EventNotFound);
    assert_eq!(err(&m, ""), ErrorKind::FilterNotFound);
    assert_eq!(
        err(&m, "sched_switch,: prev_pid == 0"),
        ErrorKind::FilterNotFound
    );
    assert_eq!(
        err(&m, "sched_\\(: prev_pid == 0"),
        ErrorKind::InvalidEventName
    );
    assert_eq!(
        err(&m, "sched_switch: prev_comm == \"a,b\""),
        ErrorKind::MemAllocFailed
    );
    // no filter text: every event of the list passes, others are not found
    let f = EventFilter::new(&m, "sched_switch").unwrap();
    let w = wakeup(1, "x", 2, 0);
    assert_eq!(f.matches(&m, &ev(&m, &w, 0)), Match::NotFound);
}

#[test]
fn numbers() {
    let m = meta();
    let idle = switch(0, ("swapper/0", 0), 0, ("bash", 42));
    let bash = switch(42, ("bash", 42), 1, ("swapper/0", 0));
    assert!(pass(&m, "sched_switch: prev_pid == 0", &idle));
    assert!(!pass(&m, "sched_switch: prev_pid == 0", &bash));
    assert!(pass(
        &m,
        "sched_switch: prev_pid >= 42 && next_pid < 1",
        &bash
    ));
    assert!(pass(&m, "sched_switch: next_pid == 0x2a", &idle));
    assert!(pass(&m, "sched_switch: next_pid == 052", &idle));
    assert!(pass(&m, "sched_switch: prev_state & 1", &bash));
    assert!(!pass(&m, "sched_switch: prev_state & 1", &idle));
    // `== -1` is read as `- 1`: true when the field is not 1
    assert!(pass(&m, "sched_switch: prev_pid == -1", &idle));
    // signed fields compare as 64-bit unsigned values after sign extension
    let neg = switch(5, ("x", -2), 0, ("y", 0));
    assert!(pass(&m, "sched_switch: prev_pid > 100", &neg));
    assert!(pass(
        &m,
        "sched_switch: prev_pid == 0xfffffffffffffffe",
        &neg
    ));
    assert!(pass(&m, "sched_switch: CPU == 0", &idle));
    assert!(pass(
        &m,
        "sched_switch: common_pid == 42 && common_flags == 0",
        &bash
    ));
}

#[test]
fn logic_is_left_to_right() {
    let m = meta();
    let idle = switch(0, ("swapper/0", 0), 0, ("bash", 42));
    // (T || x) && F: false; with C precedence it would be true
    assert!(!pass(
        &m,
        "sched_switch: prev_pid == 0 || next_pid == 1 && next_pid == 2",
        &idle
    ));
    assert!(pass(
        &m,
        "sched_switch: prev_pid == 0 || (next_pid == 1 && next_pid == 2)",
        &idle
    ));
    assert!(pass(
        &m,
        "sched_switch: !prev_pid == 1 && !(next_pid == 1)",
        &idle
    ));
    assert!(!pass(
        &m,
        "sched_switch: !(prev_pid == 0 || next_pid == 1)",
        &idle
    ));
    assert!(pass(&m, "sched_switch: ((prev_pid == 0))", &idle));
}

#[test]
fn unknown_fields_are_false() {
    let m = meta();
    let idle = switch(0, ("swapper/0", 0), 0, ("bash", 42));
    let w = wakeup(0, "bash", 42, 1);
    let flt = "sched_switch,sched_wakeup: nofield == 1 || prev_pid == 0 || target_cpu == 1";
    assert!(pass(&m, flt, &idle));
    assert!(pass(&m, flt, &w));
    // an unknown field compared with a string is false too, even with !=
    assert!(!pass(&m, "sched_wakeup: nofield != \"x\"", &w));
    assert!(pass(&m, "sched_wakeup: !nofield == 1", &w));
    let f = EventFilter::new(&m, "sched_wakeup: nofield == 1").unwrap();
    assert!(matches!(
        f.tree(374).unwrap().nodes[f.tree(374).unwrap().root as usize],
        parse::Node::Bool(false)
    ));
}

#[test]
fn strings() {
    let m = meta();
    let bash = switch(42, ("bash", 42), 1, ("swapper/0", 0));
    assert!(pass(&m, "sched_switch: prev_comm == \"bash\"", &bash));
    assert!(pass(&m, "sched_switch: prev_comm == 'bash'", &bash));
    assert!(pass(&m, "sched_switch: next_comm != \"bash\"", &bash));
    assert!(pass(&m, "sched_switch: next_comm =~ \"^SWAP.*/\"", &bash));
    assert!(pass(&m, "sched_switch: next_comm !~ \"^(swapper)\"", &bash));
    assert!(pass(&m, "sched_switch: prev_comm =~ \"^ba\\|^ls\"", &bash));
    // "a" "b" is "ab"
    assert!(pass(&m, "sched_switch: prev_comm == \"ba\" \"sh\"", &bash));
    // a full-size name without a NUL
    let long = switch(7, ("0123456789abcdef", 7), 0, ("x", 0));
    assert!(pass(
        &m,
        "sched_switch: prev_comm == \"0123456789abcdef\"",
        &long
    ));
    // COMM: the task name of common_pid
    assert!(pass(&m, "sched_switch: COMM == \"bash\"", &bash));
    let idle = switch(0, ("swapper/0", 0), 0, ("bash", 42));
    assert!(pass(&m, "sched_switch: COMM == \"<idle>\"", &idle));
    let unknown = switch(9, ("x", 9), 0, ("bash", 42));
    assert!(pass(&m, "sched_switch: COMM == \"<...>\"", &unknown));
    // numbers compared as strings: hex, or the symbol of a pointer
    assert!(pass(&m, "sched_switch: prev_pid == \"0x2a\"", &bash));
    assert!(pass(&m, "sched_switch: CPU == \"0x0\"", &bash));
    let t = hrtimer(0xffff888627c1c6f8, 0xffffffff8141e4b0);
    assert!(pass(
        &m,
        "hrtimer_start: function == \"hrtimer_wakeup\"",
        &t
    ));
    assert!(pass(&m, "hrtimer_start: function =~ \"WAKE\"", &t));
    assert!(pass(
        &m,
        "hrtimer_start: hrtimer == \"0xffff888627c1c6f8\"",
        &t
    ));
    // past the last symbol only its exact address resolves
    let t2 = hrtimer(0, 0xffffffff81433300);
    assert!(pass(
        &m,
        "hrtimer_start: function == \"0xffffffff81433300\"",
        &t2
    ));
    let t3 = hrtimer(0, 0xffffffff81433000);
    assert!(pass(
        &m,
        "hrtimer_start: function == \"hrtimer_wakeup\"",
        &t3
    ));
    // __data_loc strings
    let i = irq("virtio0");
    assert!(pass(&m, "irq_handler_entry: name == \"virtio0\"", &i));
    assert!(pass(&m, "irq_handler_entry: name =~ \"^virt\"", &i));
}

#[test]
fn errors() {
    let m = meta();
    for (filter, kind) in [
        ("sched_switch: prev_pid == next_pid", ErrorKind::SyntaxError),
        ("sched_switch: prev_pid ==", ErrorKind::SyntaxError),
        ("sched_switch: prev_pid == 1 &&", ErrorKind::SyntaxError),
        ("sched_switch: 1 == prev_pid", ErrorKind::SyntaxError),
        ("sched_switch: prev_pid", ErrorKind::SyntaxError),
        ("sched_switch: (prev_pid == 1", ErrorKind::UnbalancedParen),
        ("sched_switch: prev_pid == 1)", ErrorKind::UnbalancedParen),
        ("sched_switch: prev_pid =~ 1", ErrorKind::IllegalIntegerCmp),
        (
            "sched_switch: prev_comm < \"a\"",
            ErrorKind::IllegalStringCmp,
        ),
        ("sched_switch: prev_comm =~ \"[a\"", ErrorKind::InvalidRegex),
        ("sched_switch: prev_pid @ 1", ErrorKind::UnknownToken),
        (
            "sched_switch: prev_pid == 1 (next_pid == 1)",
            ErrorKind::InvalidParen,
        ),
    ] {
        assert_eq!(err(&m, filter), kind, "{filter}");
    }
    // an evaluation error is neither a match nor a miss
    let f = EventFilter::new(&m, "sched_switch: prev_pid / 0").unwrap();
    let idle = switch(0, ("swapper/0", 0), 0, ("bash", 42));
    assert_eq!(f.matches(&m, &ev(&m, &idle, 0)), Match::Error);
}

#[test]
fn filter_sets() {
    let m = meta();
    let idle = switch(0, ("swapper/0", 0), 0, ("bash", 42));
    let bash = switch(42, ("bash", 42), 1, ("swapper/0", 0));
    let w = wakeup(0, "bash", 42, 1);
    let mut stack = head(12, 0, 0);
    stack.extend_from_slice(&8i32.to_le_bytes());

    let mut s = FilterSet::new(&m);
    s.add(&m, "sched_switch: prev_pid == 0", false).unwrap();
    s.add(&m, "sched_wakeup", false).unwrap();
    assert!(s.matches(&m, &ev(&m, &idle, 0)));
    // a stack trace right after a shown event on its CPU is shown
    assert!(s.matches(&m, &ev(&m, &stack, 0)));
    assert!(!s.matches(&m, &ev(&m, &stack, 1)));
    assert!(!s.matches(&m, &ev(&m, &bash, 0)));
    // a miss of the positive filters leaves the state as it was
    assert!(s.matches(&m, &ev(&m, &stack, 0)));
    assert!(s.matches(&m, &ev(&m, &w, 0)));

    let mut s = FilterSet::new(&m);
    s.add(&m, "sched/.*", false).unwrap();
    s.add(&m, "sched_switch: next_pid == 0", true).unwrap();
    assert!(s.matches(&m, &ev(&m, &idle, 0)));
    assert!(!s.matches(&m, &ev(&m, &bash, 1)));
    assert!(s.matches(&m, &ev(&m, &w, 0)));
    // hidden by the negative filter: the next stack trace is not shown
    assert!(!s.matches(&m, &ev(&m, &stack, 1)));

    // negative filters only: everything else passes
    let mut s = FilterSet::new(&m);
    s.add(&m, "sched_wakeup", true).unwrap();
    assert!(s.matches(&m, &ev(&m, &idle, 0)));
    assert!(!s.matches(&m, &ev(&m, &w, 0)));
}
