"""Damaged input: lenient by default (a TraceWarning per damaged part, the
intact events kept, the same as the CLI keeps), strict=True raises
TraceError with the file, section and offset."""

import warnings

import pytest

import tracemux

from conftest import report_json
from test_tables import SCHED


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    """A copy of a trace.dat with 64 bytes of its event pages zeroed, at the
    first of a few places where the CLI reports damage and goes on (much
    of the file is the unused rest of ring-buffer pages)."""
    data = SCHED.read_bytes()
    for frac in (0.9, 0.85, 0.95, 0.8, 0.75):
        at = int(len(data) * frac)
        bad = bytearray(data)
        for i in range(at, at + 64):
            bad[i] ^= 0xFF
        p = tmp_path_factory.mktemp("damaged") / f"trace-{frac}.dat"
        p.write_bytes(bytes(bad))
        recs, code, err = report_json(p)
        if code == 1 and "tracemux:" in err and any(r["type"] == "event" for r in recs):
            return p, recs
    pytest.fail("no damage the CLI reads around")


def test_lenient_warns_and_keeps_the_intact_events(damaged):
    path, recs = damaged
    want = [(r["ts"], r["event"], r["fields"]) for r in recs if r["type"] == "event"]
    with pytest.warns(tracemux.TraceWarning) as w:
        got = [(e.ts, e.name, e.fields) for e in tracemux.open(path).events()]
    assert got == want
    assert any(str(path) in str(x.message) for x in w)
    # the tables too
    import pyarrow as pa

    with pytest.warns(tracemux.TraceWarning):
        assert pa.table(tracemux.open(path).table("events")).num_rows == len(want)


def test_strict_raises(damaged):
    path, _ = damaged
    with pytest.raises(tracemux.TraceError) as e:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            t = tracemux.open(path, strict=True)
            for _ in t.events():
                pass
    assert e.value.file == str(path)
    assert e.value.section is not None and isinstance(e.value.offset, int)
    with pytest.raises(tracemux.TraceError):
        tracemux.open(path, strict=True).table("events").to_arrow()


def test_not_a_trace(tmp_path):
    p = tmp_path / "nothing.dat"
    p.write_bytes(b"\0" * 100)
    with pytest.raises(tracemux.TraceError) as e:
        tracemux.open(p)
    assert e.value.file == str(p)
    with pytest.raises(tracemux.TraceError):
        tracemux.open(tmp_path / "missing")
