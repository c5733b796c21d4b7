#!/usr/bin/env bash
# The Python package against the Python ways people read traces today:
# 1. the sched_switch table of a big trace.dat into pandas: tracemux vs
#    `trace-cmd report` text parsed with pandas;
# 2. every event of a big LTTng trace, fields included: tracemux's events()
#    and its `events` table vs babeltrace2's Python bindings (bt2).
# Usage: bench/bench-python.sh TRACE.DAT LTTNG_DIR   (tracemux importable
# from $PYTHON, default python3; bt2 from /usr/bin/python3, Debian's python3-bt2)
set -euo pipefail
dat=${1:-/work/big2/big.dat}
ctf=${2:-/work/big/lttng-big}
PY=${PYTHON:-python3}
SYSPY=${SYSPY:-/usr/bin/python3}
here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/bench/out
mkdir -p "$out"

t() { /usr/bin/time -f "%e s, %M KB peak RSS" "$@"; }

echo "== sched_switch of $dat into pandas"
echo "-- tracemux"
t "$PY" -c "
import sys, tracemux
df = tracemux.open(sys.argv[1]).table('sched_switch').to_pandas()
print(len(df), 'rows', list(df.columns)[:8])" "$dat"
echo "-- trace-cmd report, text parsed with pandas"
t trace-cmd report -i "$dat" > "$out/report.txt"
t "$PY" -c "
import sys, pandas as pd
s = pd.read_csv(sys.argv[1], sep='\x01', header=None, names=['line'], skiprows=1, engine='c')['line']
s = s[s.str.contains(' sched_switch: ', regex=False)]
pat = r'^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<ts>[\d.]+): sched_switch:\s+(?P<prev_comm>.+?):(?P<prev_pid>\d+) \[(?P<prev_prio>\d+)\] (?P<prev_state>\S+) ==> (?P<next_comm>.+?):(?P<next_pid>\d+) \[(?P<next_prio>\d+)\]'
df = s.str.extract(pat)
df = df.dropna()
for c in ['pid','cpu','prev_pid','prev_prio','next_pid','next_prio']:
    df[c] = df[c].astype('int64')
df['ts'] = (df['ts'].astype('float64') * 1e9).astype('int64')
print(len(df), 'rows')" "$out/report.txt"

echo "== every event of $ctf, with its fields"
echo "-- tracemux events() (fields as dicts)"
t "$PY" -c "
import sys, tracemux
n = f = 0
for e in tracemux.open(sys.argv[1]).events():
    n += 1; f += len(e.fields)
print(n, 'events', f, 'field values')" "$ctf"
echo "-- tracemux table('events') into pandas"
t "$PY" -c "
import sys, tracemux
df = tracemux.open(sys.argv[1]).table('events').to_pandas()
print(len(df), 'rows')" "$ctf"
echo "-- babeltrace2 Python bindings (bt2), fields as dicts"
t "$SYSPY" -c "
import sys, bt2
n = f = 0
for m in bt2.TraceCollectionMessageIterator(sys.argv[1]):
    if type(m) is bt2._EventMessageConst:
        n += 1
        f += len({k: v for k, v in m.event.payload_field.items()})
print(n, 'events', f, 'field values')" "$ctf"
