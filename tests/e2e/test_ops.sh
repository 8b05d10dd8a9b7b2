#!/usr/bin/env bash
# Ops port: /healthz, /readyz, /metrics (every metric with # HELP and # TYPE, counters that move
# with requests), 404/405 there, and the JSON log lines (startup config, denial, refusal);
# --metrics-zero-series=false: no rule series until a rule fires.
source "$(dirname "$0")/lib.sh"
jg_init "$@"

CERTS=$TMP/certs
mkcerts "$CERTS" || { fail "certificates"; jg_finish; }
start_server main --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--shutdown-delay 0 || { fail "server start"; jg_finish; }

code=$(curl -sS -o "$TMP/b" -w '%{http_code}' "$OPS_URL/healthz")
expect_eq "/healthz: 200 ok" "200 ok" "$code $(cat "$TMP/b")"
code=$(curl -sS -o "$TMP/b" -w '%{http_code}' "$OPS_URL/readyz")
expect_eq "/readyz: 200 ok with a valid certificate" "200 ok" "$code $(cat "$TMP/b")"
code=$(curl -sS -o /dev/null -w '%{http_code}' "$OPS_URL/nope")
expect_eq "ops: unknown path 404" 404 "$code"
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -d x "$OPS_URL/metrics")
expect_eq "ops: POST /metrics 405" 405 "$code"
code=$(curl -sS -o /dev/null -w '%{http_code}' "https://127.0.0.1:$OPS/healthz" 2>/dev/null)
expect_eq "ops port is plain HTTP (no TLS)" 000 "$code"

