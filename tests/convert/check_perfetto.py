#!/usr/bin/env python3
"""Check a `tracemux convert --to perfetto` output against Perfetto's official
schema (the `perfetto` PyPI package's perfetto_trace_pb2) and the source's
`tracemux report --json` lines.

Usage: check_perfetto.py TRACEMUX SOURCE OUTPUT.pftrace NAME [--mutate drop|field|compact]

Every packet is decoded on its own (Python protobuf cannot parse one message
over 2 GB). Checked: every source event present once, with its timestamp,
CPU (ftrace bundles) or thread (track events), pid, name and fields (typed
ftrace messages field by field under Perfetto's names, LTTng's *_tid names
first; generic events and debug annotations whole); lost-event markers per
CPU; thread names (ProcessTree, TrackDescriptor) as the source names its
tasks; each packet sequence clears its incremental state before its first
interned name and every track event is on a described sequence; uftrace
slices in the recording's order per thread.

compact_sched columns are expanded back to events: a compact sched_switch
gets its prev_comm/prev_pid/prev_prio and its pid from the next_* of the
last earlier switch on its CPU (compact or full, which must not tie), a
compact sched_waking its pid from the task that switch left running.
funcgraph_* func fields are interned kernel symbols: they are compared as
names with the source's address resolved in the trace's kallsyms
(`tracemux dump --kallsyms`: name, name+0xOFF, or hex). Compressed packets
(zlib) are decompressed and checked like the others. Generic events written
under a bundle's generic_event_descriptors (fields the official schema does
not declare) are decoded by their DescriptorProto, which must come in the
same or an earlier bundle.

--mutate drops one event, changes one field, or changes one compact
sched_switch's next_pid (compact) in the decoded output first: the check
must then fail.
Prints one line: NAME: OK ... or NAME: FAIL ...; exit status 0 or 1.
"""
import bisect
import json
import subprocess
import sys
import zlib
from collections import Counter, defaultdict
from decimal import Decimal

from google.protobuf import descriptor_pb2
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
BEGIN, END, INSTANT = (pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END,
                       pb.TrackEvent.TYPE_INSTANT)


def packets(path, data=None):
    """Frame Trace.packet (field 1, length-delimited) one at a time; the
    packets of compressed_packets (zlib) in their place."""
    if data is None:
        data = open(path, 'rb').read()
    i = 0
    while i < len(data):
        if data[i] != 0x0A:
            raise ValueError(f'offset {i}: not a Trace.packet field')
        n, i = varint(data, i + 1)
        p = pb.TracePacket.FromString(data[i:i + n])
        if p.WhichOneof('data') == 'compressed_packets':
            yield from packets(None, zlib.decompress(p.compressed_packets))
        else:
            yield p
        i += n


def compact_rows(cols, table):
    """The events of compact_sched columns (timestamp deltas first, comm
    indices last): (time, comm, the other values)."""
    ts = 0
    for d, *vals, ci in zip(*cols):
        ts += d
        yield ts, (table[ci] if ci < len(table) else f'<bad comm index {ci}>'), vals


def varint(b, i):
    n = shift = 0
    while True:
        x = b[i]
        i += 1
        n |= (x & 0x7F) << shift
        shift += 7
        if x < 0x80:
            return n, i


def raw_fields(b):
    """(number, wire type, value) of a serialized message: varints as ints,
    length-delimited as bytes."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], 'little'), i + 8
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], 'little'), i + 4
        else:
            raise ValueError(f'wire type {wt}')
        yield num, wt, v


def described_event(e, descs):
    """A FtraceEvent holding an event of a generic_event_descriptors entry
    (a field the official schema does not know): (name, fields), or None."""
    for num, wt, v in raw_fields(e.SerializeToString()):
        if num in descs and wt == 2:
            d = descs[num]
            types = {f.number: (f.name, f.type) for f in d.field}
            fields = {}
            for fnum, fwt, fv in raw_fields(v):
                name, ty = types[fnum]
                if ty == descriptor_pb2.FieldDescriptorProto.TYPE_INT64:
                    fv = fv - (1 << 64) if fv >= 1 << 63 else fv
                elif ty == descriptor_pb2.FieldDescriptorProto.TYPE_STRING:
                    fv = fv.decode('utf-8')
                fields[name] = fv
            if len(fields) != len(types):
                raise ValueError(f'{d.name}: {len(fields)} of {len(types)} fields')
            return d.name, fields
    return None


def kallsyms(tm, src):
    """The trace's kernel symbols (address, name), sorted, from `tracemux dump --kallsyms`."""
    out = subprocess.run([tm, 'dump', '--kallsyms', src], capture_output=True).stdout
    syms = []
    for line in out.decode('utf-8', 'replace').splitlines():
        w = line.split()
        if len(w) >= 3 and len(w[1]) == 1:
            try:
                syms.append((int(w[0], 16), w[2]))
            except ValueError:
                pass
    syms.sort(key=lambda s: s[0])
    return syms


