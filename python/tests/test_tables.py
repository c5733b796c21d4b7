"""Tables: every class table of every fixture holds the events `report
--json` prints (count, times, field values); pandas, polars, pyarrow and
duckdb read them through the Arrow PyCapsule protocol; a table can be
read more than once."""

import warnings
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pytest

import tracemux

from conftest import ROOT, report_json

SCHED = ROOT / "tests" / "fixtures" / "tracedat" / "v6-sched-irq-timer" / "trace.dat"


def quiet_open(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tracemux.TraceWarning)
        return tracemux.open(path, **kw)


def read(tbl):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tracemux.TraceWarning)
        return pa.table(tbl)


def test_class_tables_hold_the_events(fixture):
    name, path = fixture
    want, _, _ = report_json(path)
    ev = [r for r in want if r["type"] == "event"]
    t = quiet_open(path)
    per_class = {c["table"]: (c["system"], c["name"]) for c in t.event_classes()}
    by_class = defaultdict(list)
    for r in ev:
        by_class[(r["system"], r["event"])].append(r)
    checked = 0
    tables = t.tables()
    # the 40 classes with the most events (each table is a scan of the
    # whole trace; the all-events fixtures have 1,500 classes), and one
    # declared class without events, which reads empty
    occur = sorted((n for n, c in per_class.items() if c in by_class),
                   key=lambda n: (-len(by_class[per_class[n]]), n))[:40]
    empty = [n for n, c in per_class.items() if c not in by_class][:1]
    for tname in occur + empty:
        got = read(tables[tname])
        rows = by_class.get(per_class[tname], [])
        assert got.num_rows == len(rows), f"{name}: {tname}"
        assert got.column("ts").to_pylist() == [r["ts"] for r in rows]
        assert got.column("cpu").to_pylist() == [r["cpu"] for r in rows]
        # integer and text fields keep their values
        for col in got.column_names:
            key = col[len("field_"):] if col.startswith("field_") else col
            vals = got.column(col).to_pylist()
            exp = [r["fields"].get(key, KeyError) for r in rows]
            if not rows or any(e is KeyError for e in exp):
                continue
            if all(isinstance(e, (int, str)) and not isinstance(e, bool) for e in exp):
                if col in ("ts", "cpu", "pid", "comm"):
                    continue
                assert vals == exp, f"{name}: {tname}.{col}"
                checked += 1
    if by_class:
        assert checked > 0 or all(not r["fields"] for r in ev), name


def test_events_and_lost_tables(fixture):
    name, path = fixture
    want, _, _ = report_json(path)
    t = quiet_open(path)
    assert read(t.table("events")).num_rows == sum(r["type"] == "event" for r in want)
    assert read(t.table("lost")).num_rows == sum(r["type"] == "lost" for r in want)


def test_every_consumer_reads_a_table():
    t = tracemux.open(SCHED)
    tbl = t.table("sched_switch")
    n = sum(1 for e in t.events(events=["sched_switch"]))
    assert n > 0
    assert pa.table(tbl).num_rows == n
    # read again: a table is a description, every scan reads anew
    assert pa.table(tbl).num_rows == n
    pl = pytest.importorskip("polars")
    assert pl.DataFrame(tbl).height == n
    assert t.table("sched_switch").to_polars().height == n
    pd = pytest.importorskip("pandas")
    df = tbl.to_pandas()
    assert isinstance(df, pd.DataFrame) and len(df) == n
    duckdb = pytest.importorskip("duckdb")
    sched_switch = tbl  # noqa: F841 (duckdb finds it by name)
    got = duckdb.sql("SELECT count(*), count(DISTINCT next_pid) FROM sched_switch").fetchall()[0]
    assert got[0] == n and got[1] == df["next_pid"].nunique()


def test_projection_filters_and_limit():
    t = tracemux.open(SCHED)
    full = pa.table(t.table("sched_switch"))
    cpu0 = [i for i, c in enumerate(full.column("cpu").to_pylist()) if c == 0]
    got = pa.table(t.table("sched_switch", columns=["ts", "next_pid"], cpus=[0]))
    assert got.column_names == ["ts", "next_pid"]
    assert got.column("ts").to_pylist() == [full.column("ts")[i].as_py() for i in cpu0]
    ts = full.column("ts").to_pylist()
    mid = pa.table(t.table("sched_switch", begin=ts[10], end=ts[20]))
    assert mid.column("ts").to_pylist() == [x for x in ts if ts[10] <= x <= ts[20]]
    assert pa.table(t.table("sched_switch", limit=7)).num_rows == 7
    with pytest.raises(ValueError):
        t.table("sched_switch", columns=["no_such_column"])
    with pytest.raises(KeyError):
        t.table("no_such_event")
    assert t.table("sched:sched_switch").name == t.table("sched_switch").name


def test_report_styles_equal_the_cli():
    import subprocess

    from conftest import cli

    t = tracemux.open(SCHED)
    for style, args in [("json", ["--json"]), ("babeltrace", ["--style", "babeltrace"])]:
        want = subprocess.run([str(cli()), "report", *args, str(SCHED)], capture_output=True).stdout
        assert t.report(style=style) == want.decode()
    with pytest.raises(ValueError):
        t.report(style="nope")
