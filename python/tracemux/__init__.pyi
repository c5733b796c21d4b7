"""Type hints for tracemux (the extension module tracemux._native)."""

from os import PathLike
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

__version__: str

_Path = Union[str, "PathLike[str]"]

class TraceError(Exception):
    """A trace could not be read (or, with strict=True, is damaged)."""

    file: Optional[str]
    section: Optional[str]
    offset: Optional[int]

class TraceWarning(UserWarning):
    """Damaged input that was skipped; reading went on after it."""

class Event:
    """One event. `fields` is the payload exactly as `tracemux report --json` gives it."""

    ts: int
    cpu: int
    pid: int
    comm: Optional[str]
    system: Optional[str]
    name: Optional[str]
    type_id: int
    @property
    def fields(self) -> Dict[str, Any]: ...
    @property
    def fields_json(self) -> bytes: ...
    def as_dict(self) -> Dict[str, Any]: ...

class Lost:
    """Events lost before `ts` on `cpu` (only with `events(lost=True)`);
    `count` when the tracer counted them."""

    ts: int
    cpu: int
    buffer: str
    count: Optional[int]
    def as_dict(self) -> Dict[str, Any]: ...

class EventIterator(Iterator[Union[Event, Lost]]):
    def __iter__(self) -> "EventIterator": ...
    def __next__(self) -> Union[Event, Lost]: ...
    def close_(self) -> None: ...

class Table:
    """One table of a trace, read anew on every scan (Arrow PyCapsule protocol)."""

    @property
    def name(self) -> str: ...
    @property
    def columns(self) -> List[str]: ...
    def __arrow_c_schema__(self) -> object: ...
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...
    def to_arrow(self) -> Any:
        """A pyarrow.Table (needs pyarrow)."""
    def to_pandas(self) -> Any:
        """A pandas.DataFrame (needs pyarrow and pandas)."""
    def to_polars(self) -> Any:
        """A polars.DataFrame (needs polars)."""
    def num_rows(self) -> int: ...

class Trace:
    """A trace opened with tracemux.open()."""

    @property
    def format(self) -> str: ...
    @property
    def paths(self) -> List[str]: ...
    @property
    def cpus(self) -> int: ...
    @property
    def clocks(self) -> List[Dict[str, Any]]: ...
    @property
    def time_range(self) -> Optional[Tuple[int, int]]: ...
    def info(self) -> Dict[str, Any]: ...
    def event_classes(self) -> List[Dict[str, Any]]: ...
    def events(
        self,
        begin: Optional[int] = None,
        end: Optional[int] = None,
        events: Optional[Sequence[str]] = None,
        cpus: Optional[Sequence[int]] = None,
        pids: Optional[Sequence[int]] = None,
        lost: bool = False,
    ) -> EventIterator: ...
    def table(
        self,
        name: str,
        columns: Optional[Sequence[str]] = None,
        begin: Optional[int] = None,
        end: Optional[int] = None,
        cpus: Optional[Sequence[int]] = None,
        pids: Optional[Sequence[int]] = None,
        limit: Optional[int] = None,
    ) -> Table: ...
    def tables(self) -> Dict[str, Table]: ...
    def report(self, style: str = "json") -> str: ...
    def sql(self, query: str) -> Any:
        """Run a SQL statement (DataFusion) over the trace's tables; a
        pyarrow.Table. Needs the package built with the cargo feature sql."""

def open(path: Union[_Path, Sequence[_Path]], strict: bool = False) -> Trace:
    """Open a trace of any format (trace.dat, CTF/LTTng, uftrace, LTT), recognised by content."""

def convert(
    inputs: Union[_Path, Sequence[_Path]],
    output: _Path,
    to: str,
    *,
    force: bool = False,
    strict: bool = False,
    begin: Optional[int] = None,
    end: Optional[int] = None,
    events: Optional[Sequence[str]] = None,
    file_version: int = 7,
    compression: str = "zstd",
    reencode: bool = False,
    partition: bool = False,
    events_table: bool = True,
    full_sched: bool = False,
    named_generic: bool = False,
    compress: bool = False,
    layout: Optional[str] = None,
    schema: Optional[str] = None,
    file_size: Optional[int] = None,
) -> Dict[str, Any]:
    """Convert trace(s) as `tracemux convert` does, with the same output.

    `to` is "ctf", "ctf2", "tracedat", "jsonl", "perfetto", "chrome" or
    "parquet"; `output` a directory for CTF and Parquet, a file for the
    others, written under a temporary name and renamed when complete (an
    existing output raises TraceError unless `force=True`). `begin`/`end`
    (ns) and `events` ("name" or "system:name") select events; the other
    options are the CLI's (`--file-version`, `--compression`, `--reencode`,
    `--partition`, `--full-sched`, `--named-generic`, `--compress`;
    `events_table=False` is `--no-events-table`; `layout` "hive" or
    "shared", `schema` "native" or "portable" and `file_size` (bytes) are
    `--layout`, `--schema` and `--file-size`).
    Damage is a TraceWarning (with `strict=True`, a TraceError); Ctrl-C
    stops the conversion and leaves no output.

    Returns {"events", "skipped", "lost_markers", "lost_events", "damage",
    "copied"}: for CTF to CTF with nothing selected the packets are copied
    as they are, "events" is None and "copied" holds {"traces", "files",
    "bytes"}; otherwise "copied" is None.
    """
