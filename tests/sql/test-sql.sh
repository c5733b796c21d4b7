#!/usr/bin/env bash
# Everything of `tracemux sql` and `Trace.sql()` (DataFusion: a release
# build of 10-20 minutes on 2 cores). `.ci/run` runs all of it but the
# Python package's `Trace.sql()` tests (a second DataFusion build, in the
# package's own workspace), with DataFusion unoptimised. Needs Rust; the
# Python part needs python3 (venv, PyPI), the DuckDB comparison PyPI too.
#
#   tests/sql/test-sql.sh            # all of it
#   tests/sql/test-sql.sh --no-python --no-duckdb
#
# 1. clippy of the workspace with the feature sql (crates/sql's `engine`);
#    2. its tests with it: crates/sql's (engine on a fixture: derived
#    tables by hand, pushdowns, LIMIT, the projection counter) and the
#    CLI's `tracemux sql` tests (crates/cli/tests/sql.rs) among the
#    others; 3. the Python package built with `sql` and its pytest suite
#    (tests/test_sql.py against DuckDB); 4. tests/sql/check-sql.sh
#    (tracemux sql vs DuckDB on the Parquet output, and the big trace when
#    there is one).
set -euo pipefail
cd "$(dirname "$0")/../.."
python=1 duckdb=1
for a in "$@"; do
    case $a in
    --no-python) python=0 ;;
    --no-duckdb) duckdb=0 ;;
    *) echo "usage: $0 [--no-python] [--no-duckdb]" >&2; exit 2 ;;
    esac
done
export CARGO_TARGET_DIR=$PWD/target
echo "== clippy with sql"
cargo clippy --workspace --all-targets --release --features tracemux/sql -- -D warnings
echo "== tests with sql (crates/sql's, tracemux sql's among the workspace's)"
cargo test --workspace --release --features tracemux/sql
if [ $python = 1 ]; then
    echo "== Python package with sql"
    PYTHON_FEATURES=sql python/ci.sh
fi
if [ $duckdb = 1 ]; then
    echo "== tracemux sql against DuckDB"
    TRACEMUX=$PWD/target/release/tracemux tests/sql/check-sql.sh
fi
