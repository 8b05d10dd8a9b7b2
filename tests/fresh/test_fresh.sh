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

# mounts_under DIR: mount points at or below DIR in this namespace, deepest first.
mounts_under() {
	awk -v d="$1" '{ gsub(/\\040/, " ", $5) } $5 == d || index($5, d "/") == 1 { print $5 }' \
		/proc/self/mountinfo | sort -r
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

# apt_entries: "URI SUITE" for each enabled binary source of this machine's apt, one-line
# (sources.list, *.list) and deb822 (*.sources) formats.
apt_entries() {
	local f
	for f in "$APT_ETC/sources.list" "$APT_ETC"/sources.list.d/*.list; do
		[[ -f $f ]] || continue
		sed -e 's/#.*//' -e 's/\[[^]]*\]//g' "$f" | awk '$1 == "deb" && NF >= 3 { print $2, $3 }'
	done
	for f in "$APT_ETC"/sources.list.d/*.sources; do
		[[ -f $f ]] || continue
		awk '
		function flush(  nt, nu, ns, i, j, t, u, s, deb) {
			nt = split(v["types"], t, /[ \t]+/)
			deb = 0
			for (i = 1; i <= nt; i++) if (t[i] == "deb") deb = 1
			if (deb && v["enabled"] !~ /^[ \t]*no[ \t]*$/) {
				nu = split(v["uris"], u, /[ \t]+/)
				ns = split(v["suites"], s, /[ \t]+/)
				for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
					if (u[i] != "" && s[j] != "") print u[i], s[j]
			}
			split("", v)
			key = ""
		}
		/^#/ { next }
		/^[ \t]*$/ { flush(); next }
		/^[ \t]/ { if (key != "") v[key] = v[key] " " $0; next }
		{ i = index($0, ":"); key = tolower(substr($0, 1, i - 1)); v[key] = substr($0, i + 1) }
		END { flush() }' "$f"
	done
}
# source_for SUFFIX: the URI of the first Debian source whose suite is a release name + SUFFIX
# (the release named here first).
source_for() {
	local names="$SUITE|stable|oldstable|testing|unstable|sid|bullseye|trixie|forky"
	apt_entries | awk -v want="^$SUITE$1\$" -v any="^($names)$1\$" '
		$1 ~ /^https?:/ { sub(/\/+$/, "", $1)
			if ($2 ~ want && exact == "") exact = $1
			if ($2 ~ any && first == "") first = $1 }
		END { print (exact != "" ? exact : first) }'
}
MIRROR=$(source_for "")
UPDATES=$(source_for -updates)
SECURITY=$(source_for -security)
[[ -n $MIRROR ]] || fatal "no Debian mirror (http or https) in $APT_ETC/sources.list or sources.list.d/"
pass "package mirror from this machine's apt sources: $MIRROR${UPDATES:+, updates $UPDATES}${SECURITY:+, security $SECURITY}"

# reachable URI SUITE: the suite's Release file can be fetched.
reachable() {
	local err
	if err=$(curl -fsS --max-time 30 -o /dev/null "$1/dists/$2/Release" 2>&1); then
		pass "mirror reachable: $1/dists/$2/Release"
	else fatal "package mirror unreachable: $1/dists/$2/Release: $err"; fi
}
reachable "$MIRROR" "$SUITE"
[[ -z $UPDATES ]] || reachable "$UPDATES" "$SUITE-updates"
[[ -z $SECURITY ]] || reachable "$SECURITY" "$SUITE-security"

TMPROOT=$(mktemp -d "$WORK/fresh-root.XXXXXX") || fatal "cannot create a directory under $WORK"
echo $$ >"$TMPROOT/owner"
ROOT=$TMPROOT/root
# (The clone below is made from git's objects, so the root never ends up inside it even when
# WORK, the build directory, is inside the checkout.)
echo "# root $ROOT"

# An https mirror needs ca-certificates in the root for apt to verify it (minbase has none).
include=()
[[ $MIRROR$UPDATES$SECURITY != *https:* ]] || include=(--include=ca-certificates)
t=$(date +%s)
if timeout 900 debootstrap --variant=minbase "${include[@]}" "$SUITE" "$ROOT" "$MIRROR" \
	>"$TMPROOT/debootstrap.log" 2>&1; then
	T_DEBOOTSTRAP=$(($(date +%s) - t))
	echo "# debootstrap: $T_DEBOOTSTRAP s"
	pass "debootstrap --variant=minbase $SUITE ($T_DEBOOTSTRAP s)"
else
	tail -n 20 "$TMPROOT/debootstrap.log" "$ROOT/debootstrap/debootstrap.log" 2>/dev/null | sed 's/^/# /'
	fatal "debootstrap --variant=minbase $SUITE $MIRROR failed (log above)"
fi

{
	echo "deb $MIRROR $SUITE main"
	[[ -z $UPDATES ]] || echo "deb $UPDATES $SUITE-updates main"
	[[ -z $SECURITY ]] || echo "deb $SECURITY $SUITE-security main"
} >"$ROOT/etc/apt/sources.list"
# The proxy this machine's apt uses, if any.
eval "$(apt-config shell HP Acquire::http::Proxy HSP Acquire::https::Proxy 2>/dev/null)"
{
	[[ -z ${HP:-} ]] || echo "Acquire::http::Proxy \"$HP\";"
	[[ -z ${HSP:-} ]] || echo "Acquire::https::Proxy \"$HSP\";"
} >"$ROOT/etc/apt/apt.conf.d/01proxy"
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf" || fatal "cannot copy /etc/resolv.conf into the root"
pass "root's apt sources: $(grep -c '^deb ' "$ROOT/etc/apt/sources.list") entries from the same mirror; resolv.conf copied"

CLONE=/root/jobguard
if out=$(git clone --quiet --no-hardlinks "$SRC" "$ROOT$CLONE" 2>&1); then
	pass "clean git clone of the checkout ($(git -C "$ROOT$CLONE" rev-parse --short HEAD)) in the root at $CLONE"
else fatal "git clone $SRC failed: $out"; fi

# readme_command WORD: the clone's README's first ```sh block that starts with WORD, continuation
# lines joined: the commands run below are the README's own.
readme_command() {
	awk -v w="$1" '/^```sh$/ { inb = 1; cmd = ""; next }
		/^```$/ { if (inb && index(cmd, w " ") == 1) { print cmd; exit } inb = 0; next }
		inb { sub(/\\$/, ""); cmd = cmd $0 }' "$ROOT$CLONE/README.md"
}
MAIN=$(readme_command bash)
EXAMPLE=$(readme_command curl)
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
