#!/usr/bin/env python3
"""The repository explains itself: usage check.py SOURCE_ROOT JOBGUARD_BINARY.

Fails when
  - a file refers to a document outside the repository (the project's former reference notes);
  - a citation of docs/rules.md (a section "§N", a row "§3.2 #K", an anchor "rules.md#x", an edge
    case "eNN") points at nothing in docs/rules.md;
  - a rule ID printed by `jobguard rules` has no entry (anchor, message, upstream function) there;
  - the rule table of docs/checks.md is not the current `jobguard rules --markdown`;
  - the table of docs/vap.md is not the current `jobguard vap --explain --markdown`;
  - the README is longer than a third of what it once was, or leaves a document of docs/ unlinked,
    or a Markdown file links a file that does not exist.
Each check first proves on planted input that it can fail, and counts what it checked."""
import fnmatch
import os
import re
import subprocess
import sys

ROOT, JG = sys.argv[1], sys.argv[2]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL - " + msg)


def ok(msg):
    print("ok - " + msg)


# ---- the files of the repository ----------------------------------------------------------

def repo_files():
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):  # no git: walk, skipping what .gitignore skips
        ignored = [".git"]
        if os.path.isfile(os.path.join(ROOT, ".gitignore")):
            with open(os.path.join(ROOT, ".gitignore")) as fh:
                ignored += [l.strip().strip("/") for l in fh if l.strip() and not l.startswith("#")]
        names = []
        for d, subdirs, files in os.walk(ROOT):
            rel = os.path.normpath(os.path.relpath(d, ROOT))
            subdirs[:] = [s for s in subdirs if not any(
                fnmatch.fnmatch(s, p) or fnmatch.fnmatch(os.path.normpath(os.path.join(rel, s)), p)
                for p in ignored)]
            names += [os.path.normpath(os.path.join(rel, f)) for f in files]
    texts = {}
    for n in names:
        p = os.path.join(ROOT, n)
        if not os.path.isfile(p):
            continue
        with open(p, "rb") as fh:
            data = fh.read()
        if b"\0" in data:
            continue
        texts[n] = data.decode("utf-8", "replace")
    return texts


# ---- 1. no document outside the repository ------------------------------------------------
# Spelled in pieces so that this file does not match itself.
OUTSIDE = re.compile("|".join([
    r"\b(?:job-" + "rules|toolchain|peers|STYLE|DESIGN|crds|user-" + "needs)" + r"\.md\b",
    r"\buser-" + "needs" + r"\b",
    r"\.\./" + "shared" + r"\b",
    r"/work/" + "shared",
    r"\bshared" + r"/(?:reference|data)\b",
]))


def outside_refs(lines):
    return [(i + 1, l) for i, l in enumerate(lines) if OUTSIDE.search(l)]


planted = ["see " + "job-" + "rules" + ".md §2", "toolchain" + ".md §8", "peers" + ".md",
           "$ROOT/../" + "shared" + "/data/reviews", "/work/" + "shared" + "/x", "user-" + "needs.md",
           "DESIGN" + ".md", "STYLE" + ".md", "crds" + ".md"]
clean = ["docs/rules.md §2.2", "shared by both webhooks", "libshared.so", "the rules.md table"]
if len(outside_refs(planted)) == len(planted) and not outside_refs(clean):
    ok("outside-reference detector flags all %d planted references and no clean line" % len(planted))
else:
    fail("outside-reference detector is broken")

files = repo_files()
if len(files) < 100 or "src/engine/rules.c" not in files or "README.md" not in files:
    fail("found only %d files under %s: not the repository" % (len(files), ROOT))
SELF = os.path.relpath(os.path.abspath(__file__), os.path.abspath(ROOT))
bad = [(n, i, l) for n, t in files.items() if n != SELF for i, l in outside_refs(t.splitlines())]
for n, i, l in bad:
    fail("%s:%d refers to a document outside the repository: %s" % (n, i, l.strip()[:120]))
