#!/usr/bin/env bash
# `jobguard replay` at cluster scale: a generated audit log of Kueue-like traffic, and the history
# of one object growing from 25,000 to 100,000 status writes. Prints, per input, its size, the
# events, the writes decided, the live objects left, the wall and CPU time on one core
# (taskset -c 0), MB/s by each and the peak RSS.
# Usage: bench/replay/run.sh [BUILD_DIR] [-s MB]
#   BUILD_DIR  where src/jobguard is (default build-rel, else build); use a release build
#   -s MB      size of the generated log (default 1100, i.e. over 1 GB)
# Inputs are generated once by bench/replay/gen.py into $JG_BENCH_DIR (default
# /tmp/jobguard-bench-replay) and reused; delete the folder to regenerate.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=""
mb=1100
while [ $# -gt 0 ]; do
    case $1 in
    -s) mb=$2; shift 2 ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) build=$1; shift ;;
    esac
done
if [ -z "$build" ]; then
    if [ -x "$root/build-rel/src/jobguard" ]; then build=$root/build-rel; else build=$root/build; fi
fi
jg=$build/src/jobguard
[ -x "$jg" ] || { echo "bench/replay: no $jg (meson setup build-rel --buildtype=release && ninja -C build-rel)" >&2; exit 2; }
dir=${JG_BENCH_DIR:-/tmp/jobguard-bench-replay}
mkdir -p "$dir"
gen() { # gen KIND ARG OUT
    [ -e "$3" ] && return 0
    echo "generating $3 ..." >&2
    python3 "$here/gen.py" "$1" "$2" "$3.tmp" && mv "$3.tmp" "$3"
}
gen kueue "$mb" "$dir/kueue-$mb.log"
small=$((mb / 10))
gen kueue "$small" "$dir/kueue-$small.log" # the same traffic, a tenth as long: the same live set
for n in 25000 50000 100000; do gen one "$n" "$dir/one-$n.log"; done

policy=$here/policy.json
printf '%-24s %8s %9s %8s %6s %7s %7s %8s %8s %9s\n' input MB events writes live wall-s cpu-s "MB/s" "MB/cpu-s" "peak MiB"
run() { # run LABEL FILE FORMAT: one replay on CPU 0, output to /dev/null (json: counted)
    local label=$1 file=$2 fmt=$3
    local out rc
    out=$(mktemp)
    set +e
    taskset -c 0 /usr/bin/time -f '%e %U %S %M' -o "$out.time" "$jg" replay --policy-file "$policy" -o "$fmt" "$file" >"$out" 2>"$out.err"
    rc=$?
    set -e
    [ "$rc" -le 1 ] || { echo "bench/replay: $label: exit $rc: $(head -c 300 "$out.err")" >&2; }
    local counts="? ? ?"
    if [ "$fmt" = json ]; then
        counts=$(tail -1 "$out" | python3 -c 'import json,sys; s=json.load(sys.stdin)["summary"]; print(s["events"], s["writes"], s["liveObjects"])')
    fi
    read -r events writes live <<<"$counts"
    read -r wall user sys rss < <(tail -1 "$out.time") # after "Command exited with non-zero status 1"
    awk -v l="$label" -v b="$(stat -c %s "$file")" -v e="$events" -v w="$writes" -v lv="$live" \
        -v wall="$wall" -v cpu="$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" -v rss="$rss" \
        'BEGIN { printf "%-24s %8.1f %9s %8s %6s %7.2f %7.2f %8.1f %8.1f %9.1f\n", l, b / 1e6, e, w, lv, wall, cpu, b / 1e6 / wall, b / 1e6 / cpu, rss / 1024 }'
    rm -f "$out" "$out.time" "$out.err"
}
run "kueue -o json" "$dir/kueue-$mb.log" json
run "kueue -o text" "$dir/kueue-$mb.log" text
run "kueue/10 -o json" "$dir/kueue-$small.log" json
for n in 25000 50000 100000; do run "one object, $n" "$dir/one-$n.log" json; done
