"""Trace.sql(): DataFusion over a trace's tables, checked against DuckDB
reading the same tables through the Arrow PyCapsule protocol.

Needs the package built with the cargo feature sql (python/ci.sh does,
and sets TRACEMUX_EXPECT_SQL=1 so that a build without it fails here
instead of skipping)."""

import os
import warnings

import duckdb
import pyarrow as pa
import pytest

import tracemux

from conftest import ROOT

FX = ROOT / "tests" / "fixtures"
SCHED = FX / "tracedat" / "v6-sched-irq-timer" / "trace.dat"
CTF = FX / "ctf" / "perf-data-convert-sched" / "trace"
UFTRACE = FX / "uftrace" / "recorded" / "pg-threads-fork" / "uftrace.data"


def has_sql():
    try:
        tracemux.open(SCHED).sql("SELECT 1")
        return True
    except NotImplementedError:
        return False


if not has_sql():
    if os.environ.get("TRACEMUX_EXPECT_SQL") == "1":
        raise RuntimeError("TRACEMUX_EXPECT_SQL=1 but tracemux was built without the feature sql")
    pytest.skip("built without the cargo feature sql", allow_module_level=True)


def quiet(f, *a):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tracemux.TraceWarning)
        return f(*a)


def duck(query, **tables):
    con = duckdb.connect()
    for name, t in tables.items():
        con.register(name, pa.table(t))
    return con.execute(query).fetchall()


@pytest.mark.parametrize("path", [SCHED, CTF, UFTRACE], ids=["tracedat", "ctf", "uftrace"])
def test_counts_and_groups_like_duckdb(path):
    t = quiet(tracemux.open, path)
    names = sorted(quiet(t.tables).keys())
    assert "events" in names
    for name in names:
        tbl = quiet(t.table, name)
        got = quiet(t.sql, f'SELECT count(*) AS n FROM "{name}"')
        assert isinstance(got, pa.Table)
        assert got.column("n").to_pylist() == [tbl.num_rows()], name
    q = "SELECT system, event, count(*) AS n, min(ts) AS a, max(ts) AS b FROM events GROUP BY 1, 2 ORDER BY 1, 2"
    got = quiet(t.sql, q)
    assert [tuple(r.values()) for r in got.to_pylist()] == duck(q, events=quiet(t.table, "events"))


def test_filters_and_projection_like_duckdb():
    t = tracemux.open(SCHED)
    tbl = t.table("sched_switch")
    cols = tbl.columns
    assert "next_comm" in cols and "prev_state" in cols
    rows = pa.table(tbl)
    mid = rows.column("ts")[len(rows) // 2].as_py()
    q = (
        "SELECT next_comm, count(*) AS n, sum(prev_state) AS s FROM sched__sched_switch "
        f"WHERE ts >= {mid} AND cpu = 0 GROUP BY 1 ORDER BY 2 DESC, 1"
    )
    got = t.sql(q).to_pylist()
    want = duck(q, sched__sched_switch=tbl)
    assert len(want) > 0
    assert [tuple(r.values()) for r in got] == want


def test_derived_and_catalog():
    t = tracemux.open(SCHED)
    names = t.sql("tables").column("table_name").to_pylist()
    for derived in ["sched_slice", "thread_state", "thread", "process"]:
        assert derived in names
    assert set(t.tables()) <= set(names)
    cols = t.sql("describe sched_slice").column("column_name").to_pylist()
    assert cols[:3] == ["ts", "dur", "cpu"]
    n = t.sql("SELECT count(*) AS n FROM sched_slice").column("n")[0].as_py()
    assert n > 0


def test_errors_are_trace_errors():
    t = tracemux.open(SCHED)
    with pytest.raises(tracemux.TraceError, match="no_such_table"):
        t.sql("SELECT * FROM no_such_table")
