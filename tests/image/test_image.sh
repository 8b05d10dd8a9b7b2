#!/usr/bin/env bash
# The release's image, made by .ci/release and run as the chart runs it.
#
#   tests/image/test_image.sh WORKDIR VERSION     (meson passes the build directory and the version)
#
# 1. Release. `.ci/release --worktree` (docs/release.md) with its storage and output under
#    WORKDIR/image: debian:bookworm from a debootstrap root (kept for the next run), the version
#    checks, the Dockerfile built twice with buildah (daemonless, --timestamp from the commit), the
#    image's contents and SBOM checked against the CycloneDX schema, the chart packaged, the source
#    archived; both builds' SHA256SUMS must be the same. Here: the artefacts and SHA256SUMS verify.
# 2. Image. The archive is pulled into buildah's storage; its config (user 65532, entrypoint, ports,
#    version and revision labels) is checked, and that it has no shell to run.
# 3. Run. The image's own config (User, Entrypoint, Env) on its own root filesystem: a read-only
#    bind mount of the image's root with /proc, a /dev tmpfs, /sys read-only and the serving pair
#    at /tls (root:65532, 0440, read-only, as the chart's Secret volume), entered with chroot as
#    65532:65532 (supplementary group 65532, the chart's fsGroup), no capabilities, no_new_privs.
#    Checks: every shared library the loader resolves is in the image and is what the process maps;
#    a write to / and /tmp fails with EROFS; the README's curl example, run from the host with the
#    README's certificate generation, gets the case's exact response; SIGTERM exits 0; the chart's
#    hook command (`jobguard policy check --strict /policy/policy.json`) passes a valid policy and refuses a
#    bad one, as 65532 on the same read-only root.
# 4. Archive. Its layout, name (docker.io/library/jobguard:VERSION, the chart's default image
#    `jobguard:<appVersion>`), digests and config are checked.
# docs/image.md says how this compares to a pod with readOnlyRootFilesystem and how to push or load
# the archive.
#
# Skips (exit 77) only without root, buildah or debootstrap. An unreachable mirror or a failed
# build is a failure with its reason. Everything runs in a private mount namespace, so no mount
# outlives the script even if it is killed. Prints its timings, its checks and "N passed, M failed".
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
source "$SRC/tests/e2e/lib.sh" # pass, fail, expect_eq, jg_finish, free_port, wait_exit, mkcerts
# shellcheck source=tests/fresh/debian.sh
source "$SRC/tests/fresh/debian.sh" # mounts_under, readme_command
WORK=${1:?usage: $0 WORKDIR VERSION}
VERSION=${2:?usage: $0 WORKDIR VERSION}
CASE=tests/cases/r-status-update-denied
POLICY=tests/cases/p01-manager-multikueue-allowed/policy.json
IMAGE=docker.io/library/jobguard:$VERSION
T0=$(date +%s)

skip() {
	echo "SKIP: $*"
	exit 77 # meson: skipped
}

TMP=
R=
CTR=
SERVER=
teardown_done=0
# teardown: stops what this run started, unmounts the image's root, removes the working container
# and the scratch directory. Also the EXIT trap's cleanup.
teardown() {
	[[ $teardown_done == 0 && -n $TMP ]] || return 0
	teardown_done=1
	local m
	[[ -z $SERVER ]] || kill -KILL "$SERVER" 2>/dev/null
	if [[ -n $R ]]; then
		for m in $(mounts_under "$R"); do umount "$m" 2>/dev/null || umount -l "$m"; done
	fi
	if [[ -n $CTR ]]; then
		buildah umount "$CTR" >/dev/null 2>&1
		buildah rm "$CTR" >/dev/null 2>&1
	fi
	[[ -n $(mounts_under "$TMP") ]] || rm -rf --one-file-system "$TMP"
}
trap 'teardown' EXIT
trap 'exit 130' INT TERM HUP

finish() {
	teardown
	echo "# total: $(($(date +%s) - T0)) s"
	jg_finish
}
fatal() {
	fail "$*"
	finish
}

if [[ ${JG_IMAGE_NS:-} != 1 ]]; then
	[[ $(id -u) == 0 ]] || skip "tests/image needs root (debootstrap, buildah's chroot isolation, mount, chroot)"
	command -v buildah >/dev/null || skip "buildah not found (bash .ci/deps all installs it)"
	command -v debootstrap >/dev/null || skip "debootstrap not found (bash .ci/deps all installs it)"
	command -v unshare >/dev/null || fatal "unshare (util-linux) not found"
	err=$(unshare --mount --propagation private true 2>&1) ||
		fatal "cannot create a private mount namespace (unshare --mount): $err"
	JG_IMAGE_NS=1 exec unshare --mount --propagation private "$BASH" "$0" "$@"
