#!/usr/bin/env python3
"""Every review of tests/cases through `jobguard replay` and through `jobguard check`: the same
`allowed` for each case's write, keyed by its auditID (gen_cases.py makes the event histories).

    compare.py JOBGUARD GEN_DIR

A case whose write replay decides must come out of replay fully decided with check's `allowed`; a
case replay skips (DELETE, CONNECT, another subresource, a kind that is no target) must be one
check allows untouched, and must not come out of replay at all."""
import json
import subprocess
import sys

JG, GEN = sys.argv[1], sys.argv[2]
with open(GEN + "/groups.json") as fh:
    groups = json.load(fh)
failures, compared, skipped = [], 0, 0
for g in groups:
    opts = (["--policy-file", g["policy"]] if g["policy"] else []) + g["args"]
    reviews = [c["review"] for c in g["cases"]]
    chk = subprocess.run([JG, "check"] + opts + reviews, capture_output=True, text=True)
    responses = [json.loads(l) for l in chk.stdout.splitlines()]
    if len(responses) != len(reviews):
        failures.append("%s: check printed %d responses for %d reviews: %s" % (
            g["log"], len(responses), len(reviews), chk.stderr[:400]))
        continue
    rep = subprocess.run([JG, "replay", "-o", "json"] + opts + [g["log"]], capture_output=True,
                         text=True)
    if rep.returncode not in (0, 1) or rep.stderr:
        failures.append("%s: replay exit %d: %s" % (g["log"], rep.returncode, rep.stderr[:600]))
    lines = [json.loads(l) for l in rep.stdout.splitlines()]
    if not lines or "summary" not in lines[-1]:
        failures.append("%s: replay printed no summary line" % g["log"])
        continue
    by_id = {}
    for l in lines[:-1]:
        by_id.setdefault(l["auditID"], []).append(l)
    for c, resp in zip(g["cases"], responses):
        want = resp["response"]["allowed"]
        got = by_id.get(c["auditID"], [])
        if len(got) > 1:
            failures.append("%s: %d replay lines for auditID %s" % (c["case"], len(got),
                                                                   c["auditID"]))
            continue
        if not got:
            if want is not True:
                failures.append("%s: replay skipped the write, check says allowed=%s" % (
                    c["case"], want))
            skipped += 1
            continue
        line = got[0]
        if line["decision"] != "full":
            failures.append("%s: replay decided it %s (%s)" % (c["case"], line["decision"],
                                                               line.get("reason")))
        elif line["allowed"] != want:
            failures.append("%s: replay allowed=%s, check allowed=%s (%s)" % (
                c["case"], line["allowed"], want, json.dumps(line["causes"])[:300]))
        else:
            compared += 1
for f in failures:
    print("FAIL " + f)
print("%d cases decided by replay as by check, %d skipped by replay and allowed by check, "
      "%d failures" % (compared, skipped, len(failures)))
sys.exit(1 if failures or compared < 300 else 0)
