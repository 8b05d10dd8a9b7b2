#!/usr/bin/env bash
# Every review of tests/cases as an audit event history (gen_cases.py), decided by
# `jobguard replay -o json` and by `jobguard check`: the same `allowed` per case (compare.py).
#
#   run.sh JOBGUARD_BINARY
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 "$here/gen_cases.py" "$here/../cases" "$out"
python3 "$here/compare.py" "$1" "$out"
# docs/replay.md prints the walkthroughs' output: it must be what those cases print
python3 - "$here/../../docs/replay.md" "$here/cases" <<'PY'
import sys
doc = open(sys.argv[1]).read()
bad = 0
for case in ("walkthrough-multikueue", "parity-upgrade"):
    out = open("%s/%s/expected.stdout" % (sys.argv[2], case)).read()
    if out.rstrip("\n") not in doc:
        print("FAIL docs/replay.md does not show the output of tests/replay/cases/%s" % case)
        bad += 1
    else:
        print("ok   docs/replay.md shows the output of %s" % case)
sys.exit(bad)
PY
