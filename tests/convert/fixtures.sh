# Shared by the oracle scripts of tests/convert: the fixtures of every
# format, one "NAME PATH" per line. Source it after setting $tmp (a scratch
# directory); `fixtures_ltt` assembles the hand-built LTT trace there first.

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
