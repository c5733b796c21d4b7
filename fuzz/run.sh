#!/usr/bin/env bash
# A fuzzing campaign: fuzz/run.sh MINUTES [TARGET...]
#
# Runs each cargo-fuzz target (all when none is named) for MINUTES, one
# after the other, on its corpus fuzz/corpus/TARGET (seeded from the
# repository's fixtures and the kept seeds fuzz/seeds/TARGET when it is
# empty), then minimises the corpus (`cargo fuzz cmin`), keeps its smallest
# inputs up to SEED_KB (200) kB and 500 files in fuzz/seeds/TARGET (committed: they carry
# the coverage of the runs so far to a fresh clone), and prints executions,
# time and coverage per target.
# A crash stops the campaign with a non-zero status; libFuzzer keeps the
# input under fuzz/artifacts/TARGET/.
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`); RUSTC_BOOTSTRAP=1 lets the
# stable toolchain take the sanitizer flags cargo-fuzz passes.
set -euo pipefail

if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; then
    echo "usage: $0 MINUTES [TARGET...]" >&2
    exit 2
fi
MINUTES=$1
shift
SECONDS_EACH=$(awk -v m="$MINUTES" 'BEGIN { s = int(m * 60); print (s < 1 ? 1 : s) }')

FUZZ=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$FUZZ")
FIX=$ROOT/tests/fixtures
export RUSTC_BOOTSTRAP=1
cd "$FUZZ"

if [ $# -gt 0 ]; then
    TARGETS=("$@")
else
    mapfile -t TARGETS < <(cargo fuzz list)
fi

# Inputs longer than this are cut by libFuzzer.
max_len() {
    case $1 in
        tracedat | convert | ctf_stream | uftrace_records | uftrace_info | uftrace_kernel | ltt | perf) echo 262144 ;;
        *) echo 65536 ;;
    esac
}

# Extra libFuzzer flags: the slow targets (tens of executions a second)
# would otherwise keep their inputs a few bytes long for minutes.
extra_flags() {
    case $1 in
        convert | to_*) echo -len_control=0 ;;
        *) echo -len_control=100 ;;
    esac
}

# Copy a file into the corpus under a name made from its path.
seed_file() { # DIR FILE
    local name=${2#"$FIX"/}
    cp "$2" "$1/seed-${name//\//_}"
}

# Seed fuzz/corpus/TARGET from the fixtures, in the layout the target reads.
seed() { # TARGET DIR
    local t=$1 d=$2 f
    case $t in
        tracedat)
            while IFS= read -r f; do seed_file "$d" "$f"; done \
                < <(find "$FIX" -name trace.dat -size -256k | sort)
            ;;
        page)
            # the first pages of each CPU's data: every 4096-byte block of
            # the small fixtures (most are pages or page-like)
            python3 - "$d" "$FIX"/synthetic/be-v6/trace.dat "$FIX"/synthetic/instances-v6/trace.dat \
                "$FIX"/report-options/v6/trace.dat <<'PY'
import sys, hashlib
out = sys.argv[1]
for p in sys.argv[2:]:
    b = open(p, 'rb').read()
    for i in range(0, len(b), 4096):
        blk = b[i:i + 4096]
        if len(blk) == 4096 and any(blk[16:]):
            open(f"{out}/seed-page-{hashlib.sha1(blk).hexdigest()[:12]}", 'wb').write(blk)
PY
            ;;
        format)
            python3 - "$d" "$FIX" <<'PY'
import sys, os, re
out, fix = sys.argv[1], sys.argv[2]
# the format texts the fixtures' dumps print (name: ... print fmt: ...)
n = 0
for root, _, files in os.walk(fix):
    for f in files:
        if not (f.endswith('.txt') and 'dump' in f):
            continue
        t = open(os.path.join(root, f), 'rb').read().decode('utf-8', 'replace')
        for m in re.finditer(r'name: \S+\nID: \d+\nformat:\n.*?print fmt: [^\n]*\n', t, re.S):
            open(f"{out}/seed-format-{n}", 'w').write(m.group(0))
            n += 1
            if n >= 200:
                sys.exit(0)
PY
            cat > "$d/seed-header-page" <<'TXT'
	field: u64 timestamp;	offset:0;	size:8;	signed:0;
	field: local_t commit;	offset:8;	size:8;	signed:1;
	field: int overwrite;	offset:8;	size:1;	signed:1;
	field: char data;	offset:16;	size:4080;	signed:1;
TXT
            cat > "$d/seed-format-sched-switch" <<'TXT'
name: sched_switch
ID: 316
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:char prev_comm[16];	offset:8;	size:16;	signed:0;
	field:pid_t prev_pid;	offset:24;	size:4;	signed:1;
	field:int prev_prio;	offset:28;	size:4;	signed:1;
	field:long prev_state;	offset:32;	size:8;	signed:1;
	field:char next_comm[16];	offset:40;	size:16;	signed:0;
	field:pid_t next_pid;	offset:56;	size:4;	signed:1;
	field:int next_prio;	offset:60;	size:4;	signed:1;
	field:__data_loc char[] name;	offset:64;	size:4;	signed:0;

print fmt: "prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d %s", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x0000 | 0x0001 | 0x0002) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x0000 | 0x0001 | 0x0002) + 1) << 1) - 1), "|", { 0x0001, "S" }, { 0x0002, "D" }) : "R", REC->prev_state & (((0x0000 | 0x0001 | 0x0002) + 1) << 1) ? "+" : "", REC->next_comm, REC->next_pid, REC->next_prio, __get_str(name)
TXT
            ;;
        perf)
            for f in "$FIX"/perf/*/perf.data; do seed_file "$d" "$f"; done
            ;;
        ltt)
            # 4 bytes of split points, then facilities_0, cpu_0, cpu_2
            python3 - "$d" "$FIX"/ltt/hand-built <<'PY'
import sys, re, struct
out, dir = sys.argv[1], sys.argv[2]
def unhex(p):
    b = bytearray()
    for line in open(p):
        line = line.split('#', 1)[0]
        for tok in line.split():
            m = re.fullmatch(r'([0-9a-fA-F]{2})(?:\*(\d+))?', tok)
            if m:
                b += bytes([int(m.group(1), 16)]) * int(m.group(2) or 1)
    return bytes(b)
fac = unhex(f"{dir}/control/facilities_0.hex")
c0 = unhex(f"{dir}/cpu_0.hex")
c2 = unhex(f"{dir}/cpu_2.hex")
a, b = len(fac), len(fac) + len(c0)
open(f"{out}/seed-ltt-hand-built", 'wb').write(struct.pack('<HH', a, b) + fac + c0 + c2)
open(f"{out}/seed-ltt-one-cpu", 'wb').write(struct.pack('<HH', a, b) + fac + c0)
PY
            ;;
        uftrace_records)
            # 6 bytes of skips (none), then a task's records
            for f in "$FIX"/uftrace/corpus/*/uftrace.data/[0-9]*.dat; do
                local n=${f#"$FIX"/uftrace/corpus/}
                { printf '\0\0\0\0\0\0'; cat "$f"; } > "$d/seed-${n//\//_}"
            done
            ;;
        uftrace_kernel)
            # the header's and CPU 0's lengths, then kernel_header and the
            # two kernel-cpu files of each synthetic kernel fixture
            python3 - "$d" "$FIX"/uftrace/kernel <<'PY'
import sys, glob, struct
out, base = sys.argv[1], sys.argv[2]
for dd in sorted(glob.glob(f"{base}/*/uftrace.data")):
    rd = lambda n: open(f"{dd}/{n}", 'rb').read()[:65535]
    h, c0, c1 = rd("kernel_header"), rd("kernel-cpu0.dat"), rd("kernel-cpu1.dat")
    name = dd.split('/')[-2]
    open(f"{out}/seed-{name}", 'wb').write(struct.pack('<HH', len(h), len(c0)) + h + c0 + c1)
PY
            ;;
        uftrace_info)
            # 4 cut lengths (and 2 spare bytes), then info, task.txt, a map,
            # a .sym and a .dbg
            python3 - "$d" "$FIX"/uftrace/corpus <<'PY'
import sys, os, glob, struct
out, corpus = sys.argv[1], sys.argv[2]
for dd in sorted(glob.glob(f"{corpus}/*/uftrace.data")):
    rd = lambda p: open(p, 'rb').read() if p and os.path.exists(p) else b''
    first = lambda pat: (sorted(glob.glob(f"{dd}/{pat}")) or [None])[0]
    syms = sorted(glob.glob(f"{dd}/*.sym"), key=os.path.getsize)
    parts = [rd(f"{dd}/info"), rd(f"{dd}/task.txt"), rd(first("sid-*.map")),
             rd(syms[0] if syms else None), rd(first("*.dbg"))]
    parts = [p[:65535] for p in parts]
    head = struct.pack('<HHHHH', *[len(p) for p in parts[:4]], 0)
    name = dd.split('/')[-2]
    open(f"{out}/seed-{name}", 'wb').write(head + b''.join(parts))
PY
            ;;
        uftrace_demangle)
            # mangled names from the fixtures' symbol files
            python3 - "$d" "$FIX"/uftrace/corpus <<'PY'
import sys, glob
out, corpus = sys.argv[1], sys.argv[2]
names = set()
for p in glob.glob(f"{corpus}/*/uftrace.data/*.sym"):
    for line in open(p, errors='replace'):
        w = line.split()
        if len(w) >= 3 and w[-1].startswith('_Z'):
            names.add(w[-1])
for i, n in enumerate(sorted(names)[:300]):
    open(f"{out}/seed-sym-{i}", 'w').write(n)
for i, n in enumerate(["_GLOBAL__sub_I_main", "_ZN6Server17framebufferHeightEv.cold",
                       "_ZNSt6vectorIiSaIiEE9push_backERKi.part.0", "_ZL3fooi.constprop.0"]):
    open(f"{out}/seed-extra-{i}", 'w').write(n)
PY
            ;;
        ctf_tsdl)
            # plain-text TSDL metadata (packetized streams are skipped)
            while IFS= read -r f; do
                if head -c 8 "$f" | grep -q '/\* CTF'; then seed_file "$d" "$f"; fi
            done < <(find "$FIX"/ctf -name metadata -size -64k | sort)
            ;;
        ctf_json)
            while IFS= read -r f; do seed_file "$d" "$f"; done \
                < <(find "$FIX"/ctf2 -name metadata -size -64k | sort | head -100)
            ;;
        ctf_stream)
            # the pick byte, then a data stream file of a fixture trace
            # (0: the LTTng-UST TSDL metadata, whose streams these are)
            local i=0
            while IFS= read -r f; do
                { printf '\0'; cat "$f"; } > "$d/seed-stream-$i"
                i=$((i + 1))
            done < <(find "$FIX"/ctf/lttng-ust-uid "$FIX"/ctf/lttng-ust-overwrite-small -type f \
                -name 'ch*' -not -name '*.idx' -size -128k | sort)
            ;;
        convert)
            # the pick byte (fixture, CTF 2, small packets), no damage
            for s in 0 1 2 3 64 129 195; do
                printf "\\x$(printf %02x $s)" > "$d/seed-pick-$s"
            done
            printf '\x03\0\x20\0\0' > "$d/seed-ctf-cut"
            ;;
        to_*)
            # the pick byte (fixture in the low 4 bits: 6 trace.dat files,
            # perf.data, the CTF stream; options in the high 4), no damage
            for s in 0 1 2 3 4 5 6 7 16 33 66 103 130; do
                printf "\\x$(printf %02x $s)" > "$d/seed-pick-$s"
            done
            ;;
        jsonl_model)
            # a few visitor sequences: scope, struct, leaves, arrays, enums
            printf '\x03\x46\x02\x00\x0b\x00\x00\x2a\x00\x00\x00\x00\x00\x00\x00\x03\x01' > "$d/seed-0"
            printf '\x0f\x04\x05\x03\x0b\x03\x04\x04ab\n\x05\x0a\x01\x00\x07\x00\x00\x00\x00\x00\x00\x00\x02\x00\x01' > "$d/seed-1"
            printf '\x01\x06\x06\x01\x0b\x02\x02\x00\x00\x00\x00\x00\x00\xf0\x3f\x07\x08\x00\x0b\x06\x06\x02\x0c\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x09' > "$d/seed-2"
            ;;
        *)
            echo "no seeds for $t" >&2
            ;;
    esac
}

# Keep the smallest inputs of the minimised corpus, up to SEED_KB kB and
# 500 files.
keep_seeds() { # TARGET CORPUS
    local dir=$FUZZ/seeds/$1 budget=$((${SEED_KB:-200} * 1024)) used=0 n=0 f size
    rm -rf "$dir"
    mkdir -p "$dir"
    while IFS= read -r f; do
        size=$(stat -c %s "$2/$f")
        [ $((used + size)) -gt "$budget" ] && break
        [ "$n" -ge 500 ] && break
        n=$((n + 1))
        cp "$2/$f" "$dir/$f"
        used=$((used + size))
    done < <(ls -S -r "$2")
}

SUMMARY=()
status=0
for t in "${TARGETS[@]}"; do
    corpus=$FUZZ/corpus/$t
    mkdir -p "$corpus" "$FUZZ/artifacts/$t"
    if [ -z "$(ls -A "$corpus")" ]; then
        seed "$t" "$corpus"
        if [ -d "$FUZZ/seeds/$t" ]; then
            cp -r "$FUZZ/seeds/$t"/. "$corpus"/
        fi
    fi
    log=$FUZZ/artifacts/$t/run.log
    echo "== $t: ${SECONDS_EACH}s, corpus $(ls "$corpus" | wc -l) inputs" >&2
    set +e
    cargo fuzz run -O "$t" "$corpus" -- -max_total_time="$SECONDS_EACH" \
        -max_len="$(max_len "$t")" -timeout=25 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
        -print_final_stats=1 "$(extra_flags "$t")" >"$log" 2>&1
    rc=$?
    set -e
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | grep -o 'in [0-9]*' | grep -o '[0-9]*' | tail -1)
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
    line="$t: ${execs:-?} executions in ${secs:-?} s, ${cov:-cov: ?}"
    if [ $rc -ne 0 ]; then
        tail -40 "$log" >&2
        echo "$line: CRASH (rc $rc), input kept under fuzz/artifacts/$t/ (log: $log)" >&2
        SUMMARY+=("$line: CRASH")
        status=1
        break
    fi
    # minimise the corpus (cargo-fuzz merges it into a fresh one and swaps)
    cargo fuzz cmin -O "$t" "$corpus" -- -max_len="$(max_len "$t")" -timeout=25 \
        >"$FUZZ/artifacts/$t/cmin.log" 2>&1 || echo "$t: cmin failed (see artifacts/$t/cmin.log)" >&2
    keep_seeds "$t" "$corpus"
    line="$line, corpus $(ls "$corpus" | wc -l) inputs / $(du -sk --apparent-size "$corpus" | cut -f1) kB"
    line="$line, kept $(ls "$FUZZ/seeds/$t" | wc -l) seeds / $(du -sk --apparent-size "$FUZZ/seeds/$t" | cut -f1) kB"
    echo "$line" >&2
    SUMMARY+=("$line")
done

echo
echo "summary (${SECONDS_EACH}s per target):"
printf '  %s\n' "${SUMMARY[@]}"
exit $status