fi
for c in curl jq openssl setpriv chroot mount umount tar sha256sum; do
	command -v "$c" >/dev/null || fatal "$c not found (bash .ci/deps all installs what the tests need)"
done
pass "root, a private mount namespace, $(buildah --version | cut -d' ' -f1-3), debootstrap"

DIR=$WORK/image
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd -P) || fatal "cannot create $WORK/image"
for old in "$DIR"/run.*; do # scratch of runs that were killed (their mounts died with them)
	[[ -d $old ]] || continue
	owner=$(cat "$old/owner" 2>/dev/null)
	[[ -n $owner ]] && kill -0 "$owner" 2>/dev/null && continue
	rm -rf --one-file-system "$old"
done
TMP=$(mktemp -d "$DIR/run.XXXXXX") || fatal "cannot create a directory under $DIR"
echo $$ >"$TMP/owner"

# buildah's storage and registries for this test only (the storage .ci/release uses too): vfs (no
# overlay or FUSE needed), kept under the build directory; short names resolve to docker.io.
cat >"$TMP/storage.conf" <<EOF
[storage]
driver = "vfs"
graphroot = "$DIR/storage"
runroot = "$DIR/storage.run"
EOF
cat >"$TMP/registries.conf" <<'EOF'
unqualified-search-registries = ["docker.io"]
short-name-mode = "permissive"
EOF
export CONTAINERS_STORAGE_CONF=$TMP/storage.conf CONTAINERS_REGISTRIES_CONF=$TMP/registries.conf
export BUILDAH_ISOLATION=chroot
buildah rm --all >/dev/null 2>&1 # working containers of a run that was killed
buildah rmi --force "$IMAGE" >/dev/null 2>&1

# The release, as a releaser runs it, on this working tree.
REL=$DIR/release
t=$(date +%s)
"$SRC/.ci/release" --worktree --out "$REL" --storage "$DIR/storage" >"$TMP/release.log" 2>&1
rc=$?
T_RELEASE=$(($(date +%s) - t))
grep -E '^release: (ok|FAIL)' "$TMP/release.log" | sed 's/^/# /'
if [[ $rc == 0 ]]; then
	pass ".ci/release --worktree: checks, two builds, artefacts ($T_RELEASE s)"
else
	grep -v '^release: ok' "$TMP/release.log" | tail -n 40 | sed 's/^/# /'
	fatal ".ci/release failed with status $rc (its output above)"
fi
echo "# release: $T_RELEASE s"
expect_match "the two builds of the release are the same (SHA256SUMS byte for byte)" \
	"reproducible: the second build's SHA256SUMS is the same" "$(cat "$TMP/release.log")"
CHART_VERSION=$(sed -n 's/^version: *//p' "$SRC/charts/jobguard/Chart.yaml")
expect_eq "SHA256SUMS lists the image, SBOM, chart and source archive, and they verify" \
	"jobguard-$VERSION.oci.tar: OK|jobguard-$VERSION.cdx.json: OK|jobguard-$CHART_VERSION.tgz: OK|jobguard-$VERSION.tar.xz: OK" \
	"$(cd "$REL" && sha256sum -c SHA256SUMS 2>&1 | paste -sd '|')"
ARCHIVE=$REL/jobguard-$VERSION.oci.tar
echo "# archive $(stat -c %s "$ARCHIVE") bytes"

# The image, from the archive, as a runtime reads it.
ID=$(buildah pull --quiet "oci-archive:$ARCHIVE" 2>"$TMP/pull.err") ||
	fatal "buildah pull oci-archive:$ARCHIVE failed: $(cat "$TMP/pull.err")"
cfg=$(buildah inspect --type image "$ID" | jq -c '.OCIv1') || fatal "buildah inspect $ID failed"
USER_SPEC=$(jq -r '.config.User' <<<"$cfg")
mapfile -t ENTRY < <(jq -r '.config.Entrypoint[]' <<<"$cfg")
mapfile -t ENVV < <(jq -r '.config.Env // [] | .[]' <<<"$cfg")
expect_eq "image user (the chart's runAsUser and runAsGroup)" "65532:65532" "$USER_SPEC"
expect_eq "image entrypoint (the chart's command and first argument)" \
	'["/usr/local/bin/jobguard","serve"]' "$(jq -c '.config.Entrypoint' <<<"$cfg")"
