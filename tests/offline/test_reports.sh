#!/usr/bin/env bash
# `jobguard scan -o policyreport|openreports` against the real CRD schemas (tests/offline/crds:
# wgpolicyk8s.io v1alpha2 PolicyReport/ClusterPolicyReport and openreports.io v1alpha1
# Report/ClusterReport, each with its source commit): every report of a scan over the offline
# cases' inputs validates, closed to fields the schema does not name, its summary counting its
# results; a report altered by hand is refused, so the validation can fail.
# Usage: test_reports.sh JOBGUARD_BINARY. Needs python3-yaml and python3-jsonschema.
set -u
bin=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
in=$here/cases/_in
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
# Debian's python3 (where .ci/deps installs the two packages) first, then whatever python3 is on PATH
py=""
for p in /usr/bin/python3 python3; do
	"$p" -c 'import yaml, jsonschema' 2>/dev/null && { py=$p; break; }
done
[[ -n $py ]] || { echo "FAIL setup: python3-yaml and python3-jsonschema are needed (.ci/deps installs them)"; exit 1; }
validate() { "$py" "$here/validate_report.py" "$here/crds" "$1" >"$tmp/v.out" 2>&1; }
for fmt in policyreport openreports; do
	"$bin" scan -o "$fmt" --policy-file "$in/policy.json" "$in/cluster.json" "$in/manifests" "$in/job-ok.json" >"$tmp/$fmt.json"
	rc=$?
	[[ $rc == 1 ]] && ok "$fmt: scan exits 1 (deny-mode rules broken)" || bad "$fmt: scan exited $rc"
	if validate "$tmp/$fmt.json"; then ok "$fmt: $(tail -1 "$tmp/v.out")"; else bad "$fmt: $(cat "$tmp/v.out")"; fi
	grep -q '"kind":"Cluster' "$tmp/$fmt.json" && ok "$fmt: a cluster-scoped report for objects without a namespace" || bad "$fmt: no cluster-scoped report"
	# planted: an unknown result value, a field the schema does not name, a wrong count
	sed 's/"result":"fail"/"result":"deny"/' "$tmp/$fmt.json" >"$tmp/p1.json"
	sed 's/"scored":true/"scored":true,"severity2":"x"/' "$tmp/$fmt.json" >"$tmp/p2.json"
	sed 's/"pass":1,/"pass":7,/' "$tmp/$fmt.json" >"$tmp/p3.json"
	for p in p1 p2 p3; do
		if cmp -s "$tmp/$fmt.json" "$tmp/$p.json"; then bad "$fmt: planted $p did not change the report"; continue; fi
		validate "$tmp/$p.json" && bad "$fmt: planted $p passed validation" || ok "$fmt: planted $p refused: $(head -1 "$tmp/v.out")"
	done
done
# The report of many objects in one namespace (1200 Jobs: 2400 results) is split so that each stays far below the API
# server's object size limit.
{
	echo '{"apiVersion":"v1","kind":"List","items":['
	for i in $(seq 1 1200); do
		[[ $i == 1 ]] || echo ,
		echo "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j$i\",\"namespace\":\"big\"},\"spec\":{\"managedBy\":\"x\"}}"
	done
	echo ']}'
} >"$tmp/big-in.json"
"$bin" scan -o policyreport "$tmp/big-in.json" >"$tmp/big.json"
if validate "$tmp/big.json"; then ok "1200 objects: $(tail -1 "$tmp/v.out")"; else bad "1200 objects: $(cat "$tmp/v.out")"; fi
n=$(grep -o '"name":"jobguard-scan[-0-9]*"' "$tmp/big.json" | sort -u | tr '\n' ' ')
[[ $n == '"name":"jobguard-scan" "name":"jobguard-scan-2" "name":"jobguard-scan-3" ' ]] && ok "split into parts of at most 1000 results: $n" || bad "parts: $n"
max=$(python3 -c 'import json,sys; print(max(len(json.dumps(i)) for i in json.load(open(sys.argv[1]))["items"]))' "$tmp/big.json")
((max < 1048576)) && ok "largest report $max bytes (< 1 MiB)" || bad "largest report $max bytes"
# Split and cut by size, not only by count: 150 AppWrappers whose managedBy is 50,000 'é' (100 KB;
# each of their 300 messages quotes 64 KiB of it) made one report of 9.8 MB before. Each message is cut at 4 KiB
# (saying so), and each report holds at most 512 KiB of results, so that it stays below etcd's
# 1.5 MiB even with the copy `kubectl apply` keeps in an annotation.
python3 -c '
import json
items = [{"apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper",
          "metadata": {"name": "aw%d" % i, "namespace": "a"}, "spec": {"managedBy": "\u00e9" * 50000}}
         for i in range(150)]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))' >"$tmp/wide-in.json"
"$bin" scan -o policyreport "$tmp/wide-in.json" >"$tmp/wide.json"
if validate "$tmp/wide.json"; then ok "150 wide objects: $(tail -1 "$tmp/v.out")"; else bad "150 wide objects: $(cat "$tmp/v.out")"; fi
got=$(python3 -c '
import json, re, sys
items = json.load(open(sys.argv[1]))["items"]
size = max(len(json.dumps(i, separators=(",", ":"), ensure_ascii=False).encode()) for i in items)
msgs = [r["message"] for i in items for r in i["results"]]
long = [m for m in msgs if "Invalid value" in m]
cut = len(long) == 150 and all(len(m.encode()) <= 4096 + 40 and
                               re.search(r"\.\.\. \[cut: the message is [0-9]{5} bytes\]$", m) for m in long)
print(len(items), sum(len(i["results"]) for i in items), size < 540000, cut)' "$tmp/wide.json")
expect='2 300 True True'
[[ $got == "$expect" ]] && ok "split by size: 2 reports of at most 512 KiB of results, 300 results, messages cut at 4 KiB" ||
	bad "split by size: got [$got], want [$expect]"
echo "$pass passed, $fail failed"
((fail == 0))
