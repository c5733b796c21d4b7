#!/usr/bin/env python3
"""Check a `tracemux convert --to perfetto` output against Perfetto's official
schema (the `perfetto` PyPI package's perfetto_trace_pb2) and the source's
`tracemux report --json` lines.

Usage: check_perfetto.py TRACEMUX SOURCE OUTPUT.pftrace NAME [--mutate drop|field|compact|stack] [--verbose]

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
not declare) are decoded by their DescriptorProto (a message class built
from it), which must come in the same or an earlier bundle.

Streamed, in bounded memory: the output is read 16 MB at a time, packet by
packet, and the source's JSON lines are read from the pipe of `tracemux
report --json` only as far as the timestamps the output has reached (both
are in time order: the source merged, the output per CPU bundle and per
track sequence). An event waits in a pool keyed by (timestamp, CPU or
thread, pid, name) until its other side comes; what is left in the pools
at the end is missing or different. The compact columns of a bundle are
expanded with the switches of that bundle and the last ones of the CPU's
earlier bundles; when a bundle goes back before the CPU's earlier ones
(several ftrace instances share the CPU numbers) the check starts over
keeping every switch and expanding the compact events at the end (that
memory grows with the trace). Whether the output holds ftrace bundles (kernel events are then expected
there) and whether the source is a uftrace recording (contexts are then not
annotations) are guessed from the first event packet and the source's path,
and the check starts over with the right values if the data says otherwise.
Over MAX_PENDING events waiting at once fail the check (a broken or
disordered output) rather than grow without bound.

--mutate drops one event (the first written), changes one field, or changes one
compact sched_switch's next_pid (compact), or turns one perf sample's call
stack by a frame (stack) in the decoded output first: the
check must then fail. --verbose prints counts, the pools' high-water mark
and the time taken on stderr.
Prints one line: NAME: OK ... or NAME: FAIL ...; exit status 0 or 1.
"""
import bisect
import io
import json
import os
import subprocess
import sys
import time
import zlib
from collections import Counter, defaultdict, deque
from decimal import Decimal

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError
from google.protobuf.unknown_fields import UnknownFieldSet
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
BEGIN, END, INSTANT = (pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END,
                       pb.TrackEvent.TYPE_INSTANT)
CHUNK = 1 << 24          # output bytes read at a time
MAX_PENDING = 250_000    # events waiting for their other side at once
MAX_ERRORS = 20          # error messages kept (all are counted)
DROP_AT = 0              # --mutate drop: the event dropped (0-based)
SIMPLE_VALUES = ('bool_value', 'uint_value', 'int_value', 'double_value', 'string_value')


class Restart(Exception):
    """The guessed layout was wrong: check again with (kernel, uftrace, late)."""


class TooMany(Exception):
    """More than MAX_PENDING events wait for their other side."""


def packets(read):
    """Frame Trace.packet (field 1, length-delimited) one at a time from
    read(n), CHUNK bytes at a time; the packets of compressed_packets (zlib)
    in their place."""
    buf, i, base, eof = b'', 0, 0, False
    while True:
        try:
            if buf[i] != 0x0A:
                raise ValueError(f'offset {base + i}: not a Trace.packet field')
            n, j = varint(buf, i + 1)
            if j + n > len(buf):
                raise IndexError
        except IndexError:
            if eof:
                if i == len(buf):
                    return
                raise ValueError(f'offset {base + i}: truncated packet') from None
            more = read(CHUNK)
            eof = not more
            base += i
            buf, i = buf[i:] + more, 0
            continue
        p = pb.TracePacket.FromString(buf[j:j + n])
        if p.WhichOneof('data') == 'compressed_packets':
            yield from packets(io.BytesIO(zlib.decompress(p.compressed_packets)).read)
        else:
            yield p
        i = j + n


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