def symbol_name(syms, addrs, a):
    """An address as the writer names it: the symbol (name+0xOFF inside it), else hex."""
    i = bisect.bisect_right(addrs, a)
    if i == 0:
        return f'0x{a:x}'
    # among equal addresses the first one loaded; the writer's table is sorted stably
    j = bisect.bisect_left(addrs, addrs[i - 1])
    addr, name = syms[j]
    return name if addr == a else f'{name}+0x{a - addr:x}'


def canon(v):
    """One form for numbers: integral floats as ints."""
    if isinstance(v, float) and v == int(v) and abs(v) < 9e15:
        return int(v)
    if isinstance(v, Decimal):
        return canon(float(v))
    if isinstance(v, list):
        return [canon(x) for x in v]
    if isinstance(v, dict):
        return {k: canon(x) for k, x in v.items()}
    return v


def same(src, out):
    if src is None and out in ([], '[]'):
        return True  # an undecodable field: null in JSON lines, empty bytes in the model
    if isinstance(src, bool) or isinstance(out, bool):
        return src == out
    if isinstance(src, (int, Decimal)) and isinstance(out, float):
        return float(src) == out  # JSON lines write 1e300 with all its digits
    if isinstance(src, int) and isinstance(out, int):
        m = 1 << 64
        return src % m == out % m or (src - out) % (1 << 32) == 0 and -2**31 <= out < 2**32
    if isinstance(out, str) and not isinstance(src, str):
        try:
            return same(src, json.loads(out))
        except ValueError:
            return False
    if isinstance(src, list) and isinstance(out, list):
        return len(src) == len(out) and all(same(a, b) for a, b in zip(src, out))
    if isinstance(src, dict) and isinstance(out, dict):
        return src.keys() == out.keys() and all(same(src[k], out[k]) for k in src)
    return canon(src) == canon(out)


def typed_expected(msg_fields, src_fields):
    """The source values of a typed message's fields (LTTng's *_tid first)."""
    exp = {}
    for name in msg_fields:
        alts = [name]
        if name.endswith('pid'):
            alts.insert(0, name[:-3] + 'tid')
        for a in alts:
            if a in src_fields:
                exp[name] = src_fields[a]
                break
        else:
            exp[name] = '<missing in source>'
    return exp


def ann_value(a, names):
    for f in ('bool_value', 'uint_value', 'int_value', 'double_value', 'string_value',
              'legacy_json_value'):
        if a.HasField(f):
            v = getattr(a, f)
            return json.loads(v) if f == 'legacy_json_value' else v
    if len(a.dict_entries):
        return {ann_name(e, names): ann_value(e, names) for e in a.dict_entries}
    if len(a.array_values):
        return [ann_value(e, names) for e in a.array_values]
    return None


def ann_name(a, names):
    if a.HasField('name'):
        return a.name
    if a.name_iid not in names:
        raise KeyError(f'annotation name iid {a.name_iid} used before it was interned')
    return names[a.name_iid]


