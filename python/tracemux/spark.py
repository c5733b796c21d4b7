"""Fleets of traces on Apache Spark: convert on the executors, one dataset.

    >>> from tracemux import spark as tms
    >>> summary = tms.convert(spark, paths, "fleet")      # one task per trace
    >>> summary.filter("status != 'ok'").show()
    >>> tms.read(spark, "fleet", "sched__sched_switch").groupBy("trace").count()

`convert` runs `tracemux.convert` on the executors, one Spark task per
trace (the paths must be readable where the executors run: a shared file
system, and the `tracemux` package installed in the executors' Python:
`PYSPARK_PYTHON` names it), each into a staging folder of its own, `DATASET/_staging/`, in
the portable schema (every integer Int64, every float Float64, so that a
table has one schema across kernels, architectures and formats). A trace
converted whole is published by one rename into `DATASET/_traces/NAME`; a
task killed or retried leaves only a staging folder, which nothing reads
and which is removed at the end, and a second attempt of a trace already
published keeps the first one: the dataset is as if each trace had been
converted once. A damaged trace is converted around its damage (status
"damaged", with the count); one that cannot be read is a row of status
"failed" with the error, never a failed job. Each task converts with
as many threads as Spark gives a task cores (`spark.task.cpus`, 1 by
default): `local[N]` and an executor of N cores run N traces at a time.

Then the published traces are compacted into the shared layout of
`tracemux convert --layout shared`, again on the executors, one task per
output file: per table, `DATASET/TABLE/part-NNNNN.parquet`
with `trace` and `host` as first columns, sorted by trace then `ts`, about
`file_size` bytes per file (256 MiB by default; fewer, larger files, and
none smaller than its table needs); a column whose type differs from the
one the first trace (in path order) gave it is renamed `NAME__TYPE`
(`prev_state__string`), as `tracemux convert` does. Each trace's
description goes to `DATASET/_meta/NAME.json`, the summary to
`DATASET/_meta/_summary.json`, the wall time of each phase to
`DATASET/_meta/_timings.json`, and `DATASET/_SUCCESS` is written last: a
dataset is complete when it is there. A run that stopped before its end
is resumed by running it again: traces already published are not
converted again.

The publish is a rename of a folder, atomic on a local or POSIX shared
file system and on HDFS; on object stores without atomic renames (S3),
stage on HDFS or a local shared disk and copy the finished dataset.

`read(spark, dataset, table)` reads one table with the options the layout
needs (no partition type inference, so a trace named `001` stays text).
DuckDB and polars read the same files with no options:
``duckdb.sql("SELECT trace, count(*) FROM 'fleet/sched__sched_switch/*.parquet' GROUP BY 1")``,
``polars.scan_parquet("fleet/sched__sched_switch/*.parquet")``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import uuid
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence

__all__ = ["convert", "read", "trace_names", "SUMMARY_SCHEMA"]

SUMMARY_SCHEMA = (
    "trace string, path string, status string, events long, lost long, "
    "damaged long, seconds double, error string"
)

_DEFAULT_FILE_SIZE = 256 << 20


def trace_names(paths: Sequence[str]) -> List[str]:
    """The dataset's name of each trace: as `tracemux convert` names the
    traces of a dataset (the file's name without `.dat`, or its folder's
    for `trace.dat` and CTF `metadata`; anything but letters, digits,
    `-`, `_`, `.` as `_`), made unique in path order by `-2`, `-3`..."""
    names: List[str] = []
    seen = set()
    for p in paths:
        a = os.path.abspath(os.fspath(p))
        base = os.path.basename(a.rstrip("/"))
        if base in ("trace.dat", "metadata", ""):
            base = os.path.basename(os.path.dirname(a.rstrip("/"))) or "trace"
        elif base.endswith(".dat"):
            base = base[: -len(".dat")]
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", base)
        # the dataset's own folders begin with `_` and `.`: Spark skips those
        if base.startswith(("_", ".")):
            base = "t" + base
        name, k = base, 1
        while name in seen:
            k += 1
            name = f"{base}-{k}"
        seen.add(name)
        names.append(name)
    return names


def _convert_one(
    dataset: str,
    name: str,
    path: str,
    options: Dict[str, Any],
    kill_at: Optional[str],
    attempt: int,
) -> Dict[str, Any]:
    """Convert `path` into its staging folder and publish it as
    `_traces/NAME`; the summary row (also kept as `_summary.json` in the
    published folder, so that a retry of a published trace reports it)."""
    import warnings

    import tracemux

    final = os.path.join(dataset, "_traces", name)
    done = os.path.join(final, "_summary.json")
    if os.path.exists(done):
        with open(done) as f:
            return json.load(f)
    stage = os.path.join(dataset, "_staging", f"{name}.{uuid.uuid4().hex}")
    os.makedirs(os.path.dirname(stage), exist_ok=True)
    row: Dict[str, Any] = {
        "trace": name,
        "path": path,
        "status": "ok",
        "events": None,
        "lost": None,
        "damaged": 0,
        "seconds": 0.0,
        "error": None,
    }
    started = time.monotonic()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            s = tracemux.convert(
                path,
                os.path.join(stage, "data"),
                "parquet",
                partition=True,
                schema="portable",
                **options,
            )
        row["events"] = s.get("events")
        row["lost"] = s.get("lost_events")
        row["damaged"] = int(s.get("damage") or 0)
        if row["damaged"] or caught:
            row["status"] = "damaged"
            if caught:
                row["error"] = str(caught[0].message)
    except Exception as e:  # an unreadable trace is a row, not a failed job
        row["status"] = "failed"
        row["error"] = f"{type(e).__name__}: {e}"
        shutil.rmtree(stage, ignore_errors=True)
        os.makedirs(stage, exist_ok=True)
    row["seconds"] = round(time.monotonic() - started, 3)
    if row["status"] != "failed":
        _rename_trace(os.path.join(stage, "data"), name)
    with open(os.path.join(stage, "_summary.json"), "w") as f:
        json.dump(row, f)
    if kill_at == "staged" and attempt == 0:
        _kill_self()
    try:
        os.makedirs(os.path.dirname(final), exist_ok=True)
        os.rename(stage, final)
    except OSError:
        # another attempt published it first: keep that one
        shutil.rmtree(stage, ignore_errors=True)
        with open(done) as f:
            return json.load(f)
    if kill_at == "published" and attempt == 0:
        _kill_self()
    return row


def _size_of(path: str) -> int:
    """Bytes of a trace (a file, or a folder's files); 0 when the driver
    cannot see it (the executors read it, not the driver)."""
    try:
        if not os.path.isdir(path):
            return os.path.getsize(path)
        return sum(
            os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files
        )
    except OSError:
        return 0


def _kill_self() -> None:
    """(Tests: the worker dies as a killed executor would.)"""
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def _rename_trace(data: str, name: str) -> None:
    """The Hive folders `TABLE/trace=X` and `_meta/X.json` that
    `tracemux.convert` wrote for one trace, renamed to the dataset's
    name of the trace."""
    if not os.path.isdir(data):
        return
    for table in os.listdir(data):
        t = os.path.join(data, table)
        if table == "_meta":
            for m in os.listdir(t):
                if m.endswith(".json"):
                    os.rename(os.path.join(t, m), os.path.join(t, name + ".json"))
            continue
        if not os.path.isdir(t):
            continue
        for part in os.listdir(t):
            if part.startswith("trace=") and part != "trace=" + name:
                os.rename(os.path.join(t, part), os.path.join(t, "trace=" + name))


def _plain(t: Any) -> Any:
    """An Arrow type as Spark sees it (dictionary-encoded text is text)."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        return _plain(t.value_type)
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_binary(t):
        return pa.binary()
    return t


def _type_tag(t: Any) -> str:
    """The suffix of a renamed column, as `tracemux convert --layout
    shared` names it (`utf8`, `int64`, `float64`, `struct`...)."""
    import pyarrow as pa

    if pa.types.is_string(t):
        return "utf8"
    if pa.types.is_binary(t):
        return "binary"
    if pa.types.is_struct(t):
        return "struct"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "list"
    return {"double": "float64", "float": "float32", "bool": "boolean"}.get(str(t), str(t))


def convert(
    spark: Any,
    paths: Iterable[str],
    dataset: str,
    *,
    file_size: int = _DEFAULT_FILE_SIZE,
    strict: bool = False,
    events_table: bool = True,
    begin: Optional[int] = None,
    end: Optional[int] = None,
    events: Optional[Sequence[str]] = None,
    _kill_at: Optional[str] = None,
) -> Any:
    """Convert the traces at `paths` on the executors into the dataset
    `dataset` (a folder all executors and the driver see); returns the
    summary DataFrame (`SUMMARY_SCHEMA`: trace, path, status, events,
    lost, damaged, seconds, error), one row per trace. `strict=True`
    makes a damaged trace a failed row. The other options are
    `tracemux.convert`'s."""
    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise ValueError("no trace given")
    if file_size <= 0:
        raise ValueError(f"file_size: {file_size} bytes")
    dataset = os.path.abspath(dataset)
    if os.path.exists(os.path.join(dataset, "_SUCCESS")):
        raise FileExistsError(f"{dataset}: a complete dataset is there already")
    os.makedirs(dataset, exist_ok=True)
    names = trace_names(paths)
    options: Dict[str, Any] = {"strict": strict, "events_table": events_table}
    for k, v in (("begin", begin), ("end", end), ("events", list(events) if events else None)):
        if v is not None:
            options[k] = v
    # largest first: Spark starts the tasks in partition order, and one big
    # trace started last would leave the other cores idle at the end
    jobs = sorted(zip(names, paths), key=lambda j: -_size_of(j[1]))

    def run(part: Iterator[Any]) -> Iterator[Dict[str, Any]]:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        attempt = ctx.attemptNumber() if ctx is not None else 0
        # a task uses the cores Spark gave it (`spark.task.cpus`, 1 by
        # default), not every core of the machine: the executor runs as
        # many tasks side by side as it has cores
        cpus = ctx.cpus() if ctx is not None else 0
        os.environ["TRACEMUX_THREADS"] = str(max(1, cpus or 1))
        for name, path in part:
            yield _convert_one(dataset, name, path, options, _kill_at, attempt)

    sc = spark.sparkContext
    started = time.monotonic()
    rows = sc.parallelize(jobs, len(jobs)).mapPartitions(run).collect()
    converted = time.monotonic()
    place = {n: i for i, n in enumerate(names)}
    rows.sort(key=lambda r: place[r["trace"]])
    _compact(spark, dataset, [r for r in rows if r["status"] != "failed"], file_size)
    os.makedirs(os.path.join(dataset, "_meta"), exist_ok=True)
    with open(os.path.join(dataset, "_meta", "_summary.json"), "w") as f:
        json.dump(rows, f, indent=1)
    # the two phases' wall times (the fleet benchmark reads them)
    with open(os.path.join(dataset, "_meta", "_timings.json"), "w") as f:
        json.dump(
            {
                "convert_seconds": round(converted - started, 3),
                "compact_seconds": round(time.monotonic() - converted, 3),
            },
            f,
        )
    shutil.rmtree(os.path.join(dataset, "_traces"), ignore_errors=True)
    shutil.rmtree(os.path.join(dataset, "_staging"), ignore_errors=True)
    with open(os.path.join(dataset, "_SUCCESS"), "w"):
        pass
    return spark.createDataFrame(rows, SUMMARY_SCHEMA)


def _compact(spark: Any, dataset: str, rows: List[Dict[str, Any]], file_size: int) -> None:
    """The published traces' tables rewritten as the shared layout, on
    the executors: each output file is one task, which streams its input
    files (consecutive traces in order; each trace's rows are already in
    time order) into one file of the table's schema. No shuffle and no
    sort: a trace's files are read in the order they were written."""
    import pyarrow.parquet as pq

    traces = os.path.join(dataset, "_traces")
    order = [r["trace"] for r in rows]
    hosts: Dict[str, Optional[str]] = {}
    os.makedirs(os.path.join(dataset, "_meta"), exist_ok=True)
    for t in order:
        m = os.path.join(traces, t, "data", "_meta", t + ".json")
        host = None
        if os.path.exists(m):
            with open(m) as f:
                meta = json.load(f)
            host = meta.get("hostname")
            shutil.copyfile(m, os.path.join(dataset, "_meta", t + ".json"))
        hosts[t] = host if isinstance(host, str) else None
    # table -> [(trace, [(file, bytes)], schema)], in trace order
    tables: Dict[str, List[Any]] = {}
    for t in order:
        data = os.path.join(traces, t, "data")
        if not os.path.isdir(data):
            continue
        for table in sorted(os.listdir(data)):
            folder = os.path.join(data, table, "trace=" + t)
            if table.startswith(("_", ".")) or not os.path.isdir(folder):
                continue
            files = [f for f in os.listdir(folder) if f.endswith(".parquet")]
            # part-0, part-1, ... part-10: in the order they were written
            files.sort(key=lambda f: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", f)])
            if not files:
                continue
            files = [(os.path.join(folder, f), os.path.getsize(os.path.join(folder, f))) for f in files]
            schema = pq.read_schema(files[0][0])
            tables.setdefault(table, []).append((t, files, schema))
    renamed: List[Dict[str, str]] = []
    jobs: List[Any] = []
    for table, parts in sorted(tables.items()):
        fields, renames = _table_schema(parts)
        for t, _, schema in parts:
            for name, new in renames[id(schema)].items():
                renamed.append({"table": table, "trace": t, "column": name, "as": new})
        # the rows sorted by trace (by name), then ts (each trace's own order)
        inputs = [
            (t, hosts.get(t), f, n, renames[id(schema)])
            for t, files, schema in sorted(parts, key=lambda p: p[0])
            for f, n in files
        ]
        for k, chunk in enumerate(_bins(inputs, file_size)):
            out = os.path.join(dataset, table, f"part-{k:05d}.parquet")
            jobs.append((sum(i[3] for i in chunk), out, fields, chunk))
    # the largest files first, so that the last tasks are short ones
    jobs.sort(key=lambda j: -j[0])
    sc = spark.sparkContext
    sc.parallelize([j[1:] for j in jobs], max(1, len(jobs))).foreach(_write_file)
    if renamed:
        with open(os.path.join(dataset, "_meta", "_renamed_columns.json"), "w") as f:
            json.dump(renamed, f, indent=1)


def _table_schema(parts: List[Any]) -> Any:
    """A table's columns across traces: `trace`, `host`, then each column
    in the order the traces bring them, of the type the first trace (in
    path order) gave it; a later trace's column of another type is renamed
    `NAME__TYPE`. Returns [(name, type)] and, per schema (by id), its
    renames {column: new name}."""
    first: Dict[str, Any] = {}
    out: List[Any] = [("trace", None), ("host", None)]
    renames: Dict[int, Dict[str, str]] = {}
    for _, _, schema in parts:
        if id(schema) in renames:
            continue
        ren: Dict[str, str] = {}
        for f in schema:
            if f.name in ("trace", "host"):
                continue
            typ = _plain(f.type)
            had = first.get(f.name)
            name = f.name
            if had is not None and had != typ:
                name = f"{f.name}__{_type_tag(typ)}"
                while name in first and first[name] != typ:
                    name += "_2"
                ren[f.name] = name
            if name not in first:
                first[name] = typ
                out.append((name, typ))
        renames[id(schema)] = ren
    return out, renames


def _bins(inputs: List[Any], file_size: int) -> List[List[Any]]:
    """Consecutive input files cut into files of at least about
    `file_size` bytes each (the last is not left small), as evenly as the
    inputs allow: max(1, total // file_size) of them."""
    total = sum(i[3] for i in inputs)
    n = max(1, total // file_size)
    share = total / n
    bins: List[List[Any]] = [[]]
    acc = 0
    for i in inputs:
        if bins[-1] and acc >= share * len(bins) and len(bins) < n:
            bins.append([])
        bins[-1].append(i)
        acc += i[3]
    return bins


def _batches(path: str, batch_size: int = 65536) -> Iterator[Any]:
    """A Parquet file's record batches, one row group at a time. A batch
    must not span row groups: each row group has its own dictionary, and
    pyarrow cannot hand a dictionary column inside a struct (an enum's
    label) over two dictionaries in one batch ("Nested data conversions
    not implemented for chunked array outputs")."""
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    for g in range(f.num_row_groups):
        yield from f.iter_batches(batch_size=batch_size, row_groups=[g])


def _write_file(job: Any) -> None:
    """(On an executor.) One file of a table: its inputs' rows, in order,
    with `trace` and `host` first and the table's columns (renamed, cast
    from dictionary-encoded text, null where a trace lacks them), written
    beside and renamed into place: a retried task leaves one file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out, fields, inputs = job
    schema = pa.schema(
        [pa.field("trace", pa.string()), pa.field("host", pa.string())]
        + [pa.field(n, t) for n, t in fields[2:]]
    )
    columns = list(schema)[2:]
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = f"{out}.{uuid.uuid4().hex}.tmp"
    # row groups of about this many rows (or bytes held, whichever first)
    rows_per_group, bytes_per_group = 1 << 20, 64 << 20
    with pq.ParquetWriter(tmp, schema, compression="zstd") as w:
        held: List[Any] = []
        rows = size = 0
        for trace, host, path, _, ren in inputs:
            for b in _batches(path):
                n = b.num_rows
                have = {ren.get(name, name): b.column(k) for k, name in enumerate(b.schema.names)}
                cols = [pa.array([trace] * n, pa.string()), pa.array([host] * n, pa.string())]
                for f in columns:
                    c = have.get(f.name)
                    cols.append(pa.nulls(n, f.type) if c is None else c.cast(f.type))
                held.append(pa.RecordBatch.from_arrays(cols, schema=schema))
                rows += n
                size += held[-1].nbytes
                if rows >= rows_per_group or size >= bytes_per_group:
                    w.write_table(pa.Table.from_batches(held), row_group_size=rows)
                    held, rows, size = [], 0, 0
        if held:
            w.write_table(pa.Table.from_batches(held), row_group_size=rows)
    os.replace(tmp, out)


def read(spark: Any, dataset: str, table: str) -> Any:
    """One table of a dataset written by `convert` (or by
    `tracemux convert --layout shared|hive`) as a DataFrame: partition
    values kept as text (a trace named `001` stays `001`), `_`-prefixed
    entries skipped (Spark's own rule), schemas of the files merged."""
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    return spark.read.option("mergeSchema", "true").parquet(os.path.join(dataset, table))
