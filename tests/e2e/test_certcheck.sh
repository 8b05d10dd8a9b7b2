#!/usr/bin/env bash
# Certificate checks as kube-apiserver's Go TLS client would make them: a pair that client cannot
# use (no subjectAltName, a Common Name that only matches by the legacy CN fallback, an extended
# key usage without serverAuth on the leaf or an intermediate, a keyUsage without
# digitalSignature, a SHA-1 signature, a curve Go does not offer) is refused at startup with the
# exact reason, and refused on rotation while the old pair keeps serving and /readyz stays 200.
# Pairs Go accepts (certs/generate.sh, Helm's genSignedCert usages, no EKU, anyExtendedKeyUsage,
# an intermediate allowing serverAuth) still start. A rotated pair refused because its notBefore
# is a few seconds ahead is loaded once that time has passed, without the files changing.
source "$(dirname "$0")/lib.sh"
jg_init "$@"

CERTS=$TMP/certs
mkcerts "$CERTS" || { fail "certificates"; jg_finish; }
SAN="subjectAltName=DNS:$SVC_DNS,DNS:localhost,IP:127.0.0.1"

# issue ISSUERDIR OUTDIR CN KEYALG DIGEST EXT...: tls.key (KEYALG: EC curve name) and tls.crt
# signed by ISSUERDIR/ca.{crt,key} with exactly the extension lines EXT.
issue() {
	local ca=$1 out=$2 cn=$3 curve=$4 md=$5
	shift 5
	mkdir -p "$out"
	openssl genpkey -algorithm EC -pkeyopt "ec_paramgen_curve:$curve" -out "$out/tls.key" 2>/dev/null
	openssl req -new -key "$out/tls.key" -subj "/CN=$cn" -out "$out/req.csr" 2>/dev/null
	printf '%s\n' "$@" >"$out/ext.cnf"
	openssl x509 -req -in "$out/req.csr" -CA "$ca/ca.crt" -CAkey "$ca/ca.key" -"$md" \
		-set_serial "0x$(openssl rand -hex 12)" -days 30 -extfile "$out/ext.cnf" -out "$out/tls.crt" 2>/dev/null
}
# leaf NAME EXT...: a serving pair for $SVC_DNS from the test CA (P-256, SHA-256).
leaf() { local d=$TMP/$1; shift; issue "$CERTS" "$d" "$SVC_DNS" P-256 sha256 "$@"; }
# chained NAME INTERMEDIATE_EXT...: an intermediate CA with those extensions under the test CA,
# and a good leaf under it; tls.crt holds the leaf then the intermediate.
chained() {
	local d=$TMP/$1
	shift
	issue "$CERTS" "$d/int" jobguard-e2e-intermediate P-256 sha256 "$@"
	cp "$d/int/tls.crt" "$d/int/ca.crt"
	cp "$d/int/tls.key" "$d/int/ca.key"
	issue "$d/int" "$d" "$SVC_DNS" P-256 sha256 "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" "$SAN"
	cat "$d/int/ca.crt" >>"$d/tls.crt"
}
INT_OK=("basicConstraints=critical,CA:TRUE" "keyUsage=critical,keyCertSign,cRLSign")

leaf cnonly "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth"
leaf iponly "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" "subjectAltName=IP:127.0.0.1"
leaf clientauth "keyUsage=critical,digitalSignature" "extendedKeyUsage=clientAuth" "$SAN"
chained intclient "${INT_OK[@]}" "extendedKeyUsage=clientAuth"
leaf keyenc "keyUsage=critical,keyEncipherment" "extendedKeyUsage=serverAuth" "$SAN"
issue "$CERTS" "$TMP/sha1" "$SVC_DNS" P-256 sha1 "keyUsage=critical,digitalSignature" "$SAN"
issue "$CERTS" "$TMP/p224" "$SVC_DNS" P-224 sha256 "keyUsage=critical,digitalSignature" "$SAN"
chained intnotca "basicConstraints=critical,CA:FALSE"
# accepted by Go, so by jobguard
leaf helm "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth,clientAuth" \
	"basicConstraints=critical,CA:FALSE" "$SAN" # the usages of Sprig's genSignedCert (Helm mode)
leaf noeku "$SAN"
leaf anyeku "keyUsage=critical,digitalSignature" "extendedKeyUsage=anyExtendedKeyUsage" "$SAN"
chained intboth "${INT_OK[@]}" "extendedKeyUsage=serverAuth,clientAuth"
issue "$CERTS" "$TMP/p384" "$SVC_DNS" P-384 sha384 "keyUsage=critical,digitalSignature" "$SAN"