def main():
    tm, src, out, label_ = sys.argv[1:5]
    mutate = sys.argv[6] if len(sys.argv) > 6 and sys.argv[5] == '--mutate' else None
    lines = subprocess.run([tm, 'report', '--json', src], capture_output=True,
                           env={'TZ': 'UTC'}).stdout.decode('utf-8', 'replace').splitlines()
    source = [json.loads(l, parse_float=Decimal) for l in lines]
    ksyms_src = kallsyms(tm, src)
    ksym_addrs = [a for a, _ in ksyms_src]
    fmt_uftrace = any(e.get('system') == 'uftrace' for e in source)
    errors = []
    got = []          # (key, fields, typed?)
    lost_out = Counter()
    seq = {}          # id -> [tid, event names, annotation names]
    thread_names = {}
    slices_out = defaultdict(list)
    stacks = defaultdict(list)
    kernel = False
    ntyped = ngeneric = ntrack = 0
    ksyms = {}        # kernel symbol iid -> name, on the ftrace bundles' sequence
    ftrace_seq = None
    switches = defaultdict(list)   # cpu -> [(ts, next_pid, next_comm, next_prio)] of every switch
    compact = []      # (cpu, ts, 'sched_switch'|'sched_waking', fields) to complete from switches
    ncompact = ndescribed = 0
    descs = {}        # field id -> DescriptorProto of described generic events
    for p in packets(out):
        kind = p.WhichOneof('data')
        if kind == 'ftrace_events':
            kernel = True
            b = p.ftrace_events
            sid = p.trusted_packet_sequence_id
            if ftrace_seq is None:
                ftrace_seq = sid
                if not p.sequence_flags & CLEARED:
                    errors.append('the first ftrace bundle does not clear its incremental state')
            elif sid != ftrace_seq:
                errors.append(f'ftrace bundles on sequences {ftrace_seq} and {sid}')
            if p.HasField('interned_data'):
                for k in p.interned_data.kernel_symbols:
                    ksyms[k.iid] = k.str.decode('utf-8', 'replace')
            for g in b.generic_event_descriptors:
                if g.field_id in descs:
                    errors.append(f'generic event {g.field_id} described twice')
                descs[g.field_id] = descriptor_pb2.DescriptorProto.FromString(g.event_descriptor)
            if b.lost_events:
                lost_out[b.cpu] += 1
            if b.HasField('compact_sched'):
                c = b.compact_sched
                table = list(c.intern_table)
                cols = [c.switch_timestamp, c.switch_prev_state, c.switch_next_pid,
                        c.switch_next_prio, c.switch_next_comm_index]
                if len({len(x) for x in cols}) > 1:
                    errors.append(f'cpu {b.cpu}: compact sched_switch columns of unequal lengths')
                for ts, comm, (st, npid, nprio) in compact_rows(cols, table):
                    ncompact += 1
                    switches[b.cpu].append((ts, npid, comm, nprio))
                    compact.append((b.cpu, ts, 'sched_switch', {
                        'prev_state': st, 'next_comm': comm, 'next_pid': npid, 'next_prio': nprio}))
                cols = [c.waking_timestamp, c.waking_pid, c.waking_target_cpu, c.waking_prio,
                        c.waking_comm_index]
                if len({len(x) for x in cols}) > 1 or len(c.waking_common_flags) not in (0, len(cols[0])):
                    errors.append(f'cpu {b.cpu}: compact sched_waking columns of unequal lengths')
                for ts, comm, (wpid, tcpu, prio) in compact_rows(cols, table):
                    ncompact += 1
                    compact.append((b.cpu, ts, 'sched_waking', {
                        'comm': comm, 'pid': wpid, 'prio': prio, 'target_cpu': tcpu}))
            for e in b.event:
                ev = e.WhichOneof('event')
                if ev == 'sched_switch':
                    s_ = e.sched_switch
                    switches[b.cpu].append((e.timestamp, s_.next_pid, s_.next_comm, s_.next_prio))
                if ev in ('funcgraph_entry', 'funcgraph_exit') and ksyms_src:
                    f_ = getattr(e, ev)
                    if f_.func not in ksyms:
                        errors.append(f'kernel symbol {f_.func} used before it was interned')
                if ev is None:
                    try:
                        d = described_event(e, descs)
                    except (ValueError, KeyError) as x:
                        errors.append(f'described event: {x!r}')
                        continue
                    if d is None:
                        errors.append(f'ftrace event at {e.timestamp} without payload (or its descriptor)')
                        continue
                    ndescribed += 1
                    ename, fields = d
                    pid = e.pid if e.HasField('pid') else -1
                    got.append(((e.timestamp, b.cpu, pid, ename), fields, False))
                    continue
                if ev == 'generic':
                    ngeneric += 1
                    fields = {}
                    for f in e.generic.field:
                        which = f.WhichOneof('value')
                        fields[f.name] = getattr(f, which) if which else None
                    ename, typed = e.generic.event_name, False
                else:
                    ntyped += 1
                    msg = getattr(e, ev)
                    fields = {fd.name: (list(v) if fd.is_repeated else v) for fd, v in msg.ListFields()}
                    if ev in ('funcgraph_entry', 'funcgraph_exit') and ksyms_src and 'func' in fields:
                        fields['func'] = ksyms.get(fields['func'], fields['func'])
                    ename, typed = ev, True
                pid = e.pid if e.HasField('pid') else -1
                got.append(((e.timestamp, b.cpu, pid, ename), fields, typed))
        elif kind == 'process_tree':
            for t in p.process_tree.threads:
                thread_names[t.tid] = t.name
        elif kind == 'track_descriptor':
            sid = p.trusted_packet_sequence_id
            if not p.sequence_flags & CLEARED:
                errors.append(f'sequence {sid} starts without clearing its incremental state')
            if sid in seq:
                errors.append(f'sequence {sid} described twice')
            d = p.track_descriptor
            tid = d.thread.tid if d.HasField('thread') else -1
            if d.HasField('thread') and d.thread.HasField('thread_name'):
                thread_names[tid] = d.thread.thread_name
            seq[sid] = [tid, {}, {}]
        elif kind == 'track_event':
            ntrack += 1
            sid = p.trusted_packet_sequence_id
            if sid not in seq:
                errors.append(f'track event on undescribed sequence {sid}')
                continue
            tid, en, an = seq[sid]
            if p.HasField('interned_data'):
                for n in p.interned_data.event_names:
                    en[n.iid] = n.name
                for n in p.interned_data.debug_annotation_names:
                    an[n.iid] = n.name
            te = p.track_event
            try:
                title = en[te.name_iid] if te.HasField('name_iid') else ''
                fields = {ann_name(a, an): ann_value(a, an) for a in te.debug_annotations}
            except KeyError as k:
                errors.append(str(k))
                continue
            if title == 'lost events' and te.type == INSTANT:
                lost_out[fields.get('cpu')] += 1
                continue
            # uftrace entry/exit leave out empty args, an absent retval and
            # an exit's addr that is its entry's
            if te.type == BEGIN:
                fields.setdefault('args', [])
                if 'addr' in fields:
                    stacks[tid].append(fields['addr'])
            elif te.type == END:
                top = stacks[tid].pop() if stacks[tid] else None
                if 'addr' not in fields and top is not None:
                    fields['addr'] = top
                fields.setdefault('retval', None)
            label = {BEGIN: 'B ' + title, END: 'E'}.get(te.type, title)
            if te.type in (BEGIN, END):
                slices_out[tid].append((p.timestamp, te.type, title if te.type == BEGIN else ''))
            got.append(((p.timestamp, tid, 0, label), fields, False))
    if mutate == 'compact':
        # one compact sched_switch says another task came in: its own
        # next_pid and the next switch's prev_pid change
        for cpu, ts, name, fields in compact:
            if name == 'sched_switch':
                i = switches[cpu].index((ts, fields['next_pid'], fields['next_comm'], fields['next_prio']))
                fields['next_pid'] += 1
                x = switches[cpu][i]
                switches[cpu][i] = (x[0], x[1] + 1, x[2], x[3])
                break
    # compact events: what the last earlier switch on the CPU left running
    for cpu in switches:
        switches[cpu].sort(key=lambda x: x[0])
    keys = {cpu: [x[0] for x in v] for cpu, v in switches.items()}
    for cpu, ts, name, fields in compact:
        k = keys.get(cpu, [])
        i = bisect.bisect_left(k, ts)
        if i == 0:
            errors.append(f'compact {name} at {ts} on cpu {cpu} with no switch before it')
            continue
        if i >= 2 and k[i - 2] == k[i - 1]:
            errors.append(f'compact {name} at {ts} on cpu {cpu}: two switches tie before it')
            continue
        _, rpid, rcomm, rprio = switches[cpu][i - 1]
        if name == 'sched_switch':
            fields.update(prev_comm=rcomm, prev_pid=rpid, prev_prio=rprio)
        got.append(((ts, cpu, rpid, name), fields, True))
    if mutate == 'drop' and got:
        got.pop(len(got) // 2)
    elif mutate == 'field':
        for g in got:
            for k, v in g[1].items():
                if isinstance(v, int) and not isinstance(v, bool):
                    g[1][k] = v + 1
                    break
            else:
                continue
            break
    want = []
    lost_src = Counter()
    slices_src = defaultdict(list)
    comms = {}
    for e in source:
        if e['type'] == 'lost':
            lost_src[e['cpu']] += 1
            continue
        sys_, ev, pid = e['system'] or '', e['event'], e['pid']
        f = e.get('fields') or {}
        if e.get('comm') and pid > 0:
            comms[pid] = e['comm']
        if kernel and sys_ != 'uftrace':
            if pid < 0:
                pid = next((f[k] for k in ('common_pid', 'perf_tid') if isinstance(f.get(k), int)), -1)
            name = ev if ev is not None else f"type_{e['type_id']}"
            if ksyms_src and sys_ == 'ftrace' and ev in ('funcgraph_entry', 'funcgraph_exit') \
                    and isinstance(f.get('func'), int):
                f = dict(f, func=symbol_name(ksyms_src, ksym_addrs, f['func']))
            want.append(((e['ts'], e['cpu'], pid, name), f, name))
        else:
            tid = pid if pid >= 0 else -1
            f = dict(f)
            if sys_ == 'uftrace' and ev in ('entry', 'exit'):
                fn = f.pop('name', '')
                label = 'B ' + fn if ev == 'entry' else 'E'
                slices_src[tid].append((e['ts'], BEGIN if ev == 'entry' else END, fn if ev == 'entry' else ''))
            else:
                label = f'{sys_}:{ev}' if sys_ else (ev if ev is not None else f"type {e['type_id']}")
            if not fmt_uftrace:
                for s in ('common_context', 'specific_context'):
                    if e.get(s):
                        f[s] = e[s]
            want.append(((e['ts'], tid, 0, label), f, None))
    if len(got) != len(want):
        errors.append(f'{len(got)} events written, {len(want)} in the source')
    # match events by key; fields decide among events with the same key
    pool = defaultdict(list)
    for w in want:
        pool[w[0]].append(w)
    for key, fields, typed in got:
        cands = pool.get(key)
        if not cands:
            errors.append(f'event not in the source: {key}')
            continue
        for i, w in enumerate(cands):
            exp = typed_expected(fields, w[1]) if typed else w[1]
            if same(canon(exp), canon(fields)):
                cands.pop(i)
                break
        else:
            errors.append(f'fields differ at {key}: wrote {fields}, source {[c[1] for c in cands][:2]}')
    missing = sum(len(v) for v in pool.values())
    if missing:
        errors.append(f'{missing} source events not written')
    if lost_out != lost_src:
        errors.append(f'lost markers per cpu {dict(lost_out)}, source {dict(lost_src)}')
    if slices_out != slices_src:
        errors.append('uftrace slices not in the order of the recording')
    for tid, comm in comms.items():
        if tid in thread_names and thread_names[tid] != comm:
            errors.append(f'thread {tid} named {thread_names[tid]!r}, source {comm!r}')
    named = sum(1 for t in comms if t in thread_names)
    stats = (f'{len(got)} events ({ntyped} typed, {ncompact} compact, {ndescribed} described, {ngeneric} generic, {ntrack} track), '
             f'{sum(lost_out.values())} lost markers, {len(seq)} sequences, {len(ksyms)} kernel symbols, '
             f'{named}/{len(comms)} tasks named')
    if errors:
        print(f'{label_}: FAIL {stats}: ' + '; '.join(errors[:3]) + (f' (+{len(errors) - 3} more)' if len(errors) > 3 else ''))
        return 1
    print(f'{label_}: OK {stats}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