curl -sS -D "$TMP/mh" -o "$TMP/m0" "$OPS_URL/metrics"
expect_match "/metrics Content-Type is the Prometheus text format" 'text/plain; version=0.0.4' "$(tr -d '\r' <"$TMP/mh")"
for m in jobguard_admission_requests_total:counter jobguard_admission_duration_seconds:histogram \
	jobguard_rule_violations_total:counter jobguard_requests_in_flight:gauge \
	jobguard_http_responses_total:counter jobguard_certificate_expiry_timestamp_seconds:gauge \
	jobguard_certificate_reloads_total:counter jobguard_build_info:gauge; do
	name=${m%%:*} type=${m#*:}
	if grep -q "^# HELP $name " "$TMP/m0" && grep -q "^# TYPE $name $type\$" "$TMP/m0"; then
		pass "$name has # HELP and # TYPE $type"
	else fail "$name: missing # HELP/# TYPE $type"; fi
done
bad=$(grep -v '^#' "$TMP/m0" | grep -vE '^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*",?)*\})? -?[0-9.e+Inf-]+$' | head -3)
expect_eq "every sample line is well-formed" "" "$bad"
others=$(grep -v '^#' "$TMP/m0" | grep -v '^jobguard_' | head -3)
expect_eq "no metric outside the jobguard_ namespace" "" "$others"
n_series=$(grep -c '^jobguard_rule_violations_total{rule=' "$TMP/m0")
if [[ $n_series -ge 30 ]]; then pass "rule violation series exist at 0 before any request ($n_series rules)"; else fail "only $n_series rule series"; fi
expect_eq "  ALWAYS-ManagedByFormat starts at 0" 0 "$(metric 'jobguard_rule_violations_total{rule="ALWAYS-ManagedByFormat",kind="Job",mode="deny",dry_run="false"}')"
n_rules=$("$JG" rules --markdown | grep -c '^| [0-9]')
n_crd=$("$JG" policy show | jq '[.targets[] | select(.group != "batch") | .kind] | unique | length')
# Job: every rule but the two target rules; CronJob: the 3 managedBy rules and the allow-list;
# each CRD kind and "other" (a policy's own kinds): managedBy, target and policy rules (7).
expect_eq "  a zero series per mode for every rule that can fire for each kind" \
	$(( (n_rules - 2) * 3 + 4 * 3 + (n_crd + 1) * 7 * 3 )) "$n_series"
for k in $("$JG" policy show | jq -r '[.targets[].kind] | unique | .[]') other; do
	[[ $(metric "jobguard_rule_violations_total{rule=\"Policy-AllowedControllers\",kind=\"$k\",mode=\"deny\",dry_run=\"false\"}") == 0 ]] &&
		grep -q "^jobguard_rule_violations_total{rule=\"Policy-AllowedControllers\",kind=\"$k\",mode=\"audit\"" "$TMP/m0" ||
		fail "  no zero series for kind $k"
done
pass "  every target kind has its zero series"
echo "# zero series of jobguard_rule_violations_total (--metrics-zero-series=true): $n_series"
expect_eq "  no dry-run series before a dry run" 0 "$(grep -c 'dry_run="true"' "$TMP/m0")"
ver=$("$JG" --version | awk '{print $2}')
expect_eq "build_info carries the version" 1 "$(metric "jobguard_build_info{version=\"$ver\"}")"
not_after=$(date -d "$(openssl x509 -in "$CERTS/tls.crt" -noout -enddate | cut -d= -f2)" +%s)
expect_eq "certificate expiry = notAfter of tls.crt" "$not_after" "$(metric jobguard_certificate_expiry_timestamp_seconds)"
expect_eq "requests_in_flight is 0 at rest" 0 "$(metric jobguard_requests_in_flight)"
expect_eq "reloads start at 0 (success)" 0 "$(metric 'jobguard_certificate_reloads_total{result="success"}')"
expect_eq "reloads start at 0 (failure)" 0 "$(metric 'jobguard_certificate_reloads_total{result="failure"}')"

# Counters move.
ALLOW_S='jobguard_admission_requests_total{resource="jobs",subresource="status",operation="UPDATE",verdict="allowed",dry_run="false"}'
DENY_C='jobguard_admission_requests_total{resource="jobs",subresource="",operation="CREATE",verdict="denied",dry_run="false"}'
DRY_C='jobguard_admission_requests_total{resource="jobs",subresource="",operation="CREATE",verdict="denied",dry_run="true"}'
BADREQ='jobguard_admission_requests_total{resource="",subresource="",operation="",verdict="bad_request",dry_run="false"}'
RULE='jobguard_rule_violations_total{rule="ALWAYS-ManagedByFormat",kind="Job",mode="deny",dry_run="false"}'
DRY_RULE='jobguard_rule_violations_total{rule="ALWAYS-ManagedByFormat",kind="Job",mode="deny",dry_run="true"}'
H200='jobguard_http_responses_total{code="200"}'
H404='jobguard_http_responses_total{code="404"}'
H413='jobguard_http_responses_total{code="413"}'
COUNT=jobguard_admission_duration_seconds_count
INF='jobguard_admission_duration_seconds_bucket{le="+Inf"}'
declare -A before
for k in "$ALLOW_S" "$DENY_C" "$DRY_C" "$BADREQ" "$RULE" "$DRY_RULE" "$H200" "$H404" "$H413" "$COUNT"; do before[$k]=$(metric "$k"); done

DENY_FILE=$CASES_DIR/e10-create-uppercase-host/review.json
ALLOW_FILE=$TMP/allow-status.json
cat >"$ALLOW_FILE" <<'JSON'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-ops-1","kind":{"group":"batch","version":"v1","kind":"Job"},"resource":{"group":"batch","version":"v1","resource":"jobs"},"subResource":"status","name":"j","namespace":"default","operation":"UPDATE","userInfo":{"username":"system:serviceaccount:kube-system:job-controller"},"object":{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"default"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox"}],"restartPolicy":"Never"}}},"status":{"active":1}},"oldObject":{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"default"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox"}],"restartPolicy":"Never"}}},"status":{}},"dryRun":false}}
JSON
for i in 1 2 3; do post "$ALLOW_FILE" >/dev/null; done
expect_eq "  allowed status update answered allowed" true "$(jq -r .response.allowed "$TMP/resp.json")"
post "$DENY_FILE" >/dev/null
expect_eq "  bad managedBy CREATE answered denied" false "$(jq -r .response.allowed "$TMP/resp.json")"
DRY_FILE=$TMP/dry-run.json
jq -c '.request.dryRun = true | .request.uid = "u-ops-dry"' "$DENY_FILE" >"$DRY_FILE"
post "$DRY_FILE" >/dev/null
expect_eq "  the same CREATE as a dry run is decided the same" false "$(jq -r .response.allowed "$TMP/resp.json")"
jcurl -o /dev/null -H 'Content-Type: application/json' -d '{' "$URL/validate"
jcurl -o /dev/null "$URL/nowhere"
jcurl -o /dev/null -H 'Content-Type: application/json' -H "Content-Length: 99999999" -d x "$URL/validate" 2>/dev/null

expect_eq "requests_total{jobs,status,UPDATE,allowed} +3" $((before[$ALLOW_S] + 3)) "$(metric "$ALLOW_S")"
expect_eq "requests_total{jobs,CREATE,denied} +1" $((before[$DENY_C] + 1)) "$(metric "$DENY_C")"
expect_eq "requests_total{bad_request} +1 (malformed JSON)" $((before[$BADREQ] + 1)) "$(metric "$BADREQ")"
expect_eq "rule_violations{ALWAYS-ManagedByFormat} +1" $((before[$RULE] + 1)) "$(metric "$RULE")"
expect_eq "requests_total{jobs,CREATE,denied,dry_run=true} +1" $((before[$DRY_C] + 1)) "$(metric "$DRY_C")"
expect_eq "rule_violations{ALWAYS-ManagedByFormat,dry_run=true} +1" $((before[$DRY_RULE] + 1)) "$(metric "$DRY_RULE")"
expect_eq "http_responses{200} +6" $((before[$H200] + 6)) "$(metric "$H200")"
expect_eq "http_responses{404} +1" $((before[$H404] + 1)) "$(metric "$H404")"
expect_eq "http_responses{413} +1" $((before[$H413] + 1)) "$(metric "$H413")"
expect_eq "duration histogram count +6" $((before[$COUNT] + 6)) "$(metric "$COUNT")"
expect_eq "  +Inf bucket = count" "$(metric "$COUNT")" "$(metric "$INF")"
expect_eq "requests_in_flight back to 0" 0 "$(metric jobguard_requests_in_flight)"

# A CRD target: its resource and kind are labels of their own.
JS_FILE=$TMP/jobset-create.json
cat >"$JS_FILE" <<'JSON'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-ops-js","kind":{"group":"jobset.x-k8s.io","version":"v1alpha2","kind":"JobSet"},"resource":{"group":"jobset.x-k8s.io","version":"v1alpha2","resource":"jobsets"},"name":"js","namespace":"default","operation":"CREATE","userInfo":{"username":"alice"},"object":{"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet","metadata":{"name":"js","namespace":"default"},"spec":{"managedBy":"kueue.x-k8s.io/multikueue","replicatedJobs":[{"name":"w","template":{"spec":{"managedBy":"kueue.x-k8s.io/multikueue"}}}]}},"dryRun":false}}
JSON
JS_REQ='jobguard_admission_requests_total{resource="jobsets",subresource="",operation="CREATE",verdict="denied",dry_run="false"}'
JS_RULE='jobguard_rule_violations_total{rule="Target-NestedManagedBy",kind="JobSet",mode="deny",dry_run="false"}'
expect_eq "  the JobSet series exist at 0 before a JobSet request" 1 "$(grep -cxF "$JS_RULE 0" "$TMP/m0")"
expect_eq "  no Job status rule series for JobSet" 0 "$(grep -c 'rule="RejectFinishedJobWithActivePods",kind="JobSet"' "$TMP/m0")"
post "$JS_FILE" >/dev/null
expect_eq "  a JobSet with a delegated child Job is denied" \
	'JobSet.jobset.x-k8s.io "js" is invalid: spec.replicatedJobs[0].template.spec.managedBy: Unsupported value: "kueue.x-k8s.io/multikueue": supported values: "kubernetes.io/job-controller"' \
	"$(jq -r .response.status.message "$TMP/resp.json")"
expect_eq "requests_total{jobsets,CREATE,denied} = 1" 1 "$(metric "$JS_REQ")"
expect_eq "rule_violations{Target-NestedManagedBy,kind=JobSet} = 1" 1 "$(metric "$JS_RULE")"
sleep 0.2
jsl=$(grep '"msg":"admission denied"' "$SERVER_LOG" | grep '"uid":"u-ops-js"' | tail -1)
expect_eq "the JobSet denial's log line names the resource and the rule" "jobsets|Target-NestedManagedBy" \
	"$(jq -r '"\(.resource)|\(.rules|join(","))"' <<<"$jsl" 2>&1)"
curl -sS -o "$TMP/m1" "$OPS_URL/metrics"
mono=$(grep '^jobguard_admission_duration_seconds_bucket' "$TMP/m1" | awk '{ if ($2 < prev) bad = 1; prev = $2 } END { print bad ? "no" : "yes" }')
expect_eq "histogram buckets are cumulative" yes "$mono"
expect_match "histogram has sub-millisecond buckets" 'le="0.0001"' "$(cat "$TMP/m1")"

# Logs (JSON, stderr): startup configuration, one line per denial and per refusal.
sleep 0.2
start=$(grep -m1 '"msg":"starting jobguard"' "$SERVER_LOG")
expect_match "startup line carries the effective configuration" '"port":'"$PORT"'.*"max_connections":1024.*"connection_timeout":30' "$start"
den=$(grep '"msg":"admission denied"' "$SERVER_LOG" | grep -v u-ops-dry | grep -v u-ops-js | tail -1)
expect_eq "denial log line: uid, namespace, name, user, operation, subresource, rules, message" \
	"e10-create-uppercase-host|CREATE|ALWAYS-ManagedByFormat|true" \
	"$(jq -r '"\(.uid)|\(.operation)|\(.rules|join(","))|\(has("namespace") and has("name") and has("user") and has("subresource") and (.message|test("spec.managedBy")))"' <<<"$den" 2>&1)"
dry=$(grep '"msg":"admission denied"' "$SERVER_LOG" | grep -c '"uid":"u-ops-dry".*"dry_run":true')
expect_eq "the dry run's denial is logged with dry_run true" 1 "$dry"
ref=$(grep '"msg":"request refused"' "$SERVER_LOG" | grep -c '"code":404')
expect_eq "refusal log line for the 404" 1 "$ref"
alw=$(grep -c '"msg":"admission allowed"' "$SERVER_LOG")
expect_eq "allowed requests are not logged at info" 0 "$alw"
if jq -e . "$SERVER_LOG" >/dev/null 2>&1; then pass "every log line is JSON"; else fail "non-JSON log line"; fi

stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"

# --metrics-zero-series=false (and its variable): no rule series before a rule fires, then exactly
# the series of what happened; every other series as with the default. A bad value stops the start.
for how in flag env; do
	if [[ $how == flag ]]; then
		start_server nozero --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
			--shutdown-delay 0 --metrics-zero-series=false || { fail "server start (no zero series)"; jg_finish; }
	else
		JOBGUARD_METRICS_ZERO_SERIES=false start_server nozero-env --tls-cert-file "$CERTS/tls.crt" \
			--tls-private-key-file "$CERTS/tls.key" --shutdown-delay 0 || { fail "server start (no zero series, env)"; jg_finish; }
	fi
	curl -sS -o "$TMP/z0" "$OPS_URL/metrics"
	expect_eq "$how: --metrics-zero-series=false: no rule violation series before any request" 0 \
		"$(grep -c '^jobguard_rule_violations_total{' "$TMP/z0")"
	expect_eq "  the metric is still declared (# HELP and # TYPE)" 2 "$(grep -c '^# [A-Z]* jobguard_rule_violations_total ' "$TMP/z0")"
	expect_eq "  every other series as with zero series on" "$(grep -v '^jobguard_rule_violations_total{' "$TMP/m0" | grep -v '^#' | grep -v '^jobguard_certificate_expiry' | cut -d' ' -f1 | sort)" \
		"$(grep -v '^jobguard_rule_violations_total{' "$TMP/z0" | grep -v '^#' | grep -v '^jobguard_certificate_expiry' | cut -d' ' -f1 | sort)"
	post "$DENY_FILE" >/dev/null
	post "$JS_FILE" >/dev/null
	curl -sS -o "$TMP/z1" "$OPS_URL/metrics"
	expect_eq "  once rules fire, exactly their series appear" "$RULE 1|$JS_RULE 1" \
		"$(grep '^jobguard_rule_violations_total{' "$TMP/z1" | sort | paste -sd'|')"
	start=$(grep -m1 '"msg":"starting jobguard"' "$SERVER_LOG")
	expect_match "  the startup line says metrics_zero_series false" '"metrics_zero_series":"false"' "$start"
	stop_server
	expect_eq "  server exits 0" 0 "$SERVER_RC"
done
out=$(timeout 20 "$JG" serve --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--bind-address 127.0.0.1 --port "$(free_port)" --ops-port "$(free_port)" --metrics-zero-series no 2>&1)
rc=$?
expect_eq "--metrics-zero-series no: exit 2 with the values it takes" \
	'2 jobguard serve: --metrics-zero-series must be true or false, not "no"' "$rc $out"

# Text format and debug level.
start_server text --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--shutdown-delay 0 --log-format text --log-level debug || { fail "server start (text)"; jg_finish; }
post "$ALLOW_FILE" >/dev/null
sleep 0.2
expect_match "text log with --log-level debug shows allowed requests" 'debug admission allowed uid=u-ops-1' "$(cat "$SERVER_LOG")"
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"
jg_finish
