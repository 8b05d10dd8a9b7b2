#!/usr/bin/env python3
"""What is in the image, read from its OCI archive: minimal, and every file in the SBOM.

    tests/release/image_contents.py ARCHIVE [--sbom-out FILE]

Checks, on the archive's one image (its layers applied in order):
  - nothing to run but jobguard: no shell, package manager or interpreter (sh, bash, dash, busybox,
    dpkg, apt, python, perl, ...), no executable file other than /usr/local/bin/jobguard and the
    shared objects (*.so*), and no /var/lib/dpkg or /var/lib/apt;
  - /etc/passwd has 65532 (the image's user) and no entry with a login shell;
  - the SBOM at /usr/share/doc/jobguard/sbom.cdx.json is valid against the CycloneDX 1.5 JSON schema
    vendored in tests/release/schema/ (README.md there says where it comes from), and its
    evidence.occurrences name every file and link of the image, each once, and nothing else;
  - every Debian component has a name, version, licence, purl and source package.
--sbom-out writes the SBOM's bytes there. Prints what it counted, and each problem on a line;
exits 1 on any problem.
"""
import argparse
import io
import json
import os
import re
import sys
import tarfile
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
SBOM = "usr/share/doc/jobguard/sbom.cdx.json"
FORBIDDEN = re.compile(r"(^|/)(sh|bash|dash|ash|zsh|busybox|toybox|dpkg[^/]*|apt[^/]*|python[0-9.]*|"
                       r"perl[0-9.]*|ruby|node|env|su|sudo|login)$")


def layers(path):
    """The image's files: {path: (tarinfo, bytes or None)}, its layers applied in order."""
    files = {}
    with tarfile.open(path) as t:
        index = json.load(t.extractfile("index.json"))
        if len(index.get("manifests", [])) != 1:
            raise ValueError(f"{len(index.get('manifests', []))} manifests, expected 1")
        blob = lambda d: t.extractfile("blobs/" + d.replace(":", "/")).read()
        manifest = json.loads(blob(index["manifests"][0]["digest"]))
        for layer in manifest["layers"]:
            with tarfile.open(fileobj=io.BytesIO(blob(layer["digest"]))) as lt:
                for m in lt.getmembers():
                    name = m.name.lstrip("./").rstrip("/")
                    base = os.path.basename(name)
                    if base.startswith(".wh."):  # whiteout: a file removed by this layer
                        files.pop(os.path.join(os.path.dirname(name), base[4:]), None)
                        continue
                    if name:
                        files[name] = (m, lt.extractfile(m).read() if m.isfile() else None)
    return files


def validate(bom):
    """Problems of BOM against the vendored CycloneDX 1.5 schema (its $refs resolved locally)."""
    import jsonschema
    d = os.path.join(HERE, "schema")
    schemas = {}
    for n in ("bom-1.5.SNAPSHOT.schema.json", "spdx.SNAPSHOT.schema.json", "jsf-0.82.SNAPSHOT.schema.json"):
        with open(os.path.join(d, n), encoding="utf-8") as f:
            schemas[n] = json.load(f)
    main = schemas["bom-1.5.SNAPSHOT.schema.json"]
    # The $refs name the files next to the main schema: resolved against its $id.
    by_uri = {urllib.parse.urljoin(main["$id"], n): s for n, s in schemas.items()}
    by_uri.update({s["$id"]: s for s in schemas.values() if "$id" in s})
    # additionalItems as draft-07 defines it, with a message that does not sort the extra items
    # (jsonschema 4.10, Debian 12's, sorts them for its message and fails on objects).
    def additional_items(validator, extra, instance, schema):
        items = schema.get("items", {})
        if not validator.is_type(instance, "array") or validator.is_type(items, "object"):
            return
        if validator.is_type(extra, "object"):
            for i, item in enumerate(instance[len(items):], start=len(items)):
                yield from validator.descend(item, extra, path=i)
        elif extra is False and len(instance) > len(items):
            yield jsonschema.ValidationError(
                f"additional items are not allowed ({len(instance) - len(items)} more)")
    cls = jsonschema.validators.extend(jsonschema.validators.validator_for(main),
                                       {"additionalItems": additional_items})
    try:
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT7
        reg = Registry().with_resources(
            [(u, Resource.from_contents(s, default_specification=DRAFT7)) for u, s in by_uri.items()])
        v = cls(main, registry=reg, format_checker=cls.FORMAT_CHECKER)
    except ImportError:  # jsonschema before 4.18 (Debian 12's 4.10)
        resolver = jsonschema.RefResolver(base_uri=main["$id"], referrer=main, store=by_uri)
        v = cls(main, resolver=resolver, format_checker=cls.FORMAT_CHECKER)
    return [f"schema: {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}"
            for e in sorted(v.iter_errors(bom), key=lambda e: list(map(str, e.absolute_path)))]


