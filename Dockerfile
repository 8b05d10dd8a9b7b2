# syntax=docker/dockerfile:1
# jobguard container image: the binary, the shared libraries it links, the dynamic loader and a
# passwd entry for 65532 — no shell, no package manager, no interpreter.
#
#   .ci/release        the release: this file built twice with buildah (daemonless, reproducible),
#                      checked, and written as an OCI archive with the chart, SBOM and sources
#   V=$(meson introspect --projectinfo build | jq -r .version) E=$(git log -1 --format=%ct)
#   buildah bud --build-arg VERSION=$V --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg SOURCE_DATE_EPOCH=$E --timestamp $E -t jobguard:$V .
#   docker build with the same --build-arg options works too (its layers are not reproducible)
#
# VERSION must be meson.build's project version (the build stops otherwise), which is also the
# chart's appVersion; `tests/release/versions.py` keeps the default below equal to it. The `image`
# test (tests/image/test_image.sh) builds, runs and checks the result; docs/image.md says how.

# ---- build -------------------------------------------------------------------
FROM debian:bookworm AS build
# libc6-dev is only a Recommends of gcc, so it is named here because of --no-install-recommends.
# The -dev packages bring the runtime libraries (libmicrohttpd12, libgnutls30, libssl3, libjansson4,
# libyaml-0-2, ...) that .ci/image-root copies into the image with dpkg's records of them.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      meson ninja-build pkg-config libmicrohttpd-dev libjansson-dev libyaml-dev libssl-dev gcc libc6-dev binutils \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
ARG VERSION=0.8.0
ARG COMMIT=0000000000000000000000000000000000000000
ARG SOURCE_DATE_EPOCH=0
# The binary is stripped (symbols are not needed to run; the build is the same for every build of a
# commit, so a debug build reproduces them). It must report VERSION, or the image would lie.
RUN meson setup build --buildtype=release -Dtests=false \
 && ninja -C build src/jobguard \
 && strip --strip-unneeded -o /jobguard build/src/jobguard \
 && v=$(/jobguard --version) \
 && case "$v" in "jobguard $VERSION "*) ;; *) echo "jobguard --version says '$v', VERSION is $VERSION: pass --build-arg VERSION=<meson.build's version>" >&2; exit 1 ;; esac \
 && python3 .ci/image-root --binary /jobguard --dest /rootfs --version "$VERSION" --commit "$COMMIT" \
      --epoch "$SOURCE_DATE_EPOCH" --spdx tests/release/schema/spdx.SNAPSHOT.schema.json

# ---- runtime -------------------------------------------------------------------
# Nothing but what .ci/image-root laid out: /usr/local/bin/jobguard, its libraries and loader found
# with ldd and dpkg, their copyright files, /etc/passwd and /etc/group, an empty /tmp, and the SBOM
# at /usr/share/doc/jobguard/sbom.cdx.json. The chart calls the binary directly, probes are HTTP,
# and jobguard handles SIGTERM itself, so no shell is needed.
FROM scratch
COPY --from=build /rootfs/ /
ARG VERSION=0.8.0
ARG COMMIT=0000000000000000000000000000000000000000
LABEL org.opencontainers.image.title="jobguard" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$COMMIT" \
      org.opencontainers.image.licenses="Apache-2.0"
# 65532 is the conventional "nonroot" UID (distroless); the chart runs the pod as 65532 too.
USER 65532:65532
EXPOSE 9443 8080
ENTRYPOINT ["/usr/local/bin/jobguard", "serve"]
