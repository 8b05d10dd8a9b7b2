#!/bin/sh
# Replays the regression inputs, then runs each fuzz target for SECONDS on a copy of its seed
# corpus in a temporary directory (nothing is written into the repo).
# Usage: fuzz/run.sh OUTDIR SECONDS [TARGET...]     (OUTDIR: where fuzz/build.sh put the binaries)
# Prints per target the executions, coverage and whether it crashed; ends with "N passed, M failed".
# A target passes when its regressions replay cleanly and it ran SECONDS without a crash, a
# timeout (> 10 s on one input) or running out of memory. On failure the temporary directory,
# with the crashing input (artifacts/), is kept and its path printed.
set -u
[ $# -ge 2 ] || { echo "usage: $0 OUTDIR SECONDS [TARGET...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$(cd "$1" && pwd)
secs=$2
shift 2
targets=${*:-fuzz_admit fuzz_indexes fuzz_managedby fuzz_refdecode fuzz_policy fuzz_reader}

work=$(mktemp -d "${TMPDIR:-/tmp}/jobguard-fuzz.XXXXXX")
passed=0
failed=0

for t in $targets; do
    bin=$out/$t
    if [ ! -x "$bin" ]; then
        echo "$t: FAILED (no binary $bin)"
        failed=$((failed + 1))
        continue
    fi
    dict=
    case $t in
    fuzz_admit | fuzz_refdecode) dict=$here/admit.dict ;;
    fuzz_indexes) dict=$here/indexes.dict ;;
    fuzz_managedby) dict=$here/managedby.dict ;;
    fuzz_policy) dict=$here/policy.dict ;;
    fuzz_reader) dict=$here/reader.dict ;;
    esac
    ok=1

    # 1. Every crash ever found, replayed (the binary runs each file once).
    regs=$here/regressions/$t
    nreg=0
    [ -d "$regs" ] && nreg=$(find "$regs" -maxdepth 1 -type f ! -name '.*' | wc -l)
    if [ "$nreg" -gt 0 ]; then
        # shellcheck disable=SC2046
        if ! "$bin" -runs=1 $(find "$regs" -maxdepth 1 -type f ! -name '.*' | sort) \
            >"$work/$t.replay.log" 2>&1; then
            echo "$t: regression replay FAILED (log: $work/$t.replay.log)"
            grep -E 'ERROR|invariant|runtime error|Running:' "$work/$t.replay.log" | tail -5
            ok=0
        fi
    fi

    # 2. Fuzz a copy of the seeds (plus every test case's review for the review targets).
    corpus=$work/$t.corpus
    mkdir -p "$corpus" "$work/$t.artifacts"
    seeds=$t
    [ "$t" = fuzz_refdecode ] && seeds=fuzz_admit # the same input: an AdmissionReview body
    cp "$here/seeds/$seeds"/* "$corpus"/ 2>/dev/null
    if [ "$t" = fuzz_admit ] || [ "$t" = fuzz_refdecode ]; then
        for r in "$root"/tests/cases/*/review.json; do
            cp "$r" "$corpus/case-$(basename "$(dirname "$r")")"
        done
    fi
    if [ "$t" = fuzz_reader ]; then # the reader's own test inputs: every YAML trap, bad JSON
        for r in "$root"/tests/input/yaml/*.yaml "$root"/tests/input/json/*.json \
            "$root"/tests/input/folder/*.yaml "$root"/tests/input/folder/*.json; do
            cp "$r" "$corpus/input-$(basename "$(dirname "$r")")-$(basename "$r")"
        done
    fi
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        ${dict:+-dict="$dict"} -artifact_prefix="$work/$t.artifacts/" "$corpus" \
        >"$work/$t.log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log" | tail -1)
    cov=$(grep -E '^#[0-9]+' "$work/$t.log" | grep -o 'cov: [0-9]* ft: [0-9]*' | tail -1)
    rate=$(grep -E '^#[0-9]+' "$work/$t.log" | grep -o 'exec/s: [0-9]*' | tail -1)
    if [ $rc -ne 0 ]; then
        ok=0
        art=$(ls "$work/$t.artifacts" 2>/dev/null | head -1)
        echo "$t: CRASHED after ${execs:-?} execs (rc $rc)"
        echo "  input: $work/$t.artifacts/$art"
        echo "  log: $work/$t.log"
        grep -E 'ERROR: |invariant failed|runtime error|SUMMARY' "$work/$t.log" | head -5
    fi
    status=passed
    [ $ok -eq 1 ] || status=FAILED
    echo "$t: $status: ${execs:-0} execs in ${secs}s (${rate:-exec/s: ?})," \
        "${cov:-cov: ?}, $nreg regressions replayed"
    if [ $ok -eq 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done

echo "$passed passed, $failed failed"
if [ $failed -eq 0 ]; then
    rm -rf "$work"
    exit 0
fi
echo "kept $work"
exit 1
