#!/usr/bin/env bash
# The corpus through a client that behaves like kube-apiserver: Go's TLS stack trusting only the
# caBundle, ServerName = jobguard.default.svc, HTTP/1.1 keep-alive, POST /validate?timeout=10s.
# Every tests/cases review must give the expected allowed, uid and causes (field list), all
# over one reused connection.
source "$(dirname "$0")/lib.sh"
jg_init "$@"
build_apiclient || { fail "Go client build"; jg_finish; }

CERTS=$TMP/certs
mkcerts "$CERTS" || { fail "certificates"; jg_finish; }
start_server go --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--service-name "$SVC_DNS" --shutdown-delay 0 --log-level warn || { fail "server start"; jg_finish; }

files=() want=()
for dir in "$CASES_DIR"/*/; do
	# cases with their own flags or policy file need their own server: e2e-corpus serves them
	[[ -f $dir/review.json && -f $dir/expected.json && ! -f $dir/args && ! -f $dir/policy.json ]] || continue
	files+=("$dir/review.json")
	want+=("$(basename "$dir")/review.json $(jq -r '"\(.apiVersion) \(.response.allowed) \(.response.uid) \([.response.status.details.causes[]?.field] | join("|"))"' "$dir/expected.json")")
done
"$TMP/apiclient" -addr "127.0.0.1:$PORT" -server-name "$SVC_DNS" -cacert "$CERTS/ca.crt" "${files[@]}" >"$TMP/go.out" 2>&1
expect_eq "Go client exit status (no transport error)" 0 "$?"
mapfile -t got <"$TMP/go.out"
expect_eq "one answer per review" "${#files[@]}" "${#got[@]}"
n_ok=0 bad=()
for i in "${!files[@]}"; do
	line=${got[$i]:-}
	g=$(sed -E 's/^file=([^ ]*) status=([0-9]+) api=([^ ]*) allowed=([a-z]*) uid=([^ ]*) code=[0-9]+ causes=([^ ]*) .*/\1 \3 \4 \5 \6/' <<<"$line")
	w=${want[$i]}
	if [[ $line == *" status=200 "* && $g == "$w" ]]; then n_ok=$((n_ok + 1)); else bad+=("$line"); fi
done
expect_eq "every review: HTTP 200 with the expected allowed, uid and causes" "${#files[@]}" "$n_ok"
for b in "${bad[@]:0:5}"; do echo "#   $b"; done
expect_eq "HTTP/1.1 on every request" 0 "$(grep -vc 'proto=HTTP/1.1' "$TMP/go.out")"
expect_eq "one connection, reused for all but the first request" "1 $((${#files[@]} - 1))" \
	"$(grep -c 'reused=false' "$TMP/go.out") $(grep -c 'reused=true' "$TMP/go.out")"
expect_match "TLS 1.3 negotiated by Go" 'tls=1.3' "${got[0]:-}"
# A client that trusts another CA, or asks for another name, must fail the handshake.
new_ca "$TMP/otherca" other
"$TMP/apiclient" -addr "127.0.0.1:$PORT" -server-name "$SVC_DNS" -cacert "$TMP/otherca/ca.crt" "${files[0]}" >"$TMP/x.out" 2>&1
expect_match "Go client with a foreign caBundle: x509 error" 'error .*x509' "$(cat "$TMP/x.out")"
"$TMP/apiclient" -addr "127.0.0.1:$PORT" -server-name jobguard.elsewhere.svc -cacert "$CERTS/ca.crt" "${files[0]}" >"$TMP/x.out" 2>&1
expect_match "Go client for another service name: certificate name error" 'error .*(x509|certificate)' "$(cat "$TMP/x.out")"
expect_eq "deny mode: no annotations, no warnings on any answer" "${#files[@]}" "$(grep -c ' annotations=null warnings=null$' "$TMP/go.out")"
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"

# Modes (docs/modes.md) as the Go client sees them: warnings and auditAnnotations decoded from the
# response, next to a denial or an allowance; the log lines and metrics that go with them.
start_server modes --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--service-name "$SVC_DNS" --shutdown-delay 0 --mode ALWAYS-ManagedByImmutable=warn \
	--mode ALWAYS-ManagedByFormat=audit --mode RejectCompleteJobWithoutCompletionTime=warn ||
	{ fail "server start (modes)"; jg_finish; }
