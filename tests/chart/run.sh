#!/usr/bin/env bash
# Chart and certificate tests for jobguard.
#
#   tests/chart/run.sh [BUILDDIR]        (default: build)
#
# 1. certs/generate.sh: output verifies with openssl, carries the SANs, key modes 0600,
#    refuses to overwrite, reuses the CA on --force, and serves a TLS handshake that passes
#    hostname verification.
# 2. charts/jobguard: with `helm` on PATH, `helm lint` and `helm template`; otherwise the
#    chart is rendered by tests/chart/render (Go text/template + Sprig, built from Debian's
#    golang-go, golang-github-masterminds-sprig-dev and golang-gopkg-yaml.v3-dev).
#    tests/chart/checks.mjs validates every document (kubernetes-models, offline) and the
#    values schema, and asserts the content for every certificate mode and toggle.
#    Set JOBGUARD_CHART_RENDERER=1 to use the renderer even when helm is installed.
#
# Everything it builds or installs goes under BUILDDIR/chart-tests. Prints one line per
# failed check, then "N passed, M failed"; exits 1 on any failure.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
work=$build/chart-tests
chart=$top/charts/jobguard
mkdir -p "$work"
log() { printf 'run.sh: %s\n' "$*" >&2; }

passed=0 failed=0
check() { # check NAME CMD...
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		printf 'FAIL %s\n' "$name"
	fi
}
fatal() {
	printf 'FAIL %s\n' "$*"
	printf '%d passed, %d failed\n' "$passed" "$((failed + 1))"
	exit 1
}

for t in openssl node npm; do
	command -v "$t" >/dev/null || fatal "setup: $t is not installed (apt-get install openssl nodejs npm)"
done

# ---------------------------------------------------------------- certs/generate.sh
gen=$top/certs/generate.sh
c=$work/certs
rm -rf "$c"
if "$gen" --service jobguard --namespace default --out "$c/a" --ip 127.0.0.1 --dns localhost \
	>"$c.bundle" 2>"$c.log"; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
	echo "FAIL generate.sh: runs: $(tail -1 "$c.log")"
fi
check 'generate.sh: tls.crt verifies against ca.crt' openssl verify -CAfile "$c/a/ca.crt" "$c/a/tls.crt"
sans=$(openssl x509 -in "$c/a/tls.crt" -noout -ext subjectAltName 2>/dev/null | tail -1 | tr -d ' ')
check 'generate.sh: SANs are the service names, --dns and --ip' \
	test "$sans" = "DNS:jobguard,DNS:jobguard.default,DNS:jobguard.default.svc,DNS:jobguard.default.svc.cluster.local,DNS:localhost,IPAddress:127.0.0.1"
check 'generate.sh: ECDSA P-256 keys' sh -c "openssl pkey -in '$c/a/tls.key' -noout -text | grep -q prime256v1 && openssl pkey -in '$c/a/ca.key' -noout -text | grep -q prime256v1"
check 'generate.sh: serving certificate for serverAuth, ~365 days' sh -c \
	"openssl x509 -in '$c/a/tls.crt' -noout -ext extendedKeyUsage | grep -q 'Server Authentication' && openssl x509 -in '$c/a/tls.crt' -noout -checkend \$((364*86400)) && ! openssl x509 -in '$c/a/tls.crt' -noout -checkend \$((366*86400))"
