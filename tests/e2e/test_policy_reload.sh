#!/usr/bin/env bash
# Policy file hot reload (docs/policy.md "Reloading"). The file lives in a Kubernetes-style
# ConfigMap volume (policy.json -> ..data/policy.json, ..data swapped atomically). While h2load
# keeps 8 keep-alive connections busy, the policy is replaced by a good one (new sha256 in
# /metrics, a "policy reloaded" log line, the new mode decides the next request), by a bad one
# (refused, logged with file, path and problem, counted; the old sha256 and mode keep serving),
# by a good one again, then swapped back and forth 20 times. Zero failed requests, and no request
# decided by half a policy: a JAXJob update that one policy refuses twice (mode and target row) and
# the other allows is never refused once. Then SIGHUP
# with polling off, an invalid file at start (exit 2 with the error) and JOBGUARD_POLICY_FILE.
source "$(dirname "$0")/lib.sh"
jg_init "$@"
command -v h2load >/dev/null || { fail "h2load not installed (nghttp2-client)"; jg_finish; }

CERTS=$TMP/certs
mkcerts "$CERTS" || { fail "certificates"; jg_finish; }
CM=$TMP/configmap
OK='jobguard_policy_reloads_total{result="success"}'
KO='jobguard_policy_reloads_total{result="failure"}'
# configmap_install FILE: FILE becomes $CM/policy.json in a new ..data version, atomically.
configmap_install() {
	local v=..$(date +%s%N)
	mkdir -p "$CM/$v"
	cp "$1" "$CM/$v/policy.json"
	ln -sfn "$v" "$CM/..data_tmp"
	mv -T "$CM/..data_tmp" "$CM/..data"
	[[ -L $CM/policy.json ]] || ln -s ..data/policy.json "$CM/policy.json"
}

# jax_verdict: a JAXJob UPDATE handing it to MultiKueue. deny.json refuses it twice (immutable, and
# the built-in row's Target-DelegationUnsupported); off.json allows it (immutability off, and a
# target row saying the operator honours the field). "denied 1" would be half of each.
JAX=$TMP/jax-update.json
cat >"$JAX" <<'JSON'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-jax","kind":{"group":"kubeflow.org","version":"v1","kind":"JAXJob"},"resource":{"group":"kubeflow.org","version":"v1","resource":"jaxjobs"},"name":"jx","namespace":"ml","operation":"UPDATE","userInfo":{"username":"alice"},"object":{"apiVersion":"kubeflow.org/v1","kind":"JAXJob","metadata":{"name":"jx","namespace":"ml"},"spec":{"runPolicy":{"managedBy":"kueue.x-k8s.io/multikueue"}}},"oldObject":{"apiVersion":"kubeflow.org/v1","kind":"JAXJob","metadata":{"name":"jx","namespace":"ml"},"spec":{"runPolicy":{"managedBy":"kubeflow.org/training-operator"}}}}}
JSON
jax_verdict() {
	local code
	code=$(jcurl -o "$TMP/jax-resp.json" -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary "@$JAX" "$URL/validate?timeout=10s")
	[[ $code == 200 ]] || { echo "http $code"; return; }
	if grep -q '"allowed":true' "$TMP/jax-resp.json"; then echo allowed; else echo "denied $(jq '.response.status.details.causes | length' "$TMP/jax-resp.json")"; fi
}

printf '{"modes": {"ALWAYS-ManagedByImmutable": "deny"}}\n' >"$TMP/deny.json"
printf '{"modes": {"ALWAYS-ManagedByImmutable": "off"},\n "controllers": [{"name": "kueue.x-k8s.io/multikueue"}],\n "targets": [{"group": "kubeflow.org", "versions": ["v1"], "kind": "JAXJob", "resource": "jaxjobs", "managedByPath": "spec.runPolicy.managedBy", "reservedValue": "kubeflow.org/training-operator", "delegationSupported": true}]}\n' >"$TMP/off.json"
# refused by the reader: a status binding for Job's own controller, whose status writes the status
# webhooks never send (docs/policy.md)
printf '{"controllers": [{"name": "kubernetes.io/job-controller", "statusWriters": {"users": ["system:serviceaccount:kube-system:job-controller"]}}]}\n' >"$TMP/bad.json"
sha_deny=$(sha256sum "$TMP/deny.json" | cut -d' ' -f1)
sha_off=$(sha256sum "$TMP/off.json" | cut -d' ' -f1)
configmap_install "$TMP/deny.json"

start_server pol --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--policy-file "$CM/policy.json" --cert-poll-interval 1 --shutdown-delay 0 || { fail "server start"; jg_finish; }
expect_eq "policy_info carries the file's sha256" "$sha_deny" "$(serving_sha)"
expect_eq "no reload counted at start" "0 0" "$(metric "$OK") $(metric "$KO")"
expect_eq "the file on disk is serving" 1 "$(metric jobguard_policy_file_serving)"
grep -q '"policy_file":"'"$CM/policy.json"'"' "$SERVER_LOG" && pass "start-up log names the policy file" || fail "policy_file not in the start-up log"
grep '"msg":"policy loaded"' "$SERVER_LOG" | grep -q "\"sha256\":\"$sha_deny\",\"targets\":0,\"controllers\":0" &&
	pass "start-up log: policy loaded with its sha256 and counts" || fail "no 'policy loaded' line with the sha256"
