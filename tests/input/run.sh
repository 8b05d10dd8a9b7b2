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

echo "$fails failure(s)"
[[ $fails -eq 0 ]]