expect_eq "image exposes the webhook and ops ports" '["8080/tcp","9443/tcp"]' \
	"$(jq -c '.config.ExposedPorts | keys' <<<"$cfg")"
expect_eq "image labels org.opencontainers.image.version and .revision: this version and commit" \
	"$VERSION $(git -C "$SRC" rev-parse HEAD)" \
	"$(jq -r '.config.Labels | .["org.opencontainers.image.version"] + " " + .["org.opencontainers.image.revision"]' <<<"$cfg")"
expect_eq "one layer (FROM scratch: no base image underneath)" 1 "$(jq '.rootfs.diff_ids | length' <<<"$cfg")"
expect_eq "the chart's appVersion is the image's tag (its default image is jobguard:<appVersion>)" \
	"appVersion: \"$VERSION\"" "$(grep '^appVersion:' "$SRC/charts/jobguard/Chart.yaml")"

CTR=$(buildah from --pull=never "$ID" 2>"$TMP/from.err") && R=$(buildah mount "$CTR") ||
	fatal "buildah from/mount $ARCHIVE failed: $(cat "$TMP/from.err")"
echo "# image root $R"

# The libraries: the image's own loader resolves every one inside the image.
loader=$(cd "$R" && ls lib64/ld-linux-*.so.* lib/ld-linux-*.so.* 2>/dev/null | head -n 1)
[[ -n $loader ]] || fatal "no dynamic loader (ld-linux-*.so.*) in the image"
if libs=$(chroot "$R" "/$loader" --list "${ENTRY[0]}" 2>&1) && ! grep -q 'not found' <<<"$libs"; then
	pass "the image's /$loader finds all $(grep -c '=> /' <<<"$libs") libraries of ${ENTRY[0]} in the image: $(awk '/=> \// { printf "%s ", $1 }' <<<"$libs")"
else
	fail "the image's /$loader cannot resolve the libraries of ${ENTRY[0]}: $(tr -s ' \t\n' ' ' <<<"$libs" | head -c 400)"
fi
# Nothing else to run: no shell (the image_contents check of .ci/release looked at every file).
for sh in /bin/sh /bin/bash /usr/bin/env /usr/bin/dpkg; do
	err=$(chroot "$R" "$sh" -c true 2>&1)
	expect_match "no $sh in the image" 'No such file or directory' "$err"
done
expect_match "${ENTRY[0]} --version in the image as $USER_SPEC is this version" "^jobguard ${VERSION//./\\.} " \
	"$(env -i "${ENVV[@]}" setpriv --no-new-privs chroot --userspec="$USER_SPEC" "$R" "${ENTRY[0]}" --version 2>&1)"