IMM=$CASES_DIR/r-update-managedby-changed FMT=$CASES_DIR/e10-create-uppercase-host
MIX=$CASES_DIR/r-status-update-denied
"$TMP/apiclient" -addr "127.0.0.1:$PORT" -server-name "$SVC_DNS" -cacert "$CERTS/ca.crt" \
	"$IMM/review.json" "$FMT/review.json" "$MIX/review.json" >"$TMP/modes.out" 2>&1
expect_eq "Go client exit status (modes)" 0 "$?"
mapfile -t got <"$TMP/modes.out"
# wtexts CASE FIELD RULE: the same errors as warn-mode warnings, prefixed with who warns (docs/modes.md)
wtexts() { jq -c --arg p "jobguard ($3, warn mode; denied in deny mode): " '[.response.status.details.causes[] | select(.field == "'"$2"'") | "\($p)\(.field): \(.message)"]' "$1/expected.json"; }
warns() { sed 's/.* warnings=//' <<<"$1"; }
notes() { sed -E 's/.* annotations=(.*) warnings=.*/\1/' <<<"$1"; }
expect_match "warn: immutability allowed" ' status=200 .* allowed=true .* code=0 causes= ' "${got[0]:-}"
expect_eq "warn: the denial's text as the one warning, naming jobguard and the rule" "$(wtexts "$IMM" spec.managedBy ALWAYS-ManagedByImmutable)" "$(warns "${got[0]:-}")"
expect_match "audit: bad format allowed, no warning" ' allowed=true .* warnings=null$' "${got[1]:-}"
expect_eq "audit: annotation keyed by rule ID, the denial's text as value" \
	"$(jq -c '{"ALWAYS-ManagedByFormat": [.response.status.details.causes[] | "\(.field): \(.message)"][0]}' "$FMT/expected.json")" \
	"$(notes "${got[1]:-}")"
expect_match "deny + warn: still denied, one cause left" ' allowed=false .* code=422 causes=status.conditions ' "${got[2]:-}"
expect_eq "deny + warn: the warn-mode error rides along as a warning" "$(wtexts "$MIX" status.completionTime RejectCompleteJobWithoutCompletionTime)" "$(warns "${got[2]:-}")"
sleep 0.2
expect_eq "one 'admission warning' log line per warned request, with the rule ID" \
	'["ALWAYS-ManagedByImmutable"] ["RejectCompleteJobWithoutCompletionTime"]' \
	"$(grep '"msg":"admission warning"' "$SERVER_LOG" | jq -c .rules | tr '\n' ' ' | sed 's/ $//')"
expect_eq "one 'admission audit' log line, with the rule ID" '["ALWAYS-ManagedByFormat"]' \
	"$(grep '"msg":"admission audit"' "$SERVER_LOG" | jq -c .rules)"
expect_eq "  and each audited error: its rule, field, value and message (the denial's cause)" \
	"$(jq -c '[.response.status.details.causes[] | {rule: "ALWAYS-ManagedByFormat", field, value: "\"Acme.io\"", message}]' "$FMT/expected.json")" \
	"$(grep '"msg":"admission audit"' "$SERVER_LOG" | jq -c .errors)"
expect_eq "the denial's log line names the deny-mode rule only" '["RejectCompleteJobWithoutSuccessCriteriaMet"]' \
	"$(grep '"msg":"admission denied"' "$SERVER_LOG" | jq -c .rules)"
expect_eq "rule_violations counts the warn mode" 1 "$(metric 'jobguard_rule_violations_total{rule="ALWAYS-ManagedByImmutable",kind="Job",mode="warn",dry_run="false"}')"
expect_eq "rule_violations counts the audit mode" 1 "$(metric 'jobguard_rule_violations_total{rule="ALWAYS-ManagedByFormat",kind="Job",mode="audit",dry_run="false"}')"
expect_eq "  and nothing in deny mode for it" 0 "$(metric 'jobguard_rule_violations_total{rule="ALWAYS-ManagedByFormat",kind="Job",mode="deny",dry_run="false"}')"
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"
jg_finish
