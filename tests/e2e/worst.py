#!/usr/bin/env python3
"""Writes the worst-case AdmissionReviews for output amplification (docs/limits.md).

usage: worst.py SHAPE OUT [BODY_LIMIT]
  BODY_LIMIT: what uncounted-max and distinct-uids fill up to (default 7 MiB, the body limit)
  uncounted-400k   status update: uncountedTerminatedPods.succeeded = 400,000 empty strings
                   on a finished Job (1.6 MB)
  uncounted-max    the same, filled with empty strings up to just under the 7 MiB body limit
  managedby-lt     main-resource UPDATE whose spec.managedBy is 7,000,000 '<' characters
                   (format + length checks twice, immutability quotes it JSON-escaped)
  dup-long-uids    status update: 1,000 distinct 3,000-byte UIDs of '<', each listed twice
  distinct-uids    status update of a running Job: as many distinct short UIDs as fit (allowed)
"""
import json
import sys

BODY_LIMIT = 7 * 1024 * 1024


def job(status, managed_by=None):
    spec = {"parallelism": 5, "completions": 5, "completionMode": "NonIndexed", "suspend": False}
    if managed_by is not None:
        spec["managedBy"] = managed_by
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "worst", "namespace": "default"},
            "spec": spec, "status": status}


def review(obj, old, sub):
    req = {"uid": "worst-" + sys.argv[1],
           "kind": {"group": "batch", "version": "v1", "kind": "Job"},
           "resource": {"group": "batch", "version": "v1", "resource": "jobs"},
           "name": "worst", "namespace": "default", "operation": "UPDATE",
           "userInfo": {"username": "worst"}, "object": obj, "oldObject": old}
    if sub:
        req["subResource"] = sub
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}


FINISHED = {"conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                           {"type": "Complete", "status": "True"}],
            "startTime": "2025-01-01T00:00:00Z", "completionTime": "2025-01-01T00:00:05Z",
            "succeeded": 5}
RUNNING = {"startTime": "2025-01-01T00:00:00Z", "active": 1, "succeeded": 4,
           "uncountedTerminatedPods": {}}


def status_with(succeeded):
    return review(job(dict(FINISHED, uncountedTerminatedPods={"succeeded": succeeded})),
                  job(RUNNING), "status")


def dump(doc):
    return json.dumps(doc, separators=(",", ":")).encode()


def main():
    global BODY_LIMIT
    shape, out = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3:
        BODY_LIMIT = int(sys.argv[3])
    if shape == "uncounted-400k":
        data = dump(status_with([""] * 400000))
    elif shape == "uncounted-max":
        base = len(dump(status_with([])))
        data = dump(status_with([""] * ((BODY_LIMIT - base - 16) // 3 + 1)))
    elif shape == "managedby-lt":
        data = dump(review(job({}, "<" * 7000000), job({}), None))
    elif shape == "dup-long-uids":
        uids = []
        for i in range(1000):
            u = "%04d" % i + "<" * 2996
            uids += [u, u]
        data = dump(status_with(uids))
    elif shape == "distinct-uids":
        alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
        uids, room, n = [], BODY_LIMIT - len(dump(status_with([]))) - 64, 0
        while room > 0:
            u, k = "", n
            while True:
                u += alphabet[k % 62]
                k //= 62
                if not k:
                    break
            uids.append(u)
            room -= len(u) + 3
            n += 1
        running = dict(RUNNING, uncountedTerminatedPods={"succeeded": uids})
        data = dump(review(job(running), job(RUNNING), "status"))
    else:
        sys.exit("unknown shape " + shape)
    if len(data) > BODY_LIMIT:
        sys.exit("%s: %d bytes, over the body limit" % (shape, len(data)))
    with open(out, "wb") as f:
        f.write(data)


main()
