#!/usr/bin/env python3
"""Check the Parquet tables tracemux wrote for one trace against
`tracemux report --json` of the same trace, reading them with pyarrow and
opening them with DuckDB and polars.

Usage: check_parquet.py TRACEMUX SOURCE DIR NAME [--mutate drop|field]

Checked:
- every table opens in pyarrow, DuckDB and polars; meta.json's row counts
  are the files' row counts;
- `events` has one row per event of the source, in order, with the same
  ts, cpu, pid, system, event, and `fields` parsing to the same object;
- each event class's table has one row per event of that class, in order,
  with the same ts, cpu and pid, and every field of every scope the JSON
  shows equal to its column (integers, text, lists, byte arrays,
  structures, variants as `_tag` + option, optionals as null,
  enumerations as `value` + `label`);
- `lost` has one row per lost-event marker.
--mutate changes what was read (drops an event, changes a field) so that
the check must fail: the oracle is shown to notice.
"""
import json
import math
import subprocess
import sys
from collections import defaultdict

import duckdb
import polars
import pyarrow.parquet as pq


def fail(name, msg):
    print(f"{name}: FAIL {msg}")
    sys.exit(1)


def same(j, p, path, errs):
    """Compare a JSON value of report --json with a pyarrow Python value."""
    if len(errs) > 5:
        return
    if isinstance(j, dict) and set(j) == {"value", "labels"} and isinstance(p, dict) and "label" in p:
        same(j["value"], p["value"], path + ".value", errs)
        want = ",".join(j["labels"]) or None
        if p["label"] != want:
            errs.append(f"{path}: label {p['label']!r} != {want!r}")
        return
    if isinstance(j, dict) and isinstance(p, dict) and "_tag" in p:
        if len(j) != 1:
            errs.append(f"{path}: variant {j!r}")
            return
        (opt, v), = j.items()
        if p["_tag"] != opt:
            errs.append(f"{path}: option {p['_tag']!r} != {opt!r}")
            return
        same(v, p.get(opt), path + "." + opt, errs)
        return
    if isinstance(j, dict):
        if not isinstance(p, dict):
            errs.append(f"{path}: {p!r} is not a structure")
            return
        for k, v in j.items():
            col = k if k in p else next((c for c in p if c.startswith(k + "_")), None)
            if col is None:
                errs.append(f"{path}.{k}: no column")
                continue
            same(v, p[col], f"{path}.{k}", errs)
        return
    if isinstance(j, list):
        if isinstance(p, (bytes, bytearray)):
            p = list(p)
        if not isinstance(p, list) or len(p) != len(j):
            errs.append(f"{path}: {p!r} != {j!r}")
            return
        for i, (a, b) in enumerate(zip(j, p)):
            same(a, b, f"{path}[{i}]", errs)
        return
    if isinstance(j, float) or isinstance(p, float):
        if j is None and p is not None and math.isnan(p):
            return
        if j is None or p is None or not math.isclose(j, p, rel_tol=1e-6, abs_tol=1e-12):
            errs.append(f"{path}: {p!r} != {j!r}")
        return
    if isinstance(j, bool) or isinstance(p, bool):
        if bool(j) != bool(p) or (j is None) != (p is None):
            errs.append(f"{path}: {p!r} != {j!r}")
        return
    if j != p:
        errs.append(f"{path}: {p!r} != {j!r}")


def main():
    tm, src, out, name = sys.argv[1:5]
    mutate = sys.argv[6] if len(sys.argv) > 6 and sys.argv[5] == "--mutate" else None
    rep = subprocess.run([tm, "report", "--json", src], capture_output=True, env={"TZ": "UTC"})
    records = [json.loads(l) for l in rep.stdout.splitlines() if l.strip()]
    events = [r for r in records if r["type"] == "event"]
    lost = [r for r in records if r["type"] == "lost"]
    meta = json.load(open(f"{out}/meta.json"))
    tables = meta["tables"]

    read = {}
    for t, d in tables.items():
        path = f"{out}/{d['file']}"
        tab = pq.read_table(path)
        if tab.num_rows != d["rows"]:
            fail(name, f"{t}: {tab.num_rows} rows, meta.json says {d['rows']}")
        n = duckdb.sql(f"SELECT count(*) FROM read_parquet('{path}')").fetchall()[0][0]
        if n != d["rows"]:
            fail(name, f"{t}: DuckDB reads {n} rows")
        if polars.read_parquet(path).height != d["rows"]:
            fail(name, f"{t}: polars reads another row count")
        read[t] = tab.to_pylist()

    long = read["events"]
    if mutate == "drop" and long:
        del long[len(long) // 2]
    if len(long) != len(events):
        fail(name, f"events: {len(long)} rows for {len(events)} events")
    for i, (r, e) in enumerate(zip(long, events)):
        for k in ("ts", "cpu", "pid", "system"):
            if r[k] != e[k]:
                fail(name, f"events row {i}: {k} {r[k]!r} != {e[k]!r}")
        if r["event"] != e["event"]:
            fail(name, f"events row {i}: event {r['event']!r} != {e['event']!r}")
        if json.loads(r["fields"]) != e.get("fields", {}):
            fail(name, f"events row {i}: fields differ")

    by_class = defaultdict(list)
    for e in events:
        if e["event"] is not None:
            by_class[(e["system"], e["event"])].append(e)
    owners = {(d.get("system"), d.get("event")): t for t, d in tables.items() if "event" in d}
    checked = 0
    for key, evs in by_class.items():
        t = owners.get(key)
        if t is None:
            fail(name, f"no table for {key}")
        rows = read[t]
        if mutate == "field" and rows and checked == 0:
            for c in reversed(list(rows[0])):
                if isinstance(rows[0][c], int) and c not in ("ts", "cpu", "pid"):
                    rows[0][c] += 1
                    break
        if len(rows) != len(evs):
            fail(name, f"{t}: {len(rows)} rows for {len(evs)} events")
        for i, (r, e) in enumerate(zip(rows, evs)):
            for k in ("ts", "cpu", "pid"):
                if r[k] != e[k]:
                    fail(name, f"{t} row {i}: {k} {r[k]!r} != {e[k]!r}")
            errs = []
            for scope, obj in e.items():
                if scope == "fields":
                    # payload fields are top-level columns (field_X when X
                    # is a common column's name)
                    for k, v in obj.items():
                        col = f"field_{k}" if f"field_{k}" in r else k
                        if col not in r:
                            col = next((c for c in r if c.startswith(k + "_")), None)
                        if col is None:
                            errs.append(f"{k}: no column")
                            continue
                        same(v, r[col], k, errs)
                elif scope in ("common_context", "specific_context", "packet_context"):
                    same(obj, r.get(scope) or {}, scope, errs)
            if errs:
                fail(name, f"{t} row {i}: " + "; ".join(errs[:3]))
            checked += 1
    if len(read["lost"]) != len(lost):
        fail(name, f"lost: {len(read['lost'])} rows for {len(lost)} markers")
    print(f"{name}: OK ({len(events)} events in {len(by_class)} tables, {checked} rows compared field by field, {len(lost)} lost markers)")


main()
