#!/bin/sh
# Builds the libFuzzer targets into OUTDIR with clang (-fsanitize=fuzzer,address,undefined).
# Usage: fuzz/build.sh OUTDIR        (CC overrides the compiler, default clang)
set -eu
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$1
mkdir -p "$out"
CC=${CC:-clang}

# The base, the engine, the policy file reader and the files layer (the policy file may be YAML;
# the one reader of fuzz_reader): no CLI (src/cli), no server (src/server), no VAP (src/vap).
engine="$(find "$root/src/base" "$root/src/engine" "$root/src/policy" "$root/src/files" -name '*.c' | sort | tr '\n' ' ')"

# -fno-sanitize-recover: a UBSan report is a crash, not a log line. The warnings: meson.build's
# that clang has.
flags="-g -O1 -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -I$root/include
       -Wwrite-strings -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wold-style-definition -Wpointer-arith
       -Wundef -Wvla -Wformat-security
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
jansson=$(pkg-config --cflags --libs jansson libcrypto yaml-0.1) # libcrypto: the policy's sha256

for t in fuzz_admit fuzz_indexes fuzz_managedby fuzz_refdecode fuzz_policy fuzz_reader; do
    extra=""
    # the differential target shares the reference decoder and comparator with tests/
    [ $t = fuzz_refdecode ] && extra="-I$root/tests $root/tests/refdecode.c $root/tests/refdiff.c"
    # shellcheck disable=SC2086
    $CC $flags -o "$out/$t" "$here/$t.c" $extra $engine $jansson
    echo "built $out/$t"
done