if not bad:
    ok("%d files: no reference to a document outside the repository" % len(files))

# ---- 2. docs/rules.md: what can be cited ---------------------------------------------------
RULES = "docs/rules.md"
doc = files.get(RULES, "")
if not doc:
    fail(RULES + " is missing")
    sys.exit(1)


def parse_doc(text):
    sections, anchors, rows, cur = set(), set(), {}, None
    for line in text.splitlines():
        m = re.match(r"#{2,4} (\d+(?:\.\d+)?)\.? ", line)
        if m:
            cur = m.group(1)
            sections.add(cur)
            # GitHub's own heading ids
            anchors.add(re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-"))
        anchors.update(re.findall(r'<a id="([^"]+)"></a>', line))
        m = re.match(r"\| (?:<a id=\"[^\"]+\"></a>)?(\d+) \|", line)
        if m and cur:
            rows.setdefault(cur, set()).add(int(m.group(1)))
    return sections, anchors, rows


SECTIONS, ANCHORS, ROWS = parse_doc(doc)
if len(SECTIONS) >= 20 and len(ROWS.get("3.2", ())) == 36 and len(ANCHORS) >= 100:
    ok("%s: %d numbered sections, %d anchors, rows 1-36 in §3.2" % (RULES, len(SECTIONS), len(ANCHORS)))
else:
    fail("%s: %d sections, %d anchors, %d rows in §3.2: structure lost"
         % (RULES, len(SECTIONS), len(ANCHORS), len(ROWS.get("3.2", ()))))

SECT = re.compile(r"§\s?(\d+(?:\.\d+)?)(?:\s*#(\d+)(?:-(\d+))?)?")
ANCH = re.compile(r"(?:^|[^\w./-])(?:(?:\.\./)*docs/)?rules\.md#([\w.-]+)")
EDGE = re.compile(r"\b[Ee]dge cases? (\d+)\b")


def citation_errors(name, text):
    """Every §N, §N #K, rules.md#anchor and 'edge case N' in text must resolve; returns (n, errors)."""
    n, errs = 0, []
    in_doc = name == RULES
    for i, line in enumerate(text.splitlines(), 1):
        for m in SECT.finditer(line):
            n += 1
            sec, lo, hi = m.group(1), m.group(2), m.group(3)
            if sec not in SECTIONS:
                errs.append("%s:%d: §%s is not a section of %s" % (name, i, sec, RULES))
            elif lo:
                for k in range(int(lo), int(hi or lo) + 1):
                    if k not in ROWS.get(sec, ()):
                        errs.append("%s:%d: §%s has no row #%d" % (name, i, sec, k))
        refs = ANCH.findall(line) + (re.findall(r"\]\(#([\w.-]+)\)", line) if in_doc else [])
        for a in refs:
            n += 1
            if a not in ANCHORS:
                errs.append("%s:%d: anchor #%s does not exist in %s" % (name, i, a, RULES))
        for e in EDGE.findall(line):
            n += 1
            if "e%02d" % int(e) not in ANCHORS:
                errs.append("%s:%d: edge case %s is not in %s §8" % (name, i, e, RULES))
    return n, errs


probe = ("docs/rules.md §2.2 §99.1 §3.2 #37 §3.2 #1-5 rules.md#rendering "
         "../../docs/rules.md#no-such-anchor edge case 69 edge case 70")
n, errs = citation_errors("probe", probe)
if n == 8 and len(errs) == 4:
    ok("citation checker resolves 4 planted citations and rejects 4 broken ones")
else:
    fail("citation checker is broken: %d citations, errors %s" % (n, errs))

total, per_file = 0, {}
for name, text in sorted(files.items()):
    if name == SELF:
        continue
    n, errs = citation_errors(name, text)
    total += n
    per_file[name] = n
    for e in errs:
        fail(e)
if total >= 150 and per_file.get("src/engine/rules.c", 0) >= 35 and per_file.get(RULES, 0) >= 30:
    ok("%d citations of %s resolve (src/engine/rules.c %d, README.md %d, the reference itself %d)"
       % (total, RULES, per_file["src/engine/rules.c"], per_file.get("README.md", 0), per_file[RULES]))
else:
    fail("only %d citations found (src/engine/rules.c %d): the scan lost them" % (total, per_file.get("src/engine/rules.c", 0)))

# Every edge case has its test folder and every eNN folder its edge case.
folders = {m.group(1) for n in files for m in [re.match(r"tests/cases/e(\d\d)[a-z]?-", n)] if m}
edge_anchors = {a[1:] for a in ANCHORS if re.fullmatch(r"e\d\d", a)}
if folders and folders == edge_anchors:
    ok("%d edge cases in §8, each with a tests/cases/eNN folder" % len(folders))
else:
    fail("edge cases without folder: %s; folders without edge case: %s"
         % (sorted(edge_anchors - folders), sorted(folders - edge_anchors)))

# ---- 3. every rule of `jobguard rules` has its entry ----------------------------------------
out = subprocess.run([JG, "rules"], capture_output=True, text=True)
rules = re.findall(r"^(\S+) +(.*)\n  field: +(.*)\n  when: +(.*)\n  message: +(.*)$", out.stdout, re.M)
if out.returncode != 0 or len(rules) < 35 or len(rules) != out.stdout.count("  field:"):
    fail("`jobguard rules` printed %d parsable rules (exit %d)" % (len(rules), out.returncode))
doc_lines = doc.splitlines()
n_ok = 0
for rid, spec, field, when, message in rules:
    row = next((l for l in doc_lines if '<a id="%s"></a>' % rid in l), None)
    errs = []
    if row is None:
        errs.append("no <a id=\"%s\"> entry" % rid)
    else:
        upstream = row.rstrip().rstrip("|").rsplit("|", 1)[-1]
        if not re.search(r"`[A-Za-z][\w.]*`", upstream):
            errs.append("entry names no upstream function")
        for piece in message.split(" | "):
            piece = piece.split("<")[0].strip()
            if piece and piece not in doc:
                errs.append("message %r not in %s" % (piece, RULES))
    if not spec.startswith("docs/rules.md §"):
        errs.append("spec column %r does not cite docs/rules.md" % spec)
    for e in errs:
        fail("rule %s: %s" % (rid, e))
    n_ok += not errs
if rules and n_ok == len(rules):
    ok("all %d rule IDs have an entry in %s with their message and upstream function" % (n_ok, RULES))

# ---- 4. the rule table of docs/checks.md is generated -----------------------------------------
TABLE = "docs/checks.md"
md = subprocess.run([JG, "rules", "--markdown"], capture_output=True, text=True).stdout
if md.count("\n") >= 37 and md in files.get(TABLE, ""):
    ok("%s holds the current `jobguard rules --markdown` (%d lines)" % (TABLE, md.count("\n")))
else:
    fail("%s's rule table differs from `jobguard rules --markdown`: regenerate it" % TABLE)

# The table of docs/vap.md is `jobguard vap --explain --markdown`, from the code that writes the
# policies.
VAPDOC = "docs/vap.md"
md = subprocess.run([JG, "vap", "--explain", "--markdown"], capture_output=True, text=True).stdout
if md.count("\n") >= 10 and md in files.get(VAPDOC, ""):
    ok("%s holds the current `jobguard vap --explain --markdown` (%d lines)" % (VAPDOC, md.count("\n")))
else:
    fail("%s's table differs from `jobguard vap --explain --markdown`: regenerate it" % VAPDOC)

# ---- 4b. the README's VAP example is what `jobguard vap` prints ----------------------------------
# Every `- expression:` line of the README's excerpt, under the comment naming its example policy,
# must be in that policy's output, and the coverage table must be the manager's --explain.
EXAMPLES = os.path.join(ROOT, "docs", "examples")
outputs = {}
for ex in ("manager.json", "worker.json"):
    r = subprocess.run([JG, "vap", "--policy-file", os.path.join(EXAMPLES, ex)],
                       capture_output=True, text=True)
    outputs[ex] = r.stdout if r.returncode == 0 else ""
excerpt, current = [], None
for line in files["README.md"].splitlines():
    m = re.match(r"^# jobguard-\S+, (\S+\.json)$", line)
    if m:
        current = m.group(1)
    elif current and line.startswith("  - expression: "):
        excerpt.append((current, line))
missing = [(ex, l) for ex, l in excerpt if l not in outputs.get(ex, "").splitlines()]
if len(excerpt) >= 2 and not missing:
    ok("README's %d VAP expressions are in the output of `jobguard vap` for their example policy" % len(excerpt))
else:
    fail("README's VAP excerpt differs from `jobguard vap` (%d found): %s" % (len(excerpt), missing[:2]))
table = subprocess.run([JG, "vap", "--explain", "--markdown", "--policy-file",
                        os.path.join(EXAMPLES, "manager.json")], capture_output=True, text=True).stdout
if table.count("\n") >= 8 and table in files["README.md"]:
    ok("README holds the current `jobguard vap --explain --markdown` of docs/examples/manager.json")
else:
    fail("README's VAP coverage table differs from `jobguard vap --explain --markdown --policy-file docs/examples/manager.json`")

# ---- 5. the README leads, docs/ holds the reference -------------------------------------------
# The README stays short enough to read first (a third of the 1,018 lines it once had), links
# every document under docs/, and every relative link of a Markdown file points at a file.
MAX_README = 340
readme = files["README.md"]
n_lines = readme.count("\n")
if n_lines <= MAX_README:
    ok("README.md: %d lines (at most %d)" % (n_lines, MAX_README))
else:
    fail("README.md: %d lines, more than %d: move reference material to docs/" % (n_lines, MAX_README))
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)")
docs_md = sorted(n for n in files if n.startswith("docs/") and n.endswith(".md"))
unlinked = [n for n in docs_md if "(%s" % n not in readme]
if docs_md and not unlinked:
    ok("README.md links all %d documents under docs/" % len(docs_md))
