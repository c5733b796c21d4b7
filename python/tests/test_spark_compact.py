"""tracemux.spark's compaction step (`_write_file`), which runs on the
executors with pyarrow only: tested here without Spark (the whole module
runs on Spark in tests/spark/check-spark.sh)."""

import pyarrow as pa
import pyarrow.parquet as pq

from tracemux import spark as tms


def _enum_file(path, groups):
    """A table as tracemux writes an enumeration: `color` a struct of
    value and a dictionary-encoded label, one row group per list of
    labels, so that each row group has its own dictionary."""
    label = pa.dictionary(pa.int32(), pa.string())
    color = pa.struct([("value", pa.int32()), ("label", label)])
    schema = pa.schema([("ts", pa.int64()), ("color", color)])
    with pq.ParquetWriter(path, schema) as w:
        ts = 0
        for labels in groups:
            n = len(labels)
            arr = pa.StructArray.from_arrays(
                [pa.array([len(s) for s in labels], pa.int32()), pa.array(labels).dictionary_encode()],
                fields=list(color),
            )
            w.write_table(pa.table([pa.array(range(ts, ts + n), pa.int64()), arr], schema=schema))
            ts += n
    return schema


def test_rows_of_several_row_groups_with_their_own_dictionaries(tmp_path):
    # row groups smaller than a batch, each with another dictionary: one
    # batch over two of them was pyarrow's "Nested data conversions not
    # implemented for chunked array outputs" (the big LTTng and uftrace
    # traces of bench/bench-fleet.sh)
    groups = [["red", "green"] * 500, ["blue", "cyan", "red"] * 400, ["magenta"] * 700]
    a = str(tmp_path / "a.parquet")
    b = str(tmp_path / "b.parquet")
    schema = _enum_file(a, groups)
    _enum_file(b, groups[::-1])
    assert pq.ParquetFile(a).num_row_groups == 3
    out = str(tmp_path / "t" / "part-00000.parquet")
    fields = [("trace", None), ("host", None)] + [(f.name, f.type) for f in schema]
    tms._write_file((out, fields, [("ta", "h1", a, 0, {}), ("tb", None, b, 0, {})]))
    t = pq.read_table(out)
    want = [s for g in groups for s in g] + [s for g in groups[::-1] for s in g]
    assert t.num_rows == len(want)
    assert t.column("trace").to_pylist() == ["ta"] * (len(want) // 2) + ["tb"] * (len(want) // 2)
    assert t.column("host").to_pylist()[0] == "h1" and t.column("host").to_pylist()[-1] is None
    colors = t.column("color").to_pylist()
    assert [c["label"] for c in colors] == want
    assert [c["value"] for c in colors] == [len(s) for s in want]
    assert t.column("ts").to_pylist()[: len(want) // 2] == list(range(len(want) // 2))