expect_eq "deny mode: changing spec.managedBy is denied" denied "$(verdict)"
expect_eq "deny mode, built-in JAXJob row: the JAXJob handover is refused twice" "denied 2" "$(jax_verdict)"

BODY=$CASES_DIR/e01-create-managedby-absent/review.json
h2load --h1 -c 8 -t 1 -D 16 -d "$BODY" -H 'Content-Type: application/json' \
	"https://127.0.0.1:$PORT/validate?timeout=10s" >"$TMP/h2load.out" 2>&1 &
LOAD=$!
PIDS+=("$LOAD")
sleep 1

# 1. a good new policy, ConfigMap-style
configmap_install "$TMP/off.json"
wait_metric "$OK" 1 10 && pass "new policy reloaded (success counter 1)" || fail "no successful reload"
expect_eq "  policy_info has the new sha256" "$sha_off" "$(serving_sha)"
grep '"msg":"policy reloaded"' "$SERVER_LOG" | tail -1 | grep -q "\"sha256\":\"$sha_off\",\"previous_sha256\":\"$sha_deny\"" &&
	pass "  logged with the new and previous sha256" || fail "  no 'policy reloaded' log line with both digests"
expect_eq "  off mode decides the next request" allowed "$(verdict)"
expect_eq "  the new policy's JAXJob row decides too" allowed "$(jax_verdict)"

# 2. a bad policy: refused, counted, logged; the previous one keeps serving
configmap_install "$TMP/bad.json"
wait_metric "$KO" 1 10 && pass "bad policy refused (failure counter 1)" || fail "failure counter is $(metric "$KO")"
line=$(grep '"msg":"policy reload rejected, keeping the current policy"' "$SERVER_LOG" | tail -1)
expect_match "  logged as JSON at level error" '^\{.*"level":"error"' "$line"
expect_match "  the error names file, JSON path and problem" "\"error\":\"$CM/policy.json: controllers\\[0\\].statusWriters: \\\\\"kubernetes.io/job-controller\\\\\" is the reserved value of Job.batch, CronJob.batch" "$line"
expect_match "  the serving sha256 is logged" "\"serving_sha256\":\"$sha_off\"" "$line"
expect_eq "  policy_info keeps the old sha256" "$sha_off" "$(serving_sha)"
expect_eq "  the old policy still decides" allowed "$(verdict)"
sleep 1.5
expect_eq "  the same bad file is counted once, not at every poll" 1 "$(metric "$KO")"
expect_eq "  jobguard_policy_file_serving turns 0 while the file on disk is refused" 0 "$(metric jobguard_policy_file_serving)"
expect_eq "  readiness unaffected" 200 "$(curl -sS -o /dev/null -w '%{http_code}' "$OPS_URL/readyz")"

# 3. good again
configmap_install "$TMP/deny.json"
wait_metric "$OK" 2 10 && pass "recovered with a good policy (success counter 2)" || fail "second good reload missing"
expect_eq "  policy_info" "$sha_deny" "$(serving_sha)"
expect_eq "  deny mode decides again" denied "$(verdict)"
expect_eq "  jobguard_policy_file_serving is 1 again" 1 "$(metric jobguard_policy_file_serving)"

# 4. churn: 20 swaps, about one per poll, while the load and a verdict loop run
(
	n=0 other=0 jn=0 jallowed=0 jhalf=0
	while [[ ! -e $TMP/stop ]]; do
		v=$(verdict)
		case $v in allowed | denied) n=$((n + 1)) ;; *) other=$((other + 1)); echo "verdict loop: $v" >&2 ;; esac
		v=$(jax_verdict)
		case $v in
		allowed) jn=$((jn + 1)) jallowed=$((jallowed + 1)) ;;
		"denied 2") jn=$((jn + 1)) ;;
		*) jhalf=$((jhalf + 1)); echo "JAXJob verdict loop: $v" >&2 ;;
		esac
	done
	echo "$n $other $jn $jallowed $jhalf" >"$TMP/loop.out"
) &
LOOP=$!
PIDS+=("$LOOP")
want=2
for i in $(seq 1 10); do
	for f in off deny; do
		configmap_install "$TMP/$f.json"
		want=$((want + 1))
		wait_metric "$OK" "$want" 10 || { fail "churn: reload $want not seen"; break 2; }
	done
