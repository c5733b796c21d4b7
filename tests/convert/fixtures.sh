# Shared by the oracle scripts of tests/convert: the fixtures of every
# format, one "NAME PATH" per line. Source it after setting $root (the
# repository) and $tmp (a scratch directory); `fixtures_ltt` assembles the
# hand-built LTT trace there first (or call `prepare`).

# prepare: $tmp (a scratch directory removed at exit), $tm (tracemux_copy)
# and the LTT fixture (fixtures_ltt).
prepare() {
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    tracemux_copy
    fixtures_ltt
}

# tracemux_copy: $tm, the tracemux to check ($TRACEMUX, else the debug build,
# built when missing), copied into $tmp: builds by others may relink the
# shared binary meanwhile. Exits 2 when it cannot be built.
tracemux_copy() {
    tm=${TRACEMUX:-$root/target/debug/tracemux}
    [ -x "$tm" ] || cargo build -q -p tracemux || exit 2
    cp "$tm" "$tmp/tracemux" && tm=$tmp/tracemux
}

# each_fixture TO EXT CHECK [NAME...]: every fixture of fixtures_list
# (only the NAMEd ones when there are any) that has events converted
# `--to TO` into $tmp/NAME.EXT, then `CHECK NAME PATH OUTPUT`; "NAME: no
# events" for those that have none.
each_fixture() {
    to=$1 ext=$2 check=$3
    shift 3
    fixtures_list | while read -r name src; do
        if [ $# -gt 0 ]; then
            case " $* " in *" $name "*) ;; *) continue ;; esac
        fi
        if [ -z "$("$tm" report --json "$src" 2>/dev/null | head -1)" ]; then
            echo "$name: no events" ; continue
        fi
        "$tm" convert -q --force "$src" --to "$to" -o "$tmp/$name.$ext" 2>/dev/null
        "$check" "$name" "$src" "$tmp/$name.$ext"
    done
}

# counts: ok, fail and empty, the lines of $tmp/summary that say so.
counts() {
    ok=$(grep -c ': OK' "$tmp/summary")
    fail=$(grep -c ': FAIL' "$tmp/summary")
    empty=$(grep -c ': no events' "$tmp/summary")
}

fixtures_ltt() {
    ltt=$tmp/ltt-hand-built
    mkdir -p "$ltt/control"
    for f in control/facilities_0 cpu_0 cpu_2; do
        sed -e 's/#.*//' tests/fixtures/ltt/hand-built/$f.hex | tr -s ' \t' '\n\n' | grep . |
            awk '{ n = 1; b = $0; if (index($0, "*")) { split($0, a, "*"); b = a[1]; n = a[2] }
                   for (i = 0; i < n; i++) printf "%s", b }' | xxd -r -p > "$ltt/$f"
    done
}

fixtures_list() {
    for d in tests/fixtures/tracedat/* tests/fixtures/synthetic/*; do
        [ -f "$d/trace.dat" ] && echo "$(basename "$(dirname "$d")")-$(basename "$d") $d/trace.dat"
    done
    for d in tests/fixtures/ctf/*/trace; do
        [ -d "$d" ] && echo "ctf-$(basename "$(dirname "$d")") $d"
    done
    for d in tests/fixtures/uftrace/recorded/* tests/fixtures/uftrace/corpus/*; do
        [ -f "$d/uftrace.data/info" ] && echo "uftrace-$(basename "$d") $d/uftrace.data"
    done
    echo "ltt-hand-built $tmp/ltt-hand-built"
}
