#!/usr/bin/env python3
"""Prints, for each worst output shape (tests/e2e/worst.py), the body size, the response size and
the peak RSS of `jobguard check` on it: the figures behind docs/limits.md.

usage: bench/bounds.py JOBGUARD_BINARY   (use a release build: meson setup -Dbuildtype=release)
"""
import os
import resource
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WORST = os.path.join(HERE, "..", "tests", "e2e", "worst.py")
SHAPES = ["uncounted-400k", "uncounted-max", "managedby-lt", "dup-long-uids"]


def main():
    jobguard = sys.argv[1]
    print("%-16s %12s %14s %14s" % ("shape", "body bytes", "response bytes", "peak RSS KiB"))
    with tempfile.TemporaryDirectory() as tmp:
        for shape in SHAPES:
            review = os.path.join(tmp, shape + ".json")
            subprocess.run([sys.executable, WORST, shape, review], check=True)
            # a fresh child per shape: ru_maxrss of RUSAGE_CHILDREN is the largest child so far,
            # so each run is measured in its own grandchild process
            cmd = ("import resource,subprocess,sys;"
                   "r=subprocess.run(sys.argv[1:],stdout=subprocess.PIPE);"
                   "print(len(r.stdout), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
            out = subprocess.run([sys.executable, "-c", cmd, jobguard, "check", review],
                                 stdout=subprocess.PIPE, check=True, text=True).stdout.split()
            print("%-16s %12d %14s %14s" % (shape, os.path.getsize(review), out[0], out[1]))


main()
