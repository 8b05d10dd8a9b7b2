#!/usr/bin/env bash
# The README's main command on a freshly installed Debian 12. Builds a minimal root
# (debootstrap --variant=minbase bookworm) from the package mirror this machine's apt uses, puts a
# clean git clone of the checkout in it, runs `bash .ci/dev` there under chroot (/proc mounted,
# /dev bind-mounted, /etc/resolv.conf copied), waits for /readyz, posts the README's curl example
# from outside over loopback, checks the verdict, stops the server with SIGTERM, unmounts and
# removes the root. Prints its timings, its checks and "N passed, M failed".
#
#   tests/fresh/test_fresh.sh WORKDIR     (meson passes the build directory)
#
# Needs root, debootstrap, git, curl, jq and the mirror: without them it fails and says why.
# Everything runs in a private mount namespace, so the root's mounts vanish with this script even
# if it is killed; it still unmounts them itself and never removes the root while anything is
# mounted under it (rm -rf over a bind-mounted /dev would delete the machine's device nodes).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
source "$SRC/tests/e2e/lib.sh" # pass, fail, expect_eq, jg_finish, free_port, wait_exit
# shellcheck source=tests/fresh/debian.sh
source "$HERE/debian.sh" # mounts_under, debian_mirror, debian_bootstrap, debian_apt_config, readme_command
WORK=${1:?usage: $0 WORKDIR (a directory the minimal root is built under)}
SUITE=bookworm
CASE=tests/cases/r-status-update-denied
APT_ETC=${JG_FRESH_APT_ETC:-/etc/apt} # where this machine's apt sources are (a test of the test may point elsewhere)
READY_DEADLINE=${JG_FRESH_READY_DEADLINE:-600} # seconds for .ci/dev to install, build and serve
T0=$(date +%s)

# fatal MESSAGE: one failed check, then the summary (teardown runs on exit).
fatal() {
	fail "$*"
	finish
}

# procs_in DIR: processes whose root directory is DIR (only this test chroots there).
procs_in() {
	local p
	for p in /proc/[0-9]*; do
		[[ $(readlink "$p/root" 2>/dev/null) == "$1" ]] && echo "${p#/proc/}"
	done
}

# remove_tree DIR: kills what runs inside DIR/root, unmounts everything under DIR (lazily if
# busy), and removes DIR only when nothing is mounted under it. Prints what stopped it.
remove_tree() {
	local dir=$1 m p left
	for p in $(procs_in "$dir/root"); do kill -KILL "$p" 2>/dev/null; done
	for m in $(mounts_under "$dir"); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	left=$(mounts_under "$dir")
	if [[ -n $left ]]; then
		echo "still mounted, so $dir was left in place: $left"
		return 1
	fi
	rm -rf --one-file-system "$dir" 2>&1
}

TMPROOT=
STOPPED=0
teardown_done=0
# teardown: the named checks of stopping and removing; also the EXIT trap's cleanup.
teardown() {
	[[ $teardown_done == 0 && -n $TMPROOT ]] || return 0
	teardown_done=1
	local out m
	# After an orderly stop nothing may be left; after a failure, whatever runs there is ours.
	[[ $STOPPED == 0 ]] || expect_eq "no process left running in the root" "" "$(procs_in "$ROOT" | tr '\n' ' ')"
	for m in "$ROOT/proc" "$ROOT/dev"; do
		if mountpoint -q "$m"; then
			umount "$m" 2>/dev/null || umount -l "$m"
		fi
	done
	expect_eq "/proc and /dev unmounted from the root before removing it" "" "$(mounts_under "$TMPROOT")"
	if out=$(remove_tree "$TMPROOT"); then pass "root removed (rm -rf --one-file-system)"
	else fail "root not removed: $out"; fi
	if [[ -c /dev/null && -c /dev/zero ]]; then pass "this machine's /dev intact"
	else fail "this machine's /dev/null or /dev/zero is gone"; fi
}
trap 'teardown >/dev/null' EXIT
trap 'exit 130' INT TERM HUP

finish() {
	teardown
	echo "# total: $(($(date +%s) - T0)) s"
	jg_finish
}

if [[ ${JG_FRESH_NS:-} != 1 ]]; then
	[[ $(id -u) == 0 ]] || fatal "tests/fresh needs root (debootstrap, mount, chroot): run it as root"
	command -v unshare >/dev/null || fatal "unshare (util-linux) not found"
	err=$(unshare --mount --propagation private true 2>&1) ||
		fatal "cannot create a private mount namespace (unshare --mount): $err"
	JG_FRESH_NS=1 exec unshare --mount --propagation private "$BASH" "$0" "$@"
fi
mkdir -p "$WORK" && WORK=$(cd "$WORK" && pwd -P) || fatal "cannot create $WORK"

for c in debootstrap git curl jq chroot mount umount mountpoint; do
	command -v "$c" >/dev/null || fatal "$c not found (bash .ci/deps all installs what the tests need)"
done
pass "root, a private mount namespace, debootstrap, git, curl, jq"

# Roots of earlier runs that were killed (their owner is gone): remove them.
for old in "$WORK"/fresh-root.*; do
	[[ -d $old ]] || continue
	owner=$(cat "$old/owner" 2>/dev/null)
	[[ -n $owner ]] && kill -0 "$owner" 2>/dev/null && continue
	if out=$(remove_tree "$old"); then echo "# removed $old, left by a run that was killed"
	else echo "# $old, left by a run that was killed: $out"; fi
done

debian_mirror

