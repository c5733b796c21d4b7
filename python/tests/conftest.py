"""Fixtures of every format (the list of tests/convert/fixtures.sh) and the
tracemux binary of the workspace, whose `report --json` is the reference."""

import functools
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli() -> Path:
    """The `tracemux` binary: $TRACEMUX_BIN, else the workspace's release build."""
    p = Path(os.environ.get("TRACEMUX_BIN", ROOT / "target" / "release" / "tracemux"))
    if not p.exists():
        raise RuntimeError(f"{p}: build the CLI first (cargo build --release)")
    return p


def assemble_ltt(dst: Path) -> Path:
    """The hand-built LTT trace from its annotated hex dumps (the same
    syntax fixtures.sh reads: `#` comments, `BYTE*N` repeats)."""
    src = ROOT / "tests" / "fixtures" / "ltt" / "hand-built"
    (dst / "control").mkdir(parents=True, exist_ok=True)
    for f in ["control/facilities_0", "cpu_0", "cpu_2"]:
        out = bytearray()
        for line in (src / f"{f}.hex").read_text().splitlines():
            for tok in line.split("#", 1)[0].split():
                byte, _, n = tok.partition("*")
                out += bytes.fromhex(byte) * (int(n) if n else 1)
        (dst / f).write_bytes(bytes(out))
    return dst


def fixture_list(tmp: Path):
    """(name, path) of every fixture of every format."""
    fx = ROOT / "tests" / "fixtures"
    out = []
    for d in sorted(list((fx / "tracedat").iterdir()) + list((fx / "synthetic").iterdir())):
        if (d / "trace.dat").is_file():
            out.append((f"{d.parent.name}-{d.name}", d / "trace.dat"))
    for d in sorted((fx / "ctf").iterdir()):
        if (d / "trace").is_dir():
            out.append((f"ctf-{d.name}", d / "trace"))
    for base in ["recorded", "corpus"]:
        for d in sorted((fx / "uftrace" / base).iterdir()):
            if (d / "uftrace.data" / "info").is_file():
                out.append((f"uftrace-{d.name}", d / "uftrace.data"))
    out.append(("ltt-hand-built", assemble_ltt(tmp / "ltt-hand-built")))
    return out


_TMP = Path(os.environ.get("TRACEMUX_PYTEST_TMP", "/tmp")) / f"tracemux-pytest-{os.getpid()}"
FIXTURES = fixture_list(_TMP)


@functools.lru_cache(maxsize=None)
def report_json(path: Path):
    """`tracemux report --json PATH` as a list of records, and the exit code."""
    r = subprocess.run([str(cli()), "report", "--json", str(path)], capture_output=True)
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    return recs, r.returncode, r.stderr.decode(errors="replace")


@pytest.fixture(params=FIXTURES, ids=[n for n, _ in FIXTURES])
def fixture(request):
    return request.param
