#!/usr/bin/env bash
# The offline scan at cluster scale: `jobguard scan` on what `kubectl get -A -o json|yaml` prints
# for a large batch cluster, and on a folder of small manifests. Prints, per input, its size, the
# objects read, the wall time on one core (taskset -c 0), MB/s and the peak RSS.
# Usage: bench/scan/run.sh [BUILD_DIR] [-s MB] [-f FILES]
#   BUILD_DIR  where build/src/jobguard is (default build-rel, else build); use a release build
#   -s MB      size of the generated Lists (default 1024)
#   -f FILES   manifests in the generated folder (default 100000)
# Inputs are generated once by bench/scan/gen.py into $JG_BENCH_DIR (default
# /tmp/jobguard-bench-scan) and reused; delete the folder to regenerate.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=scan
. "$here/../lib.sh"
build=""
mb=1024
nfiles=100000
while [ $# -gt 0 ]; do
    case $1 in
    -s) mb=$2; shift 2 ;;
    -f) nfiles=$2; shift 2 ;;
    -h | --help) bench_usage 11; exit 0 ;;
    *) build=$1; shift ;;
    esac
done
bench_jobguard "$build"
dir=${JG_BENCH_DIR:-/tmp/jobguard-bench-scan}
mkdir -p "$dir"
gen list-json "$mb" "$dir/list-$mb.json"
gen list-yaml "$mb" "$dir/list-$mb.yaml"
gen folder "$nfiles" "$dir/folder-$nfiles"

policy=$here/policy.json
printf '%-22s %10s %9s %8s %8s %9s %7s\n' input MB objects seconds MB/s "peak MiB" exit
run() { # run LABEL BYTES ARGS...: one scan, on CPU 0, output to /dev/null
    local label=$1 bytes=$2; shift 2
    local t0 t1 rc out
    out=$(mktemp)
    t0=$(date +%s.%N)
    set +e
    taskset -c 0 /usr/bin/time -f '%M' -o "$out.rss" "$jg" scan --policy-file "$policy" -o json "$@" >"$out" 2>"$out.err"
    rc=$?
    set -e
    t1=$(date +%s.%N)
    [ "$rc" -le 1 ] || { echo "bench/scan: $label: exit $rc: $(head -c 300 "$out.err")" >&2; }
    local objects
    objects=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["summary"]["objects"])' "$out" 2>/dev/null || echo "?")
    awk -v l="$label" -v b="$bytes" -v t0="$t0" -v t1="$t1" -v o="$objects" -v rss="$(tail -1 "$out.rss")" -v rc="$rc" \
        'BEGIN { s = t1 - t0; printf "%-22s %10.1f %9s %8.2f %8.1f %9.1f %7d\n", l, b / 1e6, o, s, b / 1e6 / s, rss / 1024, rc }'
    rm -f "$out" "$out.rss" "$out.err"
}
size() { stat -c %s "$1"; }
run "List JSON (file)" "$(size "$dir/list-$mb.json")" "$dir/list-$mb.json"
run "List JSON (stdin)" "$(size "$dir/list-$mb.json")" - <"$dir/list-$mb.json"
run "List YAML (file)" "$(size "$dir/list-$mb.yaml")" "$dir/list-$mb.yaml"
run "folder of $nfiles" "$(du -sb "$dir/folder-$nfiles" | cut -f1)" "$dir/folder-$nfiles"
