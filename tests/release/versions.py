#!/usr/bin/env python3
"""One version everywhere: the checks a release runs (.ci/release) and the `release` test runs.

    tests/release/versions.py SRC [--binary JOBGUARD] [--oci ARCHIVE] [--sbom SBOM]

The project's version V is meson.build's `project(version:)`. It must be:
  - what `JOBGUARD --version` prints ("jobguard V ..."), with --binary;
  - the chart's appVersion (charts/jobguard/Chart.yaml), which is the default image tag, and
    values.yaml's image.tag, which must stay "" (the appVersion) or be V;
  - the default of every `ARG VERSION=` in the Dockerfile;
  - with --oci, the image's org.opencontainers.image.version label and the archive's image name;
  - with --sbom, the SBOM's version of the image and of its jobguard component.
The chart's own version C (Chart.yaml `version:`) is semver. .ci/released records, for each chart
version as it was released, the app version and the digest of charts/ at that time (`.ci/bump`
writes the line). If C is recorded, charts/ must still have that digest and the appVersion that
app version: the chart changed since it was released without a new chart version otherwise. If C is
not recorded yet, it must be newer than every recorded one.
CHANGELOG.md must have a section `## [V] - YYYY-MM-DD` and the line `Chart version C, image
jobguard:V.` in some section.

Prints each problem on its own line and exits 1 when there is any; prints one "ok" line otherwise.
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile

SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?")


def semver_key(v):
    m = SEMVER.fullmatch(v)
    if not m:
        return None
    # A pre-release sorts before its release.
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) is None, m.group(4) or "")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def charts_digest(src):
    """sha256 over every file under charts/: its path, whether it is executable, and its bytes."""
    h = hashlib.sha256()
    top = os.path.join(src, "charts")
    entries = []
    for root, dirs, files in os.walk(top):
        dirs.sort()
        for n in files:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, src)
            if os.path.islink(p):
                entries.append((rel, "l", os.readlink(p).encode()))
            else:
                with open(p, "rb") as f:
                    entries.append((rel, "x" if os.stat(p).st_mode & 0o111 else "f", f.read()))
    for rel, kind, data in sorted(entries):
        h.update(f"{rel}\0{kind}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def released(src):
    """.ci/released: [(chart version, app version, digest, date)], in file order."""
    rows = []
    path = os.path.join(src, ".ci", "released")
    if not os.path.exists(path):
        return rows, [f"{path} is missing (the record of released chart versions)"]
    errs = []
    for i, line in enumerate(read(path).splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split()
        if len(f) != 4 or not semver_key(f[0]) or not semver_key(f[1]) or not re.fullmatch(r"[0-9a-f]{64}", f[2]):
            errs.append(f".ci/released:{i}: expected 'CHART_VERSION APP_VERSION SHA256 DATE', got: {line}")
            continue
        rows.append(tuple(f))
    return rows, errs


def check(src, binary, oci, sbom):
    errs = []
    meson = read(os.path.join(src, "meson.build"))
    m = re.search(r"project\(\s*'jobguard'.*?version\s*:\s*'([^']*)'", meson, re.S)
    if not m:
        return ["meson.build: no project('jobguard', version : '...')"], None, None
    v = m.group(1)
    if not semver_key(v):
        errs.append(f"meson.build: version '{v}' is not semver (X.Y.Z)")

    chart = read(os.path.join(src, "charts/jobguard/Chart.yaml"))
    cm = re.search(r"^version:\s*\"?([^\"\s]+)\"?\s*$", chart, re.M)
    am = re.search(r"^appVersion:\s*\"?([^\"\s]+)\"?\s*$", chart, re.M)
    c = cm.group(1) if cm else None
    if not c or not semver_key(c):
        errs.append(f"charts/jobguard/Chart.yaml: version {c!r} is not semver (X.Y.Z)")
    if not am or am.group(1) != v:
        errs.append(f"charts/jobguard/Chart.yaml: appVersion is {am.group(1) if am else None!r}, "
                    f"meson.build's version is '{v}'")

    values = read(os.path.join(src, "charts/jobguard/values.yaml"))
    im = re.search(r"^image:\s*\n((?:[ \t]+.*\n|\s*\n)*)", values, re.M)
    tm = re.search(r"^[ \t]+tag:\s*(.*?)\s*$", im.group(1), re.M) if im else None
    tag = tm.group(1).strip("\"'") if tm else None
    if tag is None:
        errs.append("charts/jobguard/values.yaml: no image.tag")
    elif tag not in ("", v):
        errs.append(f"charts/jobguard/values.yaml: image.tag is '{tag}', not \"\" (the appVersion) or '{v}'")

    docker = read(os.path.join(src, "Dockerfile"))
    args = re.findall(r"^ARG VERSION(?:=(\S*))?\s*$", docker, re.M)
    if not args:
        errs.append("Dockerfile: no 'ARG VERSION=' line")
    for a in args:
        if a != v:
            errs.append(f"Dockerfile: ARG VERSION={a}, meson.build's version is '{v}'")

    if binary:
        try:
            out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout
        except OSError as e:
            out = f"({e})"
        if not out.startswith(f"jobguard {v} "):
            errs.append(f"{binary} --version says '{out.strip()}', meson.build's version is '{v}'")

    if c and semver_key(c):
        rows, rerrs = released(src)
        errs += rerrs
        digest = charts_digest(src)
        mine = [r for r in rows if r[0] == c]
        if mine:
            _, app, recorded, date = mine[-1]
            if recorded != digest:
                errs.append(f"charts/ changed since chart {c} was released on {date} (.ci/released has "
                            f"digest {recorded[:12]}, charts/ now {digest[:12]}): give it a new chart "
                            f"version with .ci/bump (docs/release.md)")
            if app != v:
                errs.append(f"chart {c} was released with appVersion {app}, the appVersion is now {v}: "
                            f"give the chart a new version with .ci/bump (docs/release.md)")
        else:
            newer = [r[0] for r in rows if semver_key(r[0]) >= semver_key(c)]
            if newer:
                errs.append(f"chart version {c} is not newer than chart {max(newer, key=semver_key)} "
                            f"in .ci/released")
        older_apps = [r[1] for r in rows if semver_key(r[1]) and semver_key(v) and semver_key(r[1]) > semver_key(v)]
        if older_apps:
            errs.append(f"version {v} is older than app version {max(older_apps, key=semver_key)} in .ci/released")

    log = read(os.path.join(src, "CHANGELOG.md"))
    if not re.search(r"^## \[" + re.escape(v) + r"\] - \d{4}-\d{2}-\d{2}\s*$", log, re.M):
        errs.append(f"CHANGELOG.md: no section '## [{v}] - YYYY-MM-DD' for the version in meson.build")
    if c and not re.search(r"^Chart version " + re.escape(c) + r", image jobguard:" + re.escape(v) + r"\.$", log, re.M):
        errs.append(f"CHANGELOG.md: no line 'Chart version {c}, image jobguard:{v}.' for the chart's version")

    if oci:
        errs += check_oci(oci, v)
    if sbom:
        errs += check_sbom(sbom, v)
    return errs, v, c


def check_oci(path, v):
    errs = []
    try:
        with tarfile.open(path) as t:
            index = json.load(t.extractfile("index.json"))
            desc = index["manifests"][0]
            blob = lambda d: json.load(t.extractfile("blobs/" + d.replace(":", "/")))
            config = blob(blob(desc["digest"])["config"]["digest"])
    except (OSError, KeyError, IndexError, ValueError, tarfile.TarError) as e:
        return [f"{path}: not an OCI archive with one image ({e})"]
    name = desc.get("annotations", {}).get("org.opencontainers.image.ref.name", "")
    if not name.endswith(":" + v):
        errs.append(f"{path}: image name '{name}' does not end in ':{v}'")
    label = (config.get("config", {}).get("Labels") or {}).get("org.opencontainers.image.version")
    if label != v:
        errs.append(f"{path}: label org.opencontainers.image.version is {label!r}, meson.build's version is '{v}'")
    return errs


def check_sbom(path, v):
    try:
        bom = json.loads(read(path))
        top = bom["metadata"]["component"]["version"]
        jg = [c.get("version") for c in bom.get("components", []) if c.get("name") == "jobguard"]
    except (OSError, KeyError, TypeError, ValueError) as e:
        return [f"{path}: not a CycloneDX SBOM with metadata.component ({e})"]
    errs = []
    if top != v:
        errs.append(f"{path}: the image's version is {top!r}, meson.build's version is '{v}'")
    if jg != [v]:
        errs.append(f"{path}: the jobguard component's versions are {jg}, meson.build's version is '{v}'")
    return errs


def main():
    ap = argparse.ArgumentParser(description="One version everywhere (docs/release.md).")
    ap.add_argument("src")
    ap.add_argument("--binary")
    ap.add_argument("--oci")
    ap.add_argument("--sbom")
    ap.add_argument("--digest", action="store_true", help="print the digest of charts/ and exit")
    a = ap.parse_args()
    if a.digest:
        print(charts_digest(a.src))
        return 0
    errs, v, c = check(a.src, a.binary, a.oci, a.sbom)
    for e in errs:
        print(f"versions: {e}", file=sys.stderr)
    if errs:
        return 1
    print(f"versions: ok: jobguard {v}, chart {c}" + (", binary" if a.binary else "") +
          (", image" if a.oci else "") + (", SBOM" if a.sbom else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
