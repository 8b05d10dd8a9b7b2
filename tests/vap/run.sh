#!/usr/bin/env bash
# The ValidatingAdmissionPolicies of `jobguard vap` against jobguard (tests/vap/diff.mjs):
#
#   tests/vap/run.sh BUILDDIR
#
# Uses the chart tests' pinned node packages (tests/chart/package.json: @bufbuild/cel,
# kubernetes-models), installed under BUILDDIR/vap-tests/node with `npm ci` (needs the npm
# registry or a filled npm cache once). Exit status 1 on any failure.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:?usage: run.sh BUILDDIR}
case $build in /*) ;; *) build=$top/$build ;; esac
nd=$build/vap-tests/node
mkdir -p "$nd"
for t in node npm; do
	command -v "$t" >/dev/null || { echo "FAIL setup: $t is not installed"; exit 1; }
done
cp "$top/tests/chart/package.json" "$top/tests/chart/package-lock.json" "$here/diff.mjs" "$nd/"
if ! cmp -s "$nd/package-lock.json" "$nd/node_modules/.package-lock.json.installed" 2>/dev/null; then
	if ! (cd "$nd" && npm ci --no-audit --no-fund --loglevel=error) >"$nd/npm.log" 2>&1; then
		cat "$nd/npm.log"
		echo "FAIL setup: npm ci failed (needs the npm registry or a filled npm cache)"
		exit 1
	fi
	cp "$nd/package-lock.json" "$nd/node_modules/.package-lock.json.installed"
fi
exec node "$nd/diff.mjs" --jobguard "$build/src/jobguard" --cases "$top/tests/cases"
