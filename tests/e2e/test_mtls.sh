#!/usr/bin/env bash
# Optional mTLS: with --client-ca-file a client certificate signed by that CA is required (403
# without one, or with one from another CA); --client-cn restricts the common name. The server
# certificate checks and the ops port are unaffected.
source "$(dirname "$0")/lib.sh"
jg_init "$@"

CERTS=$TMP/certs
mkcerts "$CERTS" || { fail "certificates"; jg_finish; }
new_ca "$TMP/clientca" "jobguard-client-ca"
new_ca "$TMP/otherca" "someone-else"
sign_with_ca "$TMP/clientca" "$TMP/apiserver" kube-apiserver clientAuth
sign_with_ca "$TMP/clientca" "$TMP/intruder" intruder clientAuth
sign_with_ca "$TMP/otherca" "$TMP/foreign" kube-apiserver clientAuth
sign_with_ca "$TMP/clientca" "$TMP/serveronly" kube-apiserver serverAuth
cp "$CASES_DIR/e01-create-managedby-absent/review.json" "$TMP/review.json"

# mpost DIR|none: status of a POST with that client certificate, body in $TMP/resp.json
mpost() {
	local c=()
	[[ $1 != none ]] && c=(--cert "$1/tls.crt" --key "$1/tls.key")
	jcurl "${c[@]}" -o "$TMP/resp.json" -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary @"$TMP/review.json" "$URL/validate" 2>/dev/null
}

start_server cn --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" --shutdown-delay 0 \
	--client-ca-file "$TMP/clientca/ca.crt" --client-cn kube-apiserver || { fail "server start"; jg_finish; }
expect_eq "client cert from the client CA with CN kube-apiserver: 200 allowed" "200 true" \
	"$(mpost "$TMP/apiserver") $(jq -r .response.allowed "$TMP/resp.json")"
expect_eq "no client certificate: 403" "403 403" "$(mpost none) $(jq -r .response.status.code "$TMP/resp.json")"
expect_match "  reason says so" 'no client certificate' "$(jq -r .response.status.message "$TMP/resp.json")"
expect_eq "client certificate from another CA: 403" 403 "$(mpost "$TMP/foreign")"
expect_match "  reason: not trusted" 'rejected' "$(jq -r .response.status.message "$TMP/resp.json")"
expect_eq "right CA, wrong CN: 403" 403 "$(mpost "$TMP/intruder")"
expect_match "  reason names the CN" '"intruder" is not "kube-apiserver"' "$(jq -r .response.status.message "$TMP/resp.json")"
expect_eq "right CA and CN but no clientAuth usage: 403" 403 "$(mpost "$TMP/serveronly")"
expect_eq "ops port needs no client certificate" 200 "$(curl -sS -o /dev/null -w '%{http_code}' "$OPS_URL/readyz")"
expect_eq "403s are counted" 4 "$(metric 'jobguard_http_responses_total{code="403"}')"
grep -q '"code":403' "$SERVER_LOG" && pass "403 refusals are logged" || fail "no 403 log line"
if build_apiclient; then
	out=$("$TMP/apiclient" -addr "127.0.0.1:$PORT" -server-name "$SVC_DNS" -cacert "$CERTS/ca.crt" \
		-cert "$TMP/apiserver/tls.crt" -key "$TMP/apiserver/tls.key" -repeat 3 "$TMP/review.json" 2>&1)
	expect_eq "Go client with the apiserver certificate: 3 x allowed, connection reused" \
		"allowed=true reused=false|allowed=true reused=true|allowed=true reused=true" \
		"$(grep -o 'allowed=[a-z]*\|reused=[a-z]*' <<<"$out" | paste -sd' ' | sed 's/ allowed/|allowed/g')"
	out=$("$TMP/apiclient" -addr "127.0.0.1:$PORT" -server-name "$SVC_DNS" -cacert "$CERTS/ca.crt" "$TMP/review.json" 2>&1)
	expect_match "Go client without a certificate: 403" 'status=403' "$out"
else
	fail "Go client build"
fi
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"

start_server anycn --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" --shutdown-delay 0 \
	--client-ca-file "$TMP/clientca/ca.crt" || { fail "server start"; jg_finish; }
expect_eq "without --client-cn any CN from the client CA: 200" 200 "$(mpost "$TMP/intruder")"
expect_eq "without --client-cn another CA is still refused: 403" 403 "$(mpost "$TMP/foreign")"
expect_eq "without --client-cn no certificate is still refused: 403" 403 "$(mpost none)"
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"

start_server plain --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" --shutdown-delay 0 \
	|| { fail "server start"; jg_finish; }
expect_eq "without --client-ca-file no client certificate is needed" 200 "$(mpost none)"
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"
jg_finish