class Described:
    """The events of one generic_event_descriptors entry: a message class
    built from its DescriptorProto."""

    def __init__(self, field_id, d):
        self.name = d.name
        self.nfields = len(d.field)
        f = descriptor_pb2.FileDescriptorProto(name=f'described_{field_id}.proto',
                                               package='oracle', syntax='proto2')
        m = f.message_type.add()
        m.CopyFrom(d)
        m.name = f'E{field_id}'
        pool = descriptor_pool.DescriptorPool()
        pool.Add(f)
        self.cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(f'oracle.E{field_id}'))
        # proto2 strings that are not UTF-8 come as bytes
        self.strings = [x.name for x in d.field if x.type == descriptor_pb2.FieldDescriptorProto.TYPE_STRING]

    def fields(self, data):
        m = self.cls.FromString(data)
        if len(UnknownFieldSet(m)):
            raise KeyError(f'{self.name}: fields not in its descriptor '
                           f'{[u.field_number for u in UnknownFieldSet(m)]}')
        fields = {fd.name: v for fd, v in m.ListFields()}
        if len(fields) != self.nfields:
            raise ValueError(f'{self.name}: {len(fields)} of {self.nfields} fields')
        for n in self.strings:
            if isinstance(fields[n], bytes):
                raise ValueError(f'{self.name}: {n} is not UTF-8: {fields[n]!r}')
        return fields


def described_event(e, descs):
    """A FtraceEvent holding an event of a generic_event_descriptors entry
    (a field the official schema does not know): (name, fields), or None."""
    for u in UnknownFieldSet(e):
        if u.wire_type == 2 and u.field_number in descs:
            d = descs[u.field_number]
            return d.name, d.fields(u.data)
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


TID_ALIAS = {}


def matches(out, src, typed):
    """Whether an output event's fields are the source's (typed: the
    message's fields only, under their names). Equal values are taken at
    once; anything else goes through canon() and same()."""
    if typed:
        for name, v in out.items():
            a = TID_ALIAS.get(name)
            if a is None:
                a = TID_ALIAS[name] = name[:-3] + 'tid' if name.endswith('pid') else ''
            if a and a in src:
                s = src[a]
            elif name in src:
                s = src[name]
            else:
                break
            if s != v:
                break
        else:
            return True
        return same(canon(typed_expected(out, src)), canon(out))
    return src == out or same(canon(src), canon(out))


class PerfTables:
    """The interned data of the perf samples' sequence (profile_common.proto)."""

    def __init__(self):
        self.functions, self.paths, self.mappings, self.frames, self.callstacks = {}, {}, {}, {}, {}

    def add(self, d):
        for table, items, value in (
                (self.functions, d.function_names, lambda x: x.str.decode('utf-8', 'replace')),
                (self.paths, d.mapping_paths, lambda x: x.str.decode('utf-8', 'replace')),
                (self.mappings, d.mappings, lambda x: list(x.path_string_ids)),
                (self.frames, d.frames, lambda x: x),
                (self.callstacks, d.callstacks, lambda x: list(x.frame_ids))):
            for x in items:
                if x.iid in table:
                    return f'iid {x.iid} interned twice'
                table[x.iid] = value(x)
        return None

    def stack(self, iid):
        """The frames, the sampled function first: 'PATH REL_PC FUNCTION',
        the path joined as Perfetto joins it (a '/' before each part)."""
        if iid not in self.callstacks:
            raise KeyError(f'callstack {iid} not interned')
        out = []
        for fid in reversed(self.callstacks[iid]):
            if fid not in self.frames:
                raise KeyError(f'frame {fid} not interned')
            f = self.frames[fid]
            if f.mapping_id not in self.mappings:
                raise KeyError(f'mapping {f.mapping_id} not interned')
            parts = []
            for s in self.mappings[f.mapping_id]:
                if s not in self.paths:
                    raise KeyError(f'mapping path {s} not interned')
                parts.append('/' + self.paths[s])
            func = ''
            if f.HasField('function_name_id'):
                if f.function_name_id not in self.functions:
                    raise KeyError(f'function name {f.function_name_id} not interned')
                func = self.functions[f.function_name_id]
            out.append(f"{''.join(parts)} {f.rel_pc:x} {func}")
        return out


