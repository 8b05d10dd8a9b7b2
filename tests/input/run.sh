#!/usr/bin/env bash
# What `jobguard convert` reads (docs/input.md): every tests/input/yaml/<case>.yaml gives exactly
# <case>.json (kubectl's own conversion, compacted; kubectl.sh re-derives it) or fails with exactly
# <case>.err; JSON Lists, several values, folders and bad JSON give the outputs written below.
# Usage: run.sh JOBGUARD
set -u
jg=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
cd "$here" || exit 1
fails=0
pass() { printf 'ok   %s\n' "$1"; }
fail() { printf 'FAIL %s\n' "$1"; fails=$((fails + 1)); }
same() { # same NAME EXPECTED ACTUAL
	if [[ $2 == "$3" ]]; then pass "$1"; else
		fail "$1"
		diff <(printf '%s\n' "$2") <(printf '%s\n' "$3")
	fi
}

for f in yaml/*.yaml; do
	b=${f%.yaml}
	out=$(cd yaml && "$jg" convert "${f#yaml/}" 2>/tmp/jg-input-err.$$)
	rc=$?
	err=$(cat /tmp/jg-input-err.$$)
	if [[ -f $b.json ]]; then
		same "$f: converted as kubectl converts it" "$(cat "$b.json")" "$out"
		same "$f: exit 0" 0 "$rc"
	else
		same "$f: error" "jobguard convert: $(cat "$b.err")" "$err"
		same "$f: exit 2" 2 "$rc"
	fi
done
rm -f /tmp/jg-input-err.$$

# A JSON List's items one by one (strings holding brackets, quotes and escapes), then two values
# on one line.
same 'json: List items and several values' "$(
	cat <<'X'
json/list.json:4: {"kind":"Job","s":"a \" ] } \\","n":[1,{"x":[]}]}
json/list.json:5: {"kind":"JobSet"}
json/list.json:10: {"kind":"Pod"}
json/list.json:10: {"a":1}
X
)" "$("$jg" convert --where json/list.json 2>&1)"

# A folder: sorted, *.json/*.yaml/*.yml only, subfolders walked, hidden entries skipped; a YAML
# List with items before kind, a comment-only document skipped.
same 'folder' "$(
	cat <<'X'
folder/a.json:1: {"kind":"A"}
folder/b.yaml:2: {"kind":"Job","metadata":{"name":"a"}}
folder/b.yaml:3: {"kind":"JobSet","true":true}
folder/b.yaml:10: {"kind":"Pod"}
folder/sub/c.yml:1: {"kind":"C"}
X
)" "$("$jg" convert --where folder 2>&1)"

# Standard input, JSON and YAML.
same 'stdin json' '-:2: {"a":1}' "$(printf ' \n {"a": 1}' | "$jg" convert --where - 2>&1 | sed -n 1p)"
same 'stdin yaml' '-:2: {"a":"b"}' "$(printf '\n a: b\n' | "$jg" convert --where - 2>&1)"

# Bad JSON: where and what, the documents before it still printed, exit 2.
bad() { # bad NAME FILE EXPECTED
	local got rc
	got=$("$jg" convert "$2" 2>&1)
	rc=$?
	same "$1" "$3" "$got"
	same "$1: exit 2" 2 "$rc"
}
bad 'json: unclosed value' json/unclosed.json '{"kind":"Job"}
jobguard convert: json/unclosed.json:2:1: unexpected end of JSON input (the value starting here is not closed)'
bad 'json: stray bracket' json/stray.json '{"a":1}
jobguard convert: json/stray.json:1:10: invalid JSON: unexpected '"'}'"''
bad 'json: missing comma' json/nocomma.json 'jobguard convert: json/nocomma.json:1:9: invalid JSON: expected '"','"' or '"'}'"' after an object member'
bad 'json: missing comma between items' json/items-nocomma.json '{"a":1}
jobguard convert: json/items-nocomma.json:1:21: invalid JSON: expected '"','"' or '"']'"' after a List item'
bad 'missing file' json/nope.json 'jobguard convert: json/nope.json: No such file or directory'

# An item split across the 1 MiB reads, and a List longer than one read: every item whole.
big=$(python3 -c '
import json
items = [{"kind": "Job", "i": i, "pad": "x" * 3000 + "\"]}"} for i in range(1000)]
print(json.dumps({"apiVersion": "v1", "items": items, "kind": "List"}, indent=2))')
same 'json: a 3 MB List across reads' '1000 0 999' \
	"$(printf '%s' "$big" | "$jg" convert - | jq -s -r '"\(length) \(.[0].i) \(.[-1].i)"')"
same 'yaml: a List across reads' '1000 999' "$(printf '%s' "$big" | sed '1s/^/# yaml\n/' |
	"$jg" convert - | jq -s -r '"\(length) \(.[-1].i)"')"

# A merge of an empty list, alone: an empty object (found by fuzz_reader: UBSan, NULL + 0).
same 'yaml: a merge of an empty list' '{}' "$(printf '<<: []\n' | "$jg" convert - 2>&1)"

# Reads that end at every byte of a List's header, elements and tail (a pipe fed piece by piece,
# each read(2) ending where a piece ends: straddle.py): JSON items exactly as json.loads reads
# them; YAML exactly as when the same text is read whole.
same 'json: reads ending at every byte of a List' ok "$(python3 straddle.py json "$jg" | sed 's/^[0-9]* reads cut; //')"
same 'yaml: reads ending at every byte of a List' ok "$(python3 straddle.py yaml "$jg" | sed 's/^[0-9]* reads cut; //')"

# Billion laughs: aliases expand past the 64 MiB document limit: refused, no hang.
{
	printf 'a: &a [x, x, x, x, x, x, x, x, x, x]\n'
	p=a
	for n in b c d e f g h i j; do
		printf '%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n' $n $n $p $p $p $p $p $p $p $p $p $p
		p=$n
	done
} >/tmp/jg-laughs.$$.yaml
got=$(timeout 20 "$jg" convert /tmp/jg-laughs.$$.yaml 2>&1 >/dev/null)
rm -f /tmp/jg-laughs.$$.yaml
same 'yaml: billion laughs refused' "jobguard convert: /tmp/jg-laughs.$$.yaml:1:32: document larger than the 64 MiB limit as JSON (aliases expand to more than that?)" "$got"

# 200,000 unclosed flow brackets: refused at the nesting limit, and the rest of the file is not
# read (skipping the document cost libyaml a look at every open level per token: 81 s before).
# The read takes milliseconds; the 5 s bound only catches a return of that.
t=$(mktemp -d /tmp/jg-input.XXXXXX)
python3 -c 'import sys; sys.stdout.write("a: b\n---\nx: " + "[" * 200000 + "\n---\nc: d\n")' >"$t/deep.yaml"
same 'yaml: 200,000 unclosed brackets refused at once' '{"a":"b"}
jobguard convert: deep.yaml:3:515: nesting deeper than 512 levels
rc=2' \
	"$(cd "$t" && timeout 5 "$jg" convert deep.yaml 2>&1; echo "rc=$?")"
# The same after an error that skips its document (an unknown anchor): still bounded.
python3 -c 'import sys; sys.stdout.write("x: [*nope, " + "[" * 200000 + "\n")' >"$t/deep2.yaml"
same 'yaml: 200,000 brackets in a skipped document' "jobguard convert: deep2.yaml:1:5: yaml: unknown anchor 'nope' referenced
rc=2" "$(cd "$t" && timeout 5 "$jg" convert deep2.yaml 2>&1; echo "rc=$?")"

# The tree is counted while it is built (128 MiB, twice the 64 MiB document limit): 3 million
# flow items are refused before the JSON exists (16 million took 1.8 GB before), within 400 MiB of
# address space; 1.6 million one-digit items (3.2 MB, about the most the API server accepts in
# one object) still fit. The next document is read.
# in_400m CMD...: CMD within 400 MiB of address space (a sanitizer build reserves terabytes of
# shadow memory: unbounded there)
in_400m() {
	if grep -q __asan_init "$jg"; then "$@"; else (ulimit -v 409600 && "$@"); fi
}
python3 -c 'import sys; sys.stdout.write("x: [" + "a," * 3000000 + "a]\n---\nnext: 1\n")' >"$t/flow.yaml"
same 'yaml: a flood of flow items refused while read' 'jobguard convert: flow.yaml:1:4194303: document larger than the 64 MiB limit: its tree passed 128 MiB while being read
{"next":1}
rc=2' "$(cd "$t" && in_400m "$jg" convert flow.yaml 2>&1; echo "rc=$?")"
python3 -c 'import sys; sys.stdout.write("x: [" + "1," * 1599999 + "1]\n")' >"$t/flow.yaml"
same 'yaml: 1.6 million one-digit items read' '3200008
rc=0' \
	"$(cd "$t" && in_400m "$jg" convert flow.yaml | wc -c; echo "rc=${PIPESTATUS[0]}")"
rm "$t/flow.yaml"

# Merge keys that gather one map's members again and again (each merge, each alias of a merged
# map): 99 KB took 53 s and 2.5 GB, 240 KB of aliases of a merged map 543 s. Bounded: the member
# stack at most the JSON limit in bytes, a document at most limit/16 pushed members.
python3 -c '
m = "{" + ", ".join("k%d: 1" % i for i in range(2000)) + "}"
print("a: &a " + m + "\nb:\n  <<: [" + ", ".join(["*a"] * 20000) + "]")' >"$t/merge.yaml"
python3 -c '
print("a: &a {k: 1}\nb: &b\n  <<: [" + ", ".join(["*a"] * 30000) + "]\nc: [" + ", ".join(["*b"] * 30000) + "]")' >"$t/merge2.yaml"
same 'yaml: merges that gather a map again and again refused' "jobguard convert: merge.yaml:1:10398: yaml: merge keys gather more map members than the 64 MiB limit allows
jobguard convert: merge2.yaml:1:8: yaml: merge keys gather more map members than the 64 MiB limit allows
rc=2" "$(cd "$t" && timeout 60 "$jg" convert merge.yaml merge2.yaml 2>&1; echo "rc=$?")"

# A List with two "items": Go keeps the last one (kubectl applies it); the reader, which has
# already handed on the first one's items, refuses the List. JSON and YAML alike.
second='a second "items" in a List: kubectl (Go'"'"'s encoding/json) keeps only the last one, so the List is refused (the first one'"'"'s items were read already)'
printf '{"kind":"List","items":[{"kind":"Job","n":1}],\n "items":[{"kind":"Job","n":2}]}\n{"kind":"After"}\n' >"$t/two.json"
same 'json: a second items refused' "{\"kind\":\"Job\",\"n\":1}
jobguard convert: two.json:2:2: $second
rc=2" "$(cd "$t" && "$jg" convert two.json 2>&1; echo "rc=$?")"
printf '{"kind":"List","items":[{"kind":"Job"}],"items":"x"}\n' >"$t/two-scalar.json"
same 'json: a second items that is not an array refused' "{\"kind\":\"Job\"}
jobguard convert: two-scalar.json:1:41: $second
rc=2" "$(cd "$t" && "$jg" convert two-scalar.json 2>&1; echo "rc=$?")"
printf 'kind: List\nitems:\n- {kind: Job, i: 1}\nitems:\n- {kind: Job, i: 2}\n---\nkind: After\n' >"$t/two.yaml"
same 'yaml: a second items refused, the next document read' "{\"i\":1,\"kind\":\"Job\"}
jobguard convert: two.yaml:4:1: $second
{\"kind\":\"After\"}
rc=2" "$(cd "$t" && "$jg" convert two.yaml 2>&1; echo "rc=$?")"
# Not streamed (the first is a scalar, or anchored): the last one wins, as in Go.
printf 'kind: List\nitems: x\nitems:\n- {kind: Job, i: 2}\n' >"$t/last.yaml"
printf 'kind: List\nitems: &a\n- {kind: Job, i: 1}\nitems:\n- {kind: Job, i: 2}\n' >"$t/last2.yaml"
same 'yaml: the last items wins when the first was not read as one' '{"i":2,"kind":"Job"}
{"i":2,"kind":"Job"}' "$(cd "$t" && "$jg" convert last.yaml last2.yaml 2>&1)"

# Folders: a symbolic link loop, a second link to a folder, a FIFO, a dangling link and a
# link to itself are each named (exit 2), never followed for ever, never waited on.
mkdir -p "$t/f/sub" "$t/f/z"
printf 'kind: A\n' >"$t/f/sub/a.yaml"
ln -s .. "$t/f/sub/up"
ln -s ../sub "$t/f/z/again"
mkfifo "$t/f/pipe.yaml"
ln -s nowhere.yaml "$t/f/dangling.yaml"
ln -s self "$t/f/self"
same 'folder: loops, FIFOs and broken links named' 'jobguard convert: f/dangling.yaml: a symbolic link that cannot be followed: No such file or directory
jobguard convert: f/pipe.yaml is a FIFO (named pipe), not a regular file
jobguard convert: f/self: a symbolic link that cannot be followed: Too many levels of symbolic links
{"kind":"A"}
jobguard convert: f/sub/up: a symbolic link loop (the folder f, which holds it), not read again
jobguard convert: f/z/again: the same folder as f/sub, already read; not read again
rc=2' "$(cd "$t" && timeout 5 "$jg" convert f 2>&1; echo "rc=$?")"
# A FIFO named on the command line is read as a pipe (`jobguard scan <(kubectl get ...)`).
same 'a FIFO given as a path is read' '{"kind":"P"}' "$(printf 'kind: P\n' | (cd "$t" && "$jg" convert /dev/fd/3 3<&0) 2>&1)"

# An entry the user cannot look at (a folder readable without search permission): named, exit 2.
# Tests run as root, which reads everything: as nobody (skipped without root and setpriv).
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
	mkdir -p "$t/u/locked"
	printf 'kind: Visible\n' >"$t/u/a.yaml"
	printf 'kind: Hidden\n' >"$t/u/locked/b.yaml"
	cp "$jg" "$t/jobguard"
	chmod 755 "$t" "$t/u" "$t/jobguard"
	chmod 744 "$t/u/locked"
	same 'folder: an entry without search permission named (as nobody)' '{"kind":"Visible"}
jobguard convert: u/locked/b.yaml: Permission denied
rc=2' "$(cd "$t" && setpriv --reuid=nobody --regid=nogroup --clear-groups ./jobguard convert u 2>&1; echo "rc=$?")"
else
	echo "skip folder as nobody (needs root and setpriv)"
fi
rm -rf "$t"

echo "$fails failure(s)"
[[ $fails -eq 0 ]]
