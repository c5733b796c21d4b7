"""tracemux: read any Linux trace (trace-cmd trace.dat, CTF and LTTng,
uftrace data, legacy LTT) as events and as Arrow tables.

    >>> import tracemux
    >>> t = tracemux.open("trace.dat")
    >>> df = t.table("sched_switch").to_pandas()

The tables speak the Arrow PyCapsule protocol (``__arrow_c_stream__``), so
``pyarrow.table(tbl)``, ``polars.DataFrame(tbl)`` and ``duckdb`` read them
without copies.
"""

from ._native import *  # noqa: F401,F403
from ._native import __version__, open, TraceError, TraceWarning  # noqa: F401
