#!/usr/bin/env bash
# jobguard on arm64: a cross build (Debian's aarch64 cross compiler and the libraries of Debian's
# arm64 port) whose tests run under qemu's user-mode emulation. On arm64 the structural pass has no
# SSE2 or AVX2 level, so the decoder runs its portable code and the byte scanner; the Check tests
# that exercise them (every case at every level, the scanner against the byte scanner, the jansson
# differential, the budget, allocation failures) run on the arm64 binaries.
#
#   tests/arm64/test_arm64.sh WORKDIR     (meson passes the build directory)
#
# The cross build is kept in WORKDIR/arm64 for the next run. The tests run with CK_FORK=no: Check's
# forked mode does not finish under qemu-user. Skips (exit 77) without the cross compiler, qemu or
# the arm64 libraries (.ci/deps all installs them). Ends with "N passed, M failed" (the Check
# assertions of the arm64 run).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
WORK=${1:?usage: $0 WORKDIR}/arm64
LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig
SUITES=(cases units scanner bounds policy rules
    targets modes readfile budget refdecode scaling chaos)

for t in aarch64-linux-gnu-gcc qemu-aarch64 pkg-config jq; do
    command -v "$t" >/dev/null || { echo "SKIP: $t not found (.ci/deps all installs it)"; exit 77; }
done
if ! PKG_CONFIG_LIBDIR=$LIBDIR pkg-config --exists jansson libmicrohttpd openssl yaml-0.1 check; then
    echo "SKIP: the arm64 libraries are not installed (.ci/deps all installs them)"
    exit 77
fi

mkdir -p "$WORK"
# pkg-config for the arm64 libraries: meson 1.0 takes a program, not a search path
cat >"$WORK/pkg-config" <<SH
#!/bin/sh
PKG_CONFIG_LIBDIR=$LIBDIR exec pkg-config "\$@"
SH
chmod +x "$WORK/pkg-config"
cat >"$WORK/cross.ini" <<INI
[binaries]
c = 'aarch64-linux-gnu-gcc'
ar = 'aarch64-linux-gnu-ar'
strip = 'aarch64-linux-gnu-strip'
pkgconfig = '$WORK/pkg-config'
exe_wrapper = ['qemu-aarch64', '-L', '/usr/aarch64-linux-gnu']

[host_machine]
system = 'linux'
cpu_family = 'aarch64'
cpu = 'aarch64'
endian = 'little'
INI

fail=0
if [[ ! -f $WORK/build/build.ninja ]]; then
    rm -rf "$WORK/build"
    if ! meson setup "$WORK/build" "$SRC" --cross-file "$WORK/cross.ini" >"$WORK/setup.log" 2>&1; then
        tail -30 "$WORK/setup.log"
        echo "FAIL: meson setup of the arm64 cross build"
        echo "0 passed, 1 failed"
        exit 1
    fi
fi
if ! ninja -C "$WORK/build" >"$WORK/build.log" 2>&1; then
    grep -E 'error|warning' "$WORK/build.log" | head -30
    echo "FAIL: the arm64 build (-Wall -Wextra -Werror)"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "ok: the arm64 build, -Wall -Wextra -Werror"

# the binaries are arm64 ones, and they run
machine=$(LC_ALL=C readelf -h "$WORK/build/src/jobguard" | sed -n 's/^ *Machine: *//p')
if [[ $machine == AArch64 ]]; then echo "ok: src/jobguard is an $machine executable"; else
    echo "FAIL: src/jobguard is a '$machine' executable, not AArch64"
    fail=1
fi
version=$(qemu-aarch64 -L /usr/aarch64-linux-gnu "$WORK/build/src/jobguard" --version 2>&1)
if [[ $version == jobguard\ * ]]; then echo "ok: under qemu-aarch64: $version"; else
    echo "FAIL: jobguard --version under qemu-aarch64: $version"
    fail=1
fi

CK_FORK=no meson test -C "$WORK/build" --no-rebuild --print-errorlogs --num-processes 1 "${SUITES[@]}" ||
    fail=1
read -r pass failed <<<"$("$SRC/.ci/summarize" "$WORK/build/meson-logs/testlog.json")"
if ((fail)) && ((failed == 0)); then failed=1; fi
echo "$pass passed, $failed failed"
((failed == 0))
