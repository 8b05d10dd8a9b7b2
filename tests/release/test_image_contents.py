#!/usr/bin/env python3
"""The image's root and SBOM without buildah: .ci/image-root on the built binary, packed as an OCI
archive, must pass tests/release/image_contents.py, and planted faults must fail it.

    tests/release/test_image_contents.py SRC JOBGUARD

Needs dpkg (the binary's libraries are Debian packages) and python3's jsonschema; no root. Each
planted fault changes one thing in the root or the SBOM and must be reported with its own line:
a shell, an executable that is not jobguard, dpkg's database, a login shell in /etc/passwd, a file
the SBOM does not list, an SBOM entry for a file that is not there, a file listed twice, an SBOM
that breaks the CycloneDX 1.5 schema (an externalReference type of 1.6, a licence without id or
name), a Debian component without its source. Prints one line per case, then "N passed, M failed".
"""
import copy
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile

SBOM = "usr/share/doc/jobguard/sbom.cdx.json"


def pack(root, bom, out, extra=None, drop=()):
    """ROOT (with BOM in place of its SBOM, EXTRA files added, DROP paths left out) as an OCI archive."""
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w") as t:
        for d, dirs, files in os.walk(root):
            dirs.sort()
            for n in sorted(dirs + files):
                p = os.path.join(d, n)
                rel = os.path.relpath(p, root)
                if rel in drop:
                    continue
                if rel == SBOM:
                    data = json.dumps(bom).encode()
                    ti = tarfile.TarInfo(rel)
                    ti.size = len(data)
                    t.addfile(ti, io.BytesIO(data))
                elif rel == "etc/passwd" and extra and "etc/passwd" in extra:
                    continue
                else:
                    t.add(p, rel, recursive=False)
        for rel, (data, mode) in (extra or {}).items():
            ti = tarfile.TarInfo(rel)
            ti.size, ti.mode = len(data), mode
            t.addfile(ti, io.BytesIO(data))
    blobs = {}

    def blob(data):
        d = "sha256:" + hashlib.sha256(data).hexdigest()
        blobs[d] = data
        return d
    config = blob(json.dumps({"config": {"User": "65532:65532"}}).encode())
    manifest = blob(json.dumps({"schemaVersion": 2, "config": {"digest": config},
                                "layers": [{"digest": blob(layer.getvalue())}]}).encode())
    with tarfile.open(out, "w") as t:
        for name, data in [("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'),
                           ("index.json", json.dumps({"manifests": [{"digest": manifest}]}).encode())] + \
                          [("blobs/" + d.replace(":", "/"), b) for d, b in blobs.items()]:
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))


def main():
    if len(sys.argv) != 3:
        print("usage: test_image_contents.py SRC JOBGUARD", file=sys.stderr)
        return 2
    src, binary = sys.argv[1], sys.argv[2]
    checker = os.path.join(src, "tests/release/image_contents.py")
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="jobguard-image-") as tmp:
        root = os.path.join(tmp, "root")
        r = subprocess.run([sys.executable, os.path.join(src, ".ci/image-root"), "--binary", binary,
                            "--dest", root, "--version", "0.0.0", "--commit", "0" * 40, "--epoch", "0",
                            "--spdx", os.path.join(src, "tests/release/schema/spdx.SNAPSHOT.schema.json")],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL .ci/image-root: {r.stderr.strip()}\n0 passed, 1 failed")
            return 1
        with open(os.path.join(root, SBOM)) as f:
            bom = json.load(f)

        def case(name, want, bom=bom, **kw):
            nonlocal passed, failed
            out = os.path.join(tmp, name + ".oci.tar")
            pack(root, bom, out, **kw)
            r = subprocess.run([sys.executable, checker, out], capture_output=True, text=True)
            got = r.stdout + r.stderr
            ok = (r.returncode == 0 and want is None and "image: ok:" in got) or \
                 (r.returncode == 1 and want is not None and all(w in got for w in want))
            if ok:
                passed += 1
                print(f"ok   {name}")
            else:
                failed += 1
                print(f"FAIL {name}: exit {r.returncode}, expected {want or 'ok'}:\n{got}", end="")

        case("as laid out", None)
        case("a shell", ["/bin/sh: a shell, package manager or interpreter"],
             extra={"bin/sh": (b"\x7fELF", 0o755)})
        case("another executable", ["/usr/bin/tool: an executable other than jobguard"],
             extra={"usr/bin/tool": (b"\x7fELF", 0o755)})
        case("dpkg's database", ["/var/lib/dpkg/status: package manager state"],
             extra={"var/lib/dpkg/status": (b"Package: x\n", 0o644)})
        case("a login shell", ["/etc/passwd: nonroot has the login shell /bin/sh"],
             extra={"etc/passwd": (b"nonroot:x:65532:65532::/:/bin/sh\n", 0o644)})
        case("a file not in the SBOM", ["SBOM: /usr/share/extra is in the image but in no component"],
             extra={"usr/share/extra": (b"x", 0o644)})
        case("a listed file missing", ["SBOM: /usr/local/bin/jobguard is listed but not in the image"],
             drop=("usr/local/bin/jobguard",))
        twice = copy.deepcopy(bom)
        twice["components"][1]["evidence"]["occurrences"].append({"location": "/etc/passwd"})
        case("a file listed twice", ["SBOM: /etc/passwd is listed by jobguard and"], bom=twice)
        v16 = copy.deepcopy(bom)
        v16["components"][1]["externalReferences"][0]["type"] = "source-distribution"
        case("an externalReference type of CycloneDX 1.6", ["schema: components/1/externalReferences/0/type"],
             bom=v16)
        nolic = copy.deepcopy(bom)
        nolic["components"][0]["licenses"] = [{"license": {}}]
        case("a licence without id or name", ["schema: components/0/licenses"], bom=nolic)
        nosrc = copy.deepcopy(bom)
        nosrc["components"][1]["properties"] = []
        case("a Debian component without its source", ["lacks name, version, licence or source"], bom=nosrc)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
