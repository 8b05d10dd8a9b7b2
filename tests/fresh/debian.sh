# shellcheck shell=bash
# debian.sh: minimal Debian roots made with debootstrap from the package mirror this machine's apt
# uses, shared by tests/fresh (the README's `bash .ci/dev` in such a root) and .ci/release (the
# debian:bookworm base image of the Dockerfile's build stage, also for tests/image). Sourced (bash)
# after tests/e2e/lib.sh or with pass and fail defined; the caller defines fatal MESSAGE (one failed
# check, then its summary) and may set SUITE and APT_ETC.

SUITE=${SUITE:-bookworm}
APT_ETC=${APT_ETC:-/etc/apt}

# mounts_under DIR: mount points at or below DIR in this namespace, deepest first.
mounts_under() {
	awk -v d="$1" '{ gsub(/\\040/, " ", $5) } $5 == d || index($5, d "/") == 1 { print $5 }' \
		/proc/self/mountinfo | sort -r
}

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

# reachable URI SUITE: the suite's Release file can be fetched.
reachable() {
	local err
	if err=$(curl -fsS --max-time 30 -o /dev/null "$1/dists/$2/Release" 2>&1); then
		pass "mirror reachable: $1/dists/$2/Release"
	else fatal "package mirror unreachable: $1/dists/$2/Release: $err"; fi
}

# debian_mirror: sets MIRROR, UPDATES and SECURITY from this machine's apt sources and checks
# that each can be reached (an unreachable mirror is a failure with its reason, never a skip).
debian_mirror() {
	MIRROR=$(source_for "")
	UPDATES=$(source_for -updates)
	SECURITY=$(source_for -security)
	[[ -n $MIRROR ]] || fatal "no Debian mirror (http or https) in $APT_ETC/sources.list or sources.list.d/"
	pass "package mirror from this machine's apt sources: $MIRROR${UPDATES:+, updates $UPDATES}${SECURITY:+, security $SECURITY}"
	reachable "$MIRROR" "$SUITE"
	[[ -z $UPDATES ]] || reachable "$UPDATES" "$SUITE-updates"
	[[ -z $SECURITY ]] || reachable "$SECURITY" "$SUITE-security"
}

# debian_bootstrap ROOT LOG: debootstrap --variant=minbase SUITE into ROOT from MIRROR (output in
# LOG); sets T_DEBOOTSTRAP (seconds).
debian_bootstrap() {
	local root=$1 log=$2 t include=()
	# An https mirror needs ca-certificates in the root for apt to verify it (minbase has none).
	[[ $MIRROR$UPDATES$SECURITY != *https:* ]] || include=(--include=ca-certificates)
	t=$(date +%s)
	if timeout 900 debootstrap --variant=minbase "${include[@]}" "$SUITE" "$root" "$MIRROR" \
		>"$log" 2>&1; then
		T_DEBOOTSTRAP=$(($(date +%s) - t))
		echo "# debootstrap: $T_DEBOOTSTRAP s"
		pass "debootstrap --variant=minbase $SUITE ($T_DEBOOTSTRAP s)"
	else
		tail -n 20 "$log" "$root/debootstrap/debootstrap.log" 2>/dev/null | sed 's/^/# /'
		fatal "debootstrap --variant=minbase $SUITE $MIRROR failed (log above)"
	fi
}

# debian_apt_config ROOT: the root's apt sources are the mirror's (main, updates, security) and its
# proxy is the one this machine's apt uses, if any.
debian_apt_config() {
	local root=$1 HP HSP
	{
		echo "deb $MIRROR $SUITE main"
		[[ -z $UPDATES ]] || echo "deb $UPDATES $SUITE-updates main"
		[[ -z $SECURITY ]] || echo "deb $SECURITY $SUITE-security main"
	} >"$root/etc/apt/sources.list"
	eval "$(apt-config shell HP Acquire::http::Proxy HSP Acquire::https::Proxy 2>/dev/null)"
	{
		[[ -z ${HP:-} ]] || echo "Acquire::http::Proxy \"$HP\";"
		[[ -z ${HSP:-} ]] || echo "Acquire::https::Proxy \"$HSP\";"
	} >"$root/etc/apt/apt.conf.d/01proxy"
}

# readme_command README WORD: the README's first ```sh block that starts with WORD, continuation
# lines joined: the commands the tests run are the README's own.
readme_command() {
	awk -v w="$2" '/^```sh$/ { inb = 1; cmd = ""; next }
		/^```$/ { if (inb && index(cmd, w " ") == 1) { print cmd; exit } inb = 0; next }
		inb { sub(/\\$/, ""); cmd = cmd $0 }' "$1"
}
