#!/usr/bin/env bash
# The container image, built from the repository's Dockerfile and run as the chart runs it.
#
#   tests/image/test_image.sh WORKDIR VERSION     (meson passes the build directory and the version)
#
# 1. Base images. No image can be pulled here, so debian:bookworm and debian:bookworm-slim are made
#    from one `debootstrap --variant=minbase bookworm` root (the mirror this machine's apt uses),
#    committed with buildah as docker.io/library/debian:bookworm and :bookworm-slim (slim: the
#    documentation, manual pages and locales excluded, as Debian's official slim image does). They
#    stay in WORKDIR/image/storage for the next run; a clean run makes them from nothing.
# 2. Build. `buildah bud --pull=never --isolation chroot` (daemonless, vfs storage) of ./Dockerfile,
#    the same file `docker build` reads; its apt-get steps reach the mirror through the host's network.
# 3. Run. The image's own config (User, Entrypoint, Env) on its own root filesystem: a read-only
#    bind mount of the image's root with /proc, a /dev tmpfs, /sys read-only and the serving pair
#    at /tls (root:65532, 0440, read-only, as the chart's Secret volume), entered with chroot as
#    65532:65532 (supplementary group 65532, the chart's fsGroup), no capabilities, no_new_privs.
#    Checks: every shared library the loader resolves is in the image and is what the process maps;
#    a write to / and /tmp fails with EROFS; the README's curl example, run from the host with the
#    README's certificate generation, gets the case's exact response; SIGTERM exits 0.
# 4. Archive. `buildah push` to WORKDIR/image/jobguard-VERSION.oci.tar, named
#    docker.io/library/jobguard:VERSION (the chart's default image `jobguard:<appVersion>`); its
#    layout, digests and config are checked.
# The README ("Install on a cluster", "1. Image") says how this compares to a pod with
# readOnlyRootFilesystem and how to push or load the archive.
#
# Skips (exit 77) only without root, buildah or debootstrap. An unreachable mirror or a failed
# build is a failure with its reason. Everything runs in a private mount namespace, so no mount
# outlives the script even if it is killed. Prints its timings, its checks and "N passed, M failed".
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
source "$SRC/tests/e2e/lib.sh" # pass, fail, expect_eq, jg_finish, free_port, wait_exit, mkcerts
# shellcheck source=tests/fresh/debian.sh
source "$SRC/tests/fresh/debian.sh" # mounts_under, debian_mirror, debian_bootstrap, debian_apt_config, readme_command
WORK=${1:?usage: $0 WORKDIR VERSION}
VERSION=${2:?usage: $0 WORKDIR VERSION}
SUITE=bookworm
CASE=tests/cases/r-status-update-denied
IMAGE=docker.io/library/jobguard:$VERSION
BASE=docker.io/library/debian
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

# buildah's storage and registries for this test only: vfs (no overlay or FUSE needed), kept under
# the build directory; short names resolve to docker.io as with docker.
cat >"$TMP/storage.conf" <<EOF
[storage]
driver = "vfs"
graphroot = "$DIR/storage"
runroot = "$DIR/runroot"
EOF
cat >"$TMP/registries.conf" <<'EOF'
unqualified-search-registries = ["docker.io"]
short-name-mode = "permissive"
EOF
export CONTAINERS_STORAGE_CONF=$TMP/storage.conf CONTAINERS_REGISTRIES_CONF=$TMP/registries.conf
export BUILDAH_ISOLATION=chroot
buildah rm --all >/dev/null 2>&1 # working containers of a run that was killed

debian_mirror # the Dockerfile's apt-get steps need it too, not only debootstrap

