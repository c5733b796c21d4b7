"""tracemux: read any Linux trace (trace-cmd trace.dat, CTF and LTTng,
uftrace data, legacy LTT) as events and as Arrow tables.

    >>> import tracemux
    >>> t = tracemux.open("trace.dat")
    >>> df = t.table("sched_switch").to_pandas()

Tables speak the Arrow PyCapsule protocol (``__arrow_c_stream__``), so
``pyarrow.table(tbl)``, ``polars.DataFrame(tbl)`` and duckdb read them
directly; each read scans the trace anew.
"""

from ._native import (  # noqa: F401
    Event,
    EventIterator,
    Lost,
    Table,
    Trace,
    TraceError,
    TraceWarning,
    __version__,
    convert,
    open,
)

__all__ = [
    "Event",
    "EventIterator",
    "Lost",
    "Table",
    "Trace",
    "TraceError",
    "TraceWarning",
    "convert",
    "open",
]