def perf_expected(e, f):
    """A perf sample of the source (its `frames` lines, see tracemux-perf's
    FRAME_LINE) as its PerfSample: key and fields."""
    mode, stack = None, []
    for line in f['frames'].splitlines():
        c = line.split('\t', 4)
        if mode is None:
            mode = 1 if c[2] == 'k' else 2  # Profiling.CpuMode MODE_KERNEL, MODE_USER
        path = c[3] if c[3].startswith('/') else '/' + c[3]
        stack.append(f'{path} {c[1]} {c[4]}')
    ids = lambda v: None if v in (-1, 2**32 - 1) else v
    fields = {'pid': ids(f['pid']), 'tid': ids(f['tid']), 'period': f['period'],
              'mode': mode or 0, 'stack': stack}
    tid = ids(f['tid'])
    return (e['ts'], e['cpu'], -1 if tid is None else tid, 'perf sample'), fields


def ann_value(a, names):
    w = a.WhichOneof('value')
    if w in SIMPLE_VALUES:
        return getattr(a, w)
    if w == 'legacy_json_value':
        return json.loads(a.legacy_json_value)
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


def json_line(decoder):
    """A parser of one JSON line (json.loads with its checks, without its
    per-call setup)."""
    scan = decoder.scan_once

    def loads(line):
        try:
            v, end = scan(line, 0)
        except StopIteration as x:
            raise json.JSONDecodeError('Expecting value', line, x.value) from None
        if end != len(line) and line[end:].strip():
            raise json.JSONDecodeError('Extra data', line, end)
        return v
    return loads


class Slices:
    """uftrace slices per thread, compared in order as both sides come."""

    def __init__(self):
        self.q = defaultdict(deque)
        self.side = {}
        self.bad = False

    def add(self, side, tid, item):
        q = self.q[tid]
        if q and self.side[tid] != side:
            if q.popleft() != item:
                self.bad = True
        else:
            q.append(item)
            self.side[tid] = side

    def equal(self):
        return not self.bad and not any(self.q.values())


