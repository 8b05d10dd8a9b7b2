#!/usr/bin/env python3
"""Validates `jobguard scan -o policyreport|openreports` output against the real CRD schemas.

Usage: validate_report.py CRD_DIR REPORT.json

REPORT.json is a v1 List; every item must be a kind one of the CRDs in CRD_DIR defines (at a
served version), valid against its openAPIV3Schema, and hold no field that schema does not
name: the API server would prune such a field silently, so it counts as an error here (every
object schema that lists properties and no additionalProperties is closed). A namespaced kind
needs metadata.namespace, a cluster-scoped one must have none. Needs python3-yaml and
python3-jsonschema. Prints one line per problem; exit status 1 when there is any.
"""
import json
import sys

import jsonschema
import yaml


def closed(schema):
    """The schema with every object that names its properties closed to others."""
    if isinstance(schema, list):
        return [closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: closed(v) for k, v in schema.items() if not k.startswith("x-kubernetes-")}
    if "properties" in schema and "additionalProperties" not in schema:
        out["additionalProperties"] = False
    return out


def load_crds(crd_dir):
    import glob
    import os

    kinds = {}
    for path in sorted(glob.glob(os.path.join(crd_dir, "*.yaml"))):
        with open(path) as f:
            for crd in yaml.safe_load_all(f):
                if not crd:
                    continue
                spec = crd["spec"]
                for v in spec["versions"]:
                    if not v.get("served"):
                        continue
                    schema = closed(v["schema"]["openAPIV3Schema"])
                    # metadata is ObjectMeta, which the API server validates itself
                    schema["properties"]["metadata"] = {"type": "object"}
                    key = (spec["group"] + "/" + v["name"], spec["names"]["kind"])
                    kinds[key] = (schema, spec["scope"])
    return kinds


def main():
    kinds = load_crds(sys.argv[1])
    with open(sys.argv[2]) as f:
        doc = json.load(f)
    problems = []
    if doc.get("apiVersion") != "v1" or doc.get("kind") != "List":
        problems.append("not a v1 List")
    for i, item in enumerate(doc.get("items", [])):
        key = (item.get("apiVersion"), item.get("kind"))
        if key not in kinds:
            problems.append(f"items[{i}]: {key[0]} {key[1]} is not defined by the CRDs")
            continue
        schema, scope = kinds[key]
        for e in jsonschema.Draft7Validator(schema).iter_errors(item):
            path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
            problems.append(f"items[{i}]{path}: {e.message}")
        ns = item.get("metadata", {}).get("namespace")
        if (scope == "Namespaced") != bool(ns):
            problems.append(f"items[{i}]: {key[1]} is {scope} but metadata.namespace is {ns!r}")
        summary = item.get("summary", {})
        counts = {}
        for r in item.get("results", []):
            counts[r.get("result")] = counts.get(r.get("result"), 0) + 1
        for k in ("pass", "fail", "warn", "error", "skip"):
            if summary.get(k, 0) != counts.get(k, 0):
                problems.append(f"items[{i}].summary.{k}: {summary.get(k)} but {counts.get(k, 0)} results")
    for p in problems:
        print(p)
    print(f"{len(doc.get('items', []))} reports, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
