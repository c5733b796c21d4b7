# Shared by the recipes (record-*.sh). Source it, then:
#
# recipe_args NAME DEFAULT_ROUNDS OUTDIR [ROUNDS] [THREADS]: out (OUTDIR made
# absolute, its parent created; usage and exit when it is missing), rounds
# (default DEFAULT_ROUNDS), threads (default 2), and work, a scratch
# directory removed at exit.
recipe_args() {
    local name=$1 default_rounds=$2
    shift 2
    if [ $# -lt 1 ]; then
        echo "usage: $name OUTDIR [ROUNDS] [THREADS]" >&2
        exit 2
    fi
    rounds=${2:-$default_rounds}
    threads=${3:-2}
    mkdir -p "$(dirname "$1")"
    out=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
}
