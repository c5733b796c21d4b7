//! uftrace data directory (`uftrace.data`) reader.
