# Shared by the benches that run jobguard on generated inputs (bench/scan/run.sh,
# bench/replay/run.sh). Sourced after the bench has set $here (its folder) and $bench (its name,
# for messages).

# bench_jobguard BUILD_DIR: sets $jg to BUILD_DIR/src/jobguard (BUILD_DIR empty: build-rel if it
# has one, else build); exits 2 when there is none.
bench_jobguard() {
    local build=$1 root
    root=$(cd "$here/../.." && pwd)
    if [ -z "$build" ]; then
        if [ -x "$root/build-rel/src/jobguard" ]; then build=$root/build-rel; else build=$root/build; fi
    fi
    jg=$build/src/jobguard
    [ -x "$jg" ] || { echo "bench/$bench: no $jg (meson setup build-rel --buildtype=release && ninja -C build-rel)" >&2; exit 2; }
}

# bench_usage LAST: prints the header comment of the bench, lines 2 to LAST, without the '#'.
bench_usage() {
    sed -n "2,$1p" "$0" | sed 's/^# \{0,1\}//'
}

# gen KIND ARG OUT: makes OUT with the bench's gen.py unless it is there already.
gen() {
    [ -e "$3" ] && return 0
    echo "generating $3 ..." >&2
    python3 "$here/gen.py" "$1" "$2" "$3.tmp" && mv "$3.tmp" "$3"
}