class Check:
    def __init__(self, tm, src, out, mutate, kernel, uftrace, late):
        self.tm, self.src, self.out, self.mutate = tm, src, out, mutate
        self.late = late              # compact events resolved at the end, over all switches
        self.kernel = kernel          # ftrace bundles in the output (None: not known yet)
        self.guessed = kernel is None
        self.uftrace = uftrace        # the source is a uftrace recording
        self.saw_uftrace = False
        self.errors = []
        self.nerrors = 0
        self.src_pool = {}            # key -> [source fields] waiting for the output
        self.out_pool = {}            # key -> [(fields, typed)] waiting for the source
        self.pending = self.high = 0
        self.ngot = self.nwant = 0
        self.lost_src, self.lost_out = Counter(), Counter()
        self.slices = Slices()
        self.comms = {}
        self.thread_names = {}
        self.src_ts = None            # the last source timestamp read
        self.switches = defaultdict(list)  # late: cpu -> every switch (ts, next_pid, next_comm, next_prio)
        self.compact = []             # late: every compact event (cpu, ts, name, fields)
        self.src_eof = False

    def error(self, msg):
        self.nerrors += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(msg)

    # -- the source: `tracemux report --json`, read as far as needed ----------

    def advance(self, ts):
        """Read source events until one is after ts (or the end)."""
        if self.src_eof or (self.src_ts is not None and self.src_ts > ts):
            return
        if self.kernel is None:
            self.kernel = False
        loads, lines = self.loads, self.lines
        kernel, uftrace = self.kernel, self.uftrace
        contexts = not kernel and not uftrace
        lost_src, comms, slices = self.lost_src, self.comms, self.slices
        ksyms_src, ksym_addrs = self.ksyms_src, self.ksym_addrs
        out_pool, src_pool = self.out_pool, self.src_pool
        t = None
        for line in lines:
            e = loads(line)
            t = e['ts']
            if e['type'] == 'lost':
                lost_src[e['cpu']] += 1
                if t > ts:
                    break
                continue
            self.nwant += 1
            sys_, ev, pid = e['system'] or '', e['event'], e['pid']
            f = e.get('fields') or {}
            if sys_ == 'uftrace' and not self.saw_uftrace:
                self.saw_uftrace = True
                if not kernel and not uftrace:
                    raise Restart(kernel, True, self.late)
            if e.get('comm') and pid > 0:
                comms[pid] = e['comm']
            if sys_ == 'perf' and isinstance(f.get('frames'), str):
                key, f = perf_expected(e, f)
            elif kernel and sys_ != 'uftrace':
                if pid < 0:
                    pid = next((f[k] for k in ('common_pid', 'perf_tid') if isinstance(f.get(k), int)), -1)
                name = ev if ev is not None else f"type_{e['type_id']}"
                if ksyms_src and sys_ == 'ftrace' and ev in ('funcgraph_entry', 'funcgraph_exit') \
                        and isinstance(f.get('func'), int):
                    f = dict(f, func=symbol_name(ksyms_src, ksym_addrs, f['func']))
                key = (t, e['cpu'], pid, name)
            else:
                tid = pid if pid >= 0 else -1
                f = dict(f)
                if sys_ == 'uftrace' and ev in ('entry', 'exit'):
                    fn = f.pop('name', '')
                    label = 'B ' + fn if ev == 'entry' else 'E'
                    slices.add(0, tid, (t, BEGIN if ev == 'entry' else END, fn if ev == 'entry' else ''))
                else:
                    label = f'{sys_}:{ev}' if sys_ else (ev if ev is not None else f"type {e['type_id']}")
                if contexts:
                    for s in ('common_context', 'specific_context'):
                        if e.get(s):
                            f[s] = e[s]
                key = (t, tid, 0, label)
            cands = out_pool.get(key)
            if cands:
                for i, (of, typed) in enumerate(cands):
                    if matches(of, f, typed):
                        del cands[i]
                        if not cands:
                            del out_pool[key]
                        self.pending -= 1
                        break
                else:
                    self.wait(src_pool, key, f)
            else:
                self.wait(src_pool, key, f)
            if t > ts:
                break
        else:
            self.src_eof = True
        if t is not None:
            self.src_ts = t

    def wait(self, pool, key, item):
        pool.setdefault(key, []).append(item)
        self.pending += 1
        if self.pending > self.high:
            self.high = self.pending
            if self.high > MAX_PENDING:
                raise TooMany()

    # -- the output -----------------------------------------------------------

    def written(self, key, fields, typed):
        """An event of the output: matched with a waiting source event, or waits."""
        n = self.ngot
        self.ngot = n + 1
        if n == DROP_AT and self.mutate == 'drop':
            self.ngot = n
            self.mutate = None
            return
        if self.mutate == 'stack' and fields.get('stack'):
            fields['stack'] = fields['stack'][1:] + fields['stack'][:1]
            if len(fields['stack']) > 1:
                self.mutate = None
        if self.mutate == 'field':
            for k, v in fields.items():
                if isinstance(v, int) and not isinstance(v, bool):
                    fields[k] = v + 1
                    self.mutate = None
                    break
        cands = self.src_pool.get(key)
        if cands:
            for i, sf in enumerate(cands):
                if matches(fields, sf, typed):
                    del cands[i]
                    if not cands:
                        del self.src_pool[key]
                    self.pending -= 1
                    return
        self.wait(self.out_pool, key, (fields, typed))

    def run(self):
        self.ksyms_src = kallsyms(self.tm, self.src)
        self.ksym_addrs = [a for a, _ in self.ksyms_src]
        self.proc = subprocess.Popen([self.tm, 'report', '--json', self.src], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env={'TZ': 'UTC'},
                                     encoding='utf-8', errors='replace')
        self.lines = self.proc.stdout
        self.loads = json_line(json.JSONDecoder(parse_float=Decimal))
        try:
            with open(self.out, 'rb') as f:
                self.read_output(f.read)
            self.advance(float('inf'))
            if self.late:
                self.resolve_late()
        finally:
            self.proc.stdout.close()
            self.proc.kill()
            self.proc.wait()
        if self.kernel is None:
            self.kernel = False
        if not self.kernel and self.uftrace != self.saw_uftrace:
            raise Restart(self.kernel, self.saw_uftrace, self.late)

    def read_output(self, read):
        errors_ = self.error
        seq = {}          # id -> [tid, event names, annotation names]
        self.seq = seq
        thread_names = self.thread_names
        stacks = defaultdict(list)
        ntyped = ngeneric = ntrack = ncompact = ndescribed = 0
        ksyms = {}        # kernel symbol iid -> name, on the ftrace bundles' sequence
        self.ksyms = ksyms
        ksyms_src = self.ksyms_src
        ftrace_seq = None
        perf_seq = None
        perf = PerfTables()
        nperf = 0
        descs = {}        # field id -> Described
        carry = {}        # cpu -> the last switches of its earlier bundles (sorted)
        reached = {}      # cpu -> the latest switch or compact event of its earlier bundles
        repeated = {}     # typed message name -> its repeated fields
        lost_out, slices, written, advance = self.lost_out, self.slices, self.written, self.advance
        for p in packets(read):
            kind = p.WhichOneof('data')
            if kind == 'ftrace_events':
                if self.kernel is None:
                    self.kernel = True
                elif not self.kernel:
                    raise Restart(True, self.uftrace, self.late)
                b = p.ftrace_events
                cpu = b.cpu
                sid = p.trusted_packet_sequence_id
                if ftrace_seq is None:
                    ftrace_seq = sid
                    if not p.sequence_flags & CLEARED:
                        errors_('the first ftrace bundle does not clear its incremental state')
                elif sid != ftrace_seq:
                    errors_(f'ftrace bundles on sequences {ftrace_seq} and {sid}')
                if p.HasField('interned_data'):
                    for k in p.interned_data.kernel_symbols:
                        ksyms[k.iid] = k.str.decode('utf-8', 'replace')
                for g in b.generic_event_descriptors:
                    if g.field_id in descs:
                        errors_(f'generic event {g.field_id} described twice')
                    try:
                        descs[g.field_id] = Described(
                            g.field_id, descriptor_pb2.DescriptorProto.FromString(g.event_descriptor))
                    except Exception as x:  # noqa: BLE001 (any unusable descriptor)
                        errors_(f'generic event {g.field_id}: descriptor {x!r}')
                if b.lost_events:
                    lost_out[cpu] += 1
                bsw = []      # this bundle's switches (ts, next_pid, next_comm, next_prio)
                crows = []    # its compact events (ts, name, fields)
                items = []    # its events (key, fields, typed)
                if b.HasField('compact_sched'):
                    c = b.compact_sched
                    table = list(c.intern_table)
                    cols = [c.switch_timestamp, c.switch_prev_state, c.switch_next_pid,
                            c.switch_next_prio, c.switch_next_comm_index]
                    if len({len(x) for x in cols}) > 1:
                        errors_(f'cpu {cpu}: compact sched_switch columns of unequal lengths')
                    for ts, comm, (st, npid, nprio) in compact_rows(cols, table):
                        ncompact += 1
                        fields = {'prev_state': st, 'next_comm': comm, 'next_pid': npid, 'next_prio': nprio}
                        if self.mutate == 'compact':
                            # one compact sched_switch says another task came in: its own
                            # next_pid and the next switch's prev_pid change
                            fields['next_pid'] = npid = npid + 1
                            self.mutate = None
                        bsw.append((ts, npid, comm, nprio))
                        crows.append((ts, 'sched_switch', fields))
                    cols = [c.waking_timestamp, c.waking_pid, c.waking_target_cpu, c.waking_prio,
                            c.waking_comm_index]
                    if len({len(x) for x in cols}) > 1 or len(c.waking_common_flags) not in (0, len(cols[0])):
                        errors_(f'cpu {cpu}: compact sched_waking columns of unequal lengths')
                    for ts, comm, (wpid, tcpu, prio) in compact_rows(cols, table):
                        ncompact += 1
                        crows.append((ts, 'sched_waking', {
                            'comm': comm, 'pid': wpid, 'prio': prio, 'target_cpu': tcpu}))
                for e in b.event:
                    ev = e.WhichOneof('event')
                    ts = e.timestamp
                    pid = e.pid if e.HasField('pid') else -1
                    if ev is None:
                        try:
                            d = described_event(e, descs)
                        except (ValueError, KeyError, DecodeError) as x:
                            errors_(f'described event: {x!r}')
                            continue
                        if d is None:
                            errors_(f'ftrace event at {ts} without payload (or its descriptor)')
                            continue
                        ndescribed += 1
                        items.append(((ts, cpu, pid, d[0]), d[1], False))
                        continue
                    if ev == 'generic':
                        ngeneric += 1
                        fields = {}
                        for f in e.generic.field:
                            which = f.WhichOneof('value')
                            fields[f.name] = getattr(f, which) if which else None
                        items.append(((ts, cpu, pid, e.generic.event_name), fields, False))
                        continue
                    ntyped += 1
                    msg = getattr(e, ev)
                    if ev == 'sched_switch':
                        bsw.append((ts, msg.next_pid, msg.next_comm, msg.next_prio))
                    fields = {fd.name: v for fd, v in msg.ListFields()}
                    rep = repeated.get(ev)
                    if rep is None:
                        rep = repeated[ev] = [fd.name for fd in msg.DESCRIPTOR.fields if fd.is_repeated]
                    for r in rep:
                        if r in fields:
                            fields[r] = list(fields[r])
                    if ev in ('funcgraph_entry', 'funcgraph_exit') and ksyms_src:
                        if msg.func not in ksyms:
                            errors_(f'kernel symbol {msg.func} used before it was interned')
                        if 'func' in fields:
                            fields['func'] = ksyms.get(fields['func'], fields['func'])
                    items.append(((ts, cpu, pid, ev), fields, True))
                last = None
                if self.late:
                    self.switches[cpu] += bsw
                    self.compact += [(cpu, ts, name, fields) for ts, name, fields in crows]
                elif bsw or crows:
                    # compact events: what the last earlier switch on the CPU left
                    # running, among this bundle's switches and the last ones of its
                    # earlier bundles, unless this bundle goes back before them
                    before = reached.get(cpu)
                    if before is not None and min(min(x[0] for x in bsw) if bsw else before,
                                                  min(r[0] for r in crows) if crows else before) < before:
                        raise Restart(self.kernel, self.uftrace, True)
                    bsw.sort(key=lambda x: x[0])
                    sw = carry.get(cpu, []) + bsw
                    keys = [x[0] for x in sw]
                    for ts, name, fields in crows:
                        i = bisect.bisect_left(keys, ts)
                        if i == 0:
                            errors_(f'compact {name} at {ts} on cpu {cpu} with no switch before it')
                            continue
                        if i >= 2 and keys[i - 2] == keys[i - 1]:
                            errors_(f'compact {name} at {ts} on cpu {cpu}: two switches tie before it')
                            continue
                        _, rpid, rcomm, rprio = sw[i - 1]
                        if name == 'sched_switch':
                            fields.update(prev_comm=rcomm, prev_pid=rpid, prev_prio=rprio)
                        items.append(((ts, cpu, rpid, name), fields, True))
                    if sw:
                        j = bisect.bisect_left(keys, keys[-1])
                        carry[cpu] = sw[max(0, j - 2):]
                    last = max(r[0] for r in crows) if crows else bsw[-1][0]
                    if bsw and bsw[-1][0] > last:
                        last = bsw[-1][0]
                    reached[cpu] = last if before is None else max(before, last)
                if items:
                    top = max(k[0] for k, _, _ in items)
                    advance(top if last is None or top > last else last)
                elif last is not None:
                    advance(last)
                for key, fields, typed in items:
                    written(key, fields, typed)
            elif kind == 'perf_sample':
                sid = p.trusted_packet_sequence_id
                if perf_seq is None:
                    perf_seq = sid
                    if not p.sequence_flags & CLEARED:
                        errors_('the first perf sample does not clear its incremental state')
                elif sid != perf_seq:
                    errors_(f'perf samples on sequences {perf_seq} and {sid}')
                if p.HasField('interned_data'):
                    err = perf.add(p.interned_data)
                    if err:
                        errors_(err)
                ps = p.perf_sample
                try:
                    stack = perf.stack(ps.callstack_iid) if ps.HasField('callstack_iid') else []
                except KeyError as k:
                    errors_(str(k.args[0]))
                    continue
                nperf += 1
                fields = {'pid': ps.pid if ps.HasField('pid') else None,
                          'tid': ps.tid if ps.HasField('tid') else None,
                          'period': ps.timebase_count, 'mode': ps.cpu_mode, 'stack': stack}
                tid = ps.tid if ps.HasField('tid') else -1
                advance(p.timestamp)
                written((p.timestamp, ps.cpu, tid, 'perf sample'), fields, False)
            elif kind == 'process_tree':
                for t in p.process_tree.threads:
                    thread_names[t.tid] = t.name
            elif kind == 'track_descriptor':
                sid = p.trusted_packet_sequence_id
                if not p.sequence_flags & CLEARED:
                    errors_(f'sequence {sid} starts without clearing its incremental state')
                if sid in seq:
                    errors_(f'sequence {sid} described twice')
                d = p.track_descriptor
                tid = d.thread.tid if d.HasField('thread') else -1
                if d.HasField('thread') and d.thread.HasField('thread_name'):
                    thread_names[tid] = d.thread.thread_name
                seq[sid] = [tid, {}, {}]
            elif kind == 'track_event':
                if self.kernel is None:
                    self.kernel = False
                ntrack += 1
                sid = p.trusted_packet_sequence_id
                if sid not in seq:
                    errors_(f'track event on undescribed sequence {sid}')
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
                    errors_(str(k))
                    continue
                ty = te.type
                if title == 'lost events' and ty == INSTANT:
                    lost_out[fields.get('cpu')] += 1
                    continue
                ts = p.timestamp
                # uftrace entry/exit leave out empty args, an absent retval and
                # an exit's addr that is its entry's
                if ty == BEGIN:
                    fields.setdefault('args', [])
                    if 'addr' in fields:
                        stacks[tid].append(fields['addr'])
                    slices.add(1, tid, (ts, ty, title))
                    label = 'B ' + title
                elif ty == END:
                    top = stacks[tid].pop() if stacks[tid] else None
                    if 'addr' not in fields and top is not None:
                        fields['addr'] = top
                    fields.setdefault('retval', None)
                    slices.add(1, tid, (ts, ty, ''))
                    label = 'E'
                else:
                    label = title
                advance(ts)
                written((ts, tid, 0, label), fields, False)
        self.counts = (ntyped, ncompact, ndescribed, ngeneric, ntrack, nperf)

    def resolve_late(self):
        """The compact events of all bundles, with every switch of their CPU."""
        switches = self.switches
        for cpu in switches:
            switches[cpu].sort(key=lambda x: x[0])
        keys = {cpu: [x[0] for x in v] for cpu, v in switches.items()}
        for cpu, ts, name, fields in self.compact:
            k = keys.get(cpu, [])
            i = bisect.bisect_left(k, ts)
            if i == 0:
                self.error(f'compact {name} at {ts} on cpu {cpu} with no switch before it')
                continue
            if i >= 2 and k[i - 2] == k[i - 1]:
                self.error(f'compact {name} at {ts} on cpu {cpu}: two switches tie before it')
                continue
            _, rpid, rcomm, rprio = switches[cpu][i - 1]
            if name == 'sched_switch':
                fields.update(prev_comm=rcomm, prev_pid=rpid, prev_prio=rprio)
            self.written((ts, cpu, rpid, name), fields, True)

    def report(self, label_):
        errors = []
        if self.ngot != self.nwant:
            errors.append(f'{self.ngot} events written, {self.nwant} in the source')
        errors += self.errors
        nerrors = self.nerrors + len(errors) - len(self.errors)
        for key, cands in self.out_pool.items():
            for fields, _ in cands:
                nerrors += 1
                if len(errors) >= MAX_ERRORS:
                    continue
                if key in self.src_pool:
                    errors.append(f'fields differ at {key}: wrote {fields}, source {self.src_pool[key][:2]}')
                else:
                    errors.append(f'event not in the source: {key}')
        missing = sum(len(v) for v in self.src_pool.values())
        if missing:
            errors.append(f'{missing} source events not written')
            nerrors += 1
        if self.lost_out != self.lost_src:
            errors.append(f'lost markers per cpu {dict(self.lost_out)}, source {dict(self.lost_src)}')
            nerrors += 1
        if not self.slices.equal():
            errors.append('uftrace slices not in the order of the recording')
            nerrors += 1
        for tid, comm in self.comms.items():
            if tid in self.thread_names and self.thread_names[tid] != comm:
                nerrors += 1
                if len(errors) < MAX_ERRORS:
                    errors.append(f'thread {tid} named {self.thread_names[tid]!r}, source {comm!r}')
        named = sum(1 for t in self.comms if t in self.thread_names)
        ntyped, ncompact, ndescribed, ngeneric, ntrack, nperf = self.counts
        stats = (f'{self.ngot} events ({ntyped} typed, {ncompact} compact, {ndescribed} described, {ngeneric} generic, {ntrack} track, {nperf} perf samples), '
                 f'{sum(self.lost_out.values())} lost markers, {len(self.seq)} sequences, {len(self.ksyms)} kernel symbols, '
                 f'{named}/{len(self.comms)} tasks named')
        if errors:
            print(f'{label_}: FAIL {stats}: ' + '; '.join(errors[:3]) + (f' (+{nerrors - 3} more)' if nerrors > 3 else ''))
            return 1
        print(f'{label_}: OK {stats}')
        return 0


