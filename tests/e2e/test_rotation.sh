#!/usr/bin/env bash
# Certificate hot reload under load. The files live in a Kubernetes-style Secret volume
# (tls.crt -> ..data/tls.crt, ..data swapped atomically). While h2load keeps 8 keep-alive
# connections busy and a loop opens a new TLS connection per request, the pair is rotated to a
# new good one (served on the next handshake), then to bad ones (mismatched key, expired,
# wrong service name) that must be refused, counted and logged while the good one keeps
# serving, then to another good one. Zero failed requests. Then SIGHUP with polling off, then
# a FIFO, a directory and a file under a lease in place of the files: refused, and SIGTERM
# still exits in time.
source "$(dirname "$0")/lib.sh"
jg_init "$@"
command -v h2load >/dev/null || { fail "h2load not installed (nghttp2-client)"; jg_finish; }

GEN=$TMP/gen
SEC=$TMP/secret
mkcerts "$GEN" || { fail "certificates"; jg_finish; }
CERTS=$GEN # jcurl trusts $CERTS/ca.crt: the CA stays the same across rotations
secret_install "$SEC" "$GEN"
s1=$(cert_serial "$GEN/tls.crt")
start_server rot --tls-cert-file "$SEC/tls.crt" --tls-private-key-file "$SEC/tls.key" --service-name "$SVC_DNS" \
	--cert-poll-interval 1 --shutdown-delay 0 || { fail "server start"; jg_finish; }
expect_eq "serves the first certificate" "$s1" "$(served_serial)"

BODY=$CASES_DIR/e01-create-managedby-absent/review.json
h2load --h1 -c 8 -t 1 -D 14 -d "$BODY" -H 'Content-Type: application/json' \
	"https://127.0.0.1:$PORT/validate?timeout=10s" >"$TMP/h2load.out" 2>&1 &
LOAD=$!
PIDS+=("$LOAD")
# New handshake per request, verifying the chain each time.
(
	ok=0 bad=0
	for i in $(seq 1 2000); do
		[[ -e $TMP/stop ]] && break
		c=$(jcurl --max-time 5 -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
			--data-binary @"$BODY" "$URL/validate" 2>/dev/null)
		if [[ $c == 200 ]]; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "handshake loop: $c" >&2; fi
	done
	echo "$ok $bad" >"$TMP/loop.out"
) &
LOOP=$!
PIDS+=("$LOOP")

OK='jobguard_certificate_reloads_total{result="success"}'
KO='jobguard_certificate_reloads_total{result="failure"}'
sleep 1

# 1. a new good pair (same CA, new serial)
"$SRC_ROOT/certs/generate.sh" --service "$SERVICE" --namespace "$NAMESPACE" --out "$GEN" --ip 127.0.0.1 \
	--dns localhost --force >/dev/null 2>&1
s2=$(cert_serial "$GEN/tls.crt")
secret_install "$SEC" "$GEN"
wait_metric "$OK" 1 10 && pass "good pair reloaded (success counter 1)" || fail "no successful reload"
expect_eq "  the next handshake gets the new certificate" "$s2" "$(served_serial)"
na=$(date -d "$(openssl x509 -in "$GEN/tls.crt" -noout -enddate | cut -d= -f2)" +%s)
expect_eq "  expiry metric follows the new certificate" "$na" "$(metric jobguard_certificate_expiry_timestamp_seconds)"