check 'generate.sh: CA is a CA' sh -c "openssl x509 -in '$c/a/ca.crt' -noout -ext basicConstraints | grep -q 'CA:TRUE'"
check 'generate.sh: tls.key and ca.key are mode 0600' test "$(stat -c %a "$c/a/tls.key") $(stat -c %a "$c/a/ca.key")" = "600 600"
check 'generate.sh: stdout is one line, the base64 of ca.crt' sh -c "test \$(wc -l <'$c.bundle') -eq 1 && base64 -d <'$c.bundle' | cmp -s - '$c/a/ca.crt'"
check 'generate.sh: refuses to overwrite without --force' sh -c "! '$gen' --service jobguard --namespace default --out '$c/a' 2>/dev/null"
cp "$c/a/tls.crt" "$c/old.crt"
"$gen" --service jobguard --namespace default --out "$c/a" --ip 127.0.0.1 --force >"$c.bundle2" 2>>"$c.log"
check 'generate.sh: --force reuses the CA (same caBundle)' cmp -s "$c.bundle" "$c.bundle2"
check 'generate.sh: --force issues a new serving certificate' sh -c "! cmp -s '$c/old.crt' '$c/a/tls.crt' && openssl verify -CAfile '$c/a/ca.crt' '$c/a/tls.crt'"
check 'generate.sh: rejects a bad --service' sh -c "! '$gen' --service Bad_Name --namespace default --out '$c/b' 2>/dev/null"
check 'generate.sh: requires --out' sh -c "! '$gen' --service jobguard --namespace default 2>/dev/null"
check 'generate.sh: --days sets the validity' sh -c "'$gen' --service s --namespace n --out '$c/d' --days 2 >/dev/null 2>&1 && ! openssl x509 -in '$c/d/tls.crt' -noout -checkend \$((3*86400))"

# A TLS handshake with hostname verification against the generated pair.
sclient() { # sclient HOSTNAME: handshake with the CA and hostname verification
	echo | openssl s_client -connect "127.0.0.1:$port" -CAfile "$c/a/ca.crt" -verify_return_error \
		-verify_hostname "$1" -servername "$1" >"$c.sclient.$1" 2>&1
}
port=$((20000 + RANDOM % 20000))
openssl s_server -quiet -accept "127.0.0.1:$port" -cert "$c/a/tls.crt" -key "$c/a/tls.key" -www >/dev/null 2>&1 &
srv=$!
ok=1
for _ in $(seq 50); do
	if sclient jobguard.default.svc; then
		ok=0
		break
	fi
	sleep 0.1
done
check 'generate.sh: TLS handshake verifies the CA and the hostname jobguard.default.svc' test $ok -eq 0
check 'generate.sh: hostname verification rejects a name not in the SANs' sh -c "! echo | openssl s_client -connect 127.0.0.1:$port -CAfile '$c/a/ca.crt' -verify_return_error -verify_hostname other.default.svc -servername other.default.svc"
kill "$srv" 2>/dev/null
wait "$srv" 2>/dev/null

# ---------------------------------------------------------------- chart
if [[ -z ${JOBGUARD_CHART_RENDERER:-} ]] && command -v helm >/dev/null; then
	mode=(--helm)
	check 'helm lint (default values)' helm lint "$chart"
	check 'helm lint (certManager)' helm lint "$chart" --set certificates.mode=certManager
	check 'helm lint (existingSecret)' helm lint "$chart" --set certificates.mode=existingSecret \
		--set certificates.existingSecret.name=x --set-string "certificates.existingSecret.caBundle=$(cat "$c.bundle")"
