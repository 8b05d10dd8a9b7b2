#!/usr/bin/env bash
# A serving certificate that expires while it is loaded (docs/certificates.md "When the certificate
# expires"): /readyz turns 503 "no valid certificate" at notAfter, so the pod leaves the Service's
# endpoints, while /healthz stays 200 (the pod is not restarted); the expiry metric is the notAfter.
# A renewed pair written into the Secret volume is loaded without a restart and /readyz is 200 again.
source "$(dirname "$0")/lib.sh"
jg_init "$@"

CERTS=$TMP/ca
SEC=$TMP/secret
mkcerts "$CERTS" || { fail "certificates"; jg_finish; }
# valid from an hour ago until LIFE seconds from now
LIFE=6
end=$(($(date +%s) + LIFE))
sign_dated "$CERTS" "$TMP/short" "$(date -u -d '-1 hour' +%Y%m%d%H%M%SZ)" "$(date -u -d "@$end" +%Y%m%d%H%M%SZ)"
secret_install "$SEC" "$TMP/short"
start_server expiry --tls-cert-file "$SEC/tls.crt" --tls-private-key-file "$SEC/tls.key" --service-name "$SVC_DNS" \
	--cert-poll-interval 1 --shutdown-delay 0 || { fail "server start"; jg_finish; }

ready() { curl -sS --max-time 5 -o "$TMP/r" -w '%{http_code}' "$OPS_URL/readyz" 2>/dev/null; echo " $(cat "$TMP/r" 2>/dev/null)"; }
expect_eq "/readyz 200 while the certificate is valid" "200 ok" "$(ready)"
expect_eq "jobguard_certificate_expiry_timestamp_seconds is the notAfter" "$end" "$(metric jobguard_certificate_expiry_timestamp_seconds)"
while [[ $(date +%s) -le $end ]]; do sleep 0.2; done
expect_eq "/readyz 503 once notAfter has passed" "503 no valid certificate" "$(ready)"
expect_eq "/healthz stays 200 (no restart)" 200 "$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "$OPS_URL/healthz")"
kill -0 "$SERVER_PID" 2>/dev/null && pass "the server keeps running" || fail "the server exited"

# the renewal arrives as a new Secret volume version
mkcerts "$TMP/renewed" || fail "renewed certificate"
secret_install "$SEC" "$TMP/renewed"
wait_metric 'jobguard_certificate_reloads_total{result="success"}' 1 15 && pass "the renewed pair is loaded" ||
	fail "the renewed pair was not loaded"
expect_eq "/readyz 200 again after the renewal" "200 ok" "$(ready)"
jg_finish
