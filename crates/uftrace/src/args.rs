//! Formatting argument and return values as uftrace prints them.
