#!/usr/bin/env bash
# Everything of `tracemux sql` and `Trace.sql()`, which `.ci/run` leaves out
# (DataFusion: a release build of 10-20 minutes on 2 cores). Needs Rust; the
# Python part needs python3 (venv, PyPI), the DuckDB comparison PyPI too.
#
#   tests/sql/test-sql.sh            # all of it
#   tests/sql/test-sql.sh --no-python --no-duckdb
#
# 1. fmt and clippy of crates/sql (its own workspace) and of the CLI with
#    the feature sql; 2. crates/sql's tests (engine on a fixture: derived
#    tables by hand, pushdowns, LIMIT, the projection counter); 3. the CLI's
#    `tracemux sql` tests (crates/cli/tests/sql.rs); 4. the Python package
#    built with `sql` and its pytest suite (tests/test_sql.py against
#    DuckDB); 5. tests/sql/check-sql.sh (tracemux sql vs DuckDB on the
#    Parquet output, and the big trace when there is one).
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
echo "== fmt, clippy (crates/sql, CLI with sql)"
cargo fmt --manifest-path crates/sql/Cargo.toml -- --check
cargo clippy --release --manifest-path crates/sql/Cargo.toml --all-targets -- -D warnings
cargo clippy --release -p tracemux --features sql --all-targets -- -D warnings
echo "== crates/sql tests"
cargo test --release --manifest-path crates/sql/Cargo.toml
echo "== tracemux sql (CLI) tests"
cargo test --release -p tracemux --features sql --test sql
if [ $python = 1 ]; then
    echo "== Python package with sql"
    PYTHON_FEATURES=sql python/ci.sh
fi
if [ $duckdb = 1 ]; then
    echo "== tracemux sql against DuckDB"
    TRACEMUX=$PWD/target/release/tracemux tests/sql/check-sql.sh
fi
