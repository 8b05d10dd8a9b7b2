# syntax=docker/dockerfile:1
# jobguard container image.
#
#   docker build -t jobguard:0.1.0 .
#   buildah bud -t jobguard:0.1.0 .          (no Docker engine needed)
#
# The `image` test (tests/image/test_image.sh, in `meson test` and .ci/run) builds this file with
# buildah and --pull=never on debian:bookworm and debian:bookworm-slim made locally from a
# debootstrap root, runs the result as 65532 on a read-only root with only the image's libraries,
# checks the README example's verdict against it, and writes build/image/jobguard-<version>.oci.tar
# (docs/image.md). Its build steps mirror .ci/run: the same Debian release, the build packages of
# .ci/deps, and the same meson setup and ninja commands, minus the tests. Keep them in step.

# ---- build -------------------------------------------------------------------
FROM debian:bookworm AS build
# libc6-dev is only a Recommends of gcc, so it is named here because of --no-install-recommends.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      meson ninja-build pkg-config libmicrohttpd-dev libjansson-dev libyaml-dev libssl-dev check gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN meson setup build --buildtype=release -Dtests=false \
 && ninja -C build \
 && install -D -m 0755 build/src/jobguard /out/usr/local/bin/jobguard \
 && /out/usr/local/bin/jobguard --version

# ---- runtime -------------------------------------------------------------------
# Only the shared libraries jobguard links (libmicrohttpd with GnuTLS for the wire, OpenSSL
# for certificate handling, jansson, libyaml for the files the CLI reads) and CA certificates. No shell is needed at runtime: the chart calls the binary
# directly, probes are HTTP, and shutdown is handled by jobguard on SIGTERM.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libmicrohttpd12 libgnutls30 libjansson4 libyaml-0-2 libssl3 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/usr/local/bin/jobguard /usr/local/bin/jobguard
# 65532 is the conventional "nonroot" UID (distroless); the chart runs the pod as 65532 too.
USER 65532:65532
EXPOSE 9443 8080
ENTRYPOINT ["/usr/local/bin/jobguard", "serve"]