else:
    fail("README.md does not link %s" % ", ".join(unlinked or ["any document (none found)"]))
probe_links = LINK.findall("[a](docs/x.md#y) [b](https://e.org) [c](#local) [d](../README.md)")
if probe_links != ["docs/x.md", "https://e.org", "../README.md"]:
    fail("link extractor is broken: %s" % probe_links)
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)  # code is not a link: a regex holds "](...)"


def broken_links(name, text):
    """Relative links of a Markdown file that point at no file: (targets, number checked)."""
    out, n = [], 0
    for target in LINK.findall(CODE.sub("", text)):
        if re.match(r"^[a-z]+:", target):
            continue
        n += 1
        path = os.path.normpath(os.path.join(os.path.dirname(name), target))
        if path not in files and not os.path.isdir(os.path.join(ROOT, path)):
            out.append(target)
    return out, n


if broken_links("docs/probe.md", "[a](rules.md) [b](nope.md) `[c](nope2.md)` [d](../README.md)")[0] != ["nope.md"]:
    fail("broken-link detector does not flag exactly the one planted broken link")
broken, n_links = [], 0
for name, text in sorted(files.items()):
    if name.endswith(".md"):
        b, n = broken_links(name, text)
        n_links += n
        broken += ["%s -> %s" % (name, t) for t in b]
for b in broken:
    fail("broken relative link: " + b)
if n_links >= 50 and not broken:
    ok("%d relative links in Markdown files point at files of the repository" % n_links)
elif not broken:
    fail("only %d relative links found: the scan lost them" % n_links)

print("%d checks failed" % len(failures))
sys.exit(1 if failures else 0)
