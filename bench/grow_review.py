#!/usr/bin/env python3
"""bench/grow_review.py SIZE [REVIEW]: a copy of REVIEW (default: tests/cases/r-status-update-realistic)
whose Job pod templates (object and oldObject) carry extra sidecar containers, copies of the first
container under new names, until the compact body is at least SIZE bytes (e.g. 65536). No rule
reads a container, so the verdict is the original's: the body for the engine's per-byte cost on
large pod templates (bench/README.md)."""
import json
import os
import sys

size = int(sys.argv[1])
here = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    here, "..", "tests", "cases", "r-status-update-realistic", "review.json")
with open(src, encoding="utf-8") as f:
    review = json.load(f)


def dump(r):
    return json.dumps(r, separators=(",", ":"), ensure_ascii=False)


objs = [review["request"][k] for k in ("object", "oldObject") if review["request"].get(k)]
i = 0
while len(dump(review).encode()) < size:
    for o in objs:
        containers = o["spec"]["template"]["spec"]["containers"]
        c = json.loads(json.dumps(containers[0]))
        c["name"] = "sidecar-%d" % i
        containers.append(c)
    i += 1
sys.stdout.write(dump(review))
