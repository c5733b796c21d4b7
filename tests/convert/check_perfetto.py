#!/usr/bin/env python3
"""Check a `tracemux convert --to perfetto` output against Perfetto's official
schema (the `perfetto` PyPI package's perfetto_trace_pb2) and the source's
`tracemux report --json` lines.

Usage: check_perfetto.py TRACEMUX SOURCE OUTPUT.pftrace NAME [--mutate drop|field]

Every packet is decoded on its own (Python protobuf cannot parse one message
over 2 GB). Checked: every source event present once, with its timestamp,
CPU (ftrace bundles) or thread (track events), pid, name and fields (typed
ftrace messages field by field under Perfetto's names, LTTng's *_tid names
first; generic events and debug annotations whole); lost-event markers per
CPU; thread names (ProcessTree, TrackDescriptor) as the source names its
tasks; each packet sequence clears its incremental state before its first
interned name and every track event is on a described sequence; uftrace
slices in the recording's order per thread. --mutate drops one event or
changes one field of the decoded output first: the check must then fail.
Prints one line: NAME: OK ... or NAME: FAIL ...; exit status 0 or 1.
"""
import json
import subprocess
import sys
from collections import Counter, defaultdict
from decimal import Decimal

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
BEGIN, END, INSTANT = (pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END,
                       pb.TrackEvent.TYPE_INSTANT)


def packets(path):
    """Frame Trace.packet (field 1, length-delimited) one at a time."""
    data = open(path, 'rb').read()
    i = 0
    while i < len(data):
        if data[i] != 0x0A:
            raise ValueError(f'offset {i}: not a Trace.packet field')
        i += 1
        n = shift = 0
        while True:
            b = data[i]
            i += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        yield pb.TracePacket.FromString(data[i:i + n])
        i += n


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
    fmt_uftrace = any(e.get('system') == 'uftrace' for e in source)
    errors = []
    got = []          # (key, fields, typed?)
    lost_out = Counter()
    seq = {}          # id -> [tid, event names, annotation names]
    thread_names = {}
    slices_out = defaultdict(list)
    kernel = False
    ntyped = ngeneric = ntrack = 0
    for p in packets(out):
        kind = p.WhichOneof('data')
        if kind == 'ftrace_events':
            kernel = True
            b = p.ftrace_events
            if b.lost_events:
                lost_out[b.cpu] += 1
            for e in b.event:
                ev = e.WhichOneof('event')
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
            label = {BEGIN: 'B ' + title, END: 'E'}.get(te.type, title)
            if te.type in (BEGIN, END):
                slices_out[tid].append((p.timestamp, te.type, title if te.type == BEGIN else ''))
            got.append(((p.timestamp, tid, 0, label), fields, False))
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
    stats = (f'{len(got)} events ({ntyped} typed, {ngeneric} generic, {ntrack} track), '
             f'{sum(lost_out.values())} lost markers, {len(seq)} sequences, {named}/{len(comms)} tasks named')
    if errors:
        print(f'{label_}: FAIL {stats}: ' + '; '.join(errors[:3]) + (f' (+{len(errors) - 3} more)' if len(errors) > 3 else ''))
        return 1
    print(f'{label_}: OK {stats}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
