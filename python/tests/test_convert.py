"""tracemux.convert() against `tracemux convert`: for every fixture of every
format, the same output (byte for byte for jsonl, chrome, perfetto and the
files of a CTF directory; the same tables for parquet), an existing output
kept unless force=True, damage as TraceWarning or (strict) TraceError."""

import subprocess
import warnings
from pathlib import Path

import pytest

import tracemux

from conftest import FIXTURES, cli
from test_damage import damaged  # noqa: F401 (a fixture)

FORMATS = ["jsonl", "ctf", "parquet", "perfetto", "chrome"]


def cli_convert(inputs, out: Path, to: str, *extra: str):
    r = subprocess.run(
        [str(cli()), "convert", "-q", "--to", to, "-o", str(out), *extra, *map(str, inputs)],
        capture_output=True,
    )
    assert r.returncode in (0, 1), r.stderr.decode(errors="replace")
    return r


def files(d: Path):
    return sorted(p.relative_to(d) for p in d.rglob("*") if p.is_file())


def same_parquet(a: Path, b: Path):
    import pyarrow.parquet as pq

    assert files(a) == files(b)
    for f in files(a):
        if f.suffix == ".parquet":
            assert pq.read_table(a / f).equals(pq.read_table(b / f)), f
        else:
            assert (a / f).read_bytes() == (b / f).read_bytes(), f


def same(to: str, a: Path, b: Path):
    if to == "parquet":
        same_parquet(a, b)
    elif to == "ctf":
        assert files(a) == files(b) and files(a)
        for f in files(a):
            assert (a / f).read_bytes() == (b / f).read_bytes(), f
    else:
        assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("to", FORMATS)
def test_same_as_cli(fixture, to, tmp_path):
    _, path = fixture
    want = tmp_path / "cli"
    cli_convert([path], want, to)
    got = tmp_path / "py"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tracemux.TraceWarning)
        s = tracemux.convert(path, got, to)
    same(to, want, got)
    assert not list(tmp_path.glob(".*tracemux-tmp*"))
    if s["copied"] is None and to == "jsonl":
        lines = got.read_text().splitlines()
        assert s["events"] == sum('"type":"event"' in line for line in lines)
        assert s["lost_markers"] == len(lines) - s["events"]
    elif s["copied"] is not None:
        assert s["events"] is None and s["copied"]["files"] > 0


def test_options_as_cli(tmp_path):
    """Selection, a partitioned dataset and the Perfetto options."""
    path = dict(FIXTURES)["tracedat-v6-sched-irq-timer"]
    cases = [
        ("jsonl", {"events": ["sched_switch", "irq:irq_handler_entry"]},
         ["--events", "sched_switch,irq:irq_handler_entry"]),
        ("perfetto", {"full_sched": True, "named_generic": True, "compress": True},
         ["--full-sched", "--named-generic", "--compress"]),
        ("parquet", {"partition": True}, ["--partition"]),
        ("parquet", {"events_table": False}, ["--no-events-table"]),
        ("tracedat", {"file_version": 6}, ["--file-version", "6"]),
        ("ctf2", {}, []),
        ("parquet", {"layout": "shared"}, ["--layout", "shared"]),
        ("parquet", {"partition": True, "schema": "portable", "file_size": 1 << 20},
         ["--partition", "--schema", "portable", "--file-size", str(1 << 20)]),
    ]
    for i, (to, kw, flags) in enumerate(cases):
        want, got = tmp_path / f"cli-{to}-{i}", tmp_path / f"py-{to}-{i}"
        cli_convert([path], want, to, *flags)
        s = tracemux.convert([path], got, to, **kw)
        same({"ctf2": "ctf", "tracedat": "jsonl"}.get(to, to), want, got)
        assert s["events"] > 0 and s["damage"] == 0
    assert not (tmp_path / "py-parquet-3" / "events.parquet").exists()
    assert (tmp_path / "py-parquet-3" / "sched__sched_switch.parquet").exists()
    # begin/end: the events of the window only
    recs = [l for l in (tmp_path / "py-jsonl-0").read_text().splitlines()]
    assert recs
    first = tracemux.convert(path, tmp_path / "all.jsonl", "jsonl")
    ts = sorted(e.ts for e in tracemux.open(path).events())
    mid = ts[len(ts) // 2]
    s = tracemux.convert(path, tmp_path / "late.jsonl", "jsonl", begin=mid)
    assert s["events"] == sum(t >= mid for t in ts)
    assert s["skipped"] == first["events"] - s["events"]
    cli_convert([path], tmp_path / "late-cli.jsonl", "jsonl", "--begin", str(mid))
    assert (tmp_path / "late.jsonl").read_bytes() == (tmp_path / "late-cli.jsonl").read_bytes()


def test_existing_output_needs_force(tmp_path):
    path = FIXTURES[0][1]
    out = tmp_path / "out.jsonl"
    out.write_text("keep")
    with pytest.raises(tracemux.TraceError):
        tracemux.convert(path, out, "jsonl")
    assert out.read_text() == "keep"
    s = tracemux.convert(path, out, "jsonl", force=True)
    assert out.read_text() != "keep" and s["events"] > 0


def test_bad_arguments(tmp_path):
    path = FIXTURES[0][1]
    with pytest.raises(ValueError):
        tracemux.convert(path, tmp_path / "x", "svg")
    with pytest.raises(ValueError):
        tracemux.convert(path, tmp_path / "x", "tracedat", compression="lz4")
    with pytest.raises(ValueError):
        tracemux.convert(path, tmp_path / "x", "parquet", layout="flat")
    with pytest.raises(ValueError):
        tracemux.convert(path, tmp_path / "x", "parquet", schema="wide")
    with pytest.raises(ValueError):
        tracemux.convert(path, tmp_path / "x", "parquet", file_size=0)
    with pytest.raises(tracemux.TraceError):
        tracemux.convert(tmp_path / "missing", tmp_path / "x", "jsonl")
    assert not (tmp_path / "x").exists()


def test_damage(damaged, tmp_path):  # noqa: F811
    path, _ = damaged
    want = tmp_path / "cli.jsonl"
    cli_convert([path], want, "jsonl")
    with pytest.warns(tracemux.TraceWarning) as w:
        s = tracemux.convert(path, tmp_path / "py.jsonl", "jsonl")
    assert s["damage"] > 0 and len(w) == s["damage"]
    assert any(str(path) in str(x.message) for x in w)
    assert (tmp_path / "py.jsonl").read_bytes() == want.read_bytes()
    out = tmp_path / "strict.jsonl"
    with pytest.raises(tracemux.TraceError) as e:
        tracemux.convert(path, out, "jsonl", strict=True)
    assert e.value.file == str(path)
    assert not out.exists() and not list(tmp_path.glob(".*tracemux-tmp*"))
