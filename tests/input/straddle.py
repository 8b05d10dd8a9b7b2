#!/usr/bin/env python3
"""Reads that end at every byte of a List: `jobguard convert -` fed through a pipe in pieces, each
written only once the reader has drained the one before, so that every read(2) the reader makes
ends exactly where a piece ends. The pieces end at each byte offset of a List's header (members
before "items", "items" itself), of its elements (quotes, escapes, a backslash before a quote,
brackets inside strings, a multibyte character, nested objects and arrays) and of its tail.

  straddle.py json JOBGUARD   the items are exactly those json.loads finds, in order, no error
  straddle.py yaml JOBGUARD   the output is byte for byte that of the same text read whole

Prints "ok" or what differs; exit status 1 on a difference."""
import fcntl
import json
import os
import struct
import subprocess
import sys
import tempfile
import termios
import time

HEADER = b'{"apiVersion":"v1", "metadata" : {"items":"x","resourceVersion":"1"},\n "kind":"List","items" : [\n'
ELEMENT = (b'{"kind":"Job","s":"a \\" ] } \\\\ [ {","e":"\\\\\\"","u":"\\u00e9\xc3\xa9\\ud83d\\ude00",'
           b'"k":"items","n":[1,-2.5e-3,{"items":[1]},true,null],\n  "t":"\\\\"}')
TAIL = b'\n], "extra":{"items":[2]},"kind":"List"}'

YHEAD = b'apiVersion: v1\nmetadata: {items: x}\nitems:\n'
YELEMENT = (b'- kind: Job\n  s: "a \\" ] } \\\\ [ {"\n  e: \'it\'\'s\'\n  u: "\\u00e9\xc3\xa9"\n'
            b'  b: |\n    line1\n    "x" ]\n  n: [1, -2.5e-3, {x: []}, true, null, 0755, on]\n')
YTAIL = b'kind: List\n---\n'


def pieces_at(units):
    """The stream of units (each a list of parts) and the offsets where a read must end: in unit
    u, part p of it is cut at byte u (when it has that many)."""
    data, cuts = b"", []
    for u, parts in enumerate(units):
        for p in parts:
            if u < len(p) and u > 0:
                cuts.append(len(data) + u)
            data += p
    return data, cuts


def build(fmt):
    if fmt == "json":
        parts = [HEADER, ELEMENT, b",\n  ", ELEMENT, TAIL]
        n = max(len(p) for p in parts)
        units = [[HEADER, ELEMENT, b",\n  ", ELEMENT, TAIL, b"\n"] for _ in range(n)]
    else:
        parts = [YHEAD, YELEMENT, YTAIL]
        n = max(len(p) for p in parts)
        units = [[YHEAD, YELEMENT, YELEMENT, YTAIL] for _ in range(n)]
    return pieces_at(units)


def pending(fd):
    b = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
    return struct.unpack("i", b)[0]


def feed(jg, data, cuts):
    """convert - with data written in the pieces between cuts, each once the pipe is empty."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([jg, "convert", "-"], stdin=subprocess.PIPE, stdout=out, stderr=err)
        fd = p.stdin.fileno()
        start = 0
        for c in cuts + [len(data)]:
            piece = data[start:c]
            assert len(piece) <= 4096  # one atomic write: the reader gets it whole or not at all
            while pending(fd) > 0:
                time.sleep(0.0002)
            os.write(fd, piece)
            start = c
        p.stdin.close()
        rc = p.wait(timeout=60)
        out.seek(0)
        err.seek(0)
        return rc, out.read(), err.read()


def whole(jg, data):
    with tempfile.NamedTemporaryFile(suffix=".yaml") as f:
        f.write(data)
        f.flush()
        r = subprocess.run([jg, "convert", f.name], capture_output=True, timeout=60)
        return r.returncode, r.stdout, r.stderr


def main():
    fmt, jg = sys.argv[1], sys.argv[2]
    data, cuts = build(fmt)
    rc, out, err = feed(jg, data, cuts)
    problems = []
    if rc != 0 or err:
        problems.append(f"exit {rc}, stderr {err[:300]!r}")
    if fmt == "json":
        want, dec, text, i = [], json.JSONDecoder(), data.decode(), 0
        while i < len(text):
            while i < len(text) and text[i] in " \n":
                i += 1
            if i == len(text):
                break
            v, i = dec.raw_decode(text, i)
            want.extend(v["items"])
        got = [json.loads(line) for line in out.decode().splitlines()]
        if got != want:
            problems.append(f"{len(got)} items, {len(want)} expected; first difference: " + next(
                (f"item {k}: {g!r} != {w!r}" for k, (g, w) in enumerate(zip(got, want)) if g != w), "count"))
    else:
        wrc, wout, werr = whole(jg, data)
        if wrc != 0 or werr or not wout:
            problems.append(f"read whole: exit {wrc}, stderr {werr[:300]!r}")
        if out != wout:
            problems.append(f"pieces and whole differ:\n{out[:600]!r}\n{wout[:600]!r}")
    print(f"{len(cuts)} reads cut; " + ("; ".join(problems) if problems else "ok"))
    return 1 if problems else 0


sys.exit(main())
