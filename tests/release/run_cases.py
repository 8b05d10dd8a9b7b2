#!/usr/bin/env python3
"""The `release` test: versions.py on the tree as it is, then on planted mistakes.

    tests/release/run_cases.py SRC JOBGUARD

First the tree itself must pass (`versions.py SRC --binary JOBGUARD`). Then each case in
tests/release/cases/NAME/ runs its `run` script (bash) in a scratch copy of what the checks read
(meson.build, Dockerfile, CHANGELOG.md, charts/, .ci/bump, .ci/released, tests/release/*.py), with
BIN set to JOBGUARD and V and C to the tree's version and chart version. The script plants a mistake
(or makes a correct change) and runs the check or .ci/bump; its output and exit status must be the
case's `expected`: first line `exit N`, then the output lines, where {V} and {C} stand for the
versions, <digest> for a 12-digit digest prefix and <date> for a date (so that the cases outlive a
bump). Prints one line per case and "N passed, M failed"; exits 1 on any failure.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
COPY = ["meson.build", "Dockerfile", "CHANGELOG.md", "charts", ".ci/bump", ".ci/released",
        "tests/release/versions.py"]


def main():
    if len(sys.argv) != 3:
        print("usage: run_cases.py SRC JOBGUARD", file=sys.stderr)
        return 2
    src, binary = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    passed = failed = 0
    p = subprocess.run([sys.executable, os.path.join(src, "tests/release/versions.py"), src,
                        "--binary", binary], capture_output=True, text=True)
    m = re.match(r"versions: ok: jobguard (\S+), chart (\S+),", p.stdout)
    if p.returncode != 0 or not m:
        print(f"FAIL the tree itself: exit {p.returncode}\n{p.stdout}{p.stderr}", end="")
        print(f"0 passed, 1 failed")
        return 1
    v, c = m.group(1), m.group(2)
    print(f"ok   the tree itself: jobguard {v}, chart {c}, the binary agrees")
    passed += 1
    cases = os.path.join(HERE, "cases")
    with tempfile.TemporaryDirectory(prefix="jobguard-release-") as tmp:
        for name in sorted(os.listdir(cases)):
            work = os.path.join(tmp, name)
            for rel in COPY:
                s, d = os.path.join(src, rel), os.path.join(work, rel)
                os.makedirs(os.path.dirname(d), exist_ok=True)
                (shutil.copytree if os.path.isdir(s) else shutil.copy2)(s, d)
            env = dict(os.environ, BIN=binary, V=v, C=c)
            r = subprocess.run(["bash", "-eu", os.path.join(cases, name, "run")], cwd=work, env=env,
                               capture_output=True, text=True, timeout=120)
            got = f"exit {r.returncode}\n" + r.stdout + r.stderr
            got = re.sub(r"\b[0-9a-f]{12}\b", "<digest>", got)
            got = re.sub(r"\b\d{4}-\d{2}-\d{2}\b", "<date>", got)
            with open(os.path.join(cases, name, "expected"), encoding="utf-8") as f:
                want = f.read().replace("{V}", v).replace("{C}", c)
            if got == want:
                passed += 1
                print(f"ok   {name}")
            else:
                failed += 1
                print(f"FAIL {name}\n--- expected\n{want}--- got\n{got}", end="")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
