"""Every fixture of every format: the events Python sees are the events
`tracemux report --json` prints, field for field."""

import warnings

import tracemux

from conftest import report_json


def test_events_equal_report_json(fixture):
    name, path = fixture
    want, code, _ = report_json(path)
    assert code in (0, 1), f"{name}: report --json failed"
    want = [r for r in want if r["type"] == "event"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tracemux.TraceWarning)
        t = tracemux.open(path)
        got = list(t.events())
    assert len(got) == len(want), name
    for g, w in zip(got, want):
        assert (g.ts, g.cpu, g.pid, g.comm) == (w["ts"], w["cpu"], w["pid"], w["comm"])
        assert (g.system, g.name) == (w["system"], w["event"])
        assert g.fields == w["fields"]


def test_filters_match_a_filtered_reference(fixture):
    name, path = fixture
    want, _, _ = report_json(path)
    want = [r for r in want if r["type"] == "event"]
    if len(want) < 3:
        return
    name0 = want[len(want) // 2]["event"]
    cpu0 = want[len(want) // 2]["cpu"]
    begin, end = want[len(want) // 4]["ts"], want[3 * len(want) // 4]["ts"]
    sel = [
        w
        for w in want
        if w["event"] == name0 and w["cpu"] == cpu0 and begin <= w["ts"] <= end
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tracemux.TraceWarning)
        got = list(
            tracemux.open(path).events(begin=begin, end=end, events=[name0], cpus=[cpu0])
        )
    assert [(g.ts, g.name) for g in got] == [(w["ts"], w["event"]) for w in sel]
    pid0 = want[0]["pid"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tracemux.TraceWarning)
        got = list(tracemux.open(path).events(pids=[pid0]))
    assert len(got) == sum(1 for w in want if w["pid"] == pid0)


def test_info_and_time_range(fixture):
    name, path = fixture
    want, _, _ = report_json(path)
    ev = [r for r in want if r["type"] == "event"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tracemux.TraceWarning)
        t = tracemux.open(path)
        info = t.info()
        want_range = (min(r["ts"] for r in ev), max(r["ts"] for r in ev)) if ev else None
        assert t.time_range == want_range
    assert info["events"] == len(ev)
    assert info["format"] == t.format
    assert sum(info["events_per_class"].values()) == len(ev)
    assert isinstance(t.cpus, int) and isinstance(t.clocks, list)
    lost = [r for r in want if r["type"] == "lost"]
    assert info["lost_markers"] == len(lost)


def test_lost_markers_in_their_place(fixture):
    """`events(lost=True)`: the events and lost markers, in the order and
    with the values of `report --json`; without it, only events."""
    name, path = fixture
    want, _, _ = report_json(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tracemux.TraceWarning)
        got = list(tracemux.open(path).events(lost=True))
        plain = list(tracemux.open(path).events())
    assert len(got) == len(want), name
    for g, w in zip(got, want):
        if w["type"] == "lost":
            assert isinstance(g, tracemux.Lost), name
            assert g.as_dict() == {k: w[k] for k in ("ts", "cpu", "buffer", "count")}
        else:
            assert isinstance(g, tracemux.Event), name
            assert (g.ts, g.cpu, g.name) == (w["ts"], w["cpu"], w["event"])
    assert all(isinstance(g, tracemux.Event) for g in plain)
    assert len(plain) == sum(w["type"] == "event" for w in want)


def test_lost_markers_selected_by_time_and_cpu(fixture):
    name, path = fixture
    want, _, _ = report_json(path)
    lost = [w for w in want if w["type"] == "lost"]
    if not lost:
        return
    cpu0, ts0 = lost[-1]["cpu"], lost[-1]["ts"]
    sel = [w for w in lost if w["cpu"] == cpu0 and w["ts"] >= ts0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tracemux.TraceWarning)
        got = tracemux.open(path).events(begin=ts0, cpus=[cpu0], events=["none"], lost=True)
        got = [g.as_dict() for g in got]
    assert got == [{k: w[k] for k in ("ts", "cpu", "buffer", "count")} for w in sel]