# The exact reasons, %s standing for the certificate file.
GO="Go TLS clients such as kube-apiserver"
INT="intermediate 1 (/CN=jobguard-e2e-intermediate)"
declare -A WHY=(
	[cnonly]="certificate %s has no subjectAltName: $GO ignore the Common Name (CN=$SVC_DNS), so the service name $SVC_DNS cannot be verified"
	[iponly]="certificate %s does not cover the service name $SVC_DNS (DNS names: no DNS names)"
	[clientauth]="certificate %s: the leaf has extended key usage clientAuth without serverAuth: $GO refuse the chain"
	[intclient]="certificate %s: $INT has extended key usage clientAuth without serverAuth: $GO refuse the chain"
	[keyenc]="certificate %s: the leaf's key usage (keyEncipherment) lacks digitalSignature, which the TLS handshake needs to sign with the server key"
	[sha1]="certificate %s: the leaf is signed with ecdsa-with-SHA1: $GO refuse SHA-1 and MD5 signatures"
	[p224]="certificate %s: its ECDSA key on curve secp224r1 cannot serve $GO (RSA, ECDSA P-256/P-384/P-521 or Ed25519 keys only)"
	[intnotca]="certificate %s: $INT is not a CA (no basicConstraints CA:TRUE), so it cannot sign the leaf"
)
# start_refused NAME DIR [ARGS...]: jobguard refuses DIR's pair at startup (exit 1) with exactly
# the reason WHY[DIR] (given with --service-name).
start_refused() {
	local name=$1 d=$2 out rc want
	shift 2
	# shellcheck disable=SC2059 # the reasons are the formats
	want=$(printf "${WHY[$d]}" "$TMP/$d/tls.crt")
	out=$(timeout 20 "$JG" serve --bind-address 127.0.0.1 --port "$(free_port)" --ops-port "$(free_port)" \
		--tls-cert-file "$TMP/$d/tls.crt" --tls-private-key-file "$TMP/$d/tls.key" "$@" 2>&1)
	rc=$?
	expect_eq "startup refused: $name (exit 1, exact reason)" "1 $want" \
		"$rc $(sed -n 's/^jobguard serve: refusing to start: //p' <<<"$out")"
}
start_refused "CN-only certificate with --service-name" cnonly --service-name "$SVC_DNS"
cp -r "$TMP/cnonly" "$TMP/nosan"
WHY[nosan]="certificate %s has no subjectAltName: $GO ignore the Common Name (CN=$SVC_DNS), so no name can be verified"
start_refused "no subjectAltName, no --service-name" nosan
start_refused "IP-only subjectAltName, the service name only in the CN" iponly --service-name "$SVC_DNS"
for d in clientauth intclient keyenc sha1 p224 intnotca; do
	start_refused "$d" "$d" --service-name "$SVC_DNS"
done

for ok in helm noeku anyeku intboth p384; do
	if start_server "ok-$ok" --tls-cert-file "$TMP/$ok/tls.crt" --tls-private-key-file "$TMP/$ok/tls.key" \
		--service-name "$SVC_DNS" --shutdown-delay 0; then
		expect_eq "accepted: $ok, serves it" "$(cert_serial "$TMP/$ok/tls.crt")" "$(served_serial)"
		stop_server
	else fail "accepted: $ok did not start"; fi
done

# Rotation: each refused pair is refused, logged and counted; the good pair keeps serving.
SEC=$TMP/secret
secret_install "$SEC" "$CERTS"
s1=$(cert_serial "$CERTS/tls.crt")
start_server rot --tls-cert-file "$SEC/tls.crt" --tls-private-key-file "$SEC/tls.key" --service-name "$SVC_DNS" \
	--cert-poll-interval 1 --shutdown-delay 0 || { fail "server start"; jg_finish; }
OK='jobguard_certificate_reloads_total{result="success"}'
KO='jobguard_certificate_reloads_total{result="failure"}'
# last_rejection: the error of the last "certificate reload rejected" log line
last_rejection() { grep '"msg":"certificate reload rejected' "$SERVER_LOG" | tail -1 | jq -r .error; }
n=0
for d in clientauth intclient keyenc sha1 p224 intnotca cnonly; do
	n=$((n + 1))
	secret_install "$SEC" "$TMP/$d"
	wait_metric "$KO" "$n" 10 && pass "rotation to $d refused (failure counter $n)" || fail "rotation to $d: failure counter $(metric "$KO")"
	# shellcheck disable=SC2059
	expect_eq "  logged with the exact reason" "$(printf "${WHY[$d]}" "$SEC/tls.crt")" "$(last_rejection)"
	expect_eq "  the old certificate still serves" "$s1" "$(served_serial)"
	expect_eq "  /readyz 200" 200 "$(curl -sS -o /dev/null -w '%{http_code}' "$OPS_URL/readyz")"
done
expect_eq "no successful reload counted" 0 "$(metric "$OK")"

# A pair whose notBefore is 4 s ahead (the issuer's clock ahead of the node's): refused at
# first, then swapped in once notBefore has passed, with no change to the files.
start=$(date -u -d '+4 seconds' +%Y%m%d%H%M%SZ)
sign_dated "$CERTS" "$TMP/early" "$start" "$(date -u -d '+1 day' +%Y%m%d%H%M%SZ)"
s2=$(cert_serial "$TMP/early/tls.crt")
secret_install "$SEC" "$TMP/early"
n=$((n + 1))
wait_metric "$KO" "$n" 3 && pass "pair not valid yet: refused (failure counter $n)" || fail "not-yet-valid pair: failure counter $(metric "$KO")"
expect_match "  logged: not valid yet" "^certificate $SEC/tls.crt is not valid yet: notBefore " "$(last_rejection)"
expect_eq "  the old certificate still serves" "$s1" "$(served_serial)"
wait_metric "$OK" 1 15 && pass "  loaded once its notBefore passed (success counter 1), files untouched" ||
	fail "  not loaded after notBefore: success counter $(metric "$OK")"
expect_eq "  the new certificate serves" "$s2" "$(served_serial)"
expect_match "  the retry is logged" '"msg":"certificate refused as not valid yet: notBefore has passed, trying it again"' \
	"$(grep -F 'trying it again' "$SERVER_LOG")"
expect_eq "  /readyz 200" 200 "$(curl -sS -o /dev/null -w '%{http_code}' "$OPS_URL/readyz")"
expect_eq "  failure counter unchanged by the retry" "$n" "$(metric "$KO")"
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"
jg_finish