def main():
    ap = argparse.ArgumentParser(description="The image's contents and SBOM.")
    ap.add_argument("archive")
    ap.add_argument("--sbom-out")
    a = ap.parse_args()
    errs = []
    try:
        files = layers(a.archive)
    except (OSError, KeyError, ValueError, tarfile.TarError) as e:
        print(f"image: {a.archive}: cannot read the image ({e})", file=sys.stderr)
        return 1

    for name, (m, data) in sorted(files.items()):
        if FORBIDDEN.search(name):
            errs.append(f"/{name}: a shell, package manager or interpreter")
        if name.startswith(("var/lib/dpkg", "var/lib/apt", "etc/apt")):
            errs.append(f"/{name}: package manager state")
        if m.isfile() and m.mode & 0o111 and name != "usr/local/bin/jobguard" and ".so" not in os.path.basename(name):
            errs.append(f"/{name}: an executable other than jobguard and the shared objects")
    passwd = (files.get("etc/passwd") or (None, b""))[1] or b""
    users = [l.split(":") for l in passwd.decode(errors="replace").splitlines() if l.count(":") == 6]
    if not any(u[2] == "65532" for u in users):
        errs.append("/etc/passwd: no entry for 65532")
    for u in users:
        if u[6] not in ("/sbin/nologin", "/usr/sbin/nologin", "/bin/false"):
            errs.append(f"/etc/passwd: {u[0]} has the login shell {u[6]}")

    entry = files.get(SBOM)
    if not entry or entry[1] is None:
        errs.append(f"/{SBOM}: missing")
        bom = None
    else:
        try:
            bom = json.loads(entry[1])
        except ValueError as e:
            errs.append(f"/{SBOM}: not JSON ({e})")
            bom = None
    listed = {}
    if bom is not None:
        if a.sbom_out:
            with open(a.sbom_out, "wb") as f:
                f.write(entry[1])
        errs += validate(bom)
        for c in bom.get("components", []):
            for o in c.get("evidence", {}).get("occurrences", []):
                loc = o.get("location", "").lstrip("/")
                if loc in listed:
                    errs.append(f"SBOM: /{loc} is listed by {listed[loc]} and {c.get('name')}")
                listed[loc] = c.get("name")
            if c.get("purl", "").startswith("pkg:deb/"):
                props = {p["name"]: p["value"] for p in c.get("properties", [])}
                if not (c.get("name") and c.get("version") and c.get("licenses") and props.get("debian:source")):
                    errs.append(f"SBOM: Debian component {c.get('name')} lacks name, version, licence or source")
        content = {n for n, (m, _) in files.items() if not m.isdir()}
        for n in sorted(content - set(listed)):
            errs.append(f"SBOM: /{n} is in the image but in no component")
        for n in sorted(set(listed) - content):
            errs.append(f"SBOM: /{n} is listed but not in the image")
    for e in errs:
        print(f"image: {e}", file=sys.stderr)
    if errs:
        return 1
    n_files = sum(1 for m, _ in files.values() if m.isfile())
    n_links = sum(1 for m, _ in files.values() if m.issym())
    size = sum(m.size for m, _ in files.values() if m.isfile())
    print(f"image: ok: {n_files} files and {n_links} links ({size} bytes), no shell, package manager or "
          f"interpreter; SBOM valid (CycloneDX {bom.get('specVersion')}), {len(bom['components'])} "
          f"components listing every file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