def main():
    args = sys.argv[1:]
    verbose = '--verbose' in args
    if verbose:
        args.remove('--verbose')
    tm, src, out, label_ = args[:4]
    mutate = args[5] if len(args) > 5 and args[4] == '--mutate' else None
    kernel, late = None, False
    uftrace = os.path.isfile(os.path.join(src, 'info'))  # a uftrace data directory
    t0 = time.time()
    for _ in range(4):
        c = Check(tm, src, out, mutate, kernel, uftrace, late)
        try:
            c.run()
            break
        except Restart as r:
            kernel, uftrace, late = r.args
            if verbose:
                print(f'{label_}: starting over with kernel={kernel} uftrace={uftrace} late={late}',
                      file=sys.stderr)
        except TooMany:
            print(f'{label_}: FAIL over {MAX_PENDING} events unmatched at once after {c.ngot} written '
                  f'and {c.nwant} read from the source (the output is out of order or events differ): '
                  + '; '.join(f'{k}' for k in list(c.out_pool)[:2] + list(c.src_pool)[:2]))
            return 1
    else:
        print(f'{label_}: FAIL the layout cannot be settled')
        return 1
    if verbose:
        print(f'{label_}: {c.ngot} events written, {c.nwant} in the source, at most {c.high} waiting, '
              f'{time.time() - t0:.1f} s', file=sys.stderr)
    return c.report(label_)


if __name__ == '__main__':
    sys.exit(main())
