#!/usr/bin/env bash
# The Python package's CI step (called by .ci/run after the workspace's
# tests, which built target/release/tracemux, the tests' reference): a
# venv, the package installed the way the README says (`pip install
# ./python`), and its pytest suite over every format's fixtures.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${TRACEMUX_VENV:-target/python-venv}
# absolute: cargo runs pyo3's build script in another directory
case $venv in /*) ;; *) venv=$PWD/$venv ;; esac
python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q maturin pytest pyarrow pandas polars duckdb
cargo fmt --manifest-path python/Cargo.toml -- --check
PYO3_PYTHON=$venv/bin/python CARGO_TARGET_DIR=$PWD/target \
    cargo clippy --release --manifest-path python/Cargo.toml -- -D warnings
# The package's own workspace builds in the main target directory, so the
# tracemux crates the main build compiled are reused where their features
# match.
# Without the feature sql (DataFusion): `Trace.sql()`'s tests skip here and
# run in tests/sql/test-sql.sh (PYTHON_FEATURES=sql python/ci.sh).
MATURIN_PEP517_ARGS="${PYTHON_FEATURES:+--features $PYTHON_FEATURES}" CARGO_TARGET_DIR=$PWD/target \
    "$venv/bin/pip" install -q --force-reinstall --no-deps ./python
TRACEMUX_EXPECT_SQL=$([ "${PYTHON_FEATURES:-}" = sql ] && echo 1 || echo 0) \
    "$venv/bin/python" -m pytest -q -rs python/tests