TMPROOT=$(mktemp -d "$WORK/fresh-root.XXXXXX") || fatal "cannot create a directory under $WORK"
echo $$ >"$TMPROOT/owner"
ROOT=$TMPROOT/root
# (The clone below is made from git's objects, so the root never ends up inside it even when
# WORK, the build directory, is inside the checkout.)
echo "# root $ROOT"

debian_bootstrap "$ROOT" "$TMPROOT/debootstrap.log"

debian_apt_config "$ROOT"
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf" || fatal "cannot copy /etc/resolv.conf into the root"
pass "root's apt sources: $(grep -c '^deb ' "$ROOT/etc/apt/sources.list") entries from the same mirror; resolv.conf copied"

CLONE=/root/jobguard
if out=$(git clone --quiet --no-hardlinks "$SRC" "$ROOT$CLONE" 2>&1); then
	pass "clean git clone of the checkout ($(git -C "$ROOT$CLONE" rev-parse --short HEAD)) in the root at $CLONE"
else fatal "git clone $SRC failed: $out"; fi

MAIN=$(readme_command "$ROOT$CLONE/README.md" bash)
EXAMPLE=$(readme_command "$ROOT$CLONE/README.md" curl)
expect_eq "the README's main command" "bash .ci/dev" "$MAIN"
[[ $EXAMPLE == *" https://localhost:9443/validate"* ]] ||
	fatal "the README's curl example does not post to https://localhost:9443/validate: [$EXAMPLE]"
pass "the README's curl example: $EXAMPLE"

mount -t proc proc "$ROOT/proc" && mount --bind /dev "$ROOT/dev" ||
	fatal "cannot mount /proc and /dev in the root"
if mountpoint -q "$ROOT/proc" && mountpoint -q "$ROOT/dev"; then pass "/proc mounted and /dev bind-mounted in the root"
else fatal "/proc or /dev is not a mount point in the root after mounting"; fi

# The README's command, in the clone, as root, with a clean environment and free ports.
PORT=$(free_port) && OPS=$(free_port) && [[ $PORT != "$OPS" ]] || fatal "no free ports"
env_keep=()
for v in http_proxy https_proxy no_proxy; do [[ -z ${!v:-} ]] || env_keep+=("$v=${!v}"); done
t=$(date +%s)
env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb \
	"${env_keep[@]}" chroot "$ROOT" /bin/bash -c 'cd "$1" && shift && exec bash .ci/dev "$@"' \
	dev "$CLONE" --port "$PORT" --ops-port "$OPS" >"$TMPROOT/dev.log" 2>&1 &
SERVER=$!
ready=0
while (($(date +%s) - t < READY_DEADLINE)); do
	kill -0 "$SERVER" 2>/dev/null || break
	if curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$OPS/readyz" 2>/dev/null; then
		ready=1
		break
	fi
	sleep 1
done
T_READY=$(($(date +%s) - t))
if [[ $ready == 1 ]]; then
	echo "# bash .ci/dev to /readyz: $T_READY s"
	pass "bash .ci/dev in the root: /readyz answers on 127.0.0.1:$OPS after $T_READY s"
else
	sed 's/^/# dev: /' "$TMPROOT/dev.log" | tail -n 40
	kill -0 "$SERVER" 2>/dev/null && fatal "bash .ci/dev: no /readyz within $READY_DEADLINE s (output above)"
	wait "$SERVER"
	fatal "bash .ci/dev exited with status $? before serving (output above)"
fi
expect_eq "the .ci/dev banner names the ports it was given" \
	"jobguard: serving https://localhost:$PORT/validate (CA: certs/dev/ca.crt), ops on http://127.0.0.1:$OPS" \
	"$(grep -m1 '^jobguard: serving' "$TMPROOT/dev.log")"
expect_eq "the server is the jobguard that .ci/dev exec'd, chrooted in the root" \
	"$ROOT$CLONE/build/src/jobguard $ROOT" \
	"$(readlink "/proc/$SERVER/exe") $(readlink "/proc/$SERVER/root")"

# The README's curl example, run from the clone's directory outside the root, to the port chosen above.
(cd "$ROOT$CLONE" && timeout 60 bash -c "${EXAMPLE/:9443\//:$PORT/}") >"$TMPROOT/response.json" 2>"$TMPROOT/curl.err"
rc=$?
err=$(tr '\r' '\n' <"$TMPROOT/curl.err" | grep '^curl:' | head -c 300) # not the progress meter
expect_eq "the README's curl example exits 0" 0 "$rc${err:+ ($err)}"
verdict=$(jq -c '.response | [.allowed, .status.code, .uid]' "$TMPROOT/response.json" 2>&1)
expect_eq "verdict: allowed false, code 422, the request's uid echoed" \
	"$(jq -c '[false, 422, .request.uid]' "$ROOT$CLONE/$CASE/review.json")" "$verdict"
expect_eq "response is the case's expected AdmissionReview" \
	"$(jq -S . "$ROOT$CLONE/$CASE/expected.json")" "$(jq -S . "$TMPROOT/response.json" 2>&1)"

kill -TERM "$SERVER"
wait_exit "$SERVER" 60
STOPPED=1
expect_eq "SIGTERM: the server exits with status 0" 0 "$EXIT_RC"
if grep -q 'shutdown complete' "$TMPROOT/dev.log"; then pass "server log: shutdown complete"
else fail "server log lacks 'shutdown complete': $(tail -n 3 "$TMPROOT/dev.log")"; fi
echo "# debootstrap ${T_DEBOOTSTRAP} s, .ci/dev to /readyz ${T_READY} s"
finish