# base_image TAG ROOT: commits a copy of ROOT as docker.io/library/debian:TAG, with the config of
# Debian's official images (CMD bash, the usual PATH).
base_image() {
	local ctr mnt
	ctr=$(buildah from scratch) && mnt=$(buildah mount "$ctr") && cp -a "$2/." "$mnt/" &&
		buildah config --cmd bash --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$ctr" &&
		buildah commit --rm --quiet "$ctr" "$BASE:$1" >/dev/null
}
# slim ROOT: what Debian's slim images leave out, for the packages installed now and later.
slim() {
	cat >"$1/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
	find "$1/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
	find "$1/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
	rm -rf "$1"/usr/share/{man,groff,info,lintian,linda}/*
}
have_base() { buildah inspect --type image "$BASE:$1" >/dev/null 2>&1; }

t=$(date +%s)
if have_base "$SUITE" && have_base "$SUITE-slim"; then
	pass "base images $BASE:$SUITE and :$SUITE-slim from an earlier run (remove $DIR/storage to make them again)"
else
	ROOTFS=$TMP/rootfs
	debian_bootstrap "$ROOTFS" "$TMP/debootstrap.log"
	debian_apt_config "$ROOTFS"
	# Not in an image: device nodes (the runtime mounts /dev), this machine's resolv.conf and
	# hostname (the runtime provides them), downloaded packages and package lists.
	rm -rf "${ROOTFS:?}"/dev/* "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/cache/apt/*.bin \
		"$ROOTFS"/var/lib/apt/lists/* "$ROOTFS/etc/resolv.conf" "$ROOTFS/etc/hostname"
	base_image "$SUITE" "$ROOTFS" || fatal "cannot commit $BASE:$SUITE from the debootstrap root"
	slim "$ROOTFS"
	base_image "$SUITE-slim" "$ROOTFS" || fatal "cannot commit $BASE:$SUITE-slim"
	rm -rf --one-file-system "$ROOTFS"
	T_BASE=$(($(date +%s) - t))
	echo "# base images: $T_BASE s"
	pass "base images $BASE:$SUITE and :$SUITE-slim made from the debootstrap root ($T_BASE s)"
fi
# The previous run's image, if it was killed before removing it.
buildah rmi --force "$IMAGE" >/dev/null 2>&1
buildah rmi --prune >/dev/null 2>&1

# The build context is the checkout, as for `docker build .`; .dockerignore keeps build*/ out. A
# build directory inside the checkout under another name (it holds the storage) is kept out too.
ignore=()
if [[ $DIR == "$SRC"/* ]]; then
	top=${DIR#"$SRC"/}
	top=${top%%/*}
	if [[ $top != build* ]]; then
		{ cat "$SRC/.dockerignore"; echo "$top/"; } >"$TMP/ignore"
		ignore=(--ignorefile "$TMP/ignore")
	fi
fi
t=$(date +%s)
if buildah bud --pull=never --isolation chroot --layers=false "${ignore[@]}" -f "$SRC/Dockerfile" \
	-t "$IMAGE" "$SRC" >"$TMP/build.log" 2>&1; then
	T_BUILD=$(($(date +%s) - t))
	echo "# build: $T_BUILD s"
	pass "buildah bud --pull=never of ./Dockerfile on the local base images ($T_BUILD s)"
else
	tail -n 40 "$TMP/build.log" | sed 's/^/# build: /'
	fatal "buildah bud of ./Dockerfile failed (last lines above)"
fi

# The image's config, as a runtime reads it.
cfg=$(buildah inspect --type image "$IMAGE" | jq -c '.OCIv1') || fatal "buildah inspect $IMAGE failed"
USER_SPEC=$(jq -r '.config.User' <<<"$cfg")
mapfile -t ENTRY < <(jq -r '.config.Entrypoint[]' <<<"$cfg")
mapfile -t ENVV < <(jq -r '.config.Env[]' <<<"$cfg")
expect_eq "image user (the chart's runAsUser and runAsGroup)" "65532:65532" "$USER_SPEC"
expect_eq "image entrypoint (the chart's command and first argument)" \
	'["/usr/local/bin/jobguard","serve"]' "$(jq -c '.config.Entrypoint' <<<"$cfg")"
expect_eq "image exposes the webhook and ops ports" '["8080/tcp","9443/tcp"]' \
	"$(jq -c '.config.ExposedPorts | keys' <<<"$cfg")"
slim_layer=$(buildah inspect --type image "$BASE:$SUITE-slim" | jq -r '.OCIv1.rootfs.diff_ids[0]')
expect_eq "the runtime stage is the local $BASE:$SUITE-slim plus its layers" \
	"$slim_layer" "$(jq -r '.rootfs.diff_ids[0]' <<<"$cfg")"
expect_eq "the chart's appVersion is the image's tag (its default image is jobguard:<appVersion>)" \
	"appVersion: \"$VERSION\"" "$(grep '^appVersion:' "$SRC/charts/jobguard/Chart.yaml")"

CTR=$(buildah from --pull=never "$IMAGE" 2>"$TMP/from.err") && R=$(buildah mount "$CTR") ||
	fatal "buildah from/mount $IMAGE failed: $(cat "$TMP/from.err")"
echo "# image root $R"

# The libraries: the image's own loader resolves every one inside the image.
loader=$(cd "$R" && ls lib64/ld-linux-*.so.* lib/ld-linux-*.so.* 2>/dev/null | head -n 1)
[[ -n $loader ]] || fatal "no dynamic loader (ld-linux-*.so.*) in the image"
if libs=$(chroot "$R" "/$loader" --list "${ENTRY[0]}" 2>&1) && ! grep -q 'not found' <<<"$libs"; then
	pass "the image's /$loader finds all $(grep -c '=> /' <<<"$libs") libraries of ${ENTRY[0]} in the image: $(awk '/=> \// { printf "%s ", $1 }' <<<"$libs")"
else
	fail "the image's /$loader cannot resolve the libraries of ${ENTRY[0]}: $(tr -s ' \t\n' ' ' <<<"$libs" | head -c 400)"
fi
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
mkdir -p "$R/tls" || fatal "cannot make the mount point $R/tls"
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
	mount -o remount,bind,ro "$R"
	echo ok
) 2>&1
expect_eq "the image's root mounted read-only with /proc, /dev, /sys (read-only) and /tls (read-only)" ok "$mounted"
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

kill -TERM "$SERVER"
wait_exit "$SERVER" 60
SERVER=
expect_eq "SIGTERM: the server exits with status 0" 0 "$EXIT_RC"
if grep -q 'shutdown complete' "$TMP/server.log"; then pass "server log: shutdown complete"
else fail "server log lacks 'shutdown complete': $(tail -n 3 "$TMP/server.log")"; fi
for m in $(mounts_under "$R"); do umount "$m"; done
expect_eq "the image's root unmounted" "" "$(mounts_under "$R")"

# The OCI archive, named as the chart's default image, checked blob by blob.
ARCHIVE=$DIR/jobguard-$VERSION.oci.tar
rm -f "$ARCHIVE"
t=$(date +%s)
if out=$(buildah push --quiet "$IMAGE" "oci-archive:$ARCHIVE:$IMAGE" 2>&1); then
	T_PUSH=$(($(date +%s) - t))
	pass "buildah push to oci-archive:$ARCHIVE ($(du -m "$ARCHIVE" | cut -f1) MB, $T_PUSH s)"
else
	fatal "buildah push $IMAGE oci-archive:$ARCHIVE failed: $out"
fi
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

# Only the base images stay in the storage; the archive is the result.
buildah umount "$CTR" >/dev/null 2>&1
buildah rm "$CTR" >/dev/null 2>&1
CTR=
buildah rmi --force "$IMAGE" >/dev/null 2>&1
buildah rmi --prune >/dev/null 2>&1
echo "# base images ${T_BASE:-cached}${T_BASE:+ s}, build ${T_BUILD} s, to /readyz ${T_READY} s, archive ${T_PUSH} s"
finish
