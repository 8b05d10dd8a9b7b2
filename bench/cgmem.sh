#!/usr/bin/env bash
# bench/cgmem.sh [JOBGUARD] — the memory `jobguard serve` is charged for, as kubelet and the OOM
# killer see it: the working set of its memory cgroup (cgroup v1: memory.usage_in_bytes minus
# total_inactive_file from memory.stat, kubelet's container_memory_working_set_bytes), not VmRSS.
# Page-cache pages of the binary and its libraries that the process faulted in stay charged to
# the cgroup whether or not they are still mapped, so lowering VmRSS by dropping mappings does not
# lower this figure.
#
# The binary and its libraries are copied to a scratch folder and dropped from the page cache, so
# that the pages the server faults in are charged to its cgroup, as in a pod whose image no other
# container has read.
#
# Starts JOBGUARD (default build-rel/src/jobguard) with --threads 2 in a fresh cgroup v1 memory
# cgroup (needs root), and prints the working set and VmRSS: idle after start, after a burst of
# large reviews (BURST rounds of PAR concurrent 3 MB reviews, then 2,000 3.9 KB ones), and again
# 2 s later. Environment: BURST (5), PAR (4), SIZE (3000000 bytes).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
JG=${1:-$ROOT/build-rel/src/jobguard}
BURST=${BURST:-5} PAR=${PAR:-4} SIZE=${SIZE:-3000000}
V1=/sys/fs/cgroup/memory

[[ -x $JG ]] || { echo "no $JG (meson setup build-rel --buildtype=release)" >&2; exit 2; }
if [[ $(id -u) != 0 || ! -w $V1/cgroup.procs ]]; then
	echo "needs root and a writable cgroup v1 memory hierarchy at $V1" >&2
	exit 2
fi
command -v curl >/dev/null || { echo "missing curl" >&2; exit 2; }

P=$(mktemp -d)
CG=$V1/jobguard-cgmem-$$
PID=
cleanup() {
	[[ -n $PID ]] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	for _ in $(seq 1 50); do rmdir "$CG" 2>/dev/null && break; sleep 0.1; done
	rm -rf "$P"
}
trap cleanup EXIT
mkdir "$CG"

"$ROOT/certs/generate.sh" --service jobguard --namespace default --out "$P/certs" \
	--ip 127.0.0.1 --dns localhost >/dev/null 2>"$P/certs.log" || { cat "$P/certs.log"; exit 1; }
SMALL=$ROOT/tests/cases/r-status-update-small/review.json
python3 "$HERE/grow_review.py" "$SIZE" >"$P/large.json"

# The program and its libraries as a pod has them: files whose pages no other cgroup has read.
mkdir "$P/lib"
cp "$JG" "$P/lib/jobguard"
ldd "$JG" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }' | while read -r f; do
	cp "$f" "$P/lib/"
done
LOADER=$(ls "$P"/lib/ld-linux*)
sync
for f in "$P"/lib/*; do dd if="$f" iflag=nocache count=0 status=none; done

source "$ROOT/tests/e2e/lib.sh" # free_port
PORT=$(free_port) OPS=$(free_port)
# The cgroup's page cache starts empty: drop this process's own charge by starting from a shell
# that joins the cgroup and then execs the server.
sh -c "echo \$\$ >$CG/cgroup.procs && exec \"\$@\"" jobguard "$LOADER" --library-path "$P/lib" "$P/lib/jobguard" serve \
	--tls-cert-file "$P/certs/tls.crt" --tls-private-key-file "$P/certs/tls.key" \
	--bind-address 127.0.0.1 --port "$PORT" --ops-port "$OPS" --threads 2 \
	--shutdown-delay 0 --drain-timeout 2 --log-level warn >"$P/log" 2>&1 &
PID=$!
for _ in $(seq 1 100); do
	curl -fsS -o /dev/null "http://127.0.0.1:$OPS/readyz" 2>/dev/null && break
	sleep 0.1
done

# row LABEL: the cgroup's usage, its inactive file pages, the working set and VmRSS, in KiB
row() {
	local usage inactive rss
	usage=$(($(cat "$CG/memory.usage_in_bytes") / 1024))
	inactive=$(($(awk '$1 == "total_inactive_file" { print $2 }' "$CG/memory.stat") / 1024))
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$PID/status")
	printf '%-46s %8s %8s %8s %8s\n' "$1" "$usage" "$inactive" "$((usage - inactive))" "$rss"
}
post() { curl -ksS -o /dev/null --max-time 30 -H 'Content-Type: application/json' \
	--data-binary "@$1" "https://127.0.0.1:$PORT/validate"; }

echo "KiB:                                              usage inactive  working    VmRSS"
echo "                                                          file      set"
sleep 1
row "idle after start"
for _ in $(seq 1 "$BURST"); do
	pids=()
	for _ in $(seq 1 "$PAR"); do
		post "$P/large.json" &
		pids+=($!)
	done
	wait "${pids[@]}"
done
URLS=$(for _ in $(seq 1 100); do printf 'https://127.0.0.1:%s/validate ' "$PORT"; done)
for _ in $(seq 1 20); do
	# shellcheck disable=SC2086 # one URL a word: 100 requests on one kept-alive connection
	curl -ksS -o /dev/null --max-time 30 -H 'Content-Type: application/json' --data-binary "@$SMALL" $URLS >/dev/null
done
row "after $BURST x $PAR large ($(wc -c <"$P/large.json") B) + 2,000 small"
sleep 2
row "2 s later"
echo "peak (memory.max_usage_in_bytes): $(($(cat "$CG/memory.max_usage_in_bytes") / 1024)) KiB"
