#!/usr/bin/env bash
# The ValidatingAdmissionPolicies of `jobguard vap` against jobguard (tests/vap/diff.mjs):
#
#   tests/vap/run.sh BUILDDIR
#
# Uses the chart tests' pinned node packages (tests/chart/package.json: @bufbuild/cel,
# kubernetes-models), installed under BUILDDIR/vap-tests/node with `npm ci`, and the Kubernetes
# field lists of openapi.pins (npm pack, integrity checked, under BUILDDIR/vap-tests/openapi) (needs the npm
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
cp "$here/openapi.mjs" "$nd/"
# Kubernetes' field lists per release (openapi.pins): the client's model files, fetched once with
# npm pack, checked against the pinned integrity, kept under BUILDDIR.
dirs=()
while read -r pkg ver rel sri; do
	[[ -z $pkg || $pkg == \#* ]] && continue
	d=$build/vap-tests/openapi/$rel
	if [[ ! -s $d/.integrity ]] || [[ $(cat "$d/.integrity") != "$sri" ]]; then
		rm -rf "$d" && mkdir -p "$d/pack"
		if ! npm pack "$pkg@$ver" --pack-destination "$d/pack" --loglevel=error >"$d/npm-pack.log" 2>&1; then
			cat "$d/npm-pack.log"
			echo "FAIL setup: npm pack $pkg@$ver failed (needs the npm registry once)"
			exit 1
		fi
		tgz=$(find "$d/pack" -maxdepth 1 -name '*.tgz' | head -1)
		got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
		[[ $got == "$sri" ]] || { echo "FAIL setup: $pkg@$ver integrity is $got, tests/vap/openapi.pins pins $sri"; exit 1; }
		tar -xzf "$tgz" -C "$d/pack" --wildcards 'package/dist/gen/model*/*' &&
			mv "$d"/pack/package/dist/gen/model*/* "$d/" && rm -rf "$d/pack" ||
			{ echo "FAIL setup: no model files in $pkg@$ver"; exit 1; }
		echo "$sri" >"$d/.integrity"
	fi
	dirs+=("$rel=$d")
done <"$here/openapi.pins"
exec node "$nd/diff.mjs" --jobguard "$build/src/jobguard" --cases "$top/tests/cases" --openapi "$(IFS=,; echo "${dirs[*]}")"
