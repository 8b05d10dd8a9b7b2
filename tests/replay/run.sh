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