done
expect_eq "churn: 20 more reloads, all successful" "22 1" "$(metric "$OK") $(metric "$KO")"
touch "$TMP/stop"
wait "$LOOP" 2>/dev/null
read -r vn vother jn jallowed jhalf <"$TMP/loop.out"
expect_eq "churn: every verdict-loop request answered 200 ($vn requests)" 0 "$vother"
if [[ ${vn:-0} -gt 5 ]]; then pass "verdict loop made $vn requests"; else fail "verdict loop made only ${vn:-0} requests"; fi
expect_eq "churn: no JAXJob update decided by half a policy ($jn requests, $jallowed allowed)" 0 "$jhalf"
if [[ ${jallowed:-0} -gt 0 && ${jallowed:-0} -lt ${jn:-0} ]]; then pass "JAXJob verdicts saw both policies"; else fail "JAXJob verdicts saw one policy only ($jallowed of $jn allowed)"; fi

wait_exit "$LOAD" 40
expect_eq "h2load finished" 0 "$EXIT_RC"
sed -n 's/^requests: /# h2load requests: /p' "$TMP/h2load.out"
done_=$(awk '/^requests:/ { print $8 }' "$TMP/h2load.out")
expect_match "h2load: 0 failed, 0 errored, 0 timeout" ' 0 failed, 0 errored, 0 timeout' "$(grep '^requests:' "$TMP/h2load.out")"
expect_match "h2load: only 2xx" " ${done_} 2xx, 0 3xx, 0 4xx, 0 5xx" "$(grep '^status codes:' "$TMP/h2load.out")"
if [[ ${done_:-0} -gt 100 ]]; then pass "h2load made $done_ requests"; else fail "h2load made only ${done_:-0} requests"; fi
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"
if grep -q 'ERROR: AddressSanitizer\|runtime error' "$SERVER_LOG"; then fail "sanitizer report in the server log"; else pass "no sanitizer report"; fi

# SIGHUP with polling off; the file replaced in place (rename), as an editor or a script would.
cp "$TMP/deny.json" "$TMP/plain.json"
start_server hup --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--policy-file "$TMP/plain.json" --cert-poll-interval 0 --shutdown-delay 0 || { fail "server start"; jg_finish; }
cp "$TMP/off.json" "$TMP/plain.json.new" && mv "$TMP/plain.json.new" "$TMP/plain.json"
sleep 1.5
expect_eq "--cert-poll-interval 0: a file change alone is not picked up" "$sha_deny" "$(serving_sha)"
kill -HUP "$SERVER_PID"
wait_metric "$OK" 1 10 && pass "SIGHUP reloads the policy" || fail "SIGHUP did not reload"
expect_eq "  policy_info after SIGHUP" "$sha_off" "$(serving_sha)"
kill -HUP "$SERVER_PID"
sleep 1
expect_eq "SIGHUP with an unchanged file: nothing counted" "1 0" "$(metric "$OK") $(metric "$KO")"
cp "$TMP/bad.json" "$TMP/plain.json"
kill -HUP "$SERVER_PID"
wait_metric "$KO" 1 10 && pass "SIGHUP with a bad file: refused and counted" || fail "failure counter is $(metric "$KO")"
kill -HUP "$SERVER_PID"
wait_metric "$KO" 2 10 && pass "  a second SIGHUP reports it again" || fail "second SIGHUP not counted"
expect_eq "  still serving the good policy" "$sha_off" "$(serving_sha)"
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"

# Invalid at start: exit 2 with the error, nothing served.
"$JG" serve --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" --bind-address 127.0.0.1 \
	--port "$(free_port)" --ops-port "$(free_port)" --policy-file "$TMP/bad.json" >"$TMP/bad.out" 2>&1
expect_eq "invalid policy at start: exit 2" 2 "$?"
expect_match "  the error on stderr" "jobguard serve: refusing to start: --policy-file: $TMP/bad.json: controllers\\[0\\].statusWriters: \"kubernetes.io/job-controller\" is the reserved value" "$(cat "$TMP/bad.out")"
JOBGUARD_POLICY_FILE=$TMP/nope.json "$JG" serve --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--bind-address 127.0.0.1 --port "$(free_port)" --ops-port "$(free_port)" >"$TMP/env.out" 2>&1
expect_eq "JOBGUARD_POLICY_FILE is read (missing file: exit 2)" 2 "$?"
expect_match "  names the file" "$TMP/nope.json" "$(cat "$TMP/env.out")"
JOBGUARD_POLICY_FILE=$TMP/off.json start_server env --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--shutdown-delay 0 || fail "server start with JOBGUARD_POLICY_FILE"
expect_eq "JOBGUARD_POLICY_FILE: policy_info" "$sha_off" "$(serving_sha)"
stop_server
start_server none --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" --shutdown-delay 0 ||
	fail "server start without a policy"
expect_eq "without a policy file: policy_info sha256 is empty" 'jobguard_policy_info{sha256=""} 1' \
	"$(curl -sS "$OPS_URL/metrics" | grep '^jobguard_policy_info')"
stop_server
jg_finish