else
	command -v go >/dev/null || fatal "setup: go is not installed (apt-get install golang-go golang-github-masterminds-sprig-dev golang-gopkg-yaml.v3-dev)"
	if ! (cd "$here/render" && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$work/.gocache" GOFLAGS='' \
		go build -o "$work/render" .) >"$work/go-build.log" 2>&1; then
		cat "$work/go-build.log"
		fatal "setup: building tests/chart/render failed (needs golang-github-masterminds-sprig-dev golang-gopkg-yaml.v3-dev)"
	fi
	mode=(--renderer "$work/render")
fi

# Node dependencies go into the build tree, not the source tree.
nd=$work/node
mkdir -p "$nd"
cp "$here/package.json" "$here/package-lock.json" "$here/validate.mjs" "$here/checks.mjs" "$nd/"
if ! cmp -s "$here/package-lock.json" "$nd/node_modules/.package-lock.json.installed" 2>/dev/null; then
	log "npm ci in $nd"
	if ! (cd "$nd" && npm ci --no-audit --no-fund --loglevel=error) >"$work/npm.log" 2>&1; then
		cat "$work/npm.log"
		fatal "setup: npm ci failed (needs the npm registry or a filled npm cache)"
	fi
	cp "$here/package-lock.json" "$nd/node_modules/.package-lock.json.installed"
fi

out=$work/checks.out
node "$nd/checks.mjs" --chart "$chart" --work "$work/render-out" "${mode[@]}" --ca-bundle-file "$c.bundle" \
	${JOBGUARD_CHART_VERBOSE:+-v} >"$out" 2>"$work/checks.err"
rc=$?
last=$(tail -n 1 "$out")
if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
	head -n -1 "$out"
	passed=$((passed + BASH_REMATCH[1]))
	failed=$((failed + BASH_REMATCH[2]))
	skipped=${BASH_REMATCH[4]:-0}
	[[ $rc -eq 0 || ${BASH_REMATCH[2]} -gt 0 ]] || { echo "FAIL checks.mjs: exit $rc"; failed=$((failed + 1)); }
else
	cat "$out" "$work/checks.err"
	echo "FAIL checks.mjs: no summary line (exit $rc)"
	failed=$((failed + 1))
	skipped=0
fi

# ---------------------------------------------------------------- chart args against the real server
# When BUILDDIR has the jobguard binary, start it with exactly the arguments the chart renders
# (paths and ports moved) and run the helm test pod's script against it.
bin=$build/src/jobguard
if [[ -x $bin && -x $work/render ]]; then
	s=$work/serve
	rm -rf "$s"
	mkdir -p "$s"
	"$work/render" "$chart" >"$s/default.yaml" 2>/dev/null
	(cd "$nd" && node --input-type=module -e "
import fs from 'node:fs'; import yaml from 'js-yaml';
const docs = yaml.loadAll(fs.readFileSync('$s/default.yaml', 'utf8')).filter(Boolean);
const c = docs.find((d) => d.kind === 'Deployment').spec.template.spec.containers[0];
const t = docs.find((d) => d.kind === 'Pod').spec.containers[0];
const env = Object.fromEntries(t.env.map((e) => [e.name, e.value]));
fs.writeFileSync('$s/args', c.args.join('\\n') + '\\n');
fs.writeFileSync('$s/review.json', env.REVIEW);
fs.writeFileSync('$s/test.sh', t.command.at(-1));
") 2>"$s/extract.log"
	# two free loopback ports (a busy CI machine may hold any given one)
	for _ in $(seq 50); do
		port=$((20000 + RANDOM % 20000))
		ops=$((port + 1))
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || (exec 3<>"/dev/tcp/127.0.0.1/$ops") 2>/dev/null || break
	done
	mapfile -t args < <(sed -e "s|^/tls/|$c/a/|" -e "s|^9443\$|$port|" -e "s|^8080\$|$ops|" "$s/args")
	"$bin" "${args[@]}" >"$s/server.log" 2>&1 &
	srv=$!
	for _ in $(seq 200); do curl -fs "http://127.0.0.1:$ops/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
	check 'server: starts with the arguments the chart renders and turns ready' curl -fs "http://127.0.0.1:$ops/readyz"
	curl -fs "http://127.0.0.1:$ops/readyz" >/dev/null 2>&1 || sed 's/^/  server log: /' "$s/server.log" | tail -5
	sed -e "s|/tmp/|$s/|g" -e "s|/tls/ca.crt|$c/a/ca.crt|" -e "s|curl -sS|curl -sS --resolve jobguard.default.svc:$port:127.0.0.1|" "$s/test.sh" >"$s/test2.sh"
	check 'server: the helm test script gets a denial from the real server' env \
		URL="https://jobguard.default.svc:$port/validate?timeout=5s" REVIEW="$(cat "$s/review.json")" sh -ec "$(cat "$s/test2.sh")"
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
fi

if [[ $skipped -gt 0 ]]; then
	printf '%d passed, %d failed, %d skipped\n' "$passed" "$failed" "$skipped"
else
	printf '%d passed, %d failed\n' "$passed" "$failed"
fi
[[ $failed -eq 0 ]]