# The serving pair, made as the README makes it for its example (certs/generate.sh for
# jobguard.default.svc, 127.0.0.1 and localhost), mounted as the chart's Secret volume is.
mkdir -p "$TMP/readme/certs" && ln -s "$SRC/tests" "$TMP/readme/tests" || fatal "cannot lay out $TMP/readme"
mkcerts "$TMP/readme/certs/dev" || fatal "certs/generate.sh failed"
mkdir "$TMP/tls" && cp "$TMP/readme/certs/dev/tls.crt" "$TMP/readme/certs/dev/tls.key" "$TMP/tls/" &&
	chown "root:${USER_SPEC#*:}" "$TMP/tls"/* && chmod 0440 "$TMP/tls"/* || fatal "cannot lay out $TMP/tls"

# The root as a runtime sets it up for readOnlyRootFilesystem: the mount point for the volume is
# made in the container's own layer first, then the root is bind-mounted on itself, the special
# file systems and the volume are mounted on it, and the root's mount is made read-only.
# The hook Job's policy, as its ConfigMap volume: read-only, readable by 65532.
mkdir "$TMP/policy" && cp "$SRC/$POLICY" "$TMP/policy/policy.json" && echo '{"bogus": 1}' >"$TMP/policy/bad.json" &&
	chmod 0444 "$TMP/policy"/* || fatal "cannot lay out $TMP/policy"
# A scratch image has no /proc, /dev or /sys: the runtime makes the mount points, as here.
mkdir -p "$R/tls" "$R/policy" "$R/proc" "$R/dev" "$R/sys" || fatal "cannot make the mount points in $R"
mounted=$(
	set -e
	mount --bind "$R" "$R"
	mount -t proc -o nosuid,nodev,noexec proc "$R/proc"
	mount -t tmpfs -o nosuid,noexec,mode=755,size=65536k tmpfs "$R/dev"
	for d in null:3 zero:5 full:7 random:8 urandom:9; do mknod -m 666 "$R/dev/${d%:*}" c 1 "${d#*:}"; done
	mount --rbind /sys "$R/sys"
	for m in $(mounts_under "$R/sys"); do mount -o remount,bind,ro "$m"; done
	mount --bind "$TMP/tls" "$R/tls"
	mount -o remount,bind,ro "$R/tls"
	mount --bind "$TMP/policy" "$R/policy"
	mount -o remount,bind,ro "$R/policy"
	mount -o remount,bind,ro "$R"
	echo ok
) 2>&1
expect_eq "the image's root mounted read-only with /proc, /dev, /sys, /tls and /policy (read-only)" ok "$mounted"
for f in probe tmp/probe; do
	err=$(touch "$R/$f" 2>&1)
	expect_match "even root cannot write /$f in the image's root" 'Read-only file system' "$err"
done

PORT=$(free_port) && OPS=$(free_port) && [[ $PORT != "$OPS" ]] || fatal "no free ports"
t=$(date +%s)
# The host's network (no network namespace), so the address is 127.0.0.1 rather than all of them.
env -i "${ENVV[@]}" setpriv --no-new-privs \
	chroot --userspec="$USER_SPEC" --groups="${USER_SPEC#*:}" "$R" "${ENTRY[@]}" \
	--tls-cert-file /tls/tls.crt --tls-private-key-file /tls/tls.key \
	--bind-address 127.0.0.1 --port "$PORT" --ops-port "$OPS" >"$TMP/server.log" 2>&1 &
SERVER=$!
ready=0
for _ in $(seq 1 300); do
	kill -0 "$SERVER" 2>/dev/null || break
	if curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$OPS/readyz" 2>/dev/null; then
		ready=1
		break
	fi
	sleep 0.1
done
if [[ $ready == 1 ]]; then
	T_READY=$(($(date +%s) - t))
	pass "the image serves: /readyz answers on 127.0.0.1:$OPS ($T_READY s)"
else
	sed 's/^/# server: /' "$TMP/server.log" | tail -n 20
	fatal "the image's jobguard did not become ready within 30 s (log above)"
fi

status=/proc/$SERVER/status
expect_eq "the server is the image's jobguard, its root the image's" "$R${ENTRY[0]} $R" \
	"$(readlink "/proc/$SERVER/exe") $(readlink "/proc/$SERVER/root")"
expect_eq "uid and gid 65532 (real, effective, saved, fs), groups 65532" \
	"65532 65532 65532 65532|65532 65532 65532 65532|65532" \
	"$(awk '/^Uid:/ { u = $2 " " $3 " " $4 " " $5 } /^Gid:/ { g = $2 " " $3 " " $4 " " $5 }
		/^Groups:/ { $1 = ""; sub(/^ /, ""); gr = $0 } END { print u "|" g "|" gr }' "$status")"
expect_eq "no capabilities (permitted, effective, ambient) and no_new_privs" \
	"0000000000000000 0000000000000000 0000000000000000 1" \
	"$(awk '/^CapPrm:/ { p = $2 } /^CapEff:/ { e = $2 } /^CapAmb:/ { a = $2 } /^NoNewPrivs:/ { n = $2 }
		END { print p, e, a, n }' "$status")"
expect_eq "the server's / is the image's root, mounted read-only" "ro" \
	"$(awk '$5 == "/" { split($6, o, ","); print o[1] }' "/proc/$SERVER/mountinfo")"
outside=$(awk -v r="$R/" '$6 ~ /^\// && index($6, r) != 1 { print $6 }' "/proc/$SERVER/maps" | sort -u)
expect_eq "every file the server maps is in the image (its own libraries)" "" "$outside"

EXAMPLE=$(readme_command "$SRC/README.md" curl)
[[ $EXAMPLE == *" https://localhost:9443/validate"* ]] ||
	fatal "the README's curl example does not post to https://localhost:9443/validate: [$EXAMPLE]"
(cd "$TMP/readme" && timeout 60 bash -c "${EXAMPLE/:9443\//:$PORT/}") >"$TMP/response.json" 2>"$TMP/curl.err"
rc=$?
err=$(tr '\r' '\n' <"$TMP/curl.err" | grep '^curl:' | head -c 300) # not the progress meter
expect_eq "the README's curl example, from the host to the image, exits 0" 0 "$rc${err:+ ($err)}"
verdict=$(jq -c '.response | [.allowed, .status.code, .uid]' "$TMP/response.json" 2>&1)
expect_eq "verdict: allowed false, code 422, the request's uid echoed" \
	"$(jq -c '[false, 422, .request.uid]' "$SRC/$CASE/review.json")" "$verdict"
expect_eq "response is the case's expected AdmissionReview" \
	"$(jq -S . "$SRC/$CASE/expected.json")" "$(jq -S . "$TMP/response.json" 2>&1)"

# The chart's pre-install hook: `jobguard policy check --strict /policy/policy.json` (templates/
# policy-check.yaml), as 65532 on the same read-only root.
hook() { env -i "${ENVV[@]}" setpriv --no-new-privs chroot --userspec="$USER_SPEC" --groups="${USER_SPEC#*:}" \
	"$R" /usr/local/bin/jobguard policy check --strict "$@" 2>&1; }
expect_eq "the chart's hook command is 'jobguard policy check --strict /policy/policy.json'" \
	"command: /usr/local/bin/jobguard|args: policy check --strict /policy/policy.json" \
	"$(awk '/^ *command:/ { getline; sub(/^ *- /, ""); c = $0 }
		/^ *args:/ { while ((getline l) > 0 && l ~ /^ *- /) { sub(/^ *- /, "", l); a = a " " l } }
		END { print "command: " c "|args:" a }' "$SRC/charts/jobguard/templates/policy-check.yaml")"
out=$(hook /policy/policy.json)
rc=$?
expect_match "the hook command in the image passes the valid policy (exit 0)" \
	"^0 /policy/policy.json: valid: .* sha256 $(sha256sum <"$SRC/$POLICY" | cut -d' ' -f1)\$" "$rc $out"
out=$(hook /policy/bad.json)
rc=$?
expect_eq "the hook command in the image refuses a bad policy (exit 2, its reason)" \
	"2 jobguard policy check: /policy/bad.json: bogus: unknown key" "$rc ${out%% (*}"

kill -TERM "$SERVER"
wait_exit "$SERVER" 60
SERVER=
expect_eq "SIGTERM: the server exits with status 0" 0 "$EXIT_RC"
if grep -q 'shutdown complete' "$TMP/server.log"; then pass "server log: shutdown complete"
else fail "server log lacks 'shutdown complete': $(tail -n 3 "$TMP/server.log")"; fi
for m in $(mounts_under "$R"); do umount "$m"; done
expect_eq "the image's root unmounted" "" "$(mounts_under "$R")"

# The OCI archive (.ci/release's), named as the chart's default image, checked blob by blob.
mkdir "$TMP/oci" && tar -C "$TMP/oci" -xf "$ARCHIVE" || fatal "cannot unpack $ARCHIVE"
expect_eq "oci-layout version" '1.0.0' "$(jq -r .imageLayoutVersion "$TMP/oci/oci-layout" 2>&1)"
expect_eq "index.json: one manifest, named $IMAGE" "1 $IMAGE" \
	"$(jq -r '"\(.manifests | length) \(.manifests[0].annotations["org.opencontainers.image.ref.name"])"' "$TMP/oci/index.json" 2>&1)"
# blob DIGEST: the blob's path, after checking its sha256.
blob() {
	local f=$TMP/oci/blobs/${1/://}
	[[ -f $f && "sha256:$(sha256sum <"$f" | cut -d' ' -f1)" == "$1" ]] && echo "$f"
}
bad=
manifest=$(blob "$(jq -r '.manifests[0].digest' "$TMP/oci/index.json")") || bad="manifest"
if [[ -n $manifest ]]; then
	for d in $(jq -r '.config.digest, .layers[].digest' "$manifest"); do blob "$d" >/dev/null || bad="$bad $d"; done
fi
expect_eq "every blob of the archive is present and matches its sha256 digest" "" "$bad"
if [[ -n $manifest ]]; then
	expect_eq "the archive's config: user, entrypoint and layers of the image" \
		"$(jq -c '[.config.User, .config.Entrypoint, .rootfs.diff_ids]' <<<"$cfg")" \
		"$(jq -c '[.config.User, .config.Entrypoint, .rootfs.diff_ids]' "$(blob "$(jq -r .config.digest "$manifest")")" 2>&1)"
fi

# Only the base image stays in the storage; the release's artefacts are the result.
buildah umount "$CTR" >/dev/null 2>&1
buildah rm "$CTR" >/dev/null 2>&1
CTR=
buildah rmi --force "$IMAGE" >/dev/null 2>&1
buildah rmi --prune >/dev/null 2>&1
echo "# release (base image if new, two builds, artefacts) ${T_RELEASE} s, to /readyz ${T_READY} s"
finish
