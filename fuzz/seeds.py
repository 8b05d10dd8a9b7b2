#!/usr/bin/env python3
"""Regenerates the committed seeds of fuzz_indexes, fuzz_managedby and fuzz_reader from tests/cases.

fuzz_admit (and fuzz_refdecode, which shares its seeds) gets the cases' reviews from run.sh at run
time; its generated seeds (names starting with 'v-') are the structural pass's vector edges: a quote,
a backslash run or a multibyte character at every position of a 64-byte block, escape runs crossing
blocks, and bodies of every length 0-300.
fuzz_indexes input: int32 LE completions, completed list, '|', failed list.
fuzz_managedby input: the raw value (every "managedBy" string of the cases' objects, CRD targets'
paths and nested copies included).
fuzz_reader input: a file; Lists of the cases' objects as `kubectl get -o json` writes them
(indented; objects under 3 KB, 6 to a List, 12 Lists), and the same objects one after the other,
compact (run.sh adds tests/input's YAML and JSON files at run time).
Hand-written seeds (names starting with 'h-') are kept."""
import hashlib, json, os, struct, sys

here = os.path.dirname(os.path.abspath(__file__))
cases = os.path.join(os.path.dirname(here), "tests", "cases")


def write(target, data):
    d = os.path.join(here, "seeds", target)
    os.makedirs(d, exist_ok=True)
    name = "c-" + hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def managed_by_values(v):
    """Every string at a "managedBy" key anywhere in v: Job's and CronJob's fields and the CRD
    targets' (spec.runPolicy.managedBy, nested copies such as
    spec.replicatedJobs[*].template.spec.managedBy)."""
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "managedBy" and isinstance(x, str):
                yield x
            else:
                yield from managed_by_values(x)
    elif isinstance(v, list):
        for x in v:
            yield from managed_by_values(x)


def objects(review):
    req = review.get("request") or {}
    for k in ("object", "oldObject"):
        o = req.get(k)
        if isinstance(o, dict):
            yield o


for target in ("fuzz_indexes", "fuzz_managedby", "fuzz_admit", "fuzz_reader"):
    d = os.path.join(here, "seeds", target)
    if os.path.isdir(d):
        for n in os.listdir(d):
            if n.startswith("c-") or n.startswith("v-"):
                os.remove(os.path.join(d, n))


def write_vector(data):
    d = os.path.join(here, "seeds", "fuzz_admit")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "v-" + hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


# A small Job status update; NAME is replaced by a string whose special bytes land at a chosen
# offset of the body, so that every position of a 64-byte block is covered.
VECTOR_BASE = (b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u",'
               b'"kind":{"group":"batch","version":"v1","kind":"Job"},"resource":{"group":"batch",'
               b'"version":"v1","resource":"jobs"},"subResource":"status","name":"j","namespace":"d",'
               b'"operation":"UPDATE","userInfo":{"username":"NAME"},"object":{"apiVersion":"batch/v1",'
               b'"kind":"Job","metadata":{"name":"j"},"spec":{"managedBy":"example.com/x"},'
               b'"status":{"active":1}},"oldObject":{"apiVersion":"batch/v1","kind":"Job",'
               b'"metadata":{"name":"j"},"spec":{"managedBy":"example.com/x"},"status":{}}}}')
at = VECTOR_BASE.index(b"NAME")
for middle in (b'\\"', b"\\\\", b"\\u00e9", b"\\ud83d\\ude00",
               "\u00e9\u20ac\U0001F600".encode("utf-8")):
    for pos in range(64):
        pad = (pos - at) % 64
        write_vector(VECTOR_BASE.replace(b"NAME", b"a" * pad + middle))
for run in range(1, 9):  # escape runs crossing a block boundary, odd and even
    for pos in range(56, 64):
        pad = (pos - at) % 64
        write_vector(VECTOR_BASE.replace(b"NAME", b"a" * pad + b"\\" * run + b"n"))
for n in range(301):  # every length 0-300: prefixes of the body
    write_vector(VECTOR_BASE[:n])


def case_reviews():
    """The cases' reviews that parse as JSON, in the order of the case folders' names."""
    for case in sorted(os.listdir(cases)):
        p = os.path.join(cases, case, "review.json")
        if not os.path.isfile(p):
            continue
        try:
            yield json.load(open(p, encoding="utf-8"))
        except ValueError:
            continue


reviews = list(case_reviews())
for review in reviews:
    for o in objects(review):
        spec = o.get("spec") or {}
        for mb in managed_by_values(o):
            write("fuzz_managedby", mb.encode("utf-8", "surrogatepass"))
        st = o.get("status") or {}
        ci, fi = st.get("completedIndexes"), st.get("failedIndexes")
        comp = spec.get("completions")
        if (isinstance(ci, str) or isinstance(fi, str)) and isinstance(comp, int) and -2**31 <= comp < 2**31:
            data = struct.pack("<i", comp) + (ci or "").encode() + b"|" + (fi or "").encode()
            write("fuzz_indexes", data)

# fuzz_reader: Lists of the cases' objects, and the same objects as a stream of values.
found = []
for review in reviews:
    found.extend(o for o in objects(review)
                 if isinstance(o.get("kind"), str) and len(json.dumps(o)) < 3000)
step = max(1, len(found) // 72)
found = found[::step][:72]
for i in range(0, len(found), 6):
    group = found[i:i + 6]
    lst = {"apiVersion": "v1", "items": group, "kind": "List", "metadata": {"resourceVersion": ""}}
    write("fuzz_reader", (json.dumps(lst, indent=4, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass"))
    write("fuzz_reader", "\n".join(json.dumps(o, separators=(",", ":"), ensure_ascii=False)
                                   for o in group).encode("utf-8", "surrogatepass"))