# 2-4. bad pairs: refused, counted, logged; the good pair keeps serving
mkdir -p "$TMP/bad1"
cp "$GEN/tls.crt" "$TMP/bad1/"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$TMP/bad1/tls.key" 2>/dev/null
sign_dated "$GEN" "$TMP/bad2" 20200101000000Z 20210101000000Z
sign_with_ca "$GEN" "$TMP/bad3" other.default.svc serverAuth 30 "DNS:other.default.svc,IP:127.0.0.1"
n=0
for b in "bad1:does not match" "bad2:has expired" "bad3:does not cover the service name"; do
	dir=${b%%:*} why=${b#*:}
	n=$((n + 1))
	secret_install "$SEC" "$TMP/$dir"
	wait_metric "$KO" "$n" 10 && pass "$dir ($why) refused: failure counter $n" || fail "$dir: failure counter is $(metric "$KO")"
	expect_eq "  still serving the good certificate" "$s2" "$(served_serial)"
	grep '"msg":"certificate reload rejected' "$SERVER_LOG" | tail -1 | grep -q "$why" &&
		pass "  logged: $why" || fail "  no log line with '$why'"
done
expect_eq "readiness unaffected by refused pairs" 200 "$(curl -sS -o /dev/null -w '%{http_code}' "$OPS_URL/readyz")"
expect_eq "success counter unchanged by refused pairs" 1 "$(metric "$OK")"

# 5. good again
"$SRC_ROOT/certs/generate.sh" --service "$SERVICE" --namespace "$NAMESPACE" --out "$GEN" --ip 127.0.0.1 \
	--dns localhost --force >/dev/null 2>&1
s3=$(cert_serial "$GEN/tls.crt")
secret_install "$SEC" "$GEN"
wait_metric "$OK" 2 10 && pass "recovered with another good pair (success counter 2)" || fail "second good reload missing"
expect_eq "  served" "$s3" "$(served_serial)"

wait_exit "$LOAD" 40
expect_eq "h2load finished" 0 "$EXIT_RC"
touch "$TMP/stop"
wait "$LOOP" 2>/dev/null
read -r lok lbad <"$TMP/loop.out"
sed -n 's/^requests: /# h2load requests: /p' "$TMP/h2load.out"
done_=$(awk '/^requests:/ { print $8 }' "$TMP/h2load.out")
expect_match "h2load: 0 failed, 0 errored, 0 timeout" ' 0 failed, 0 errored, 0 timeout' "$(grep '^requests:' "$TMP/h2load.out")"
expect_match "h2load: only 2xx" " ${done_} 2xx, 0 3xx, 0 4xx, 0 5xx" "$(grep '^status codes:' "$TMP/h2load.out")"
if [[ ${done_:-0} -gt 100 ]]; then pass "h2load made $done_ requests"; else fail "h2load made only ${done_:-0} requests"; fi
expect_eq "new-connection loop: no failure ($lok requests)" 0 "$lbad"
if [[ ${lok:-0} -gt 10 ]]; then pass "new-connection loop made $lok handshakes"; else fail "loop made ${lok:-0} requests"; fi
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"

# SIGHUP with polling off.
start_server hup --tls-cert-file "$SEC/tls.crt" --tls-private-key-file "$SEC/tls.key" \
	--cert-poll-interval 0 --shutdown-delay 0 || { fail "server start"; jg_finish; }
"$SRC_ROOT/certs/generate.sh" --service "$SERVICE" --namespace "$NAMESPACE" --out "$GEN" --ip 127.0.0.1 \
	--dns localhost --force >/dev/null 2>&1
s4=$(cert_serial "$GEN/tls.crt")
secret_install "$SEC" "$GEN"
sleep 1.5
expect_eq "--cert-poll-interval 0: a file change alone is not picked up" "$s3" "$(served_serial)"
kill -HUP "$SERVER_PID"
wait_metric "$OK" 1 10 && pass "SIGHUP reloads" || fail "SIGHUP did not reload"
expect_eq "  served after SIGHUP" "$s4" "$(served_serial)"
kill -HUP "$SERVER_PID"
sleep 1
expect_eq "SIGHUP with unchanged files: no reload counted" "1 0" "$(metric "$OK") $(metric "$KO")"
kill -0 "$SERVER_PID" 2>/dev/null && pass "SIGHUP does not stop the server" || fail "server died on SIGHUP"
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"

# Non-regular files swapped in: the certificate becomes a FIFO nobody writes to, then the key a
# directory. Each is refused at once and logged, the good pair keeps serving, and SIGTERM ends
# the process within --shutdown-delay + --drain-timeout (the watcher used to block in open(2) on
# the FIFO for ever, and shutdown waited for it).
DELAY=1 DRAIN=2
start_server nonreg --tls-cert-file "$SEC/tls.crt" --tls-private-key-file "$SEC/tls.key" \
	--cert-poll-interval 1 --shutdown-delay $DELAY --drain-timeout $DRAIN || { fail "server start"; jg_finish; }
# install_version NAME: makes $SEC/NAME (filled by the caller) the current ..data, atomically
install_version() {
	ln -sfn "$1" "$SEC/..data_tmp"
	mv -T "$SEC/..data_tmp" "$SEC/..data"
}
# refused N WHAT TEXT: the failure counter reaches N and the last rejection logs TEXT
refused() {
	wait_metric "$KO" "$1" 10 && pass "$2: refused (failure counter $1)" || fail "$2: failure counter is $(metric "$KO")"
	grep '"msg":"certificate reload rejected' "$SERVER_LOG" | tail -1 | grep -qF "$3" &&
		pass "  logged: $3" || fail "  no log line with: $3"
}
mkdir "$SEC/..fifo"
mkfifo "$SEC/..fifo/tls.crt"
cp "$GEN/tls.key" "$SEC/..fifo/"
install_version ..fifo
refused 1 "certificate replaced by a FIFO" "$SEC/tls.crt is a FIFO (named pipe), not a regular file"
expect_eq "  still serving the good certificate" "$s4" "$(served_serial)"
expect_eq "  requests still answered" 200 "$(post "$BODY")"
mkdir -p "$SEC/..dir/tls.key"
cp "$GEN/tls.crt" "$SEC/..dir/"
install_version ..dir
refused 2 "key replaced by a directory" "$SEC/tls.key is a directory, not a regular file"
expect_eq "  readiness unaffected" 200 "$(curl -sS -o /dev/null -w '%{http_code}' "$OPS_URL/readyz")"
# A good new pair whose certificate another process holds a lease on: refused at once, then
# loaded at a later poll once the lease is gone, although the files did not change again.
"$SRC_ROOT/certs/generate.sh" --service "$SERVICE" --namespace "$NAMESPACE" --out "$GEN" --ip 127.0.0.1 \
	--dns localhost --force >/dev/null 2>&1
s5=$(cert_serial "$GEN/tls.crt")
mkdir "$SEC/..lease"
cp "$GEN/tls.crt" "$GEN/tls.key" "$SEC/..lease/"
if hold_lease "$SEC/..lease/tls.crt"; then
	install_version ..lease
	refused 3 "certificate under another process's lease" "cannot open $SEC/tls.crt: another process holds a lease on it"
	expect_eq "  still serving the good certificate" "$s4" "$(served_serial)"
	kill "$LEASE_PID"
	wait_metric "$OK" 1 10 && pass "  lease released: the same files are loaded at a later poll" || fail "  not reloaded after the lease"
	expect_eq "  served" "$s5" "$(served_serial)"
else fail "could not take a lease on $SEC/..lease/tls.crt"; fi
install_version ..fifo # the watcher meets the FIFO again while the server shuts down
sleep 1.5
t0=$(date +%s%N)
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" $((DELAY + DRAIN + 10))
ms=$((($(date +%s%N) - t0) / 1000000))
expect_eq "SIGTERM with a FIFO in place: exit 0" 0 "$EXIT_RC"
if [[ $EXIT_RC != timeout && $ms -le $(((DELAY + DRAIN) * 1000 + 2000)) ]]; then
	pass "  exited ${ms} ms after SIGTERM (bound: --shutdown-delay $DELAY + --drain-timeout $DRAIN, 2 s slack)"
else fail "  exit took ${ms} ms (${EXIT_RC})"; fi
jg_finish
